"""The two dialects as pure functions: the same hook call said in v1 and in v2, and v2's
answers read back into the v1 forms the models parse."""

from __future__ import annotations

import json

import pytest

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks import calls
from airflow_provider_aihc.hooks.dialects import dialect_for
from airflow_provider_aihc.hooks.dialects.v2 import create_body, job_info
from airflow_provider_aihc.models.job import JobInfo, JobList

V1, V2 = dialect_for("v1"), dialect_for("v2")
BODY = {
    "name": "n",
    "queue": "default",
    "jobFramework": "PyTorchJob",
    "jobSpec": {"image": "i", "command": "c", "replicas": 2},
}


def test_get_job_in_both_dialects() -> None:
    v1 = V1.request(calls.GetJobCall.endpoint, "cce-1", None, (), None, {"job_id": "j1"})
    assert (v1.endpoint.method, v1.path, v1.params, v1.body) == (
        "GET",
        "/api/v1/aijobs/j1",
        (("resourcePoolId", "cce-1"),),
        None,
    )
    v2 = V2.request(calls.GetJobCall.endpoint, "cce-1", None, (), None, {"job_id": "j1"})
    assert (v2.endpoint.method, v2.path, v2.headers) == ("POST", "/", (("X-API-Version", "v2"),))
    assert v2.params == (
        ("action", "DescribeJob"),
        ("resourcePoolId", "cce-1"),
        ("queueID", "default"),
    )
    assert json.loads(v2.body or b"") == {"jobId": "j1", "needDetail": True}
    assert v2.endpoint.operation == "GetJob"  # errors and logs keep the operation's name


def test_list_pages_are_page_number_in_the_body() -> None:
    params = [("queue", "research"), ("pageNo", "3"), ("pageSize", "100")]
    v2 = V2.request(calls.ListJobsCall.endpoint, "cce-1", None, params, None, {})
    assert dict(v2.params)["action"] == "DescribeJobs"
    assert "queueID" not in dict(v2.params)
    assert json.loads(v2.body or b"") == {"queue": "research", "pageNumber": 3, "pageSize": 100}


def test_pool_actions_are_gets_with_the_lower_case_version_header() -> None:
    v2 = V2.request(
        calls.ListQueues.endpoint, None, None, [("pageNo", "1")], None, {"pool_id": "cce-1"}
    )
    assert (v2.endpoint.method, v2.body, v2.headers) == ("GET", None, (("version", "v2"),))
    assert v2.params == (
        ("action", "DescribeQueues"),
        ("resourcePoolId", "cce-1"),
        ("pageNumber", "1"),
    )


@pytest.mark.parametrize("bad", ["a/b", "..", ""])
def test_ids_are_refused_in_either_dialect(bad: str) -> None:
    for dialect in (V1, V2):
        with pytest.raises(AIHCConfigError, match="must be a non-empty id"):
            dialect.request(
                calls.GetQueue.endpoint, None, None, (), None, {"pool_id": "p", "queue_name": bad}
            )


def test_create_body_moves_command_and_job_type() -> None:
    body = create_body({**BODY, "tensorboardConfig": {"enableTensorboard": True}})
    assert body["command"] == "c"
    assert body["jobType"] == "PyTorchJob"
    assert body["jobSpec"] == {"image": "i", "replicas": 2}
    assert body["tensorboardConfig"] == {"enable": True}
    assert "jobFramework" not in body
    assert BODY["jobSpec"]["command"] == "c"  # the caller's body is not modified
    tf = create_body({**BODY, "jobFramework": "TFJob"})
    assert tf["jobSpec"] == {"Worker": {"image": "i", "replicas": 2}}
    create = V2.request(
        calls.CreateJob.endpoint, "aihc-serverless", None, (), {**BODY, "queue": "aihcq-1"}, {}
    )
    assert dict(create.params)["queueID"] == "aihcq-1"


def test_job_items_read_as_job_info() -> None:
    item = {
        "jobId": "job-1",
        "name": "n",
        "jobType": "TFJob",
        "status": "Running",
        "jobSpec": {"Worker": {"image": "tf", "replicas": 3, "enableRDMA": True}},
        "pods": [{"objectMeta": {"name": "n-worker-0"}, "podStatus": {"status": "READY"}}],
    }
    job = JobInfo.model_validate(job_info(item))
    assert (job.job_framework, job.image, job.replicas, job.enable_rdma) == ("TFJob", "tf", 3, True)
    assert job.pod_list is not None
    assert [pod.object_meta.name for pod in job.pod_list.pods] == ["n-worker-0"]
    wrapped = V2.answer(calls.GetJobCall.endpoint, {"requestId": "r", "job": item})
    assert wrapped["jobId"] == "job-1"  # the doc table's {requestId, job} form
    page = JobList.model_validate(
        V2.answer(calls.ListJobsCall.endpoint, {"totalCount": 7, "jobs": [item]})
    )
    assert (page.total, [j.job_id for j in page.jobs]) == (7, ["job-1"])


def test_what_each_dialect_cannot_say() -> None:
    assert V1.create_problems(BODY) == []
    assert V2.create_problems(BODY) == []
    # retentionPeriod is in both (bce-sdk-go aiJob.go:183; bce-openapi-meta CreateJob.json:240)
    assert V1.create_problems({**BODY, "retentionPeriod": "1d"}) == []
    v1 = V1.create_problems(
        {**BODY, "jobFramework": "RayJob", "advancedSettings": {"runtimeEnv": "{}"}}
    )
    assert [field for field, _ in v1] == [
        "jobFramework (job_framework)",
        "advancedSettings (advanced_settings)",
    ]
    assert all("api_version v2" in problem for _, problem in v1)
    v2 = V2.create_problems({**BODY, "faultToleranceConfig": {"faultToleranceLimit": 2}})
    assert [field for field, _ in v2] == ["faultToleranceConfig (fault_tolerance_config)"]
    assert "api_version v2" in v2[0][1]
    v1_only = {
        "codeSource": {"filePath": "/code"},
        "logCollectionFilePatterns": ["/var/log/*.log"],
        "requiredNodeAffinity": ["node-1"],
        "preferredNodeAffinity": ["node-2"],
        "runningTimeoutStopTimeUnit": "12h",
        "datasources": [{"type": "dataset", "id": "ds-42", "mountPath": "/mnt/ds"}],
    }
    v2 = V2.create_problems({**BODY, **v1_only})
    assert [field for field, _ in v2] == [
        "runningTimeoutStopTimeUnit (max_running_time)",
        "codeSource (code_source)",
        "logCollectionFilePatterns (log_collection_file_patterns)",
        "requiredNodeAffinity (required_node_affinity)",
        "preferredNodeAffinity (preferred_node_affinity)",
        "datasources[0].id (datasources)",
    ]
    assert all("api_version v1" in problem for _, problem in v2)
    assert V1.create_problems({**BODY, **v1_only}) == []
