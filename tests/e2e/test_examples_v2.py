"""The seed job and every example DAG, unchanged, on a connection with ``api_version: v2``:
the hook speaks AIHC's v2 actions to the emulator, which serves both dialects."""

from __future__ import annotations

import json
import os

import pytest
from e2e_paths import EXAMPLES_DIR
from example_service import V2_ONLY_EXAMPLES, retraining_conf

from airflow_provider_aihc.emulator.pytest_plugin import CONN_ENV

pytestmark = pytest.mark.dagrun

EXAMPLE_ENV = {"AIHC_EXAMPLE_POLL_SECONDS": "0.2"}
REGISTRY_PASSWORD = "registry-pw-5f1e9c"  # as in dags/create_v2_additions.py


@pytest.fixture
def on_v2(aihc_emulator, monkeypatch):
    """``aihc_default`` on the emulator, speaking v2."""
    conn = json.loads(os.environ[CONN_ENV])
    conn["extra"]["api_version"] = "v2"
    monkeypatch.setenv(CONN_ENV, json.dumps(conn))
    return aihc_emulator


def spoke_only_v2(server) -> bool:
    records = server.backend.requests
    return bool(records) and all(record.action and record.path == "/" for record in records)


@pytest.mark.parametrize(
    "dag_id",
    [
        "aihc_llama2_seed_job",
        "aihc_scheduled_retraining",
        "aihc_hyperparameter_sweep",
        "aihc_cleanup",
    ],
)
def test_example_runs_on_v2(on_v2, run_dag, dag_id):
    # the v2-only retraining example rolls a service that exists before it runs
    conf = json.dumps(retraining_conf()) if dag_id in V2_ONLY_EXAMPLES else None
    run = run_dag(dag_id, dags_folder=EXAMPLES_DIR, env=EXAMPLE_ENV, conf=conf)

    assert run.succeeded, run.output[-4000:]
    assert spoke_only_v2(on_v2), on_v2.backend.requests[:5]
    assert on_v2.backend.count("CreateJob") >= 1
    jobs = on_v2.backend.jobs()
    if dag_id == "aihc_cleanup":
        assert jobs == []
        assert on_v2.backend.count("DeleteJob") == 1
    else:
        assert jobs
        assert {job["status"] for job in jobs} == {"Succeeded"}
        assert all(job["jobId"].startswith("job-") for job in jobs)


def test_seed_job_body_is_sent_in_v2_form(on_v2, run_dag):
    run = run_dag("aihc_llama2_seed_job", dags_folder=EXAMPLES_DIR, env=EXAMPLE_ENV)

    assert run.succeeded, run.output[-4000:]
    [job] = on_v2.backend.jobs()
    body = job["body"]
    assert body["command"].startswith("#!/bin/bash") or "torch" in body["command"]
    assert "command" not in body["jobSpec"]
    assert (body["jobType"], body["queue"]) == ("PyTorchJob", "default")
    assert body["datasources"][0]["name"] == "pfs-7xWeAt"


def test_v2_additions_run_and_the_registry_password_stays_out_of_the_logs(on_v2, run_dag):
    run = run_dag("create_v2_additions")

    assert run.succeeded, run.output[-4000:]
    [job] = on_v2.backend.jobs()
    body = job["body"]
    assert (body["jobType"], body["retentionPeriod"]) == ("TFJob", "1d")
    assert body["jobSpec"]["Worker"]["replicas"] == 2
    assert body["jobSpec"]["Worker"]["imageConfig"]["password"] == REGISTRY_PASSWORD
    assert body["tensorboardConfig"] == {"enable": True, "logPath": "/mnt/tb"}
    assert body["alertConfig"] == {"alertName": "stalled", "for": "10m"}
    assert job["status"] == "Succeeded"
    assert REGISTRY_PASSWORD not in run.output


def test_v2_additions_on_v1_are_refused_naming_field_and_dialect(aihc_emulator, run_dag):
    run = run_dag("create_v2_additions")

    assert not run.succeeded
    assert "jobFramework (job_framework)" in run.output
    # retentionPeriod is defined for both (bce-sdk-go api/v1/aiJob.go:183): not refused
    assert "retentionPeriod (retention_period)" not in run.output
    assert "api_version v2" in run.output
    assert aihc_emulator.backend.requests == []
    assert REGISTRY_PASSWORD not in run.output
