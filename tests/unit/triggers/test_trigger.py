"""AIHCJobTrigger: serialization, its run against the emulator, on_kill and cleanup."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

import pytest
from polls import reads, until_polled
from watch_helpers import MANAGED_POOL, MANAGED_QUEUE, POOL, log_lines, refused

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.triggers import aihc as trigger_module
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.watch import JobEvent, first_poll_delay

FAST = {"poll_interval": 0.05}


async def fire(trigger: AIHCJobTrigger) -> tuple[JobEvent, int]:
    """Run the trigger to its end: its one event, and how many it yielded."""
    payloads = [event.payload async for event in trigger.run()]
    return JobEvent.from_payload(payloads[0]), len(payloads)


def test_serialize_round_trips_every_argument() -> None:
    arguments = {
        "job_id": "pytorchjob-1",
        "resource_pool_id": "cce-pool",
        "aihc_conn_id": "aihc_prod",
        "poll_interval": 12.5,
        "deadline": 1_700_000_000.25,
        "stop_on_timeout": False,
        "cancel_on_kill": False,
        "stream_logs": False,
        "log_state": {"job-master-0": "lm1-a"},
        "deferred_at": 1_699_999_000.5,
        "queue_timeout": 600.0,
        "job_queue": "aihcq-emulator0",
    }
    assert set(arguments) == set(inspect.signature(AIHCJobTrigger).parameters)
    classpath, kwargs = AIHCJobTrigger(**arguments).serialize()
    assert classpath == "airflow_provider_aihc.triggers.aihc.AIHCJobTrigger"
    assert kwargs == arguments
    module, name = classpath.rsplit(".", 1)
    rebuilt = getattr(__import__(module, fromlist=[name]), name)(**kwargs)
    assert rebuilt.serialize() == (classpath, kwargs)


def test_defaults_serialize_as_plain_values() -> None:
    _, kwargs = AIHCJobTrigger("j", None).serialize()
    assert kwargs == {
        "job_id": "j",
        "resource_pool_id": None,
        "aihc_conn_id": "aihc_default",
        "poll_interval": 30.0,
        "deadline": None,
        "stop_on_timeout": True,
        "cancel_on_kill": True,
        "stream_logs": True,
        "log_state": None,
        "deferred_at": None,
        "queue_timeout": None,
        "job_queue": None,
    }


def test_a_trigger_serialized_before_queue_timeout_existed_still_builds() -> None:
    """The previous release's serialized form (no ``queue_timeout``) runs unchanged."""
    _, kwargs = AIHCJobTrigger("j", None).serialize()
    del kwargs["queue_timeout"], kwargs["job_queue"]
    rebuilt = AIHCJobTrigger(**kwargs)
    assert rebuilt.queue_timeout is None
    assert rebuilt.serialize()[1] == {**kwargs, "queue_timeout": None, "job_queue": None}


#: What the release before the queue travelled serializes (kwargs of 0.x's serialize()).
OLD_RELEASE_KWARGS = {
    "job_id": "JOB", "resource_pool_id": POOL, "aihc_conn_id": "aihc_default",
    "poll_interval": 0.05, "deadline": None, "stop_on_timeout": True, "cancel_on_kill": True,
    "stream_logs": True, "log_state": None, "deferred_at": None, "queue_timeout": None,
}  # fmt: skip


