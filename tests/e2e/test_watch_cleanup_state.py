"""The pre-3.3 cleanup branch of the trigger, in a real task run on every Airflow of the
matrix: on 3.0-3.2 the task state comes through the Task SDK's supervisor and the execution
API (the path Airflow 3.0-3.2's triggerer takes), on 2.x from the DB; on >= 3.3 cleanup
leaves the job to ``on_kill`` (``tests/reliability/test_kills.py``)."""

from __future__ import annotations

import pytest

from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_3_PLUS

pytestmark = pytest.mark.dagrun


def test_cleanup_stops_the_job_when_the_waited_task_left_deferred(aihc_emulator, run_dag):
    aihc_emulator.backend.add_script(scenarios.HoldJob(status="Running"))
    run = run_dag("watch_cleanup_state")

    assert run.succeeded, run.output[-3000:]
    assert run.count("CLEANUP-DONE ") == 1, run.output[-3000:]
    [job] = aihc_emulator.backend.jobs()
    if AIRFLOW_V_3_3_PLUS:  # cleanup is not how >= 3.3 stops a job
        assert job["status"] != "ManualTermination"
        assert aihc_emulator.backend.count("StopJob") == 0
    else:
        assert job["status"] == "ManualTermination", run.output[-3000:]
        assert "its task is now success" in run.output, run.output[-3000:]
