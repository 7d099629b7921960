"""The example DAGs users copy: each parses cleanly and runs end to end on the emulator."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from e2e_paths import EXAMPLES_DIR
from example_service import SERVICE_CONF

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


def test_scheduled_retraining_closes_the_loop_onto_the_service(aihc_emulator, run_dag, monkeypatch):
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    conn = aihc_emulator.connection(api_version="v2").json
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", conn)
    hook = AIHCHook()
    service_id = hook.create_service(SERVICE_CONF)
    run = run_dag(
        "aihc_scheduled_retraining",
        dags_folder=EXAMPLES_DIR,
        env={**EXAMPLE_ENV, "AIRFLOW_CONN_AIHC_DEFAULT": conn},
        conf=json.dumps({"service_id": service_id}),
    )

    assert run.succeeded, run.output[-4000:]
    [job] = aihc_emulator.backend.jobs()
    assert job["status"] == "Succeeded"
    assert re.fullmatch(r"train-[0-9a-f]{8}", job["name"])
    assert f"Promoting the model trained by AIHC job {job['jobId']}" in run.output
    assert "lm loss" in run.output  # the training log reached the task log
    assert re.search(r"Final loss [0-9.]+; promoting below 11", run.output)  # from `metrics`
    assert "GPU-hours" in run.output  # the sensor's job summary line
    # The loop's end: one dataset version, one model version carrying the final loss and
    # the dataset version, and the service rolled once onto that version's path.
    [dataset] = hook.list_datasets("clicks")
    [data_version] = hook.list_dataset_versions(dataset.id)
    [model] = hook.list_models("clicks-ranker")
    [version] = hook.list_model_versions(model.id)
    [result] = json.loads(version.model_metrics)["Results"]
    assert set(result["Metrics"]) == {"loss"}
    assert result["Dataset"] == {"DatasetId": data_version.id}
    envs = hook.get_service(service_id).service["containers"][0]["envs"]
    assert envs["AIHC_MODEL_PATH"] == f"bos://clicks-models/{version.storage_path.lstrip('/')}"
    assert aihc_emulator.backend.counts().get("ModifyService") == 1


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
