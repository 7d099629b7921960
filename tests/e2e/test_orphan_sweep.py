"""The orphan sweep in a real DAG run on the emulator (issue #34): the job of an ended task
instance is stopped; a live task's job, another deployment's, a job its task only started
and one whose task instance cannot be found are left; a dry run stops nothing."""

from __future__ import annotations

import re

import pytest

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios

pytestmark = pytest.mark.dagrun


def test_the_sweep_stops_only_the_job_of_the_ended_task(aihc_emulator: EmulatorServer, run_dag):
    aihc_emulator.backend.add_script(scenarios.ForceStatus(status="Running", times=10))

    run = run_dag("orphan_sweep_cases", env={"AIRFLOW__AIHC__DEPLOYMENT_ID": "production"})

    assert run.succeeded, run.output[-6000:]
    planted = dict(re.findall(r"planted (\S+) for (.+?) watched", run.output))
    assert len(planted) == 5, run.output[-6000:]
    statuses = {job["jobId"]: job["status"] for job in aihc_emulator.backend.jobs()}
    stopped = [job_id for job_id, status in statuses.items() if status != "Running"]
    [ended] = [job_id for job_id, who in planted.items() if who == "this task instance"]
    assert stopped == [ended], (statuses, planted)
    assert aihc_emulator.backend.count("StopJob") == 1
    assert f"Would stop AIHC job {ended}" in run.output  # the dry run
    stop_line = rf"Stopped AIHC job {ended} .*of task instance orphan_sweep_cases/"
    assert re.search(stop_line, run.output)
    assert "Airflow deployment 'staging' created it" in run.output  # seen and left
    assert "its task only started it" in run.output
    assert "its task is" in run.output  # `after`: not yet run
    assert "its task instance cannot be found" in run.output
