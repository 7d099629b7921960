"""The runner records a job its observations never caught, from the run's own log.

The stop example creates, stops and deletes its job in about a second on the emulator; on
a loaded machine that can fall between two observations, and a runner that knew jobs only
from the list would report none and clean up none (seen once in CI). Here observation is
off for the whole run, so the create operator's log line is the only way to know the job.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import emulator_target
from system_runner import ALREADY_DELETED, CONN_ID, SYSTEM_DIR, SystemRun

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression

EXAMPLE = SYSTEM_DIR / "aihc" / "example_aihc_stop_job.py"


def test_a_job_created_and_deleted_between_observations_is_in_the_report(
    airflow_db: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", "")  # restored after the test
    pace = Progression(polls_per_status=None, seconds_per_status=0.3, running_seconds=3)
    server = EmulatorServer(progression=pace).start()
    try:
        with SystemRun(emulator_target(server.url), tmp_path) as run:
            run.observe_while_running = False
            run.run_dag("example_aihc_stop_job", str(EXAMPLE))
        created = server.backend.count("CreateJob")
    finally:
        server.stop()

    assert created == 1
    (dag,) = json.loads((tmp_path / "report.json").read_text())["dags"]
    (job,) = dag["jobs"]
    assert job["job_id"].startswith("pytorchjob-")
    assert job["name"].startswith("create-job-")
    assert job["statuses"] == [], "observation was off: no status can have been seen"
    assert job["cleanup"] == [ALREADY_DELETED]
