"""The emulator's model and dataset actions held to Baidu's definitions (bce-openapi-meta
HEAD ``11913e343072``, copied into ``emulator/dialects/v2/definitions.py``): every action
is served with the definition's method, a request that leaves out one required parameter
is refused naming it, and the complete request is accepted.  ``LENIENT`` lists where an
official client sends less, with its source."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from aihc_emulator_client import Client

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.dialects.v2 import ACTIONS
from airflow_provider_aihc.emulator.dialects.v2.definitions import ACTIONS as DEFINED
from airflow_provider_aihc.emulator.dialects.v2.definitions import LENIENT

#: The 18 model and dataset actions of bce-openapi-meta ``schema/aihc/`` (ls at 11913e3).
META_ACTIONS = {
    f"{verb}{noun}"
    for noun in ("Model", "ModelVersion", "Dataset", "DatasetVersion")
    for verb in ("Create", "Describe", "Delete")
} | {"DescribeModels", "DescribeModelVersions", "DescribeDatasets", "DescribeDatasetVersions"}
META_ACTIONS |= {"ModifyModel", "ModifyDataset"}
#: A complete request per action: ``{placeholder}`` names a resource made for the case.
REQUESTS: dict[str, tuple[dict[str, str], dict[str, Any]]] = {
    "CreateModel": ({}, {"name": "m", "modelFormat": "HuggingFace", "initVersionEntry": {}}),
    "CreateModelVersion": (
        {"modelId": "{model}"},
        {"storageBucket": "b", "storagePath": "/p", "source": "UserUpload"},
    ),
    "DescribeModel": ({"modelId": "{model}"}, {}),
    "DescribeModels": ({}, {}),
    "DescribeModelVersion": ({"modelId": "{model}", "versionId": "{model_version}"}, {}),
    "DescribeModelVersions": ({"modelId": "{model}"}, {}),
    "ModifyModel": ({"modelId": "{model}"}, {"name": "m2", "description": "d"}),
    "DeleteModel": ({"modelId": "{model}"}, {}),
    "DeleteModelVersion": ({"modelId": "{model}", "versionId": "{model_version}"}, {}),
    "CreateDataset": (
        {},
        {
            "name": "d",
            "storageType": "PFS",
            "storageInstance": "pfs-1",
            "importFormat": "FOLDER",
            "visibilityScope": "ONLY_OWNER",
            "initVersionEntry": {"storagePath": "/d", "mountPath": "/mnt"},
        },
    ),
    "CreateDatasetVersion": ({"datasetId": "{dataset}"}, {"storagePath": "/d", "mountPath": "/m"}),
    "DescribeDataset": ({"datasetId": "{dataset}"}, {}),
    "DescribeDatasets": ({}, {}),
    "DescribeDatasetVersion": ({"datasetId": "{dataset}", "versionId": "{dataset_version}"}, {}),
    "DescribeDatasetVersions": ({"datasetId": "{dataset}"}, {}),
    "ModifyDataset": ({"datasetId": "{dataset}"}, {}),
    "DeleteDataset": ({"datasetId": "{dataset}"}, {}),
    "DeleteDatasetVersion": ({"datasetId": "{dataset}", "versionId": "{dataset_version}"}, {}),
}
V2 = {"version": "v2"}


@pytest.fixture(scope="module")
def running() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def send(client: Client, action: str, query: dict[str, str], body: dict[str, Any]) -> Any:
    method = DEFINED[action][0]
    return client.request(
        method, "/", {"action": action, **query}, body if method == "POST" else None, headers=V2
    )


def _resources(client: Client) -> dict[str, str]:
    """A fresh model and dataset, each with a version, for one case."""
    made: dict[str, str] = {}
    for kind, action in (("model", "CreateModel"), ("dataset", "CreateDataset")):
        made[kind] = send(client, action, *REQUESTS[action]).json()["id"]
        version = f"{action}Version"
        query = {k: v.format(**made) for k, v in REQUESTS[version][0].items()}
        made[f"{kind}_version"] = send(client, version, query, REQUESTS[version][1]).json()["id"]
    return made


def test_every_defined_action_is_served_with_its_method() -> None:
    assert set(DEFINED) == META_ACTIONS == set(REQUESTS)
    for action, (method, _) in DEFINED.items():
        assert (ACTIONS[action].method, ACTIONS[action].action) == (method, action)


CASES = [
    pytest.param(action, param.position, param.name, id=f"{action}-{param.name}")
    for action, (_, params) in DEFINED.items()
    for param in params
    if param.required and (action, param.name) not in LENIENT
]


@pytest.mark.parametrize(("action", "where", "name"), CASES)
def test_a_missing_required_parameter_is_refused_by_name(
    running: EmulatorServer, action: str, where: str, name: str
) -> None:
    client = Client(running.url)
    made = _resources(client)
    query = {k: v.format(**made) for k, v in REQUESTS[action][0].items()}
    body = dict(REQUESTS[action][1])
    (query if where == "QUERY" else body).pop(name)
    answer = send(client, action, query, body)
    assert answer.status_code == 400, answer.text
    assert f"{name} is required" in answer.json()["message"]
    (query if where == "QUERY" else body)[name] = (
        {k: v.format(**made) for k, v in REQUESTS[action][0].items()} | REQUESTS[action][1]
    )[name]
    complete = send(client, action, query, body)
    assert complete.status_code == 200, complete.text


def test_a_string_field_sent_as_a_number_is_malformed(running: EmulatorServer) -> None:
    client = Client(running.url)
    model = _resources(client)["model"]
    body = {"storageBucket": "b", "storagePath": 7, "source": "UserUpload"}
    answer = send(client, "CreateModelVersion", {"modelId": model}, body)
    assert (answer.status_code, answer.json()["code"]) == (400, "MalformedJSON")
