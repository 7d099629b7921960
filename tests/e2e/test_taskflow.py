"""``@task.aihc`` and ``@task.aihc_python`` in real DAG runs (``airflow dags
test``) against the executing emulator (``aihc_emulator_execute``): the jobs' commands run
as local processes, and the values the tasks pass on are what those processes computed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e_paths import AIRFLOW, DAGS_DIR, EXAMPLES_DIR
from local_processes import job_processes, wait_for

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.server import EmulatorServer

pytestmark = pytest.mark.dagrun

CHECK = "TASKFLOW-CHECK "
DAG_FILE = DAGS_DIR / "taskflow.py"


def _jobs_by_task(server: EmulatorServer) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for job in server.backend.jobs():
        found.setdefault(job["labels"]["airflow-task-id"], []).append(job)
    return found


def _pod_lines(server: EmulatorServer, job: dict[str, Any], pod: str) -> list[str]:
    page = server.backend.pod_logs(DEFAULT_RESOURCE_POOL_ID, job["jobId"], pod)
    return [line.split(" ", 1)[1] for line in page.lines]


def _line_of(text: str) -> int:
    """The line of the DAG file that holds ``text``."""
    lines = DAG_FILE.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_a_dag_of_taskflow_tasks_passes_on_what_the_jobs_computed(
    aihc_emulator_execute: EmulatorServer, run_dag: Any
) -> None:
    run = run_dag("taskflow_chain")

    assert run.succeeded, run.output[-6000:]
    [line] = [line for line in run.output.splitlines() if CHECK in line]
    got = json.loads(line.split(CHECK, 1)[1])
    jobs = _jobs_by_task(aihc_emulator_execute)
    [square], [add], [echo] = jobs["square"], jobs["add"], jobs["echo"]
    assert all(job["status"] == "Succeeded" for group in jobs.values() for job in group)
    # two replicas: both ran the function, rank 0's value is the task's
    assert square["body"]["jobSpec"]["replicas"] == 2
    assert "rank 0 of 2 squares 3" in _pod_lines(
        aihc_emulator_execute, square, f"{square['name']}-master-0"
    )
    assert "rank 1 of 2 squares 3" in _pod_lines(
        aihc_emulator_execute, square, f"{square['name']}-worker-0"
    )
    assert got["square"]["value"] == 18.0  # 3 from the upstream XCom, squared, times 2
    assert (got["square"]["rank"], got["square"]["world"]) == (0, 2)
    assert got["square"]["job"] == square["jobId"]  # computed inside that job's process
    assert got["square"]["pid"] != got["worker_pid"]
    # an upstream @task.aihc_python value as an argument, waited for deferred
    assert got["add"] == {"value": 23.0, "job": add["jobId"]}
    # mapped: one job per index, each returning its own value
    assert got["cubes"] == [1, 8, 27]
    assert len(jobs["cube"]) == 3
    assert sorted(job["labels"]["airflow-map-index"] for job in jobs["cube"]) == ["0", "1", "2"]
    # @task.aihc: the returned list, shell-quoted, ran; the task's value is the job id
    assert (
        echo["body"]["jobSpec"]["command"]
        == "echo 'total is 23.0' 'and a '\"'\"'quoted'\"'\"' word'"
    )
    assert got["echo"] == echo["jobId"]
    assert "total is 23.0 and a 'quoted' word" in run.output  # streamed into the task log
    summarised = set(re.findall(r"AIHC job (\S+) summary: Succeeded", run.output))
    assert summarised == {job["jobId"] for group in jobs.values() for job in group}
    assert aihc_emulator_execute.backend.count("CreateJob") == 6
    for group in jobs.values():
        for job in group:
            assert job_processes(job["jobId"]) == []


def test_a_failing_function_shows_the_jobs_traceback_and_a_non_json_argument_sends_nothing(
    aihc_emulator_execute: EmulatorServer, run_dag: Any
) -> None:
    run = run_dag("taskflow_failures")

    assert not run.succeeded
    jobs = _jobs_by_task(aihc_emulator_execute)
    [diverge] = jobs["diverge"]
    assert diverge["status"] == "Failed"
    assert diverge["reason"] == f"{diverge['name']}-master-0 exited with code 1"
    # the task log shows the traceback the job printed, with the DAG file's own line
    raise_line = _line_of('raise FloatingPointError(f"loss diverged')
    assert f'File "taskflow.py", line {raise_line}, in diverge' in run.output
    assert "FloatingPointError: loss diverged to 125000.0 at lr=5.0" in run.output
    assert "step 2 loss 125000.0" in run.output
    # the date never left the worker: no job, an error naming the argument and its type
    assert "not_json" not in jobs
    assert aihc_emulator_execute.backend.count("CreateJob") == 1
    assert "argument 'when': a datetime.date cannot travel as JSON" in run.output


def test_a_killed_task_stops_its_job_and_leaves_no_local_process(
    aihc_emulator_execute: EmulatorServer, airflow_db: None, tmp_path: Path
) -> None:
    env = {**os.environ, "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_DIR)}
    log = (tmp_path / "killed.log").open("w")
    airflow = subprocess.Popen(
        [AIRFLOW, "dags", "test", "taskflow_killed"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        job = wait_for(
            "the job's replicas to run",
            lambda: next(
                (
                    j
                    for j in aihc_emulator_execute.backend.jobs()
                    if len(job_processes(j["jobId"])) >= 2
                ),
                None,
            ),
            timeout=240,
        )
        wait_for(
            "the task to stream the job's log",
            lambda: "training forever" in (tmp_path / "killed.log").read_text(),
            timeout=120,
        )

        airflow.send_signal(signal.SIGTERM)  # what Airflow does to a task it kills

        wait_for(
            "the job to be stopped",
            lambda: (
                aihc_emulator_execute.backend.job(job["jobId"])["status"] == "ManualTermination"
            ),
        )
        wait_for("its processes to be gone", lambda: not job_processes(job["jobId"]))
    finally:
        if airflow.poll() is None:
            airflow.kill()
        airflow.wait(60)
        log.close()
    assert "Task killed: stopped AIHC job" in (tmp_path / "killed.log").read_text()


def test_the_taskflow_retraining_example_trains_on_two_replicas_and_promotes(
    aihc_emulator_execute: EmulatorServer, run_dag: Any
) -> None:
    run = run_dag(
        "aihc_taskflow_retraining",
        dags_folder=EXAMPLES_DIR,
        env={"AIHC_EXAMPLE_POLL_SECONDS": "0.2"},
    )

    assert run.succeeded, run.output[-6000:]
    [job] = aihc_emulator_execute.backend.jobs()
    assert (job["status"], job["body"]["jobSpec"]["replicas"]) == ("Succeeded", 2)
    losses = [float(loss) for loss in re.findall(r"epoch +\d+ loss=([0-9.]+)", run.output)]
    assert losses[-1] < losses[0] / 10  # it learned, line by line in the task log
    trained = re.search(
        r"Trained model: (\{.*?\}); metrics read from the job's log: (\{.*?\})", run.output
    )
    assert trained, run.output[-4000:]
    model, metrics = (ast.literal_eval(group) for group in trained.groups())
    assert model["replicas"] == 2
    assert abs(model["w"] - 3.0) < 0.1
    assert abs(model["b"] - 2.0) < 0.1
    assert metrics["loss"] == model["loss"] == losses[-1]
    assert "promoted w=" in run.output
