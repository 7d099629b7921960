"""Baidu's own v2 client, bce-python-sdk 0.9.79 ``AihcClient``, against the emulator, unchanged.

The SDK signs job actions with ``bce_v1_signer.sign`` (``X-API-Version: v2``, default
signed headers) and pool/queue actions with ``resource_pool_sign`` (``version: v2``, only
``host`` signed); it reads flat answers.  One backend serves both dialects, so what the SDK
creates the v1 client sees, and the reverse.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from aihc_emulator_client import POOL, Client, job_body
from baidubce.auth.bce_credentials import BceCredentials
from baidubce.bce_client_configuration import BceClientConfiguration
from baidubce.exception import BceHttpClientError, BceServerError
from baidubce.retry.retry_policy import NoRetryPolicy
from baidubce.services.aihc.aihc_client import AihcClient

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_SECRET_ACCESS_KEY,
    EmulatorServer,
)
from airflow_provider_aihc.emulator.state.jobs import Progression

GPU = [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}]
SERVERLESS = "aihc-serverless"
SERVERLESS_QUEUE = "aihcq-emulator0"


@pytest.fixture
def sdk(server: EmulatorServer) -> AihcClient:
    config = BceClientConfiguration(
        credentials=BceCredentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY),
        endpoint=server.url,
        retry_policy=NoRetryPolicy(),
    )
    return AihcClient(config)


@pytest.fixture
def running_server() -> Iterator[EmulatorServer]:
    """Jobs reach ``Running`` on the third poll and stay there for 20 polls."""
    with EmulatorServer(progression=Progression.per_poll(1, running=20)) as server:
        yield server


def create(sdk: AihcClient, name: str, **fields: Any) -> str:
    spec = {"image": "registry.baidubce.com/aihc/train:1", "replicas": 2, "resources": GPU}
    args: dict[str, Any] = {
        "resourcePoolId": POOL,
        "queueID": "default",
        "name": name,
        "command": "python train.py",
        "jobSpec": spec,
    }
    response = sdk.CreateJob(**{**args, **fields})
    assert response.jobName == name
    return str(response.jobId)


def describe(sdk: AihcClient, job_id: str, **fields: Any) -> Any:
    """The JobItem of a DescribeJob answer (``{requestId, job}``, as Baidu's generated
    clients read it: baiducloud-go-sdk services/aihc/model_describe_job_response.go:8)."""
    return sdk.DescribeJob(resourcePoolId=POOL, queueID="default", jobId=job_id, **fields).job


def server_error(call: Any) -> BceServerError:
    """The server's error answer, as the SDK raises it (wrapped after its retry loop)."""
    with pytest.raises(BceHttpClientError) as raised:
        call()
    error = raised.value.last_error
    assert isinstance(error, BceServerError)
    return error


def test_create_then_describe_flat(sdk: AihcClient, server: EmulatorServer) -> None:
    job_id = create(sdk, "sdk-train", labels=[{"key": "team", "value": "llm"}])
    assert job_id.startswith("job-")
    job = describe(sdk, job_id)
    assert (job.jobid, job.name, job.jobType, job.status) == (
        job_id,
        "sdk-train",
        "PyTorchJob",
        "Created",
    )
    assert job.Job.replicas == 2  # the spec under ``Job``: model_job_item.go:11
    assert {"key": "team", "value": "llm"} in [vars(label) for label in job.labels]
    assert "pods" not in vars(job)
    detailed = describe(sdk, job_id, needDetail=True)
    assert [pod.name for pod in detailed.pods] == [  # flat pods: model_pod.go:4-14
        "sdk-train-master-0",
        "sdk-train-worker-0",
    ]
    actions = [r.action for r in server.backend.requests]
    assert actions == ["CreateJob", "DescribeJob", "DescribeJob"]


