"""Service rollouts over polls (``deploy.canaryStrategy``), and the faults and scripts that
exercise exactly-once deploys: lost create and modify answers, a rollout that never becomes
ready, a silent revert; set through the control API as job faults are.  Driven by Baidu's
bce-python-sdk 0.9.79 over real HTTP."""

from __future__ import annotations

import math
from typing import Any

import pytest
import requests
from baidubce.exception import BceHttpClientError
from baidubce.services.aihc.aihc_client import AihcClient
from bce_sdk import bce_client, server_error
from test_bce_sdk_services import ready, service_conf

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.http.control import control_headers
from airflow_provider_aihc.emulator.steering import scenarios


@pytest.fixture
def sdk(server: EmulatorServer) -> AihcClient:
    return bce_client(server.url)


def control(server: EmulatorServer, path: str, body: Any) -> dict[str, Any]:
    response = requests.post(
        f"{server.url}/_emulator/{path}",
        json=body,
        headers=control_headers(server.control_token),
        timeout=5,
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def images(detail: Any) -> list[str]:
    return sorted(i.containers[0].container.image.imageUrl for i in detail.instances)


@pytest.mark.parametrize(
    ("count", "surge", "unavailable"), [(4, 25, 25), (2, 50, 0), (4, 0, 50), (3, 100, 0)]
)
def test_rollout_honours_max_surge_and_max_unavailable(
    sdk: AihcClient, count: int, surge: int, unavailable: int
) -> None:
    conf = service_conf(count=count)
    conf["deploy"] = {"canaryStrategy": {"maxSurge": surge, "maxUnavailable": unavailable}}
    service_id = sdk.service.CreateService(serviceConf=conf).serviceId
    ready(sdk, service_id)
    sdk.service.ModifyService(
        service_id, {**conf, "containers": service_conf(image="v:2")["containers"]}
    )
    most, fewest = count + math.ceil(count * surge / 100), count - count * unavailable // 100
    seen = []
    for _ in range(20):
        detail = sdk.service.DescribeService(serviceId=service_id)
        stat = detail.status.briefStat
        assert stat.totalIns <= most
        assert stat.availableIns >= fewest
        seen.append(images(detail))
        if images(detail) == ["v:2"] * count and stat.availableIns == count:
            break
    else:
        raise AssertionError(f"rollout did not finish: {seen}")
    assert any(len(set(step)) == 2 for step in seen)  # old and new coexisted


def test_lost_create_answer_then_token_replay(sdk: AihcClient, server: EmulatorServer) -> None:
    control(server, "faults", {"kind": "drop_after", "operation": "CreateService"})
    with pytest.raises(BceHttpClientError):  # the dropped connection, after acting
        sdk.service.CreateService(serviceConf=service_conf(), clientToken="series-1")
    assert server.backend.registry_counts()["services"] == 1  # created, answer lost
    again = sdk.service.CreateService(serviceConf=service_conf(), clientToken="series-1")
    assert [s["serviceId"] for s in server.backend.services()] == [again.serviceId]


def test_create_answered_5xx_after_acting(sdk: AihcClient, server: EmulatorServer) -> None:
    control(server, "faults", {"kind": "error_after", "status": 503, "operation": "CreateModel"})
    error = server_error(
        lambda: sdk.model.CreateModel(
            name="lost", modelFormat="HuggingFace", initVersionEntry={"storagePath": "/p"}
        )
    )
    assert (error.status_code, error.code) == (503, "ServiceUnavailable")
    assert [m["name"] for m in server.backend.models()] == ["lost"]  # it was created
    assert server.backend.count("CreateModel", 503) == 1


def test_lost_modify_answer_and_a_blind_retry(sdk: AihcClient, server: EmulatorServer) -> None:
    service_id = sdk.service.CreateService(serviceConf=service_conf()).serviceId
    server.backend.add_fault(scenarios.drop_after(operation="ModifyService"))
    with pytest.raises(BceHttpClientError):
        sdk.service.ModifyService(service_id, service_conf(image="v:2"), "tag=1")
    state = server.backend.service(service_id)
    assert state["conf"]["containers"][0]["image"]["imageUrl"] == "v:2"
    assert [c["changeType"] for c in state["changes"]] == [1, 2]
    sdk.service.ModifyService(service_id, service_conf(image="v:2"), "tag=1")  # blind retry
    after = server.backend.service(service_id)
    assert [c["changeType"] for c in after["changes"]] == [1, 2, 2]  # a second record
    assert after["revision"] == state["revision"]  # same template: no second rollout


def test_rollout_never_ready_shows_the_pod_reason(sdk: AihcClient, server: EmulatorServer) -> None:
    control(
        server, "scripts", {"kind": "rollout_stuck", "match": "chat", "reason": "ImagePullBackOff"}
    )
    service_id = sdk.service.CreateService(serviceConf=service_conf()).serviceId
    ready(sdk, service_id)  # the create's rollout is not the one bound ("modify")
    sdk.service.ModifyService(service_id, service_conf(image="ccr/missing:9"))
    for _ in range(10):
        detail = sdk.service.DescribeService(serviceId=service_id)
    stat = detail.status.briefStat
    assert (stat.hazard, stat.reason) == (True, "ImagePullBackOff")
    assert stat.availableIns == 2  # the old instances serve on
    stuck = [i for i in detail.instances if i.status.reason]
    assert stuck
    assert all(i.status.status == "Pending" for i in stuck)
    assert stuck[0].containers[0].status.reason == "ImagePullBackOff"
    assert "ccr/chat:1" in images(detail)
    assert server.backend.service(service_id)["phase"] == "Deploying"


def test_crash_loop_on_create(sdk: AihcClient, server: EmulatorServer) -> None:
    control(
        server,
        "scripts",
        {"kind": "rollout_stuck", "reason": "CrashLoopBackOff", "rollout": "create"},
    )
    service_id = sdk.service.CreateService(serviceConf=service_conf()).serviceId
    for _ in range(5):
        pods = sdk.service.DescribeServicePods(serviceId=service_id).pods
    assert {(p.status.status, p.status.reason) for p in pods} == {("Running", "CrashLoopBackOff")}
    assert all(p.status.availableContainers == 0 for p in pods)


def test_silent_revert(sdk: AihcClient, server: EmulatorServer) -> None:
    control(server, "scripts", {"kind": "silent_revert", "match": "chat", "after_polls": 1})
    service_id = sdk.service.CreateService(serviceConf=service_conf()).serviceId
    ready(sdk, service_id)
    sdk.service.ModifyService(service_id, service_conf(image="ccr/chat:2"), "roll v2")
    assert images(ready(sdk, service_id)) == ["ccr/chat:2"] * 2  # it rolled out
    updated_at = sdk.service.DescribeService(serviceId=service_id).updatedAt
    for _ in range(8):
        detail = sdk.service.DescribeService(serviceId=service_id)
    assert detail.service.containers[0].image.imageUrl == "ccr/chat:1"
    assert images(detail) == ["ccr/chat:1"] * 2
    assert detail.status.briefStat.availableIns == 2  # looks healthy
    assert detail.updatedAt == updated_at
    logs = sdk.service.DescribeServiceChangelogs(serviceId=service_id).changeLogs
    assert [c.changeType for c in logs] == [2, 1]  # no record of the revert


def test_choices_and_counts_through_the_control_api(
    sdk: AihcClient, server: EmulatorServer
) -> None:
    assert control(server, "choices", {"unique_names": True})["choices"]["unique_names"]
    sdk.service.CreateService(serviceConf=service_conf())
    error = server_error(lambda: sdk.service.CreateService(serviceConf=service_conf()))
    assert (error.status_code, error.code) == (409, "ServiceAlreadyExists")
    state = requests.get(f"{server.url}/_emulator/state", timeout=5).json()
    assert state["registry"]["services"] == 1
    assert state["choices"] == {"unique_names": True, "token_mismatch": "replay"}
    control(server, "reset", {})
    assert server.backend.choices.unique_names is False
    assert server.backend.registry_counts()["services"] == 0
    bad = requests.post(
        f"{server.url}/_emulator/choices",
        json={"token_mismatch": "maybe"},
        headers=control_headers(server.control_token),
        timeout=5,
    )
    assert bad.status_code == 400
