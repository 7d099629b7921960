"""Crashes.  A worker killed mid-create, then retried; a triggerer restarted.

* ``airflow tasks test`` runs the task in a real Airflow process; the emulator carries the
  create out at once but holds its answer (a ``delay`` fault), and the process is killed
  with SIGKILL while it waits for that answer: the job exists, nobody recorded its id.
  The task is then run again for the same task instance (same DAG run, what a retry
  is): it must adopt that job, not create a second.
* A deferred wait whose trigger is cancelled the way a stopping triggerer cancels it (no
  user-action message), cleaned up, and rebuilt from ``serialize()`` (JSON round trip, as
  stored in the DB) by the next triggerer: the job keeps running through every restart,
  the wait resumes, and exactly one event comes out of all the trigger instances.
  Seeded: restart points and faults differ per seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import rel_plan
from rel_support import FIGURES, StubTaskInstance, TaskDeferred, connection_json, task_context

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.watch import JobEvent

HERE = Path(__file__).resolve().parent
AIRFLOW = str(Path(sys.executable).with_name("airflow"))
#: The create's answer is held this long: the kill comes long before.
HELD_ANSWER_SECONDS = 300.0
PROCESS_TIMEOUT = 300


@pytest.fixture
def crash_emulator() -> Iterator[EmulatorServer]:
    server = EmulatorServer(progression=Progression.per_poll()).start()
    try:
        yield server
    finally:
        server.stop()


def _tasks_test(server: EmulatorServer, logical_date: str, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "AIRFLOW__CORE__DAGS_FOLDER": str(HERE / "dags"),
        "AIRFLOW_CONN_AIHC_DEFAULT": connection_json(server),
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            [AIRFLOW, "tasks", "test", "rel_crash", "train", logical_date],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _wait_for(condition: Any, timeout: float, what: str) -> None:
    limit = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < limit, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_worker_killed_before_the_create_answer_is_adopted_on_retry(
    crash_emulator: EmulatorServer, reliability_db: None, tmp_path: Path
) -> None:
    backend = crash_emulator.backend
    backend.add_fault(scenarios.delay(HELD_ANSWER_SECONDS, operation="CreateJob"))
    logical_date = datetime.now(UTC).replace(microsecond=0).isoformat()

    victim = _tasks_test(crash_emulator, logical_date, tmp_path / "killed.log")
    try:
        _wait_for(lambda: backend.jobs() or victim.poll() is not None, PROCESS_TIMEOUT, "create")
        assert victim.poll() is None, (tmp_path / "killed.log").read_text()[-3000:]
        os.kill(victim.pid, signal.SIGKILL)  # the create has landed; its answer is held
    finally:
        victim.kill()
        victim.wait()
    assert victim.returncode == -signal.SIGKILL
    [orphan] = backend.jobs()
    assert orphan["status"] not in rel_plan.ENDED
    assert backend.count("CreateJob") == 1

    retry = _tasks_test(crash_emulator, logical_date, tmp_path / "retry.log")
    try:
        retry.wait(PROCESS_TIMEOUT)
    finally:
        retry.kill()
    output = (tmp_path / "retry.log").read_text()

    assert retry.returncode == 0, output[-4000:]
    assert f"Adopting AIHC job {orphan['jobId']}" in output, output[-4000:]
    assert backend.count("CreateJob") == 1, backend.requests
    [job] = backend.jobs()
    assert (job["jobId"], job["status"]) == (orphan["jobId"], "Succeeded")
    FIGURES["crash: SIGKILLed workers whose job was adopted"] += 1


# -- triggerer restarts -----------------------------------------------------------------------

RESTART_SEEDS = range(12)


def _rebuilt(trigger: AIHCJobTrigger) -> AIHCJobTrigger:
    """What the next triggerer builds from the row: classpath and JSON kwargs."""
    classpath, kwargs = trigger.serialize()
    stored = json.loads(json.dumps(kwargs))
    module, name = classpath.rsplit(".", 1)
    rebuilt = getattr(import_module(module), name)(**stored)
    assert rebuilt.serialize() == (classpath, kwargs)
    return rebuilt


async def _restart_then_finish(
    trigger: AIHCJobTrigger, rng: random.Random, backend: Any
) -> tuple[list[dict[str, Any]], int]:
    """Restart the trigger 1-3 times at seeded moments, then let one run to its event.

    A trigger that fired before its stop came is not rebuilt: its event is out, and a
    fired trigger is one Airflow deletes, not one a next triggerer picks up. (On a loaded
    machine the seeded moment can come after the event: the run had rebuilt it, and
    counted the rebuilt trigger's own event as a second.) Returns the events and the
    restarts that happened before the event.
    """
    events: list[dict[str, Any]] = []

    async def run(instance: AIHCJobTrigger) -> None:
        async for event in instance.run():
            events.append(event.payload)

    restarts = rng.randint(1, 3)
    for restarted in range(restarts):
        polls = backend.count("GetJob")
        task = asyncio.ensure_future(run(trigger))
        target = polls + rng.randint(0, 2)
        # The count lives in the emulator's thread: poll it (nothing to await on).
        while backend.count("GetJob") < target and not task.done():  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        await asyncio.sleep(rng.uniform(0, 0.05))  # mid-request, mid-sleep, anywhere
        task.cancel()  # a stopping triggerer: no user-action message, so no on_kill
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await trigger.cleanup()
        if events:  # it fired before the stop came: Airflow rebuilds a fired trigger no more
            return events, restarted
        trigger = _rebuilt(trigger)
    await asyncio.wait_for(run(trigger), timeout=60)
    return events, restarts


@pytest.fixture
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    async def asleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(AIHCHook, "asleep", staticmethod(asleep))


@pytest.mark.parametrize("seed", RESTART_SEEDS)
async def test_a_restarted_triggerer_resumes_the_wait_with_exactly_one_event(
    aihc_emulator: EmulatorServer, no_waits: None, seed: int
) -> None:
    rng = random.Random(seed)
    backend = aihc_emulator.backend
    backend.reset(progression=Progression.per_poll(1, running=rng.randint(2, 6)))
    operator = AIHCCreateJobOperator(
        task_id="train",
        image="img:1",
        command="python train.py",
        wait_for_completion=True,
        deferrable=True,
        poll_interval=0.02,
        timeout=120,
    )
    with pytest.raises(TaskDeferred) as deferred:
        operator.execute(task_context(StubTaskInstance()))
    trigger = deferred.value.trigger
    kinds = ("error", "throttle", "drop_before", "drop_after", "malformed")
    for _ in range(rng.randint(0, 4)):
        operation = rng.choice(("GetJob", "GetPodLogs", "GetJobEvents"))
        backend.add_fault(
            scenarios.fault_from_json({"kind": rng.choice(kinds), "operation": operation})
        )

    events, restarts = await _restart_then_finish(trigger, rng, backend)

    assert len(events) == 1, events
    event = JobEvent.from_payload(events[0])
    assert (event.status, event.job_id) == ("success", operator.job_id)
    assert backend.count("StopJob") == 0  # no restart stopped the job
    assert backend.count("CreateJob") == 1
    [job] = backend.jobs()
    assert job["status"] == "Succeeded"
    FIGURES["crash: triggerer restarts survived"] += restarts
    FIGURES["crash: restart schedules run"] += 1
