"""A waiting task killed, timed out or marked failed, in poke and deferred mode.

With ``cancel_on_kill=True`` the job ends ``ManualTermination``; with ``False`` it keeps
running.  Through real task execution (``rel_driver.py``, ``dag.test()``):

* SIGTERM of the process running the wait, sync and deferred (Airflow's own SIGTERM
  handler calls the operator's ``on_kill``);
* mark-failed of a sync wait: the row set to ``failed``, then SIGTERM, which is what
  Airflow's supervisor (3.x) or LocalTaskJob (2.x) does when it sees that;
* ``execution_timeout`` of a deferred wait (the trigger enforces it);
* SIGTERM of a poking sensor: a sensor only watches; the job runs on.

``tests/e2e/test_create_job.py`` already covers ``execution_timeout`` of a sync wait (both
``cancel_on_kill`` values) and the operator's own ``timeout`` when deferred.

Mark-failed of a *deferred* wait cannot be expressed in a DAG run (``dag.test`` runs the
trigger inline, nobody can mark it): it is tested here against the emulator the way each
triggerer does it, with the trigger the operator (or the sensor) really defers with.
Airflow >= 3.3 cancels the trigger with its user-action message and awaits ``on_kill``;
2.11 cancels it and awaits ``cleanup``, which reads the task instance's state from the DB.
A triggerer restart (cancel without the message) must leave the job running: see
``test_crash.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import rel_plan
from airflow2_rows import deferred_task_instance
from polls import reads, until_polled
from rel_support import (
    FIGURES,
    POOL,
    DriverRun,
    StubTaskInstance,
    TaskDeferred,
    task_context,
)

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS, AIRFLOW_V_3_3_PLUS

KILLS = rel_plan.kill_cases()
#: ``airflow.jobs.triggerer_job_runner._USER_ACTION_CANCEL_MSG`` (Airflow >= 3.3).
USER_ACTION = "__airflow_user_action__"


@pytest.mark.parametrize("case", KILLS, ids=[case["id"] for case in KILLS])
def test_a_killed_wait_stops_the_job_only_when_cancel_on_kill(
    case: dict[str, Any], driver_run: DriverRun
) -> None:
    result = driver_run.case(case["id"])
    FIGURES["kills: DAG-run kill cases"] += 1
    jobs = [(job["name"], job["status"]) for job in result["jobs"]]
    details = f"{case['id']}: jobs {jobs}, actions {result['actions']}, tries {result['tries']}"
    [(name, status)] = jobs
    assert name == case["job_name"], details
    if case["cancel_on_kill"]:
        assert status == "ManualTermination", details
    else:  # left alone: wherever the emulator's clock got it (a loaded machine is slow);
        # on 3.0-3.2 as the wait saw it after the kill, before the driver failed it
        kept = [a.split()[1] for a in result["actions"] if a.startswith("kept: ")]
        assert (kept[0] if kept else status) in ("Created", "Scheduled", "Running"), details
    assert result["counts"].get("CreateJob") == 1, details
    if not case["cancel_on_kill"]:
        assert result["counts"].get("StopJob", 0) == 0, details
    if case["action"]:
        assert any(action.startswith("SIGTERM") for action in result["actions"]), details
    killed = [t for t in result["tries"] if t["task_id"] in ("train", "watch")]
    assert all(t["outcome"] == "failure" for t in killed), details
    # 2.11's dag.test lets AirflowTaskTerminated (a BaseException) out of an inline
    # trigger before the failure callback: the task's end is then the driver's error.
    assert killed or "AirflowTaskTerminated" in (result["driver_error"] or ""), details
    FIGURES["kills: jobs left running that should have been stopped"] += (
        case["cancel_on_kill"] and status != "ManualTermination"
    )


# -- mark-failed of a deferred wait, the way each triggerer does it -----------------------------


def _deferred_trigger(task: Any) -> AIHCJobTrigger:
    """The trigger ``task`` defers with (running its real ``execute``/``poke``)."""
    # A sensor's first check is its poke; then it defers.
    run = task.poke if isinstance(task, AIHCJobSensor) else task.execute
    with pytest.raises(TaskDeferred) as deferred:
        run(task_context(StubTaskInstance()))
    trigger = deferred.value.trigger
    assert isinstance(trigger, AIHCJobTrigger)
    return trigger


async def _cancel_running(
    server: EmulatorServer, trigger: AIHCJobTrigger, message: str | None
) -> None:
    """Run the trigger for a few polls, then cancel it as the triggerer does."""
    events: list[Any] = []

    async def run() -> None:
        async for event in trigger.run():
            events.append(event)

    before = reads(server)
    task = asyncio.ensure_future(run())
    await until_polled(server, before + 2)
    task.cancel(message)
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events == []  # cancelled before its one event
    if message == USER_ACTION:
        await trigger.on_kill()
    await trigger.cleanup()  # the triggerer's ``finally``


def _held_job_task(
    emulator: EmulatorServer, kind: str, cancel_on_kill: bool
) -> tuple[Any, AIHCJobTrigger]:
    emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    if kind == "operator":
        task: Any = AIHCCreateJobOperator(
            task_id="train",
            name="deferred-kill",
            image="img:1",
            command="python train.py",
            wait_for_completion=True,
            deferrable=True,
            cancel_on_kill=cancel_on_kill,
            poll_interval=0.05,
        )
        return task, _deferred_trigger(task)
    job_id = emulator.backend.create_job(
        POOL, {"name": "deferred-kill", "jobSpec": {"image": "i", "command": "c"}}
    )
    task = AIHCJobSensor(task_id="watch", job_id=job_id, deferrable=True, poke_interval=0.05)
    return task, _deferred_trigger(task)


CASES = [
    ("operator", True, "ManualTermination"),
    ("operator", False, "Running"),
    ("sensor", None, "Running"),  # a sensor never owns the job
]


@pytest.mark.skipif(not AIRFLOW_V_3_3_PLUS, reason="Airflow >= 3.3 calls the trigger's on_kill")
@pytest.mark.parametrize(("kind", "cancel_on_kill", "expected"), CASES)
async def test_deferred_mark_failed_on_airflow_3_3_runs_on_kill(
    aihc_emulator: EmulatorServer, kind: str, cancel_on_kill: bool | None, expected: str
) -> None:
    from airflow.jobs.triggerer_job_runner import _USER_ACTION_CANCEL_MSG

    assert USER_ACTION == _USER_ACTION_CANCEL_MSG
    _, trigger = _held_job_task(aihc_emulator, kind, bool(cancel_on_kill))
    assert trigger.cancel_on_kill is bool(cancel_on_kill)

    await _cancel_running(aihc_emulator, trigger, USER_ACTION)

    [job] = aihc_emulator.backend.jobs()
    assert job["status"] == expected
    FIGURES["kills: deferred mark-failed cases (trigger on_kill)"] += 1


@pytest.fixture
def task_row(reliability_db: None) -> Any:
    """Airflow 2.11: a task instance row of a fresh DAG run, ``deferred``."""
    return deferred_task_instance("rel_deferred_kill", "rel-kill")


@pytest.mark.skipif(AIRFLOW_V_3_0_PLUS, reason="Airflow 2.x: cleanup reads the DB state")
@pytest.mark.parametrize(("kind", "cancel_on_kill", "expected"), CASES)
async def test_deferred_mark_failed_on_airflow_2_runs_cleanup_on_the_db_state(
    aihc_emulator: EmulatorServer,
    task_row: Any,
    kind: str,
    cancel_on_kill: bool | None,
    expected: str,
) -> None:
    _, trigger = _held_job_task(aihc_emulator, kind, bool(cancel_on_kill))
    trigger.task_instance = task_row
    task_row.set_state("failed")  # what "Mark failed" does to the row

    await _cancel_running(aihc_emulator, trigger, None)  # 2.x cancels plainly, then cleans up

    [job] = aihc_emulator.backend.jobs()
    assert job["status"] == expected
    FIGURES["kills: deferred mark-failed cases (trigger cleanup)"] += 1
