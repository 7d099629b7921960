"""Lenient response models: extra, missing and null fields, unknown statuses (bce-sdk-go
services/aihc/api/v1/aiJob.go)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from airflow_provider_aihc.models.job import (
    CreateJobResult,
    DeleteJobResult,
    JobBrief,
    JobEvents,
    JobInfo,
    JobList,
    JobSummary,
    PodLogs,
    Queue,
    QueueList,
    ResourcePool,
    ResourcePoolList,
    StopJobResult,
    parse_timestamp,
)
from airflow_provider_aihc.models.status import JobStatus

JOB_ID = "pytorchjob-265e535d-7bec-4b68-88bb-08faa4247504"

GET_JOB_RESULT: dict[str, Any] = {
    "jobId": JOB_ID,
    "name": "test-api-llama2-7b-4",
    "resourcePoolId": "cce-1uji3ib5",
    "queue": "default",
    "jobFramework": "PyTorchJob",
    "status": "Running",
    "createdAt": "2024-07-16T08:33:43Z",
    "scheduledAt": "2024-07-16T08:33:45Z",
    "runningAt": "2024-07-16T08:35:01Z",
    "finishedAt": "",
    "command": "bash run.sh",
    "image": "registry.baidubce.com/aihc-aiak/aiak-megatron:v1",
    "replicas": 1,
    "resources": [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}],
    "envs": [{"name": "CUDA_DEVICE_MAX_CONNECTIONS", "value": "1"}],
    "enableRDMA": True,
    "hostNetwork": False,
    "datasources": [{"type": "pfs", "name": "pfs-7xWeAt", "mountPath": "/mnt/cluster"}],
    "labels": [
        {"key": "aijob.cce.baidubce.com/create-from-aihcp-api", "value": "true"},
        {"key": "team", "value": "nlp"},
    ],
    "priority": "normal",
    "enableFaultTolerance": False,
    "customFaultTolerancePattern": None,
    "enableBccl": False,
    "enableBcclStatus": "",
    "k8sUID": "0d6f8f0e-uid",
    "k8sNamespace": "default",
    "podList": {
        "listMeta": {"totalItems": 1},
        "pods": [
            {
                "PodIP": "10.0.0.7",
                "nodeName": "10.0.0.3",
                "objectMeta": {
                    "name": "test-api-llama2-7b-4-master-0",
                    "namespace": "default",
                    "labels": {"training.kubeflow.org/job-name": "test-api-llama2-7b-4"},
                },
                "podStatus": {"podPhase": "Running", "status": "READY"},
                "replicaType": "master",
                "restartCount": 0,
                "finishedAt": "",
                "reason": "",
            }
        ],
    },
}


def test_get_job_result_parses() -> None:
    job = JobInfo.model_validate(GET_JOB_RESULT)

    assert job.job_id == JOB_ID
    assert job.enable_rdma is True
    assert job.k8s_uid == "0d6f8f0e-uid"
    assert job.k8s_namespace == "default"
    assert job.created_at == datetime(2024, 7, 16, 8, 33, 43, tzinfo=UTC)
    assert job.finished_at is None
    assert job.custom_fault_tolerance_pattern == []
    assert job.pod_names == ["test-api-llama2-7b-4-master-0"]
    pod = job.pod_list.pods[0] if job.pod_list else None
    assert pod is not None
    assert (pod.pod_ip, pod.pod_status.status, pod.replica_type) == ("10.0.0.7", "READY", "master")
    assert job.labels_dict["team"] == "nlp"
    assert job.job_status is JobStatus.RUNNING
    assert not job.is_terminal
    assert not job.is_successful
    assert job.failure_reason is None


def test_wire_names_on_dump() -> None:
    wire = JobInfo.model_validate(GET_JOB_RESULT).to_wire()
    assert wire["enableRDMA"] is True
    assert wire["k8sUID"] == "0d6f8f0e-uid"
    assert wire["podList"]["pods"][0]["PodIP"] == "10.0.0.7"
    assert wire["createdAt"] == "2024-07-16T08:33:43Z"


def test_unknown_fields_are_kept() -> None:
    job = JobInfo.model_validate({**GET_JOB_RESULT, "brandNewField": {"x": 1}})
    assert job.model_extra == {"brandNewField": {"x": 1}}
    assert job.to_wire()["brandNewField"] == {"x": 1}


@pytest.mark.parametrize("payload", [{}, {"jobId": JOB_ID}])
def test_missing_fields_get_defaults(payload: dict[str, Any]) -> None:
    job = JobInfo.model_validate(payload)
    assert job.status == ""
    assert job.labels == []
    assert job.pod_list is None
    assert job.pod_names == []
    assert job.labels_dict == {}
    assert not job.is_terminal
    assert job.failure_reason is None


def test_nulls_and_odd_types_do_not_fail() -> None:
    nulls = {key: None for key in GET_JOB_RESULT}
    job = JobInfo.model_validate(nulls)
    assert (job.job_id, job.replicas, job.enable_rdma, job.resources) == ("", 0, False, [])

    odd = {
        "jobId": 123,
        "replicas": "2",
        "enableRDMA": "true",
        "podList": "",
        "labels": None,
        "queueingSequence": "",
        "privileged": "false",
    }
    job = JobInfo.model_validate(odd)
    assert (job.job_id, job.replicas, job.enable_rdma, job.privileged) == ("123", 2, True, False)
    assert job.pod_list is None
    assert job.queueing_sequence is None


@pytest.mark.parametrize("status", ["Queueing", "", "SomethingNew"])
def test_unknown_status_strings_parse(status: str) -> None:
    job = JobInfo.model_validate({"status": status})
    assert job.status == status
    assert job.job_status is None
    assert not job.is_terminal


@pytest.mark.parametrize(
    ("status", "terminal", "successful"),
    [("Succeeded", True, True), ("Failed", True, False), ("ManualTermination", True, False),
     ("Stopped", True, False), ("Running", False, False), ("Abnormal", False, False)],
)  # fmt: skip
def test_status_predicates_delegate(status: str, terminal: bool, successful: bool) -> None:
    job = JobInfo.model_validate({"status": status})
    assert (job.is_terminal, job.is_successful) == (terminal, successful)


def test_failure_reason_is_the_first_non_empty_pod_reason() -> None:
    pods = [{"reason": ""}, {"reason": "  "}, {"reason": "OOMKilled"}, {"reason": "Error"}]
    job = JobInfo.model_validate({"status": "Failed", "podList": {"pods": pods}})
    assert job.failure_reason == "OOMKilled"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-07-16T08:33:43Z", datetime(2024, 7, 16, 8, 33, 43, tzinfo=UTC)),
        ("2024-07-15 16:52:50 +0000 UTC", datetime(2024, 7, 15, 16, 52, 50, tzinfo=UTC)),
        ("2024-07-15 16:52:50.123456789 +0800 CST m=+0.1",
         datetime(2024, 7, 15, 16, 52, 50, 123456, tzinfo=timezone(timedelta(hours=8)))),
        ("2024-07-16T08:33:43", datetime(2024, 7, 16, 8, 33, 43, tzinfo=UTC)),
        (1721118823, datetime(2024, 7, 16, 8, 33, 43, tzinfo=UTC)),
        ("", None), (None, None), ("not a time", None), ([], None), (10**30, None),
    ],
)  # fmt: skip
def test_parse_timestamp(raw: object, expected: datetime | None) -> None:
    assert parse_timestamp(raw) == expected


def test_job_list() -> None:
    page = JobList.model_validate(
        {"total": 2, "jobs": [GET_JOB_RESULT, {"jobId": "mpijob-1", "status": "Created"}],
         "pageNo": 1, "pageSize": 10, "orderBy": "createdAt", "order": "desc"}
    )  # fmt: skip
    assert page.total == 2
    assert [job.job_id for job in page.jobs] == [JOB_ID, "mpijob-1"]
    assert (page.page_no, page.page_size, page.order_by, page.order) == (1, 10, "createdAt", "desc")
    assert JobList.model_validate({"jobs": None}).jobs == []


def test_job_events() -> None:
    events = JobEvents.model_validate(
        {"events": [{"reason": "FailedScheduling", "message": "0/3 nodes are available",
                     "firstTimestamp": "2024-07-15 16:52:50 +0000 UTC",
                     "lastTimestamp": "2024-07-15 16:53:50 +0000 UTC", "count": 3,
                     "type": "Warning"}], "total": 1}
    )  # fmt: skip
    event = events.events[0]
    assert (event.reason, event.count, event.type) == ("FailedScheduling", 3, "Warning")
    assert event.last_timestamp == datetime(2024, 7, 15, 16, 53, 50, tzinfo=UTC)
    assert JobEvents.model_validate({}).events == []


def test_pod_logs() -> None:
    logs = PodLogs.model_validate({"jobId": JOB_ID, "podName": "p-master-0", "logs": ["a", 1]})
    assert logs.logs == ["a", "1"]
    assert logs.next_marker is None
    assert PodLogs.model_validate({"logs": None, "nextMarker": "m2"}).next_marker == "m2"


def test_create_result_requires_a_job_id() -> None:
    result = CreateJobResult.model_validate({"jobId": JOB_ID, "jobName": "api-create-py-test-2"})
    assert (result.job_id, result.job_name) == (JOB_ID, "api-create-py-test-2")
    for payload in ({}, {"jobId": ""}, {"jobName": "x"}):
        with pytest.raises(ValidationError):
            CreateJobResult.model_validate(payload)


@pytest.mark.parametrize("model", [StopJobResult, DeleteJobResult])
def test_stop_and_delete_results_need_no_name(model: type[StopJobResult]) -> None:
    assert model.model_validate({"jobId": JOB_ID}).job_name is None
    assert model.model_validate({"jobId": JOB_ID, "jobName": "n"}).job_name == "n"
    assert model.model_validate({}).job_id == ""


def test_resource_pools() -> None:
    pools = ResourcePoolList.model_validate(
        {"resourcePools": [{"metadata": {"id": "cce-1uji3ib5", "name": "pool"},
                            "spec": {"region": "bj", "k8sVersion": "1.24"},
                            "status": {"phase": "running", "gpuCount": {"total": 16, "used": 8},
                                       "nodeCount": None}}],
         "totalCount": 1}
    )  # fmt: skip
    pool = pools.resource_pools[0]
    assert (pools.total_count, pool.pool_id, pool.spec.region) == (1, "cce-1uji3ib5", "bj")
    assert (pool.status.gpu_count.total, pool.status.node_count.total) == (16, 0)
    assert pool.spec.model_extra == {"k8sVersion": "1.24"}
    assert ResourcePoolList.model_validate({"total": 3}).total_count == 3  # bce-sdk-go spelling


def test_single_pool_and_queue_accept_their_wrapper() -> None:
    pool = {"metadata": {"id": "cce-1"}}
    assert ResourcePool.model_validate({"resourcePool": pool}).pool_id == "cce-1"
    assert ResourcePool.model_validate(pool).pool_id == "cce-1"
    assert Queue.model_validate({"queue": {"name": "default"}}).name == "default"
    assert Queue.model_validate({"name": "default"}).name == "default"


def test_queues() -> None:
    queues = QueueList.model_validate(
        {"queues": [{"name": "default", "state": "Open", "queueType": "Regular",
                     "capability": {"cpu": "10"}, "children": [{"name": "child"}]}],
         "total": 1}
    )  # fmt: skip
    queue = queues.queues[0]
    assert (queue.name, queue.state, queue.queue_type) == ("default", "Open", "Regular")
    assert queue.children[0].name == "child"
    assert QueueList.model_validate({"queues": None}).queues == []


def test_a_queues_quantities_are_numbers_whichever_form_aihc_sends() -> None:
    """v1's ``ResourceList`` is ``map[string]string`` (bce-sdk-go ``api/v1/queue.go``); v2's
    amounts arrive as numbers: a quota reads the same either way, and a quantity that is
    not a number is kept as written."""
    as_strings = QueueList.model_validate(
        {"queues": [{"name": "q", "capability": {"baidu.com/a800_80g_cgpu": "16", "cpu": "1.5",
                                                  "memory": "8Gi", "odd": "nan"},
                     "allocated": {"baidu.com/a800_80g_cgpu": "8"}}]}
    ).queues[0]  # fmt: skip
    assert as_strings.capability == {
        "baidu.com/a800_80g_cgpu": 16, "cpu": 1.5, "memory": "8Gi", "odd": "nan"}  # fmt: skip
    assert as_strings.allocated == {"baidu.com/a800_80g_cgpu": 8}
    as_numbers = QueueList.model_validate(
        {"queues": [{"name": "q", "capability": {"baidu.com/a800_80g_cgpu": 16}}]}
    ).queues[0]
    assert as_numbers.capability == {"baidu.com/a800_80g_cgpu": 16}


# ---- JobBrief: what a poll reads, by the same rules as JobInfo -------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", " ", "Running", "Succeeded", "Failed", "true", "0", "OOMKilled"]),
    st.just(["not", "a", "scalar"]),
)
_pods = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "objectMeta": st.one_of(
                st.none(), st.fixed_dictionaries({}, optional={"name": _scalars})
            ),
            "reason": _scalars,
        },
    ),
    max_size=3,
)
_get_job_results = st.fixed_dictionaries(
    {},
    optional={
        "jobId": _scalars,
        "resourcePoolId": _scalars,
        "jobFramework": _scalars,
        "status": _scalars,
        "enableFaultTolerance": _scalars,
        "podList": st.one_of(st.none(), st.fixed_dictionaries({}, optional={"pods": _pods})),
        "name": _scalars,
        "createdAt": st.sampled_from(["", "2024-07-16T08:33:43Z", "yesterday", None, 1721118823]),
        "labels": st.one_of(
            st.none(),
            st.lists(st.fixed_dictionaries({}, optional={"key": _scalars, "value": _scalars})),
        ),
    },
)


@settings(max_examples=300, deadline=None)
@given(_get_job_results)
def test_brief_and_summary_read_a_job_as_job_info_does(result: dict[str, Any]) -> None:
    try:
        full = JobInfo.model_validate(result)
    except ValidationError:  # garbled where the summary reads too: it refuses it as well
        with pytest.raises(ValidationError):
            JobSummary.model_validate(result)
        return
    brief = JobBrief.model_validate(result)
    summary = JobSummary.model_validate(result)
    for name in ("name", "labels_dict", "created_at", "status", "pod_names", "job_id"):
        assert getattr(summary, name) == getattr(full, name), name
    for name in (
        "job_id",
        "resource_pool_id",
        "job_framework",
        "status",
        "enable_fault_tolerance",
        "pod_names",
        "job_status",
        "is_terminal",
        "is_successful",
        "failure_reason",
    ):
        assert getattr(brief, name) == getattr(full, name), name


def test_brief_of_a_real_answer() -> None:
    brief = JobBrief.model_validate(GET_JOB_RESULT)
    full = JobInfo.model_validate(GET_JOB_RESULT)
    assert brief.status == "Running"
    assert brief.pod_names == full.pod_names != []
    assert not hasattr(brief, "command")  # the rest is not read at all
