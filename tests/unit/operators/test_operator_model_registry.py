"""The dataset-version and model-version operators against the emulator over HTTP:
registered once whatever fails (a retry, a lost create answer), adopted by their storage
path, metrics sent as Baidu's JSON string, a v1 connection and bad input refused before
any request."""

from __future__ import annotations

import json

import pytest
from operator_helpers import TaskInstanceStub, context_of
from service_helpers import require_actions, sent, total, use_api_version

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCError, AIHCValidationError
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.operators.model_registry import (
    AIHCCreateDatasetVersionOperator,
    AIHCDeleteModelVersionOperator,
    AIHCRegisterModelVersionOperator,
)

NEW_DATASET = {"storage_type": "PFS", "storage_instance": "pfs-emu0", "import_format": "FOLDER"}


@pytest.fixture
def registry(aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    use_api_version(monkeypatch, "v2")
    monkeypatch.setattr(AIHCHook, "sleep", staticmethod(lambda seconds: None))
    require_actions(aihc_emulator, "models", "datasets")
    return aihc_emulator


def _dataset_op(**kwargs: object) -> AIHCCreateDatasetVersionOperator:
    given = {"task_id": "data", "dataset_name": "clicks", "storage_path": "/pfs/clicks/d1",
             "mount_path": "/mnt/clicks", "create_dataset": NEW_DATASET, **kwargs}  # fmt: skip
    return AIHCCreateDatasetVersionOperator(**given)  # type: ignore[arg-type]


def _model_op(**kwargs: object) -> AIHCRegisterModelVersionOperator:
    given = {"task_id": "register", "model_name": "ranker", "model_format": "HuggingFace",
             "storage_bucket": "bkt", "storage_path": "/runs/r1/model",
             "model_metrics": {"loss": 0.21, "auc": 0.93}, **kwargs}  # fmt: skip
    return AIHCRegisterModelVersionOperator(**given)  # type: ignore[arg-type]


def test_a_missing_dataset_is_created_with_the_version_and_a_retry_adopts_it(
    registry: EmulatorServer,
) -> None:
    ti = TaskInstanceStub()
    first = _dataset_op().execute(context_of(ti))
    assert first["adopted"] is False
    assert first["version_id"]
    assert ti.xcom["dataset_id"] == first["dataset_id"]
    assert ti.xcom["dataset_version_id"] == first["version_id"]
    again = _dataset_op().execute(context_of(ti.retry()))
    assert again["adopted"] is True
    assert (again["dataset_id"], again["version_id"]) == (first["dataset_id"], first["version_id"])
    assert sent(registry, "CreateDataset") == 1
    assert sent(registry, "CreateDatasetVersion") == 0
    versions = AIHCHook().list_dataset_versions(first["dataset_id"])
    assert [v.storage_path for v in versions] == ["/pfs/clicks/d1"]


def test_a_lost_dataset_version_answer_is_adopted_not_registered_twice(
    registry: EmulatorServer,
) -> None:
    ti = TaskInstanceStub()
    _dataset_op().execute(context_of(ti))  # the dataset and its first version
    registry.backend.add_fault(scenarios.drop_after(operation="CreateDatasetVersion"))
    op = _dataset_op(storage_path="/pfs/clicks/d2")
    with pytest.raises(AIHCError):
        op.execute(context_of(ti.retry()))
    assert sent(registry, "CreateDatasetVersion") == 1  # not resent by the transport
    result = _dataset_op(storage_path="/pfs/clicks/d2").execute(context_of(ti.retry()))
    assert result["adopted"] is True
    versions = AIHCHook().list_dataset_versions(result["dataset_id"])
    assert sorted(v.storage_path for v in versions) == ["/pfs/clicks/d1", "/pfs/clicks/d2"]


def test_a_new_model_is_created_with_its_first_version_and_baidus_metrics_text(
    registry: EmulatorServer,
) -> None:
    ti = TaskInstanceStub()
    result = _model_op(dataset_version_id="dsv-1").execute(context_of(ti))
    assert result["adopted"] is False
    assert ti.xcom["model_version_id"] == result["version_id"]
    [version] = AIHCHook().list_model_versions(result["model_id"])
    assert json.loads(version.model_metrics) == {
        "Results": [{"Metrics": {"loss": 0.21, "auc": 0.93}, "Dataset": {"DatasetId": "dsv-1"}}]
    }
    assert "airflow-ti-tag=" in version.description
    assert sent(registry, "CreateModel") == 1


@pytest.mark.parametrize("fault", [scenarios.drop_after, None])
def test_a_model_version_is_registered_once_across_retries_and_lost_answers(
    registry: EmulatorServer, fault: object
) -> None:
    ti = TaskInstanceStub()
    model_id = _model_op().execute(context_of(ti))["model_id"]
    second = {"storage_path": "/runs/r2/model"}
    if fault is not None:
        registry.backend.add_fault(scenarios.drop_after(operation="CreateModelVersion"))
        with pytest.raises(AIHCError):
            _model_op(**second).execute(context_of(ti.retry()))
    first = _model_op(**second).execute(context_of(ti.retry()))
    again = _model_op(**second).execute(context_of(ti.retry()))
    assert again["version_id"] == first["version_id"]
    assert again["adopted"] is True
    assert sent(registry, "CreateModelVersion") == 1
    paths = sorted(v.storage_path for v in AIHCHook().list_model_versions(model_id))
    assert paths == ["/runs/r1/model", "/runs/r2/model"]


def test_deleting_a_model_version_twice_counts_the_second_as_done(
    registry: EmulatorServer,
) -> None:
    result = _model_op().execute(context_of(TaskInstanceStub()))
    ids = {"model_id": result["model_id"], "version_id": result["version_id"]}
    _model_op(storage_path="/runs/r9/model").execute(context_of(TaskInstanceStub()))
    for _ in range(2):
        AIHCDeleteModelVersionOperator(task_id="rm", **ids).execute(context_of(TaskInstanceStub()))
    left = AIHCHook().list_model_versions(result["model_id"])
    assert [v.storage_path for v in left] == ["/runs/r9/model"]


def test_a_v1_connection_is_refused_before_any_request(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_api_version(monkeypatch, "v1")
    for op in (_model_op(), _dataset_op()):
        with pytest.raises(AIHCConfigError, match="api_version"):
            op.execute(context_of(TaskInstanceStub()))
    assert total(aihc_emulator) == 0


def test_a_bad_create_dataset_names_the_allowed_values() -> None:
    op = _dataset_op(create_dataset={**NEW_DATASET, "import_format": "ZIP"})
    with pytest.raises(AIHCValidationError, match="must be one of FILE, FOLDER; got 'ZIP'"):
        op._check()


def test_without_create_dataset_a_missing_dataset_fails_after_the_lookup_creating_nothing(
    registry: EmulatorServer,
) -> None:
    """Whether the dataset exists is known only after DescribeDatasets: without
    ``create_dataset`` that one lookup is sent, and nothing is created."""
    with pytest.raises(AIHCValidationError, match=r"create_dataset\.storage_type"):
        _dataset_op(create_dataset=None).execute(context_of(TaskInstanceStub()))
    assert sent(registry, "DescribeDatasets") == 1
    assert sent(registry, "CreateDataset") == 0


@pytest.mark.parametrize(
    ("op", "field"),
    [
        (lambda: _model_op(model_name="Bad_Name"), "model_name"),
        (lambda: _model_op(model_metrics="{oops"), "model_metrics"),
        (lambda: _model_op(model_id="m-1"), "model_id / model_name"),
        (lambda: _dataset_op(dataset_name="no way"), "dataset_name"),
        (lambda: _dataset_op(mount_path=""), "mount_path"),
        (
            lambda: _dataset_op(create_dataset={"storage_type": "PFS", "storage_instance": "p"}),
            "create_dataset.import_format",
        ),
        (
            lambda: _dataset_op(create_dataset={**NEW_DATASET, "storage_type": "NFS"}),
            "create_dataset.storage_type",
        ),
        (
            lambda: _dataset_op(create_dataset={**NEW_DATASET, "visibility_scope": "PUBLIC"}),
            "create_dataset.visibility_scope",
        ),
        (lambda: _dataset_op(create_dataset={"bucket": "b"}), "create_dataset"),
    ],
)
def test_bad_input_names_the_field_before_any_request(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, op: object, field: str
) -> None:
    use_api_version(monkeypatch, "v2")
    with pytest.raises(AIHCValidationError, match=field.split(" ")[0]) as refused:
        op().execute(context_of(TaskInstanceStub()))  # type: ignore[operator]
    # The message names what was about to be sent, never a job.
    subject = "dataset" if field.startswith(("dataset_name", "mount_path", "create")) else "model"
    assert str(refused.value).startswith(f"Invalid AIHC {subject}")
    assert total(aihc_emulator) == 0
