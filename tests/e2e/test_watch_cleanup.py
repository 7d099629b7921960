"""Airflow < 3.3: a trigger removed from the triggerer stops its job only when the task
instance left ``deferred`` in the metadata DB (marked failed, cleared), never when it is
still deferred (a triggerer restart).  Run the way 2.x's triggerer does: cancel ``run()``,
then ``cleanup()``; the task instance's state is read from the real DB.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from airflow2_rows import deferred_task_instance
from polls import reads, until_polled

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

pytestmark = pytest.mark.skipif(
    AIRFLOW_V_3_0_PLUS, reason="Airflow 2.x triggerer path (3.3 calls on_kill instead)"
)

DAG_ID = "watch_cleanup"


@pytest.fixture
def deferred_ti(airflow_db: None) -> Any:
    """A task instance of a fresh DAG run, in state ``deferred``."""
    return deferred_task_instance(DAG_ID, "cleanup")


async def run_then_remove(server: EmulatorServer, trigger: AIHCJobTrigger) -> None:
    """What 2.x's triggerer does when a trigger leaves its set: cancel, then clean up
    (once the trigger has polled its job twice)."""
    before = reads(server)
    task = asyncio.ensure_future(trigger.run().__anext__())
    await until_polled(server, before + 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await trigger.cleanup()


@pytest.mark.parametrize(
    ("state", "stopped"),
    [("deferred", False), ("failed", True), (None, True)],
    ids=["triggerer-restart", "marked-failed", "cleared"],
)
def test_cleanup_stops_the_job_only_when_the_task_left_deferred(
    aihc_emulator: EmulatorServer, deferred_ti: Any, state: str | None, stopped: bool
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    job_id = (
        AIHCHook()
        .create_job({"name": "held", "jobSpec": {"image": "i", "command": "c", "replicas": 1}})
        .job_id
    )
    trigger = AIHCJobTrigger(job_id, DEFAULT_RESOURCE_POOL_ID, poll_interval=0.05)
    trigger.task_instance = deferred_ti
    if state != "deferred":
        deferred_ti.set_state(state)  # what mark-failed / clear do to the row
    asyncio.run(run_then_remove(aihc_emulator, trigger))
    assert aihc_emulator.backend.count("StopJob") == int(stopped)
    status = aihc_emulator.backend.job(job_id)["status"]
    assert (status == "ManualTermination") is stopped
