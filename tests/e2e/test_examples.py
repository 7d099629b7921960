"""The example DAGs users copy: each parses cleanly and runs end to end on the emulator."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from e2e_paths import EXAMPLES_DIR

pytestmark = pytest.mark.dagrun

EXAMPLE_ENV = {"AIHC_EXAMPLE_POLL_SECONDS": "0.2"}


def test_every_example_dag_parses_without_import_errors():
    script = (
        "import sys\n"
        "try:\n"
        "    from airflow.dag_processing.dagbag import DagBag\n"
        "except ImportError:\n"
        "    from airflow.models.dagbag import DagBag\n"
        f"bag = DagBag({str(EXAMPLES_DIR)!r})\n"
        "print(sorted(bag.dag_ids)); print(bag.import_errors)\n"
        "sys.exit(1 if bag.import_errors else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)

    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "['aihc_cleanup', 'aihc_hyperparameter_sweep', 'aihc_llama2_seed_job', "
        "'aihc_orphan_sweep', 'aihc_scheduled_retraining', 'aihc_taskflow_retraining', "
        "'aihc_training_data_update']" in done.stdout
    )


def test_scheduled_retraining_trains_evaluates_and_promotes(aihc_emulator, run_dag):
    run = run_dag("aihc_scheduled_retraining", dags_folder=EXAMPLES_DIR, env=EXAMPLE_ENV)

    assert run.succeeded, run.output[-4000:]
    [job] = aihc_emulator.backend.jobs()
    assert job["status"] == "Succeeded"
    assert re.fullmatch(r"train-[0-9a-f]{8}", job["name"])
    assert f"Promoting the model trained by AIHC job {job['jobId']}" in run.output
    assert "lm loss" in run.output  # the training log reached the task log
    assert re.search(r"Final loss [0-9.]+; promoting below 11", run.output)  # from `metrics`
    assert "GPU-hours" in run.output  # the sensor's job summary line


def test_sweep_runs_one_job_per_learning_rate_and_picks_the_best(aihc_emulator, run_dag):
    run = run_dag("aihc_hyperparameter_sweep", dags_folder=EXAMPLES_DIR, env=EXAMPLE_ENV)

    assert run.succeeded, run.output[-4000:]
    jobs = aihc_emulator.backend.jobs()
    assert sorted(job["labels"]["learning-rate"] for job in jobs) == ["1e-3", "1e-4", "3e-4"]
    assert {job["status"] for job in jobs} == {"Succeeded"}
    assert len({job["name"] for job in jobs}) == 3
    best = re.search(r"Best trial: (\S+)", run.output)
    assert best
    assert best.group(1) in {job["jobId"] for job in jobs}


def test_seed_job_runs_from_its_json_body(aihc_emulator, run_dag):
    run = run_dag("aihc_llama2_seed_job", dags_folder=EXAMPLES_DIR, env=EXAMPLE_ENV)

    assert run.succeeded, run.output[-4000:]
    [job] = aihc_emulator.backend.jobs()
    assert job["status"] == "Succeeded"
    assert job["body"]["jobSpec"]["resources"] == [
        {"name": "baidu.com/a800_80g_cgpu", "quantity": 8}
    ]
    assert job["body"]["datasources"][0]["name"] == "pfs-7xWeAt"


def test_cleanup_teardowns_stop_and_delete_the_job(aihc_emulator, run_dag):
    run = run_dag("aihc_cleanup", dags_folder=EXAMPLES_DIR, env=EXAMPLE_ENV)

    assert run.succeeded, run.output[-4000:]
    assert aihc_emulator.backend.count("CreateJob") == 1
    assert aihc_emulator.backend.count("DeleteJob") == 1
    assert aihc_emulator.backend.jobs() == []