async def test_a_trigger_serialized_before_the_queue_travelled_still_runs(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    job_id = create("old-release")
    trigger = AIHCJobTrigger(**{**OLD_RELEASE_KWARGS, "job_id": job_id})
    assert trigger.job_queue is None
    event, _ = await fire(trigger)
    assert (event.status, event.job_id) == ("success", job_id)


async def test_the_trigger_sends_its_queue_with_every_call_on_a_managed_pool(
    aihc_emulator: EmulatorServer,
    create_managed: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(1, running=3)
    job_id = create_managed("managed-deferred")
    trigger = AIHCJobTrigger(job_id, MANAGED_POOL, job_queue=MANAGED_QUEUE, **FAST)
    _, kwargs = trigger.serialize()
    caplog.set_level("INFO")
    event, _ = await fire(AIHCJobTrigger(**kwargs))  # round-tripped, queue and all
    assert (event.status, event.job_id) == ("success", job_id)
    # The emulator refuses a managed-pool call without the queue's id, as AIHC does.
    assert refused(aihc_emulator) == []
    text = caplog.text if caplog.records else capsys.readouterr().out
    pod = "managed-deferred-master-0"
    lines = log_lines(aihc_emulator, job_id, pod, MANAGED_POOL, MANAGED_QUEUE)
    assert lines
    assert all(line in text for line in lines)


async def test_a_trigger_without_the_queue_on_a_managed_pool_fails_naming_it(
    aihc_emulator: EmulatorServer, create_managed: Callable[..., str]
) -> None:
    job_id = create_managed("managed-unqueued")
    event, _ = await fire(AIHCJobTrigger(job_id, MANAGED_POOL, **FAST))
    assert event.status == "error"
    assert "queue_id" in event.message


def test_the_first_poll_is_spread_by_job_id() -> None:
    delays = [first_poll_delay(f"pytorchjob-{n}", 30.0) for n in range(1000)]
    assert all(0 <= d < 30.0 for d in delays)
    assert first_poll_delay("pytorchjob-7", 30.0) == delays[7]  # deterministic
    per_second = [sum(1 for d in delays if s <= d < s + 1) for s in range(30)]
    assert max(per_second) < 60  # about 33 a second, never all at once


async def test_run_to_success_streams_every_log_line_once(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(1, running=3)
    job_id = create("deferred")
    caplog.set_level("INFO")
    event, count = await fire(AIHCJobTrigger(job_id, POOL, **FAST))
    assert (event.status, event.job_id, event.job_status, count) == (
        "success",
        job_id,
        "Succeeded",
        1,
    )
    # Airflow 2 logs through logging (caplog); Airflow 3 through structlog, to stdout.
    text = caplog.text if caplog.records else capsys.readouterr().out
    assert f"AIHC job {job_id}: Running → Succeeded" in text
    for line in log_lines(aihc_emulator, job_id, "deferred-master-0"):
        assert text.count(line) == 1, line


async def test_run_to_a_scripted_failure_carries_the_reason(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    aihc_emulator.backend.add_script(
        scenarios.FailJob(reason="CUDA error: an illegal memory access was encountered")
    )
    job_id = create("crash")
    event, _ = await fire(AIHCJobTrigger(job_id, POOL, **FAST))
    assert (event.status, event.job_status) == ("failed", "Failed")
    assert event.reason == "CUDA error: an illegal memory access was encountered"
    assert event.reason in event.message


@pytest.mark.parametrize("hook_retries", [True, False], ids=["hook-retries", "loop-retries"])
async def test_run_through_a_5xx_and_429_burst_still_succeeds(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    hook_retries: bool,
) -> None:
    if not hook_retries:
        request.getfixturevalue("no_hook_retries")
    job_id = create("bumpy")
    aihc_emulator.backend.add_fault(
        scenarios.error(500, operation="GetJob"),
        scenarios.error(503, operation="GetJob"),
        scenarios.throttle(0, operation="GetJob", times=2),
        scenarios.error(502, operation="GetPodLogs"),
    )
    event, _ = await fire(AIHCJobTrigger(job_id, POOL, **FAST))
    assert event.status == "success"
    assert aihc_emulator.backend.count("GetJob", 429) == 2
    assert (
        aihc_emulator.backend.count("GetJob", 500)
        == aihc_emulator.backend.count("GetJob", 503)
        == 1
    )


async def test_at_the_deadline_the_job_is_stopped_and_a_timeout_fired(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    job_id = create("forever")
    aihc_emulator.backend.set_status(job_id, "Running", hold=True)  # not left to the clock
    started = time.monotonic()
    trigger = AIHCJobTrigger(job_id, POOL, deadline=time.time() + 0.4, **FAST)
    event, _ = await fire(trigger)
    assert time.monotonic() - started >= 0.3  # fired at the deadline, not before
    assert (event.status, event.job_status, event.stopped) == ("timeout", "Running", True)
    assert "the job was stopped" in event.message
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"


async def test_a_deadline_already_past_still_checks_once(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    job_id = create("late")
    aihc_emulator.backend.set_status(job_id, "Succeeded")
    event, _ = await fire(AIHCJobTrigger(job_id, POOL, deadline=time.time() - 5, **FAST))
    assert event.status == "success"


async def test_an_unexpected_exception_fires_an_error_event(
    aihc_emulator: EmulatorServer, create: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    job_id = create("bug")

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("airflow_provider_aihc.watch.JobWatch.read", broken)
    event, _ = await fire(AIHCJobTrigger(job_id, POOL, **FAST))
    assert (event.status, event.message) == ("error", "boom")


async def test_on_kill_stops_the_job(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    job_id = create("killed")
    aihc_emulator.backend.set_status(job_id, "Running", hold=True)  # not left to the clock
    trigger = AIHCJobTrigger(job_id, POOL, **FAST)
    task = asyncio.ensure_future(fire(trigger))
    await until_polled(aihc_emulator, reads(aihc_emulator) + 2)  # the job is Running
    assert aihc_emulator.backend.job(job_id)["status"] == "Running"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await trigger.on_kill()
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"


async def test_on_kill_finishes_its_stop_when_the_triggerer_cancels_it_again(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    """Airflow 3.3's triggerer cancels a removed trigger's task again at each sync (about a
    second) while ``on_kill`` runs; a stop slowed by AIHC must still land (found by
    ``make test-chaos``: marked-failed jobs ran on)."""
    job_id = create("killed-slowly")
    aihc_emulator.backend.set_status(job_id, "Running", hold=True)
    aihc_emulator.backend.add_fault(scenarios.delay(1.0, operation="GetJob"))
    trigger = AIHCJobTrigger(job_id, POOL, **FAST)

    on_kill = asyncio.ensure_future(trigger.on_kill())
    await until_polled(aihc_emulator, reads(aihc_emulator) + 1)  # the stop's GetJob is sent
    for _ in range(2):  # the triggerer's next syncs, or its shutdown
        on_kill.cancel()
        await asyncio.sleep(0.05)
    assert not on_kill.done()  # it waits for the stop: a shutting-down triggerer waits for it
    with pytest.raises(asyncio.CancelledError):
        await on_kill  # the cancellation, once the stop is done
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"


async def test_on_kill_stops_the_job_when_the_exiting_runner_cancels_every_task(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    """A triggerer that exits (its database restarted) cancels each of its runner's tasks
    once, the stop's own included, and waits for them: the stop is sent again."""
    job_id = create("killed-at-exit")
    aihc_emulator.backend.set_status(job_id, "Running", hold=True)
    aihc_emulator.backend.add_fault(scenarios.delay(1.0, operation="GetJob"))
    trigger = AIHCJobTrigger(job_id, POOL, **FAST)

    on_kill = asyncio.ensure_future(trigger.on_kill())
    await until_polled(aihc_emulator, reads(aihc_emulator) + 1)
    for task in [on_kill, *trigger_module._STOPPING]:  # what asyncio.run's exit does
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await on_kill
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"


async def test_on_kill_leaves_the_job_when_told_or_after_the_event(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    kept = create("kept")
    await AIHCJobTrigger(kept, POOL, cancel_on_kill=False, **FAST).on_kill()
    done = create("done")
    trigger = AIHCJobTrigger(done, POOL, **FAST)
    await fire(trigger)
    await trigger.on_kill()
    assert aihc_emulator.backend.count("StopJob") == 0
    assert aihc_emulator.backend.job(kept)["status"] != "ManualTermination"


class TaskInstanceKey:
    dag_id, task_id, run_id, map_index = "dag", "wait", "run-1", -1


@pytest.mark.parametrize("removal", ["cleanup-before-3.3", "on_kill-3.3"])
@pytest.mark.parametrize(
    ("state", "stopped"),
    [("deferred", False), ("failed", True), (None, True), ("scheduled", True)],
    ids=["restart-or-handover", "marked-failed", "cleared", "cleared-and-requeued"],
)
async def test_a_removed_trigger_stops_its_job_only_when_the_task_left_deferred(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
    state: str | None,
    stopped: bool,
    removal: str,
) -> None:
    """Before 3.3 ``cleanup`` runs on every removal; from 3.3 ``on_kill`` runs for a user's
    action and also for a trigger handed over to another triggerer, whose task is still
    ``deferred`` (the cause of the storm's "Trigger cancelled by user action" after a
    triggerer's heartbeat lapsed): in both, a still-deferred task keeps its job."""
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    job_id = create("removed")
    asked: list[tuple[str, str, str, int]] = []

    async def task_state(*key: Any) -> str | None:
        asked.append(key)
        return state

    monkeypatch.setattr(trigger_module, "AIRFLOW_V_3_3_PLUS", removal == "on_kill-3.3")
    monkeypatch.setattr(trigger_module, "aget_task_state", task_state)
    trigger = AIHCJobTrigger(job_id, POOL, **FAST)
    trigger.task_instance = TaskInstanceKey()
    await (trigger.on_kill() if removal == "on_kill-3.3" else trigger.cleanup())
    assert asked == [("dag", "wait", "run-1", -1)]
    expected = "ManualTermination" if stopped else "Created"
    assert aihc_emulator.backend.job(job_id)["status"] == expected


async def test_on_kill_reads_the_state_and_stops_through_repeated_cancellations(
    aihc_emulator: EmulatorServer, create: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Airflow 3.3 cancels a removed trigger's task again at each sync: a slow state read
    must not be cut off, or the job runs on (``make test-chaos`` seed 867929: a cleared
    task's first job ran to its end after "Trigger cancelled by user action")."""
    job_id = create("slow-read")
    aihc_emulator.backend.set_status(job_id, "Running", hold=True)

    async def slow_state(*key: Any) -> str | None:
        await asyncio.sleep(0.3)
        return "scheduled"  # cleared, the new series queued

    monkeypatch.setattr(trigger_module, "aget_task_state", slow_state)
    trigger = AIHCJobTrigger(job_id, POOL, **FAST)
    trigger.task_instance = TaskInstanceKey()
    on_kill = asyncio.ensure_future(trigger.on_kill())
    for _ in range(3):  # the triggerer's next syncs, while the state is read
        await asyncio.sleep(0.05)
        on_kill.cancel()
    with pytest.raises(asyncio.CancelledError):
        await on_kill
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"


async def test_on_kill_keeps_the_job_when_the_task_state_cannot_be_read(
    aihc_emulator: EmulatorServer, create: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill that cannot be told from a handover leaves the job to the orphan sweep."""
    job_id = create("unreadable")

    async def unreadable(*key: Any) -> str | None:
        raise ConnectionError("supervisor gone")

    monkeypatch.setattr(trigger_module, "aget_task_state", unreadable)
    trigger = AIHCJobTrigger(job_id, POOL, **FAST)
    trigger.task_instance = TaskInstanceKey()
    await trigger.on_kill()
    assert aihc_emulator.backend.count("StopJob") == 0


async def test_cleanup_does_nothing_after_the_event_or_on_airflow_3_3(
    aihc_emulator: EmulatorServer, create: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def cleared(*key: Any) -> str | None:
        return None

    monkeypatch.setattr(trigger_module, "aget_task_state", cleared)
    fired = AIHCJobTrigger(create("fired"), POOL, **FAST)
    await fire(fired)
    fired.task_instance = TaskInstanceKey()
    monkeypatch.setattr(trigger_module, "AIRFLOW_V_3_3_PLUS", False)
    await fired.cleanup()
    modern = AIHCJobTrigger(create("modern"), POOL, **FAST)
    modern.task_instance = TaskInstanceKey()
    monkeypatch.setattr(trigger_module, "AIRFLOW_V_3_3_PLUS", True)
    await modern.cleanup()
    assert aihc_emulator.backend.count("StopJob") == 0
