"""Models and datasets: bce-python-sdk 0.9.79 ``AihcClient.model`` / ``.dataset`` against the
emulator, unchanged, for every action, with the SDK's own quirks (``pageNumber=1&pageSize=10``
sent by default on model lists, ``CreateModel`` without ``initVersionEntry``)."""

from __future__ import annotations

import json

import pytest
from baidubce.exception import BceHttpClientError
from baidubce.services.aihc.aihc_client import AihcClient
from bce_sdk import bce_client, server_error

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios

METRICS = json.dumps({"Results": [{"Metrics": {"loss": 2.13}, "Dataset": {"DatasetId": "ds-1"}}]})


@pytest.fixture
def sdk(server: EmulatorServer) -> AihcClient:
    return bce_client(server.url)


def _model(sdk: AihcClient, name: str = "llama-ft") -> str:
    first = {"source": "UserUpload", "storageBucket": "models", "storagePath": "/llama/1/"}
    answer = sdk.model.CreateModel(
        name=name, modelFormat="HuggingFace", initVersionEntry=first, description="ft"
    )
    return str(answer.id)


def test_model_lifecycle(sdk: AihcClient, server: EmulatorServer) -> None:
    model_id = _model(sdk)
    created = sdk.model.CreateModelVersion(
        modelId=model_id,
        storageBucket="models",
        storagePath="/llama/2/",
        source="UserUpload",
        description="airflow-ti-tag=abc",
        modelMetrics=METRICS,
    )
    detail = sdk.model.DescribeModel(modelId=model_id)
    assert (detail.id, detail.name, detail.modelFormat) == (model_id, "llama-ft", "HuggingFace")
    assert detail.versionEntry.id == created.id  # the latest version
    assert detail.versionEntry.version == "v2"
    assert "latestVersionId" not in vars(detail)  # a detail has no latest* (GG)
    versions = sdk.model.DescribeModelVersions(modelId=model_id)  # pageNumber=1&pageSize=10
    assert versions.totalCount == 2
    assert [v.storagePath for v in versions.versions] == ["/llama/2/", "/llama/1/"]
    one = sdk.model.DescribeModelVersion(modelId=model_id, versionId=created.id)
    assert one.versionEntry.modelMetrics == METRICS
    assert one.versionEntry.description == "airflow-ti-tag=abc"
    listed = sdk.model.DescribeModels(keyword="llama")
    assert listed.totalCount == 1
    assert listed.models[0].latestVersionId == created.id
    sdk.model.ModifyModel(modelId=model_id, name="llama-ft2", description="renamed")
    assert sdk.model.DescribeModel(modelId=model_id).name == "llama-ft2"
    sdk.model.DeleteModelVersion(modelId=model_id, versionId=created.id)
    assert sdk.model.DescribeModelVersions(modelId=model_id).totalCount == 1
    sdk.model.DeleteModel(modelId=model_id)
    error = server_error(lambda: sdk.model.DescribeModel(modelId=model_id))
    assert (error.status_code, error.code) == (404, "ModelNotFound")
    assert server.backend.registry_counts()["modelVersions"] == 0


def test_create_model_without_init_version_as_the_sdk_allows(sdk: AihcClient) -> None:
    """META requires initVersionEntry; the SDK makes it optional: accepted, no version."""
    answer = sdk.model.CreateModel(name="bare", modelFormat="MegatronCore")
    detail = sdk.model.DescribeModel(modelId=answer.id)
    assert detail.versionEntry is None
    assert sdk.model.DescribeModels().models[0].latestVersion == ""


def test_model_requests_held_to_the_definitions(sdk: AihcClient) -> None:
    error = server_error(lambda: sdk.model.CreateModel(name="Bad_Name", modelFormat="x"))
    assert (error.status_code, error.code) == (400, "InvalidParam")
    assert "name" in str(error)
    model_id = _model(sdk)
    missing = server_error(
        lambda: sdk.model.CreateModelVersion(model_id, "b", "/p", source="")  # source required
    )
    assert "source is required" in str(missing)
    bad_metrics = server_error(
        lambda: sdk.model.CreateModelVersion(model_id, "b", "/p", "UserUpload", None, "{oops")
    )
    assert "modelMetrics must be JSON text" in str(bad_metrics)
    error = server_error(lambda: sdk.model.DescribeModelVersions(model_id, pageNumber=0))
    assert "pageNumber" in str(error)


def test_model_lists_page_and_default_to_all_without_page_size(
    sdk: AihcClient, server: EmulatorServer
) -> None:
    model_id = _model(sdk)
    for n in range(11):
        sdk.model.CreateModelVersion(model_id, "b", f"/p/{n}", "UserUpload")
    assert len(sdk.model.DescribeModelVersions(model_id).versions) == 10  # SDK's pageSize=10
    second = sdk.model.DescribeModelVersions(model_id, pageNumber=2, pageSize=10)
    assert (second.totalCount, len(second.versions)) == (12, 2)
    # META: "没传默认返回全部" (the SDK cannot leave pageSize out; a raw request can).
    raw = server.backend.state.models.version_page(model_id, str, page_no=1, page_size=None)
    assert raw.total == len(raw.items) == 12


