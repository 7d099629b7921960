"""Airflow 2.x: a trigger keeps its log position in the task instance's row of Airflow's
real XCom table, and a trigger started again long after the deferral (a takeover) resumes
from it: every line shown, none of the lines before the saved position twice.

(On Airflow 3 the XCom goes through a triggerer's supervisor: ``make test-deployment``'s
scenario 2 reads it back over the REST API.)
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import pytest
from airflow2_rows import deferred_task_instance

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.triggers.log_position import LogPositionStore
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

pytestmark = pytest.mark.skipif(AIRFLOW_V_3_0_PLUS, reason="Airflow 2.x: the DB is the XCom's")


@pytest.fixture
def deferred_ti(airflow_db: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("AIRFLOW__TRIGGERER__TRIGGERER_HEALTH_CHECK_THRESHOLD", "0.4")
    return deferred_task_instance("log_position", "position")


def _copied(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage()[:4].isdigit()]


def test_a_takeover_resumes_from_the_position_in_airflows_xcom(
    aihc_emulator: EmulatorServer, deferred_ti: Any, caplog: pytest.LogCaptureFixture
) -> None:
    aihc_emulator.backend.progression = Progression(
        polls_per_status=None, seconds_per_status=0.05, running_seconds=2.5,
        log_lines_per_second=20.0,
    )  # fmt: skip
    body = {"name": "kept", "jobSpec": {"image": "i", "command": "c", "replicas": 1}}
    job_id = AIHCHook().create_job(body).job_id
    caplog.set_level("INFO")

    def trigger() -> AIHCJobTrigger:
        kept = AIHCJobTrigger(
            job_id, DEFAULT_RESOURCE_POOL_ID, poll_interval=0.05, deferred_at=time.time() - 60
        )
        kept.task_instance = deferred_ti
        return kept

    async def killed_after(seconds: float) -> None:
        task = asyncio.ensure_future(trigger().run().__anext__())
        await asyncio.sleep(seconds)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(killed_after(1.2))
    saved = asyncio.run(LogPositionStore(deferred_ti, job_id).load())
    assert saved is not None, "no position in the XCom table"
    assert saved.markers
    first = _copied(caplog)

    async def to_the_end() -> list[Any]:
        return [event.payload async for event in trigger().run()]

    [payload] = asyncio.run(to_the_end())

    assert payload["status"] == "success"
    pod = "kept-master-0"
    page = aihc_emulator.backend.pod_logs(DEFAULT_RESOURCE_POOL_ID, job_id, pod, marker="")
    written = [line for line in page.lines if line]
    shown = Counter(_copied(caplog))
    assert set(written) <= set(shown)
    twice = [line for line, n in shown.items() if n > 1]
    assert len(twice) < len(first), "the takeover copied the log again from the deferral"
    assert "this trigger took over" in caplog.text
