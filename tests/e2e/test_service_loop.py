"""The dataset, model and service operators and the service sensor in one real DAG run
(``airflow dags test``), sync and deferred, with lost answers and a stuck rollout: each
ends with exactly one version, one service and one roll per change."""

from __future__ import annotations

import json
import re

import pytest

from airflow_provider_aihc.emulator.steering import scenarios

pytestmark = pytest.mark.dagrun

BROKEN = "registry.example/ranker-server:broken"
IMAGE = "registry.example/ranker-server:1"


def _printed(output: str, tag: str) -> dict:
    line = re.search(rf"^.*{tag} (\{{.*\}})$", output, re.MULTILINE)
    assert line, output[-4000:]
    return json.loads(line.group(1))


def _an_earlier_run(hook) -> None:
    """The dataset and the model as an earlier run left them: one version each."""
    hook.create_dataset(
        {"name": "loop-clicks", "storageType": "PFS", "storageInstance": "pfs-7xWeAt",
         "importFormat": "FOLDER", "visibilityScope": "ONLY_OWNER",
         "initVersionEntry": {"storagePath": "/datasets/clicks-0", "mountPath": "/mnt/data"}}
    )  # fmt: skip
    hook.create_model(
        {"name": "loop-ranker", "modelFormat": "HuggingFace",
         "initVersionEntry": {"source": "UserUpload", "storageBucket": "loop-models",
                              "storagePath": "/loop-ranker/earlier"}}
    )  # fmt: skip


def test_the_loop_runs_once_whatever_is_lost_and_reverts_a_stuck_roll(
    aihc_emulator, run_dag, monkeypatch
):
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    backend = aihc_emulator.backend
    # Each create and the sync roll lands but its answer is lost (a 5xx after doing it):
    # the try fails, Airflow retries, the retry finds what the first try made.
    backend.add_fault(
        scenarios.error_after(operation="CreateDatasetVersion"),
        scenarios.error_after(operation="CreateModelVersion"),
        scenarios.drop_after(operation="CreateService"),
        scenarios.error_after(operation="ModifyService"),
    )
    conn = aihc_emulator.connection(api_version="v2", max_retries=0)
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", conn.json)
    _an_earlier_run(AIHCHook())

    run = run_dag("service_loop", env=conn.env())

    output = run.output
    assert "state=success" in output, output[-6000:]  # roll_broken fails, not a leaf
    counts = backend.counts()
    for create in ("CreateDatasetVersion", "CreateModelVersion", "CreateService"):
        assert counts[create] == 1, (create, counts)
    # The sync roll once (its retry saw it live), the broken roll once and its revert once.
    assert counts["ModifyService"] == 3, counts
    assert counts["ModifyServiceReplicas"] == 1, counts
    lost = sorted((r.action, r.fault) for r in backend.requests if r.fault)
    assert lost == [
        ("CreateDatasetVersion", "error_after"), ("CreateModelVersion", "error_after"),
        ("CreateService", "drop_after"), ("ModifyService", "error_after"),
    ]  # fmt: skip

    data = _printed(output, "XCOM register_data")["return_value"]
    model = _printed(output, "XCOM register_model")["return_value"]
    deploy = _printed(output, "XCOM deploy")
    roll = _printed(output, "XCOM roll")
    broken = _printed(output, "XCOM roll_broken")
    service_id = deploy["service_id"]
    assert deploy["return_value"]["service_id"] == service_id
    assert deploy["return_value"]["created"] is False  # the retry adopted it
    assert roll["return_value"]["applied"] is False  # the retry found it live
    assert roll["change_id"] == roll["return_value"]["change_id"] != ""
    # The broken roll failed: no return value, but the change it sent is named.
    assert broken["return_value"] is None
    assert broken["change_id"].startswith("ch-")
    assert broken["change_id"] != roll["change_id"]
    assert model["adopted"] is True
    assert data["adopted"] is True
    assert _printed(output, "XCOM scale")["return_value"]["service_id"] == service_id

    # Before the teardown: one of each, and the revert put the rolled configuration back.
    state = _printed(output, "STATE")
    assert state["registry"] == {
        "models": 1, "modelVersions": 2, "datasets": 1, "datasetVersions": 2,
        "services": 1, "serviceChanges": 5,
    }, state  # fmt: skip
    live = _printed(output, "LIVE")  # the revert put back the rolled configuration
    assert live["containers"][0]["image"]["imageUrl"] == IMAGE != BROKEN
    envs = live["containers"][0]["envs"]
    assert envs["AIHC_MODEL_VERSION"] == f"{model['model_id']}/{model['version_id']}"
    assert live["instanceCount"] == 1
    assert "reverted to its previous configuration" in output
    assert "ImagePullBackOff" in output
    assert data["version_id"]
    assert data["version"]

    # The teardown: this run's model version and the service are gone.
    assert backend.services() == []
    [[earlier]] = [m["versions"] for m in backend.models()]
    assert earlier["id"] != model["version_id"]
    assert [len(d["versions"]) for d in backend.datasets()] == [2]
