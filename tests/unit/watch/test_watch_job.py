"""wait_for_job and JobWatch against the emulator: status logging, errors, deadline."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from watch_helpers import Recorder

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCError
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.watch import (
    MAX_ERROR_BACKOFF_SECONDS,
    JobWatch,
    drive,
    flow,
    wait_for_job,
)
from airflow_provider_aihc.watch.flow import WAKE_GRID_SECONDS, grid_sleep


class FakeTime:
    """A clock that only moves when the watch sleeps; ``on_sleep`` runs at every sleep."""

    def __init__(self, on_sleep: Callable[[int], None] | None = None) -> None:
        self.now = 1_000_000.0
        self.sleeps: list[float] = []
        self.on_sleep = on_sleep

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(len(self.sleeps))


def wait(hook: AIHCHook, job_id: str, log: Recorder, fake: FakeTime, **kwargs: object):  # type: ignore[no-untyped-def]
    options: dict[str, object] = {
        "poll_interval": 5.0,
        "deadline": None,
        "stop_on_timeout": True,
        "stream_logs": False,
    }
    options.update(kwargs)
    return wait_for_job(
        hook,
        job_id,
        None,
        log=log,
        sleep=fake.sleep,
        clock=fake.clock,
        **options,  # type: ignore[arg-type]
    )


def test_status_changes_are_logged_once_each_with_the_time_spent(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(2, running=4)
    job_id = create("steady")
    fake = FakeTime()
    event = wait(hook, job_id, log, fake)
    assert (event.status, event.job_status) == ("success", "Succeeded")
    assert log.messages("info") == [
        f"AIHC job {job_id} is Created",
        f"AIHC job {job_id}: Created → Scheduled after 10 s",
        f"AIHC job {job_id}: Scheduled → Running after 10 s",
        f"AIHC job {job_id}: Running → Succeeded after 20 s",
    ]
    assert set(fake.sleeps) == {5.0}
    assert aihc_emulator.backend.count("GetJob") == len(fake.sleeps) + 1


def test_an_unknown_status_is_logged_once_and_waited_on(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    aihc_emulator.backend.add_script(scenarios.ForceStatus(status="Preempting"))
    job_id = create("odd")

    def finish_after_four_polls(sleeps: int) -> None:
        if sleeps == 4:
            aihc_emulator.backend.set_status(job_id, "Succeeded")

    event = wait(hook, job_id, log, FakeTime(finish_after_four_polls))
    assert event.status == "success"
    unknown = [m for m in log.messages("warning") if "'Preempting'" in m]
    assert unknown == [
        f"AIHC job {job_id} reports status 'Preempting', which this provider does not know; "
        "waiting on it as if the job were still active"
    ]


def test_transient_errors_are_waited_through_with_a_growing_pause(
    aihc_emulator: EmulatorServer,
    no_hook_retries: None,
    hook: AIHCHook,
    create: Callable[..., str],
    log: Recorder,
) -> None:
    job_id = create("bumpy")
    aihc_emulator.backend.add_fault(
        scenarios.error(503, operation="GetJob", times=2),
        scenarios.throttle(0, operation="GetJob"),
        scenarios.drop_before(operation="GetJob"),
        scenarios.malformed(operation="GetJob"),
    )
    fake = FakeTime()
    event = wait(hook, job_id, log, fake, poll_interval=1.0)
    assert event.status == "success"
    assert fake.sleeps[:6] == [1.0, 2.0, 4.0, 8.0, 16.0, 1.0]
    failures = [m for m in log.messages("warning") if "status check failed" in m]
    assert len(failures) == 5
    assert "HTTP 503" in failures[0]
    assert "HTTP 429" in failures[2]
    assert failures[-1].endswith("(failure 5 in a row)")


def test_a_throttle_pause_is_at_least_retry_after(
    aihc_emulator: EmulatorServer,
    no_hook_retries: None,
    hook: AIHCHook,
    create: Callable[..., str],
    log: Recorder,
) -> None:
    job_id = create("throttled")
    aihc_emulator.backend.add_fault(scenarios.throttle(30, operation="GetJob"))
    fake = FakeTime()
    assert wait(hook, job_id, log, fake, poll_interval=1.0).status == "success"
    assert fake.sleeps[0] == 30.0


def test_there_is_no_attempt_cap_only_a_bounded_pause(
    aihc_emulator: EmulatorServer,
    no_hook_retries: None,
    hook: AIHCHook,
    create: Callable[..., str],
    log: Recorder,
) -> None:
    job_id = create("outage")
    aihc_emulator.backend.add_fault(scenarios.error(503, operation="GetJob", times=40))
    fake = FakeTime()
    assert wait(hook, job_id, log, fake, poll_interval=1.0).status == "success"
    assert max(fake.sleeps) == MAX_ERROR_BACKOFF_SECONDS
    assert aihc_emulator.backend.count("GetJob", 503) == 40


def test_a_job_that_is_gone_ends_the_wait_with_an_error(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    job_id = create("deleted")
    aihc_emulator.backend.delete_job(aihc_emulator.backend.job(job_id)["resourcePoolId"], job_id)
    fake = FakeTime()
    event = wait(hook, job_id, log, fake)
    assert event.status == "error"
    assert f"Could not watch AIHC job {job_id}" in event.message
    assert "HTTP 404" in event.message
    assert fake.sleeps == []


@pytest.mark.parametrize("stop", [True, False])
def test_at_the_deadline_the_job_is_stopped_or_left(
    aihc_emulator: EmulatorServer,
    hook: AIHCHook,
    create: Callable[..., str],
    log: Recorder,
    stop: bool,
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    job_id = create("endless")
    fake = FakeTime()
    deadline = fake.now + 12.0
    event = wait(hook, job_id, log, fake, deadline=deadline, stop_on_timeout=stop)
    assert (event.status, event.job_status, event.stopped) == ("timeout", "Running", stop)
    assert event.waited_seconds == pytest.approx(12.0)
    assert fake.sleeps == [5.0, 5.0, 2.0]  # never past the deadline
    expected = "ManualTermination" if stop else "Running"
    assert aihc_emulator.backend.job(job_id)["status"] == expected
    assert aihc_emulator.backend.count("StopJob") == int(stop)


def test_a_fault_tolerant_failure_is_believed_on_the_second_read(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    aihc_emulator.backend.add_script(scenarios.FailJob(reason="NCCL watchdog timeout"))
    job_id = create("resilient", faultTolerance=True)
    fake = FakeTime()
    event = wait(hook, job_id, log, fake)
    assert (event.status, event.reason) == ("failed", "NCCL watchdog timeout")
    assert any("confirming on the next poll" in m for m in log.messages("info"))


def test_one_check_reports_none_while_the_job_runs(
    hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    watch = JobWatch(create("step"), None, log, stream_logs=False)
    assert drive(watch.check(), hook) is None
    assert watch.tracker.status == "Created"


def test_poll_interval_must_be_positive(
    hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    with pytest.raises(AIHCError, match="poll_interval must be positive"):
        wait(hook, create("x"), log, FakeTime(), poll_interval=0)


def test_logs_are_not_asked_for_while_the_job_is_queued(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(3, running=2)
    job_id = create("queued")

    event = wait(hook, job_id, log, FakeTime(), stream_logs=True)

    assert event.status == "success"
    gets = aihc_emulator.backend.count("GetJob")
    # Three polls see Created and three see Scheduled: none of them reads a log.  One
    # more GetJob reads the job's env, once, to mask its secrets in the lines copied.
    assert aihc_emulator.backend.count("GetPodLogs") == gets - 6 - 1


# ---- the wake-up grid of async waits -------------------------------------------------------


def aim_on_a_fake_clock(monkeypatch: pytest.MonkeyPatch, now: float) -> list[float]:
    """``grid_sleep`` on a loop whose clock stands at ``now``: the times it aims at."""
    aimed: list[float] = []

    async def sleep(delay: float) -> None:
        aimed.append(now + delay)

    fake = SimpleNamespace(get_running_loop=lambda: SimpleNamespace(time=lambda: now), sleep=sleep)
    monkeypatch.setattr(flow, "asyncio", fake)
    return aimed


async def test_grid_sleep_ends_on_the_grid_never_early(monkeypatch: pytest.MonkeyPatch) -> None:
    # Where it aims, on a clock of its own (no wall-clock bound: a loaded machine wakes late).
    now = 1000.013
    aimed = aim_on_a_fake_clock(monkeypatch, now)
    for asked in (0.0, 0.01, 0.13, 0.25):
        await grid_sleep(asked)
        wake = aimed[-1]
        assert now + asked <= wake < now + asked + WAKE_GRID_SECONDS  # the next grid point
        steps = wake / WAKE_GRID_SECONDS
        assert abs(steps - round(steps)) < 1e-6
    monkeypatch.undo()
    # And the real sleep is never early.
    loop = asyncio.get_running_loop()
    for asked in (0.0, 0.01, 0.13):
        before = loop.time()
        await grid_sleep(asked)
        assert loop.time() - before >= asked


async def test_waits_due_in_one_grid_step_wake_in_one_loop_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where they aim, on a clock of its own: one grid point for all, so one wake-up (how
    # late the loop gets there is the machine's load, not the design).
    now = 1000.013
    aimed = aim_on_a_fake_clock(monkeypatch, now)
    # Due 1 ms apart: without the grid each would be its own wake-up.
    await asyncio.gather(*(grid_sleep(0.05 + i * 0.001) for i in range(20)))
    assert len(aimed) == 20
    assert max(aimed) - min(aimed) < 1e-9


def test_a_watch_without_logs_or_queue_timeout_holds_two_objects() -> None:
    """A triggerer holds a watch per deferred job, and every object it keeps is one more
    for each full collection to walk (issue #37): no per-watch ``__dict__``, no log
    streamer until the log is read, one idle queue clock for all."""
    log = Recorder()
    gc.collect()
    before = len(gc.get_objects())
    watches = [JobWatch(f"job-{i}", "pool", log, stream_logs=False) for i in range(100)]
    held = len(gc.get_objects()) - before - 1  # (the list)
    assert held <= 2 * len(watches), held  # the watch and its status tracker
    assert not hasattr(watches[0], "__dict__")
    assert watches[0].queue is watches[1].queue
    assert watches[0].log_state == {}
    resumed = JobWatch("job-r", "pool", log, log_state={"pod-0": "m1"})
    assert resumed.log_state == {"pod-0": "m1"}  # before its streamer is made, and after
    assert resumed.logs.state == {"pod-0": "m1"}
    assert resumed.log_state == {"pod-0": "m1"}
    timed = JobWatch("job-t", "pool", log, queue_timeout=60)
    assert timed.queue is not watches[0].queue
    assert timed.queue.timeout == 60.0
