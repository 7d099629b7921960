"""The emulator's v2 dialect as strict as Baidu's definitions, and its answers in the
official shapes, so a provider that gets either wrong fails here.

Sources: bce-openapi-meta ``schema/aihc/*.json`` (requests), baiducloud-go-sdk
``services/aihc/model_*.go`` and baiducloud-python-sdk-aihc 0.0.4 ``models/*.py``
(answers), each case with the file and line it follows.
"""

from __future__ import annotations

from typing import Any

import pytest
from aihc_emulator_client import POOL, Client

RAY_HEAD = {
    "image": "rayproject/ray:2",
    "replicas": 1,
    "resources": [{"name": "cpu", "quantity": 4}],
}


def v2(client: Client, action: str, body: Any, **query: str | None) -> Any:
    params = {"action": action, "resourcePoolId": POOL, "queueID": "default", **query}
    sent = {k: v for k, v in params.items() if v is not None}
    return client.request("POST", "/", sent, body, headers={"X-API-Version": "v2"})


def create(client: Client, name: str, **fields: Any) -> str:
    body = {
        "name": name,
        "queue": "default",
        "command": "python train.py",
        "jobSpec": {"image": "trainer:1", "replicas": 2},
        **fields,
    }
    response = v2(client, "CreateJob", body)
    assert response.status_code == 200, response.text
    return str(response.json()["jobId"])


def refused(response: Any) -> tuple[int, str, str]:
    body = response.json()
    return response.status_code, body["code"], body["message"]


def test_describe_job_answers_a_job_item_as_the_generated_clients_read_it(client: Client) -> None:
    job_id = create(client, "shaped")
    answer = v2(client, "DescribeJob", {"jobId": job_id, "needDetail": True}).json()
    item = answer["job"]  # {requestId, job}: model_describe_job_response.go:8
    assert "requestId" in answer
    assert item["jobid"] == job_id  # model_job_item.go:4
    assert item["Job"]["image"] == "trainer:1"  # the spec under ``Job``: :11
    assert "jobSpec" not in item
    assert [pod["name"] for pod in item["pods"]] == ["shaped-master-0", "shaped-worker-0"]
    for pod in item["pods"]:  # flat pods: model_pod.go:4-14
        assert "objectMeta" not in pod
        assert isinstance(pod["restartCount"], int)
        assert {"PodIP", "nodeName", "status", "replicaType", "envs", "reason"} <= set(pod)
    assert item["historyPods"] == []
    listed = v2(client, "DescribeJobs", {}).json()["jobs"]
    assert [job["jobid"] for job in listed] == [job_id]
    assert "jobTimeLine" not in listed[0]  # not in list items: JobItem.java:110


def test_enable_bccl_status_takes_the_official_values(client: Client) -> None:
    spec = {"image": "t:1", "replicas": 2, "enableRDMA": True}
    job_id = create(client, "bccl", enableBccl=True, jobSpec=spec)
    item = v2(client, "DescribeJob", {"jobId": job_id}).json()["job"]
    assert item["enableBcclStatus"] in {"success", "failed", "unknown"}  # JobItem.java


@pytest.mark.parametrize("field", ["startTime", "maxLines", "chunkSize", "endTime"])
def test_log_arguments_are_strings_and_a_number_is_refused(client: Client, field: str) -> None:
    job_id = create(client, "logs")
    body = {"jobId": job_id, "podName": "logs-master-0", "marker": ""}
    number = refused(v2(client, "DescribeJobLogs", {**body, field: 5}))
    assert number[:2] == (400, "MalformedJSON")  # DescribeJobLogs.json:36-55
    assert field in number[2]
    assert v2(client, "DescribeJobLogs", {**body, field: "5"}).status_code == 200


def test_a_fractional_v2_quantity_is_refused(client: Client) -> None:
    spec = {"image": "t:1", "resources": [{"name": "cpu", "quantity": 1.5}]}
    status, code, message = refused(
        v2(client, "CreateJob", {"name": "frac", "command": "c", "jobSpec": spec})
    )
    assert (status, code) == (400, "MalformedJSON")  # CreateJob.json:78-79
    assert "quantity" in message


def test_a_ray_job_needs_a_head_role(client: Client) -> None:
    flat = refused(
        v2(
            client,
            "CreateJob",
            {"name": "ray", "command": "c", "jobType": "RayJob", "jobSpec": RAY_HEAD},
        )
    )
    assert flat[:2] == (400, "InvalidParam")  # i18n/zh-CN/aihc/CreateJob.json:8
    assert "Head" in flat[2]
    job_id = create(client, "ray", jobType="RayJob", jobSpec={"Head": RAY_HEAD})
    item = v2(client, "DescribeJob", {"jobId": job_id}).json()["job"]
    assert set(item["Job"]) == {"Head"}


@pytest.mark.parametrize(
    ("action", "extra"),
    [
        ("DescribeJob", {}),
        ("StopJob", {}),
        ("DeleteJob", {}),
        ("ModifyJob", {"priority": "high"}),
        ("DescribeJobEvents", {}),
        ("DescribePodEvents", {"podName": "q-master-0"}),
        ("DescribeJobLogs", {"podName": "q-master-0"}),
        ("DescribeJobNodes", {}),
    ],
)
def test_every_single_job_action_needs_the_queue_id(
    client: Client, action: str, extra: dict[str, Any]
) -> None:
    # queueID required: bce-openapi-meta schema/aihc/<action>.json:12-17.
    job_id = create(client, "q")
    status, code, message = refused(v2(client, action, {"jobId": job_id, **extra}, queueID=None))
    assert (status, code) == (400, "InvalidParam")
    assert "queueID" in message
    assert v2(client, action, {"jobId": job_id, **extra}).status_code == 200