def test_one_backend_serves_both_dialects(sdk: AihcClient, client: Client) -> None:
    from_v2 = create(sdk, "made-in-v2")
    seen_by_v1 = client.get(from_v2)
    assert (seen_by_v1["name"], seen_by_v1["jobFramework"]) == ("made-in-v2", "PyTorchJob")
    assert seen_by_v1["command"] == "python train.py"
    from_v1 = client.create("made-in-v1")["jobId"]
    seen_by_v2 = describe(sdk, from_v1)
    assert (seen_by_v2.name, seen_by_v2.jobType, seen_by_v2.queue) == (
        "made-in-v1",
        "PyTorchJob",
        "default",
    )
    assert seen_by_v2.Job.image == job_body("made-in-v1")["jobSpec"]["image"]
    sdk.StopJob(resourcePoolId=POOL, queueID="default", jobId=from_v1)
    assert client.status(from_v1) == "ManualTermination"
    client.ok("DELETE", f"/api/v1/aijobs/{from_v2}", {"resourcePoolId": POOL})
    error = server_error(lambda: describe(sdk, from_v2))
    assert (error.status_code, error.code) == (404, "JobNotFound")


def test_describe_jobs_filters_and_pages(sdk: AihcClient, client: Client) -> None:
    ids = {name: create(sdk, name) for name in ("sweep-a", "sweep-b", "sweep-c", "other")}
    for _ in range(2):  # sweep-a: Created -> Scheduled
        describe(sdk, ids["sweep-a"])
    listed = sdk.DescribeJobs(resourcePoolId=POOL)
    assert listed.totalCount == 4
    assert [job.name for job in listed.jobs] == ["other", "sweep-c", "sweep-b", "sweep-a"]
    scheduled = sdk.DescribeJobs(resourcePoolId=POOL, status="Scheduled")
    assert [job.jobid for job in scheduled.jobs] == [ids["sweep-a"]]
    named = sdk.DescribeJobs(resourcePoolId=POOL, keywordType="name", keyword="sweep")
    assert named.totalCount == 3
    pages = [
        [
            job.name
            for job in sdk.DescribeJobs(
                resourcePoolId=POOL, keyword="sweep", order="asc", pageNumber=n, pageSize=2
            ).jobs
        ]
        for n in (1, 2)
    ]
    assert pages == [["sweep-a", "sweep-b"], ["sweep-c"]]
    by_queue = sdk.DescribeJobs(resourcePoolId=POOL, keywordType="queueName", keyword="research")
    assert by_queue.totalCount == 0
    error = server_error(lambda: sdk.DescribeJobs(resourcePoolId=POOL, keywordType="id"))
    assert (error.status_code, error.code) == (400, "InvalidParam")
    assert "keywordType" in str(error)


def test_events_and_pod_events(sdk: AihcClient) -> None:
    job_id = create(sdk, "eventful")
    for _ in range(3):
        describe(sdk, job_id)
    events = sdk.DescribeJobEvents(resourcePoolId=POOL, queueID="default", jobId=job_id)
    assert events.total == len(events.events) == 3
    assert [e.message for e in events.events][-1] == "PyTorchJob eventful is running."
    pod = sdk.DescribeJobPodEvents(
        resourcePoolId=POOL, queueID="default", jobId=job_id, podName="eventful-master-0"
    )
    assert "Scheduled" in [e.reason for e in pod.events]


def test_logs_page_with_markers(sdk: AihcClient, running_server: EmulatorServer) -> None:
    config = BceClientConfiguration(
        credentials=BceCredentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY),
        endpoint=running_server.url,
        retry_policy=NoRetryPolicy(),
    )
    client = AihcClient(config)
    job_id = create(client, "chatty")
    for _ in range(8):
        describe(client, job_id)
    pod = "chatty-master-0"
    whole = client.DescribeJobLogs(
        resourcePoolId=POOL, queueID="default", jobId=job_id, podName=pod, marker=""
    )
    assert len(whole.logs) > 12  # chunkSize defaults to 1: one line per record
    lines: list[str] = []
    marker = ""
    for _ in range(50):
        page = client.DescribeJobLogs(
            resourcePoolId=POOL,
            queueID="default",
            jobId=job_id,
            podName=pod,
            maxLines="5",  # a String: bce-openapi-meta schema/aihc/DescribeJobLogs.json:48-53
            marker=marker,
        )
        lines += page.logs
        if not page.logs:
            break
        marker = page.nextMarker
    assert lines == whole.logs
    found = client.DescribeJobLogs(
        resourcePoolId=POOL, queueID="default", jobId=job_id, podName=pod, keywords="NCCL"
    )
    assert found.logs
    assert all("NCCL" in line for line in found.logs)
    chunked = client.DescribeJobLogs(
        resourcePoolId=POOL, queueID="default", jobId=job_id, podName=pod, marker="", chunkSize="4"
    )
    assert chunked.logs[0].split("\n") == whole.logs[:4]


