"""Online services: bce-python-sdk 0.9.79 ``AihcClient.service`` against the emulator,
unchanged, for every action it has, with its quirks on the wire (empty ``pageNumber=`` and
``pageSize=``, ``description=`` always sent, ``True``/``False`` booleans); answers as
bce-sdk-go's structs name them (``services/aihc/inference/v2/models.go``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from baidubce.services.aihc.aihc_client import AihcClient
from bce_sdk import bce_client, server_error

from airflow_provider_aihc.emulator import EmulatorServer


def service_conf(name: str = "chat", image: str = "ccr/chat:1", count: int = 2) -> dict[str, Any]:
    """A ``ServiceConf`` as the DOC template (``Imb4uf20u``) has it, passed as a dict (D26)."""
    return {
        "name": name,
        "acceleratorType": "A100",
        "workloadType": "",
        "instanceCount": count,
        "resourcePool": {"resourcePoolId": "cce-emulator", "queueName": "default"},
        "containers": [
            {
                "name": "main",
                "cpus": 4,
                "memory": 16,
                "acceleratorCount": 1,
                "image": {"imageType": 1, "imageUrl": image},
                "ports": [{"name": "http", "port": 8080}],
                "envs": {"AIHC_MODEL_PATH": "bos://models/llama/1/"},
            }
        ],
        "access": {"publicAccess": False},
        "deploy": {"canaryStrategy": {"maxSurge": 50, "maxUnavailable": 0}},
        "misc": {"podAnnotations": {"airflow-ti-tag": "t1"}},
    }


@pytest.fixture
def sdk(server: EmulatorServer) -> AihcClient:
    return bce_client(server.url)


def ready(sdk: AihcClient, service_id: str, polls: int = 10) -> Any:
    """Poll DescribeService until every instance is ready on the live configuration."""
    for _ in range(polls):
        detail = sdk.service.DescribeService(serviceId=service_id)
        stat = detail.status.briefStat
        if stat.availableIns == stat.totalIns == detail.service.instanceCount:
            return detail
    raise AssertionError(f"service {service_id} not ready after {polls} polls")


def test_create_describe_and_list(sdk: AihcClient, server: EmulatorServer) -> None:
    service_id = sdk.service.CreateService(serviceConf=service_conf()).serviceId
    detail = ready(sdk, service_id)
    assert detail.service.name == "chat"
    assert detail.service.misc.podAnnotations.__dict__ == {"airflow-ti-tag": "t1"}
    assert isinstance(detail.createdAt, int)  # integer seconds (DOC 1745411842)
    instance = detail.instances[0]
    assert instance.status.status == "Running"
    assert instance.containers[0].status.containerStatus == "Running"
    assert instance.instanceId.startswith(f"{service_id}-")
    assert detail.status.accessPorts[0].containerPort == 8080
    listed = sdk.service.DescribeServices()  # pageNumber=&pageSize= (service_client.py:52-56)
    assert (listed.totalCount, listed.services[0].id, listed.pageSize) == (1, service_id, 10)
    assert listed.services[0].resourceSpec.acceleratorType == "A100"
    status = sdk.service.DescribeServiceStatus(serviceId=service_id)
    assert getattr(status.service, service_id).availableIns == 2
    pods = sdk.service.DescribeServicePods(serviceId=service_id)
    assert len(pods.pods) == 2
    groups = sdk.service.DescribeServicePodGroups(serviceId=service_id)
    assert groups.resourcePoolId == "cce-emulator"
    assert len(groups.servicePodGroups) == 2
    assert server.backend.registry_counts()["services"] == 1


def test_modify_records_a_change_and_rolls_out(sdk: AihcClient, server: EmulatorServer) -> None:
    service_id = sdk.service.CreateService(serviceConf=service_conf()).serviceId
    ready(sdk, service_id)
    new = service_conf(image="ccr/chat:2")
    answer = sdk.service.ModifyService(serviceId=service_id, serviceConf=new)  # description=
    assert answer.serviceId == service_id
    detail = ready(sdk, service_id)
    assert detail.service.containers[0].image.imageUrl == "ccr/chat:2"
    assert {i.containers[0].container.image.imageUrl for i in detail.instances} == {"ccr/chat:2"}
    logs = sdk.service.DescribeServiceChangelogs(serviceId=service_id)  # empty paging
    assert [c.changeType for c in logs.changeLogs] == [2, 1]  # newest first
    assert logs.changeLogs[0].prev == logs.changeLogs[1].changeId
    updates = sdk.service.DescribeServiceChangelogs(
        serviceId=service_id, changeType=2, order="asc", orderBy="createdAt"
    )
    assert updates.totalCount == 1
    one = sdk.service.DescribeServiceChangelog(changeId=updates.changeLogs[0].changeId)
    assert (one.changeType, one.description) == (2, "")
    marked = sdk.service.ModifyService(service_id, service_conf(image="ccr/chat:3"), "tag=x")
    assert marked.serviceId == service_id
    latest = sdk.service.DescribeServiceChangelogs(serviceId=service_id, changeType=2)
    assert latest.changeLogs[0].description == "tag=x"


def test_modify_may_not_change_the_network(sdk: AihcClient) -> None:
    service_id = sdk.service.CreateService(serviceConf=service_conf()).serviceId
    conf = service_conf()
    conf["access"] = {"publicAccess": True, "eip": "1.2.3.4"}
    error = server_error(lambda: sdk.service.ModifyService(service_id, conf))
    assert (error.status_code, error.code) == (400, "InvalidParam")
    assert "access" in str(error)


def test_replicas_pods_network_and_delete(sdk: AihcClient, server: EmulatorServer) -> None:
    service_id = sdk.service.CreateService(serviceConf=service_conf()).serviceId
    ready(sdk, service_id)
    sdk.service.ModifyServiceReplicas(serviceId=service_id, instanceCount=3)
    assert len(ready(sdk, service_id).instances) == 3
    pod = sdk.service.DescribeServicePods(serviceId=service_id).pods[0].instanceId
    sdk.service.DisableServicePod(serviceId=service_id, instanceId=pod, block=True)  # True
    pods = {p.instanceId: p for p in sdk.service.DescribeServicePods(serviceId=service_id).pods}
    assert pods[pod].status.blocked is True
    sdk.service.DisableServicePod(serviceId=service_id, instanceId=pod, block=False)
    sdk.service.DeleteServicePod(serviceId=service_id, instanceId=pod)
    rebuilt = ready(sdk, service_id)
    assert len(rebuilt.instances) == 3
    assert pod not in {i.instanceId for i in rebuilt.instances}
    sdk.service.ModifyServiceNetConfig(serviceId=service_id, publicAccess=True, eip="1.2.3.4")
    detail = sdk.service.DescribeService(serviceId=service_id)
    assert detail.status.accessIPs.external == "1.2.3.4"
    kinds = [c.changeType for c in sdk.service.DescribeServiceChangelogs(service_id).changeLogs]
    assert kinds == [4, 3, 1]
    sdk.service.DeleteService(serviceId=service_id)
    error = server_error(lambda: sdk.service.DescribeService(serviceId=service_id))
    assert (error.status_code, error.code) == (404, "ServiceNotFound")


def test_client_token_replays_the_first_service(sdk: AihcClient, server: EmulatorServer) -> None:
    first = sdk.service.CreateService(serviceConf=service_conf(), clientToken="tok-1")
    again = sdk.service.CreateService(serviceConf=service_conf(), clientToken="tok-1")
    assert again.serviceId == first.serviceId
    other = sdk.service.CreateService(serviceConf=service_conf(image="x:2"), clientToken="tok-1")
    assert other.serviceId == first.serviceId  # default choice: replay (nothing invented)
    counts = server.backend.registry_counts()
    assert (counts["services"], counts["serviceChanges"]) == (1, 1)
    server.backend.set_choices(token_mismatch="error")
    error = server_error(
        lambda: sdk.service.CreateService(
            serviceConf=service_conf(image="x:2"), clientToken="tok-1"
        )
    )
    assert (error.status_code, error.code) == (409, "IdempotentParameterMismatch")
    sdk.service.CreateService(serviceConf=service_conf())  # no token: a second service
    assert server.backend.registry_counts()["services"] == 2


def test_service_conf_checked_naming_the_field(sdk: AihcClient) -> None:
    conf = service_conf()
    conf["containers"][0]["cpus"] = 0
    error = server_error(lambda: sdk.service.CreateService(serviceConf=conf))
    assert "containers[0].cpus must be at least 1" in str(error)
    bad = copy.deepcopy(service_conf())
    bad["deploy"]["canaryStrategy"]["maxSurge"] = 150
    error = server_error(lambda: sdk.service.CreateService(serviceConf=bad))
    assert "maxSurge" in str(error)
    error = server_error(lambda: sdk.service.DisableServicePod("s-x", "i", block="maybe"))
    assert "block" in str(error)


def test_upgrade_service_is_not_served(sdk: AihcClient) -> None:
    """bce-python-sdk only, undocumented: an unknown action, so no provider code can lean on it."""
    error = server_error(lambda: sdk.service.UpgradeService(serviceId="s-1", versionId="v-2"))
    assert (error.status_code, error.code) == (400, "InvalidParam")
    assert "unknown action" in str(error)
