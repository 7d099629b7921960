"""``queue_timeout``: a job held in the queue is stopped and the wait fails naming the pool,
queue, wait, last status and events; a job that started running is never touched.  The
emulator holds the job ``Scheduled`` (``HoldJob``/``QueueFor``); its clock and the watch's
are one fake clock, so nothing sleeps."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from test_watch_job import FakeTime, wait
from watch_helpers import POOL, Recorder

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCQueueTimeoutError
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.watch import JobEvent, complete


@pytest.fixture
def fake(aihc_emulator: EmulatorServer) -> FakeTime:
    clock = FakeTime()
    aihc_emulator.backend.clock = clock.clock
    return clock


def test_a_job_held_in_the_queue_is_stopped_at_queue_timeout(
    aihc_emulator: EmulatorServer,
    hook: AIHCHook,
    create: Callable[..., str],
    log: Recorder,
    fake: FakeTime,
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Scheduled"))
    created = fake.now
    job_id = create("starved")
    event = wait(hook, job_id, log, fake, queue_timeout=60.0, poll_interval=7.0)

    assert (event.status, event.queued, event.stopped) == ("timeout", True, True)
    assert fake.now - created == pytest.approx(60.0)  # the last pause is cut to the limit
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"
    for part in (f"pool {POOL}", "queue default", "waited 60 s", "queue_timeout=60 s",
                 "last status Scheduled", "latest events: ", "it was stopped"):  # fmt: skip
        assert part in event.message, part
    with pytest.raises(AIHCQueueTimeoutError, match="waited 60 s for resources"):
        complete(JobEvent.from_payload(event.to_payload()), log)


def test_a_job_that_waits_less_than_queue_timeout_runs_to_its_end(
    aihc_emulator: EmulatorServer,
    hook: AIHCHook,
    create: Callable[..., str],
    log: Recorder,
    fake: FakeTime,
) -> None:
    aihc_emulator.backend.add_script(scenarios.QueueFor(seconds=40.0))
    job_id = create("patient")
    event = wait(hook, job_id, log, fake, queue_timeout=60.0, poll_interval=5.0)
    assert event.status == "success"
    assert aihc_emulator.backend.job(job_id)["status"] == "Succeeded"


def test_a_job_that_started_running_is_never_stopped_for_its_queue_time(
    aihc_emulator: EmulatorServer,
    hook: AIHCHook,
    create: Callable[..., str],
    log: Recorder,
    fake: FakeTime,
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    job_id = create("running-long")
    deadline = fake.now + 300.0
    event = wait(hook, job_id, log, fake, queue_timeout=10.0, deadline=deadline)
    assert (event.status, event.queued) == ("timeout", False)  # the overall deadline
    assert fake.now >= deadline


async def test_the_trigger_stops_a_job_held_in_the_queue(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Scheduled"))
    job_id = create("starved-deferred")
    trigger = AIHCJobTrigger(job_id, POOL, poll_interval=0.05, queue_timeout=0.5)
    # a triggerer that takes over runs the trigger rebuilt from its serialized form
    _classpath, kwargs = trigger.serialize()
    rebuilt = AIHCJobTrigger(**kwargs)
    payloads = [event.payload async for event in rebuilt.run()]
    event = JobEvent.from_payload(payloads[0])
    assert (event.status, event.queued, event.stopped) == ("timeout", True, True)
    assert re.search(r"last status (Created|Scheduled); latest events: \S", event.message)
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"
    assert event.waited_seconds is not None
    assert event.waited_seconds >= 0.5


async def test_the_trigger_leaves_a_running_job_alone(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    job_id = create("running-deferred")
    for _ in range(10):  # each read moves it on
        if aihc_emulator.backend.job(job_id)["status"] == "Running":
            break
        AIHCHook().get_job_brief(job_id, POOL)
    assert aihc_emulator.backend.job(job_id)["status"] == "Running"
    deadline = time.time() + 1.0
    trigger = AIHCJobTrigger(job_id, POOL, poll_interval=0.05, queue_timeout=0.2,
                             deadline=deadline, stop_on_timeout=False)  # fmt: skip
    payloads = [event.payload async for event in trigger.run()]
    event = JobEvent.from_payload(payloads[0])
    assert (event.status, event.queued) == ("timeout", False)
    assert aihc_emulator.backend.job(job_id)["status"] == "Running"


@pytest.mark.parametrize("mode", ["poke", "reschedule"])
def test_the_sensor_stops_a_job_held_in_the_queue_in_either_mode(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    fake: FakeTime,
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rescheduled sensor is a new object per poke: the wait counts from ``createdAt``."""
    from airflow_provider_aihc.sensors.aihc import AIHCJobSensor
    from airflow_provider_aihc.watch import JobWatch

    monkeypatch.setitem(JobWatch.__init__.__kwdefaults__, "clock", fake.clock)

    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Scheduled"))
    job_id = create(f"starved-{mode}")
    pushed: list[str] = []

    class TI:
        def xcom_push(self, key: str, value: object) -> None:
            pushed.append(key)

    def sensor() -> AIHCJobSensor:
        return AIHCJobSensor(task_id="wait", job_id=job_id, mode=mode, queue_timeout=30.0)

    kept = sensor()
    for _ in range(3):
        assert not (kept if mode == "poke" else sensor()).poke({"ti": TI()})
    fake.now += 31.0
    with pytest.raises(AIHCQueueTimeoutError, match=r"waited 31 s .* queue default"):
        (kept if mode == "poke" else sensor()).poke({"ti": TI()})
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"
    assert "job_summary" not in pushed  # a job stopped for its wait produced nothing