def test_stop_modify_delete(sdk: AihcClient, server: EmulatorServer) -> None:
    job_id = create(sdk, "short-lived")
    modified = sdk.ModifyJob(resourcePoolId=POOL, queueID="default", jobId=job_id, priority="high")
    assert modified.jobId == job_id
    assert describe(sdk, job_id).priority == "high"
    error = server_error(
        lambda: sdk.ModifyJob(resourcePoolId=POOL, queueID="default", jobId=job_id, priority="top")
    )
    assert (error.status_code, error.code) == (400, "InvalidParam")
    stopped = sdk.StopJob(resourcePoolId=POOL, queueID="default", jobId=job_id)
    assert stopped.jobId == job_id
    assert describe(sdk, job_id).status == "ManualTermination"
    nodes = sdk.DescribeJobNodes(resourcePoolId=POOL, queueID="default", jobId=job_id)
    assert nodes.nodes == []
    deleted = sdk.DeleteJob(resourcePoolId=POOL, queueID="default", jobId=job_id)
    assert (deleted.jobId, deleted.jobName) == (job_id, "short-lived")
    assert server.backend.jobs() == []


def test_resource_pools_and_queues(sdk: AihcClient) -> None:
    # Flat pools and queues: bce-sdk-go services/aihc/v2/api/resourcepool.go:92-136,
    # queue.go:35-89.
    common = sdk.DescribeResourcePools(resourcePoolType="common")
    assert [p.resourcePoolId for p in common.resourcePools] == [POOL]
    managed = sdk.DescribeResourcePools(resourcePoolType="dedicatedV2")
    assert [p.resourcePoolId for p in managed.resourcePools] == [SERVERLESS]
    assert sdk.DescribeResourcePools(resourcePoolType="bhcmp").totalCount == 0  # none here
    none = sdk.DescribeResourcePools(
        resourcePoolType="common", keywordType="resourcePoolId", keyword="nope"
    )
    assert none.totalCount == 0
    pool = sdk.DescribeResourcePool(resourcePoolId=POOL)
    assert (pool.resourcePoolId, pool.type, pool.phase) == (POOL, "common", "running")
    queues = sdk.DescribeQueues(resourcePoolId=POOL)
    assert [q.queueName for q in queues.queues] == ["default", "research"]
    queue = sdk.DescribeQueue(queueId=SERVERLESS_QUEUE)
    assert (queue.queueId, queue.queueName) == (SERVERLESS_QUEUE, "default")
    assert queue.capability.milliCPUcores.isdigit()  # ResourceAmount strings
    error = server_error(lambda: sdk.DescribeResourcePools(resourcePoolType="gpu"))
    assert (error.status_code, error.code) == (400, "InvalidParam")
    assert "resourcePoolType" in str(error)
    assert server_error(lambda: sdk.DescribeQueue(queueId="aihcq-nope")).status_code == 404


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"queueID": None}, "queueID"),
        ({"command": None}, "command"),
        ({"jobType": "JaxJob"}, "jobType"),
        ({"retentionPeriod": "forever"}, "retentionPeriod"),
        ({"priority": "urgent"}, "priority"),
        ({"dataSources": [{"type": "nfs", "name": "x", "mountPath": "/m"}]}, "datasources"),
        ({"queueID": "research", "jobSpec": {"image": ""}}, "jobSpec.image"),
    ],
)
def test_create_validation_names_the_field(
    sdk: AihcClient, server: EmulatorServer, fields: dict[str, Any], named: str
) -> None:
    error = server_error(lambda: create(sdk, "bad-job", **fields))
    assert (error.status_code, error.code) == (400, "InvalidParam")
    assert named in str(error)
    assert server.backend.jobs() == []


def test_create_with_v2_additions(sdk: AihcClient, client: Client) -> None:
    tf_spec = {
        "Chief": {"image": "tf:2", "replicas": 1, "resources": GPU},
        "Worker": {"image": "tf:2", "replicas": 2, "resources": GPU},
    }
    job_id = create(
        sdk,
        "tf-job",
        jobType="TFJob",
        jobSpec=tf_spec,
        retentionPeriod="1d",
        tensorboardConfig={"enable": True, "logPath": "/mnt/tb"},
        alertConfig={"alertName": "hang"},
    )
    job = describe(sdk, job_id)
    assert job.jobType == "TFJob"
    assert set(vars(job.Job)) == {"Chief", "Worker"}  # the role map, as it was sent
    assert client.get(job_id)["replicas"] == 3