def test_dataset_lifecycle(sdk: AihcClient, server: EmulatorServer) -> None:
    first = {"storagePath": "/data/2026-12-01/", "mountPath": "/mnt/data"}
    dataset_id = sdk.dataset.CreateDataset(
        name="clicks",
        storageType="PFS",
        storageInstance="pfs-1",
        importFormat="FOLDER",
        visibilityScope="ONLY_OWNER",
        initVersionEntry=first,
    ).id
    version_id = sdk.dataset.CreateDatasetVersion(
        datasetId=dataset_id, storagePath="/data/2026-12-02/", mountPath="/mnt/data"
    ).id
    detail = sdk.dataset.DescribeDataset(datasetId=dataset_id)
    assert (detail.latestVersionId, detail.latestVersion) == (version_id, "v2")
    assert detail.latestVersionEntry.storagePath == "/data/2026-12-02/"
    versions = sdk.dataset.DescribeDatasetVersions(datasetId=dataset_id)  # no paging: all
    assert [v.version for v in versions.versions] == ["v2", "v1"]
    one = sdk.dataset.DescribeDatasetVersion(datasetId=dataset_id, versionId=version_id)
    assert one.versionEntry.mountPath == "/mnt/data"
    assert sdk.dataset.DescribeDatasets(storageType="PFS").totalCount == 1
    assert sdk.dataset.DescribeDatasets(storageType="BOS").totalCount == 0
    assert sdk.dataset.DescribeDatasets(storageInstances="pfs-9,pfs-1").totalCount == 1
    assert sdk.dataset.DescribeDatasets(keyword="lick").datasets[0].id == dataset_id
    sdk.dataset.ModifyDataset(datasetId=dataset_id, description="daily clicks")
    assert sdk.dataset.DescribeDataset(datasetId=dataset_id).description == "daily clicks"
    sdk.dataset.DeleteDatasetVersion(datasetId=dataset_id, versionId=version_id)
    error = server_error(
        lambda: sdk.dataset.DescribeDatasetVersion(datasetId=dataset_id, versionId=version_id)
    )
    assert (error.status_code, error.code) == (404, "DatasetVersionNotFound")
    sdk.dataset.DeleteDataset(datasetId=dataset_id)
    assert server.backend.registry_counts()["datasets"] == 0


def test_dataset_enums_held_to_the_definitions(sdk: AihcClient) -> None:
    error = server_error(
        lambda: sdk.dataset.CreateDataset(
            "clicks", "bos", "b-1", "FOLDER", "ONLY_OWNER", {"storagePath": "/d"}
        )
    )
    assert "storageType must be one of PFS, BOS" in str(error)
    missing = server_error(
        lambda: sdk.dataset.CreateDatasetVersion(datasetId="ds-x", storagePath="/d", mountPath="")
    )
    assert "mountPath is required" in str(missing)


def test_unique_names_is_a_flagged_choice(sdk: AihcClient, server: EmulatorServer) -> None:
    _model(sdk, "twin")
    _model(sdk, "twin")  # default: names may repeat
    assert sdk.model.DescribeModels(keyword="twin").totalCount == 2
    server.backend.set_choices(unique_names=True)
    error = server_error(lambda: _model(sdk, "twin"))
    assert (error.status_code, error.code) == (409, "ModelAlreadyExists")


def test_lost_version_answers_leave_versions_a_retry_can_find(
    sdk: AihcClient, server: EmulatorServer
) -> None:
    """``drop_after`` on CreateModelVersion and CreateDatasetVersion: the version exists,
    the client saw no answer; a lookup by storage path (all pages) finds it."""
    model_id = _model(sdk)
    server.backend.add_fault(scenarios.drop_after(operation="CreateModelVersion"))
    with pytest.raises(BceHttpClientError):
        sdk.model.CreateModelVersion(model_id, "models", "/llama/run-7/", "UserUpload")
    paths = [v.storagePath for v in sdk.model.DescribeModelVersions(model_id).versions]
    assert "/llama/run-7/" in paths
    first = {"storagePath": "/d/1/", "mountPath": "/mnt/d"}
    dataset_id = sdk.dataset.CreateDataset("d", "BOS", "b", "FILE", "ONLY_OWNER", first).id
    server.backend.add_fault(scenarios.drop_after(operation="CreateDatasetVersion"))
    with pytest.raises(BceHttpClientError):
        sdk.dataset.CreateDatasetVersion(dataset_id, "/d/2/", "/mnt/d")
    found = sdk.dataset.DescribeDatasetVersions(datasetId=dataset_id).versions
    assert [v.storagePath for v in found] == ["/d/2/", "/d/1/"]
    assert server.backend.count("CreateDatasetVersion", 0) == 1  # dropped, as logged
