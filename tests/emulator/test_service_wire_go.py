"""Service requests as bce-sdk-go's ``services/aihc/inference/v2`` client sends them (no Go
toolchain here: the wire is rebuilt from its source): a bare ``clientToken`` when the caller
gives none (``service.go:17`` with ``http/request.go:173-183``), every ``ServiceConf``
field including zero values and nulls (``models.go:9-22``), lowercase booleans (``pod.go:45-49``),
paging left out when zero (``service.go:41-52``), ``DescribeServiceStatus`` without ``serviceId``
(``service.go:71-97``)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aihc_emulator_client import Client

from airflow_provider_aihc.emulator import EmulatorServer

V2 = {"version": "v2"}
SENT: list[str] = []


def go_conf(name: str) -> dict[str, Any]:
    """A ``ServiceConf`` as Go's ``encoding/json`` writes a struct the caller half-filled."""
    return {
        "name": name,
        "acceleratorType": "",
        "instanceCount": 1,
        "workloadType": "",
        "resourcePool": {
            "resourcePoolId": "aihc-serverless",
            "queueName": "aihcq-1",
            "resourcePoolType": "serverless",
            "resourcePoolName": "",
        },
        "storage": {"shmSize": 0, "volumns": None},
        "containers": [
            {
                "name": "main",
                "cpus": 2,
                "memory": 4,
                "acceleratorCount": 0,
                "image": {"imageType": 0, "imageUrl": "ccr/x:1", "username": "", "password": ""},
                "command": None,
                "runArgs": None,
                "ports": None,
                "envs": None,
                "volumeMounts": None,
                "startupsProbe": None,
                "readinessProbe": None,
                "livenessProbe": None,
                "postStart": None,
                "preStop": None,
                "isInitContainer": False,
            }
        ],
        "access": {
            "publicAccess": False,
            "eip": "",
            "networkType": "",
            "aiGateway": {"enableAuth": False},
            "serviceLabels": None,
            "serviceAnnotations": None,
        },
        "log": {"persistent": False},
        "deploy": {"canaryStrategy": {"maxSurge": 0, "maxUnavailable": 0}, "schedule": None},
        "misc": {
            "podLabels": None,
            "podAnnotations": None,
            "gracePeriodSec": 0,
            "fedPodsPerIns": 0,
            "enableRDMA": False,
        },
        "hpa": {"timeBased": None, "metricBased": None},
    }


@pytest.fixture
def go(server: EmulatorServer) -> Client:
    """A signed client whose empty query values go out as bare keys, as Go's do."""
    client = Client(server.url)
    send = client.session.request

    def bare_keys(method: str, url: str, **kwargs: Any) -> Any:
        bare = re.sub(r"([?&]clientToken)=(&|$)", r"\1\2", url)
        SENT.append(bare)
        return send(method, bare, **kwargs)

    client.session.request = bare_keys  # type: ignore[method-assign]
    return client


def test_bare_client_token_is_no_token(go: Client, server: EmulatorServer) -> None:
    for _ in range(2):
        answer = go.request(
            "POST", "/", {"action": "CreateService", "clientToken": ""}, go_conf("go"), headers=V2
        )
        assert answer.status_code == 200, answer.text
    assert SENT[-1].endswith("?action=CreateService&clientToken")
    assert server.backend.registry_counts()["services"] == 2


def test_zero_values_and_lowercase_booleans(go: Client, server: EmulatorServer) -> None:
    created = go.request("POST", "/", {"action": "CreateService"}, go_conf("zeros"), headers=V2)
    service_id = created.json()["serviceId"]
    modified = go.request(
        "POST", "/", {"action": "ModifyService", "serviceId": service_id}, go_conf("zeros"),
        headers=V2,
    )  # fmt: skip
    assert modified.status_code == 200, modified.text  # zero-valued access is no change
    pods = go.request(
        "GET", "/", {"action": "DescribeServicePods", "serviceId": service_id}, headers=V2
    )
    pod = pods.json()["pods"][0]["instanceId"]
    query = {"action": "DisableServicePod", "serviceId": service_id, "instanceId": pod}
    assert go.request("POST", "/", {**query, "block": "true"}, headers=V2).status_code == 200
    assert server.backend.service(service_id)["instances"][0]["blocked"] is True
    listed = go.request("GET", "/", {"action": "DescribeServices"}, headers=V2).json()
    assert (listed["pageNumber"], listed["pageSize"], listed["order"]) == (1, 10, "desc")
    stats = go.request("GET", "/", {"action": "DescribeServiceStatus"}, headers=V2).json()
    assert set(stats["service"]) == {service_id}
    assert stats["service"][service_id]["totalIns"] == 1
