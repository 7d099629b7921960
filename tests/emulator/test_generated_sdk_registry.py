"""Models and datasets through Baidu's generated client, ``baiducloud-python-sdk-aihc`` 0.0.4,
unchanged: its typed answer models (``from_dict``) read the emulator's answers.  The models
are lenient (a missing field becomes ``None``), so each test asserts the fields it needs:
a misspelt field name in the emulator shows here as ``None``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from baiducloud_python_sdk_aihc.api.aihc_client import AihcClient
from baiducloud_python_sdk_aihc.models.create_dataset_request import CreateDatasetRequest
from baiducloud_python_sdk_aihc.models.create_dataset_version_request import (
    CreateDatasetVersionRequest,
)
from baiducloud_python_sdk_aihc.models.create_model_request import CreateModelRequest
from baiducloud_python_sdk_aihc.models.create_model_version_request import (
    CreateModelVersionRequest,
)
from baiducloud_python_sdk_aihc.models.dataset_version_entry import DatasetVersionEntry
from baiducloud_python_sdk_aihc.models.delete_model_version_request import (
    DeleteModelVersionRequest,
)
from baiducloud_python_sdk_aihc.models.describe_dataset_request import DescribeDatasetRequest
from baiducloud_python_sdk_aihc.models.describe_dataset_version_request import (
    DescribeDatasetVersionRequest,
)
from baiducloud_python_sdk_aihc.models.describe_dataset_versions_request import (
    DescribeDatasetVersionsRequest,
)
from baiducloud_python_sdk_aihc.models.describe_datasets_request import DescribeDatasetsRequest
from baiducloud_python_sdk_aihc.models.describe_model_request import DescribeModelRequest
from baiducloud_python_sdk_aihc.models.describe_model_version_request import (
    DescribeModelVersionRequest,
)
from baiducloud_python_sdk_aihc.models.describe_model_versions_request import (
    DescribeModelVersionsRequest,
)
from baiducloud_python_sdk_aihc.models.describe_models_request import DescribeModelsRequest
from baiducloud_python_sdk_aihc.models.model_version_entry import ModelVersionEntry
from baiducloud_python_sdk_aihc.models.modify_model_request import ModifyModelRequest
from baiducloud_python_sdk_core.auth.bce_credentials import BceCredentials
from baiducloud_python_sdk_core.bce_client_configuration import BceClientConfiguration
from baiducloud_python_sdk_core.retry.retry_policy import NoRetryPolicy

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_SECRET_ACCESS_KEY,
    EmulatorServer,
)

METRICS = json.dumps({"Results": [{"Metrics": {"loss": 1.5}}]})


@pytest.fixture
def gen(server: EmulatorServer) -> Any:
    config = BceClientConfiguration(
        credentials=BceCredentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY),
        endpoint=server.url,
        retry_policy=NoRetryPolicy(),
    )
    return AihcClient(config)


def test_model_answers_carry_the_generated_field_names(gen: Any) -> None:
    first = ModelVersionEntry(source="UserUpload", storage_bucket="b", storage_path="/m/1/")
    model_id = gen.create_model(CreateModelRequest("qwen", "HuggingFace", first)).id
    assert model_id
    version_id = gen.create_model_version(
        CreateModelVersionRequest(model_id, "b", "/m/2/", "UserUpload", "d", METRICS)
    ).id
    models = gen.describe_models(DescribeModelsRequest(keyword="qwen"))
    assert models.total_count == 1
    item = models.models[0]
    assert (item.id, item.name, item.init_source, item.model_format) == (
        model_id,
        "qwen",
        "UserUpload",
        "HuggingFace",
    )
    assert (item.latest_version, item.latest_version_id) == ("v2", version_id)
    assert (item.owner, item.owner_name) == (DEFAULT_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_ID)
    assert item.visibility_scope == "ONLY_OWNER"
    assert isinstance(item.created_at, str)
    assert isinstance(item.updated_at, str)
    detail = gen.describe_model(DescribeModelRequest(model_id))
    assert (detail.id, detail.name, detail.version_entry.id) == (model_id, "qwen", version_id)
    one = gen.describe_model_version(DescribeModelVersionRequest(model_id, version_id))
    entry = one.version_entry
    assert (entry.version, entry.source, entry.storage_bucket, entry.storage_path) == (
        "v2",
        "UserUpload",
        "b",
        "/m/2/",
    )
    assert (entry.model_metrics, entry.description) == (METRICS, "d")
    versions = gen.describe_model_versions(DescribeModelVersionsRequest(model_id))
    assert versions.total_count == 2
    assert [v.version for v in versions.versions] == ["v2", "v1"]
    gen.modify_model(ModifyModelRequest(model_id, "qwen2", "renamed"))
    gen.delete_model_version(DeleteModelVersionRequest(model_id, version_id))
    detail = gen.describe_model(DescribeModelRequest(model_id))
    assert (detail.name, detail.description, detail.version_entry.version) == (
        "qwen2",
        "renamed",
        "v1",
    )


def test_dataset_answers_carry_the_generated_field_names(gen: Any) -> None:
    first = DatasetVersionEntry(storage_path="/d/1/", mount_path="/mnt/d")
    request = CreateDatasetRequest("clicks", "BOS", "bos-1", "FILE", "ALL_PEOPLE", first)
    dataset_id = gen.create_dataset(request).id
    version_id = gen.create_dataset_version(
        CreateDatasetVersionRequest(dataset_id, "/d/2/", "/mnt/d", "second")
    ).id
    listed = gen.describe_datasets(DescribeDatasetsRequest(import_format="FILE"))
    item = listed.datasets[0]
    assert (listed.total_count, item.id, item.name) == (1, dataset_id, "clicks")
    assert (item.storage_type, item.storage_instance, item.import_format) == (
        "BOS",
        "bos-1",
        "FILE",
    )
    assert (item.latest_version_id, item.latest_version, item.permission) == (
        version_id,
        "v2",
        "rw",
    )
    assert item.visibility_scope == "ALL_PEOPLE"
    detail = gen.describe_dataset(DescribeDatasetRequest(dataset_id))
    assert detail.latest_version_entry.storage_path == "/d/2/"
    assert detail.latest_version_entry.description == "second"
    one = gen.describe_dataset_version(DescribeDatasetVersionRequest(dataset_id, version_id))
    assert (one.version_entry.mount_path, one.version_entry.create_user) == (
        "/mnt/d",
        DEFAULT_ACCESS_KEY_ID,
    )
    versions = gen.describe_dataset_versions(DescribeDatasetVersionsRequest(dataset_id))
    assert [v.version for v in versions.versions] == ["v2", "v1"]