def test_managed_pool_needs_the_queue_id(sdk: AihcClient) -> None:
    job_id = create(sdk, "managed", resourcePoolId=SERVERLESS, queueID=SERVERLESS_QUEUE)
    error = server_error(lambda: sdk.DescribeJobs(resourcePoolId=SERVERLESS))
    assert (error.status_code, error.code) == (400, "InvalidParam")
    listed = sdk.DescribeJobs(resourcePoolId=SERVERLESS, queue=SERVERLESS_QUEUE)
    assert [job.jobid for job in listed.jobs] == [job_id]
    job = sdk.DescribeJob(resourcePoolId=SERVERLESS, queueID=SERVERLESS_QUEUE, jobId=job_id)
    assert job.job.queue == SERVERLESS_QUEUE
    wrong = server_error(
        lambda: sdk.DescribeJob(resourcePoolId=SERVERLESS, queueID="aihcq-other", jobId=job_id)
    )
    assert (wrong.status_code, wrong.code) == (403, "AccessDenied")
    queues = server_error(lambda: sdk.DescribeQueues(resourcePoolId=SERVERLESS))
    assert queues.status_code == 400


def v2(client: Client, action: str, body: Any = None, **headers: str) -> Any:
    params = {"action": action, "resourcePoolId": POOL, "queueID": "default"}
    return client.request("POST", "/", params, body, headers={"X-API-Version": "v2", **headers})


def test_batch_stop_jobs_reports_each_job(sdk: AihcClient, client: Client) -> None:
    """``BatchStopJobs`` is in aihc-gen, not in bce-python-sdk: sent by the signed client."""
    first, second = create(sdk, "batch-a"), create(sdk, "batch-b")
    jobs = [{"jobId": first}, {"jobId": second}, {"jobId": "job-missing"}]
    response = v2(client, "BatchStopJobs", {"jobList": jobs})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert (result["successNum"], result["failedNum"]) == (2, 1)
    ok = {"success": True}  # JobResult: baiducloud-go-sdk services/aihc/model_job_result.go
    assert result["successList"] == [{"jobId": first, **ok}, {"jobId": second, **ok}]
    assert result["failedList"][0]["jobId"] == "job-missing"
    assert result["failedList"][0]["success"] is False
    assert result["success"] is False
    assert describe(sdk, second).status == "ManualTermination"


def test_unknown_action_wrong_method_and_wrong_version(client: Client) -> None:
    unknown = v2(client, "LaunchRocket", {})
    assert (unknown.status_code, unknown.json()["code"]) == (400, "InvalidParam")
    assert "LaunchRocket" in unknown.json()["message"]
    params = {"action": "DescribeJobs", "resourcePoolId": POOL}
    wrong_method = client.request("GET", "/", params)
    assert wrong_method.status_code == 405
    wrong_version = v2(client, "DescribeJobs", {}, **{"X-API-Version": "v3"})
    assert (wrong_version.status_code, wrong_version.json()["code"]) == (404, "InvalidVersion")
    not_an_object = v2(client, "DescribeJobs", [1, 2])
    assert (not_an_object.status_code, not_an_object.json()["code"]) == (400, "InappropriateJSON")


def test_faults_hit_the_operation_in_either_dialect(
    sdk: AihcClient, server: EmulatorServer
) -> None:
    from airflow_provider_aihc.emulator.steering import scenarios

    job_id = create(sdk, "faulty")
    server.backend.add_fault(scenarios.error(503, operation="GetJob"))
    error = server_error(lambda: describe(sdk, job_id))
    assert (error.status_code, error.code) == (503, "ServiceUnavailable")
    assert server.backend.count("GetJob", 503) == 1
    assert describe(sdk, job_id).jobid == job_id


def test_describe_job_needs_the_queue_id(sdk: AihcClient) -> None:
    """Documented (docs ``Kmayvejf0``; the SDK marks it 必填): DescribeJob needs queueID."""
    job_id = create(sdk, "needs-queue")
    error = server_error(lambda: sdk.DescribeJob(resourcePoolId=POOL, queueID=None, jobId=job_id))
    assert (error.status_code, error.code) == (400, "InvalidParam")
    assert "queueID" in str(error)
