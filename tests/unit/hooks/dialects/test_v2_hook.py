"""The hook on ``api_version: v2``: the same methods, arguments and typed results as v1,
sent as v2 actions (``POST /?action=…``, ``X-API-Version: v2``; pool and queue actions as
``GET`` with ``version: v2``) to the emulator, which serves both dialects from one backend.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from hook_helpers import POOL, Sent, job_body

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCValidationError
from airflow_provider_aihc.hooks.aihc import AIHCHook

Spy = Callable[[AIHCHook], list[Sent]]
ConnSetter = Callable[..., Any]  # the set_conn fixture of conftest.py


@pytest.fixture
def v2(set_conn: ConnSetter) -> AIHCHook:
    set_conn(extra={"api_version": "v2"})
    return AIHCHook()


def actions(server: EmulatorServer) -> list[str | None]:
    return [record.action for record in server.backend.requests]


def test_create_sends_the_v2_action_with_its_body(
    v2: AIHCHook, aihc_emulator: EmulatorServer, wire: Spy
) -> None:
    sent = wire(v2)
    created = v2.create_job(job_body("v2-train", priority="high"))
    assert created.job_id.startswith("job-")
    assert created.job_name == "v2-train"
    [request] = sent
    url = urlsplit(request.url)
    assert (request.method, url.path) == ("POST", "/")
    assert dict(parse_qsl(url.query)) == {
        "action": "CreateJob",
        "resourcePoolId": POOL,
        "queueID": "default",
    }
    assert request.headers["X-API-Version"] == "v2"
    assert "x-api-version" not in request.headers["Authorization"]  # sent unsigned, as the SDK
    body = json.loads(request.body or b"")
    assert body["command"] == "python pretrain_gpt.py"
    assert "command" not in body["jobSpec"]
    assert (body["jobType"], body["queue"], body["priority"]) == ("PyTorchJob", "default", "high")
    assert "jobFramework" not in body
    assert actions(aihc_emulator) == ["CreateJob"]


def test_reads_give_the_same_typed_results(v2: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    job_id = v2.create_job(job_body("typed")).job_id
    job = v2.get_job(job_id)
    assert (job.job_id, job.name, job.job_framework, job.status) == (
        job_id,
        "typed",
        "PyTorchJob",
        "Created",
    )
    # A v2 JobItem carries no command (baiducloud-go-sdk services/aihc/model_job_item.go).
    assert (job.image, job.replicas, job.command) == (
        "registry.baidubce.com/aihc-aiak/aiak-megatron:latest",
        2,
        "",
    )
    assert job.pod_list is not None
    assert [pod.object_meta.name for pod in job.pod_list.pods] == [
        "typed-master-0",
        "typed-worker-0",
    ]
    brief = v2.get_job_brief(job_id)
    assert (brief.status, brief.is_terminal) == ("Scheduled", False)
    assert [j.job_id for j in v2.list_jobs()] == [job_id]
    assert [j.name for j in v2.list_job_summaries()] == ["typed"]
    assert set(actions(aihc_emulator)) == {"CreateJob", "DescribeJob", "DescribeJobs"}


async def test_async_reads_and_stop(v2: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    job_id = v2.create_job(job_body("async-v2")).job_id
    assert (await v2.aget_job(job_id)).name == "async-v2"
    assert (await v2.aget_job_brief(job_id)).status == "Scheduled"
    assert (await v2.aget_job_events(job_id)).total >= 1
    assert (await v2.astop_job(job_id)).job_id == job_id
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"
    assert "StopJob" in actions(aihc_emulator)


def test_list_pages_with_page_number(
    v2: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(AIHCHook, "list_page_size", 2)
    ids = [v2.create_job(job_body(f"page-{i}")).job_id for i in range(5)]
    assert sorted(j.job_id for j in v2.list_jobs()) == sorted(ids)
    assert actions(aihc_emulator).count("DescribeJobs") == 3


def test_stop_delete_priority_events_logs(v2: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    job_id = v2.create_job(job_body("lifecycle")).job_id
    assert v2.update_job_priority(job_id, "low").job_id == job_id
    assert aihc_emulator.backend.job(job_id)["priority"] == "low"
    for _ in range(3):
        v2.get_job(job_id)
    events = v2.get_job_events(job_id)
    assert [e.message for e in events.events][-1] == "PyTorchJob lifecycle is running."
    assert v2.get_pod_events(job_id, "lifecycle-master-0").total > 0
    page = v2.get_pod_logs(job_id, "lifecycle-master-0", max_lines=3, marker="")
    # A first page is the whole log: no maxLines sent (DescribeJobLogs.json:10,12).
    assert len(page.logs) > 3
    assert page.next_marker
    lines = list(v2.iter_pod_log_lines(job_id, "lifecycle-master-0", page_lines=4))
    assert lines[: len(page.logs)] == page.logs
    assert v2.stop_job(job_id).job_id == job_id
    assert v2.delete_job(job_id).job_id == job_id
    assert aihc_emulator.backend.jobs() == []


def test_pools_and_queues(v2: AIHCHook, aihc_emulator: EmulatorServer, wire: Spy) -> None:
    sent = wire(v2)
    assert [p.metadata.id for p in v2.list_resource_pools()] == [POOL]
    # Answered flat (bce-sdk-go v2/api/resourcepool.go), read into the same model.
    pool = v2.get_resource_pool()
    assert (pool.metadata.id, pool.status.phase, pool.spec.region) == (
        POOL,
        "running",
        "cn-beijing",
    )
    assert [q.name for q in v2.list_queues()] == ["default", "research"]
    research = v2.get_queue("research")  # a QueueSpec (v2/api/queue.go): queueName, ResourceAmounts
    assert (research.name, research.state) == ("research", "Open")
    assert research.capability["cpu"] == 1024
    assert v2.test_connection()[0] is True
    assert {request.method for request in sent} == {"GET"}
    assert all(request.headers["version"] == "v2" for request in sent)
    assert actions(aihc_emulator)[:4] == [
        "DescribeResourcePools",
        "DescribeResourcePool",
        "DescribeQueues",
        "DescribeQueue",
    ]


def test_jobs_cross_between_dialects(set_conn: ConnSetter, aihc_emulator: EmulatorServer) -> None:
    set_conn("aihc_v1")
    set_conn("aihc_v2", extra={"api_version": "v2"})
    from_v1 = AIHCHook("aihc_v1").create_job(job_body("from-v1")).job_id
    from_v2 = AIHCHook("aihc_v2").create_job(job_body("from-v2")).job_id
    assert AIHCHook("aihc_v2").get_job(from_v1).name == "from-v1"
    assert AIHCHook("aihc_v1").get_job(from_v2).name == "from-v2"
    assert {j.name for j in AIHCHook("aihc_v2").list_jobs()} == {"from-v1", "from-v2"}


def test_managed_pool_sends_its_queue_id(v2: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    body = job_body("managed", queue="aihcq-emulator0")
    job_id = v2.create_job(body, "aihc-serverless").job_id
    job = v2.get_job(job_id, "aihc-serverless", queue_id="aihcq-emulator0")
    assert (job.resource_pool_id, job.queue) == ("aihc-serverless", "aihcq-emulator0")


def test_what_v2_cannot_say_is_refused_before_any_request(
    v2: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    body = job_body(
        "tolerant", faultTolerance=True, faultToleranceConfig={"faultToleranceLimit": 3}
    )
    with pytest.raises(AIHCValidationError) as raised:
        v2.create_job(body)
    assert "faultToleranceConfig" in str(raised.value)
    assert "api_version v2" in str(raised.value)
    assert aihc_emulator.backend.requests == []


def test_a_bad_api_version_names_the_extra(set_conn: ConnSetter) -> None:
    set_conn(extra={"api_version": "v3"})
    with pytest.raises(
        AIHCConfigError, match=r"api_version must be one of v1, v2, or empty; got 'v3'"
    ):
        AIHCHook().config  # noqa: B018
