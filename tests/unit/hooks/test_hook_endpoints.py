"""Every sync endpoint of the hook against the emulator (async twins: test_hook_async)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from hook_helpers import POOL, Sent, job_body, total_requests

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.trainlog import encode_marker
from airflow_provider_aihc.exceptions import (
    AIHCApiError,
    AIHCConfigError,
    AIHCNotFoundError,
    AIHCValidationError,
)
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.models.request import CreateJobRequest

Spy = Callable[[AIHCHook], list[Sent]]


def _query(sent: Sent) -> dict[str, list[str]]:
    return parse_qs(urlsplit(sent.url).query, keep_blank_values=True)


def _run_to_end(hook: AIHCHook, job_id: str) -> str:
    """Poll until the job ends (the emulator moves one status per GET)."""
    for _ in range(10):
        job = hook.get_job(job_id)
        if job.is_terminal:
            return job.status
    raise AssertionError("the job never ended")


def _lines(records: list[str]) -> list[str]:
    return [line for record in records for line in record.splitlines()]


# ---- create -------------------------------------------------------------------------------


def test_create_from_a_mapping(hook: AIHCHook, aihc_emulator: EmulatorServer, wire: Spy) -> None:
    sent = wire(hook)
    result = hook.create_job(job_body("from-mapping"))
    assert result.job_id.startswith("pytorchjob-")
    assert result.job_name == "from-mapping"
    state = aihc_emulator.backend.job(result.job_id)
    assert (state["name"], state["queue"], state["labels"]["team"]) == (
        "from-mapping",
        "default",
        "llm",
    )
    assert sent[0].method == "POST"
    assert _query(sent[0]) == {"resourcePoolId": [POOL]}
    assert aihc_emulator.backend.count("CreateJob", 200) == 1


def test_create_from_a_model_with_client_token(
    hook: AIHCHook, aihc_emulator: EmulatorServer, wire: Spy
) -> None:
    sent = wire(hook)
    request = CreateJobRequest.model_validate(job_body("from-model"))
    result = hook.create_job(request, POOL, client_token="tok-1")
    assert aihc_emulator.backend.job(result.job_id)["name"] == "from-model"
    assert _query(sent[0]) == {"resourcePoolId": [POOL], "clientToken": ["tok-1"]}


def test_invalid_create_is_refused_before_sending(
    hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    with pytest.raises(AIHCValidationError) as raised:
        hook.create_job({"name": "Bad_Name", "jobSpec": {"image": "busybox"}})
    fields = dict(raised.value.errors)
    assert {"name", "jobSpec.command"} <= set(fields)
    assert total_requests(aihc_emulator) == 0


def test_create_in_a_managed_pool_sends_queue_id(
    hook: AIHCHook, aihc_emulator: EmulatorServer, wire: Spy
) -> None:
    sent = wire(hook)
    created = hook.create_job(job_body("managed", queue="aihcq-emulator0"), "aihc-serverless")
    assert _query(sent[0])["queueID"] == ["aihcq-emulator0"]
    job = hook.get_job(created.job_id, "aihc-serverless", queue_id="aihcq-emulator0")
    assert job.resource_pool_id == "aihc-serverless"
    listed = hook.list_jobs("aihc-serverless", queue_id="aihcq-emulator0")
    assert [j.job_id for j in listed] == [created.job_id]
    hook.stop_job(created.job_id, "aihc-serverless", queue_id="aihcq-emulator0")
    # Without it, refused before sending, as Baidu's client refuses it (the emulator's own
    # refusal, AIHC's 400, is tests/emulator/test_jobs_api.py's).
    before = len(sent)
    with pytest.raises(AIHCConfigError, match="GetJob needs queue_id on managed resource pool"):
        hook.get_job(created.job_id, "aihc-serverless")
    assert len(sent) == before
    # A self-managed pool never gets queueID, even when one is passed.
    own = hook.create_job(job_body("self-managed"))
    hook.get_job(own.job_id, queue_id="aihcq-emulator0")
    assert "queueID" not in _query(sent[-1])


# ---- get, stop, delete, update -------------------------------------------------------------


def test_get_job_has_pods(hook: AIHCHook) -> None:
    created = hook.create_job(job_body("with-pods"))
    job = hook.get_job(created.job_id)
    assert (job.job_id, job.name, job.status) == (created.job_id, "with-pods", "Created")
    assert job.pod_names == ["with-pods-master-0", "with-pods-worker-0"]
    assert job.labels_dict["team"] == "llm"


def test_stop_job(hook: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    created = hook.create_job(job_body("to-stop"))
    hook.get_job(created.job_id)
    stopped = hook.stop_job(created.job_id)
    assert stopped.job_id == created.job_id
    assert hook.get_job(created.job_id).status == "ManualTermination"
    assert aihc_emulator.backend.count("StopJob", 200) == 1


def test_delete_job(hook: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    created = hook.create_job(job_body("to-delete"))
    deleted = hook.delete_job(created.job_id)
    assert (deleted.job_id, deleted.job_name) == (created.job_id, "to-delete")
    assert aihc_emulator.backend.jobs() == []
    with pytest.raises(AIHCNotFoundError):
        hook.get_job(created.job_id)


def test_update_priority(hook: AIHCHook, aihc_emulator: EmulatorServer, wire: Spy) -> None:
    created = hook.create_job(job_body("prio"))
    sent = wire(hook)
    result = hook.update_job_priority(created.job_id, "high")
    assert result.job_id == created.job_id
    assert sent[0].method == "PUT"
    assert sent[0].body == b'{"priority": "high"}'
    assert aihc_emulator.backend.job(created.job_id)["priority"] == "high"
    assert hook.get_job(created.job_id).priority == "high"


@pytest.mark.parametrize("priority", ["urgent", "HIGH", ""])
def test_bad_priority_is_refused_before_sending(
    hook: AIHCHook, aihc_emulator: EmulatorServer, priority: str
) -> None:
    with pytest.raises(AIHCConfigError, match="priority"):
        hook.update_job_priority("pytorchjob-1", priority)
    assert total_requests(aihc_emulator) == 0


# ---- list (every page) ---------------------------------------------------------------------


def test_list_reads_every_page_once(
    hook: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, wire: Spy
) -> None:
    monkeypatch.setattr(AIHCHook, "list_page_size", 3)
    created = [hook.create_job(job_body(f"page-{i}")).job_id for i in range(10)]
    sent = wire(hook)
    listed = hook.list_jobs()
    assert [job.job_id for job in listed] == created[::-1]  # newest first
    assert [_query(s)["pageNo"] for s in sent] == [["1"], ["2"], ["3"], ["4"]]
    assert {_query(s)["pageSize"][0] for s in sent} == {"3"}
    assert aihc_emulator.backend.count("ListJobs", 200) == 4
    ascending = hook.list_jobs(order="asc", order_by="createdAt")
    assert [job.job_id for job in ascending] == created


def test_summaries_list_the_same_jobs_as_list_jobs(
    hook: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime, timedelta

    monkeypatch.setattr(AIHCHook, "list_page_size", 3)
    for i in range(7):
        hook.create_job(job_body(f"summary-{i}", labels=[{"key": "n", "value": str(i)}]))
    full = hook.list_jobs()
    before = aihc_emulator.backend.count("ListJobs")
    summaries = hook.list_job_summaries(created_after=datetime.now(UTC) - timedelta(hours=1))
    assert aihc_emulator.backend.count("ListJobs") - before == 3  # every page, once
    assert [(j.job_id, j.name, j.status, j.labels_dict, j.created_at) for j in summaries] == [
        (j.job_id, j.name, j.status, j.labels_dict, j.created_at) for j in full
    ]
    assert summaries[0].labels_dict["n"] == "6"


def test_list_stops_at_an_exact_multiple(
    hook: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(AIHCHook, "list_page_size", 3)
    for i in range(6):
        hook.create_job(job_body(f"even-{i}"))
    assert len(hook.list_jobs()) == 6
    assert aihc_emulator.backend.count("ListJobs") == 2


def test_list_of_an_empty_pool_is_one_request(
    hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    assert hook.list_jobs() == []
    assert aihc_emulator.backend.count("ListJobs") == 1


def test_list_sees_each_job_once_when_one_is_created_between_pages(
    hook: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Newest first, a job created mid-listing pushes the others one place down."""
    monkeypatch.setattr(AIHCHook, "list_page_size", 3)
    created = [hook.create_job(job_body(f"race-{i}")).job_id for i in range(7)]
    inner = hook.session.request
    pages = 0

    def request(method: str, url: str, **kwargs: Any) -> Any:
        nonlocal pages
        response = inner(method, url, **kwargs)
        pages += 1
        if pages == 1:
            aihc_emulator.backend.create_job(POOL, job_body("intruder"))
        return response

    hook.session.request = request  # type: ignore[method-assign]
    listed = [job.job_id for job in hook.list_jobs()]
    counts = Counter(listed)
    assert all(counts[job_id] == 1 for job_id in created), counts
    assert set(created) <= set(listed)


def test_list_filters_by_queue(hook: AIHCHook, wire: Spy) -> None:
    hook.create_job(job_body("in-default"))
    hook.create_job(job_body("in-research", queue="research"))
    sent = wire(hook)
    assert [job.name for job in hook.list_jobs(queue="research")] == ["in-research"]
    assert _query(sent[0])["queue"] == ["research"]
    assert len(hook.list_jobs(queue="all")) == 2


def test_list_with_a_bad_order_is_an_api_error(
    hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    with pytest.raises(AIHCApiError) as raised:
        hook.list_jobs(order="sideways")
    assert type(raised.value) is AIHCApiError
    assert (raised.value.status, raised.value.code) == (400, "InvalidParam")
    assert aihc_emulator.backend.count("ListJobs") == 1  # a 400 is not retried


# ---- events and logs -----------------------------------------------------------------------


def test_job_events(hook: AIHCHook, wire: Spy) -> None:
    created = hook.create_job(job_body("events"))
    assert _run_to_end(hook, created.job_id) == "Succeeded"
    sent = wire(hook)
    events = hook.get_job_events(created.job_id)
    assert [e.reason for e in events.events] == ["Created", "Scheduled", "Running", "Succeeded"]
    assert events.total == 4
    assert all(e.type == "Normal" and e.first_timestamp for e in events.events)
    assert _query(sent[0])["jobFramework"] == ["PyTorchJob"]


def test_job_events_in_a_window(hook: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    created = hook.create_job(job_body("window"))
    _run_to_end(hook, created.job_id)
    events = hook.get_job_events(
        created.job_id, start_time="2000-01-01T00:00:00Z", end_time="2000-01-02T00:00:00Z"
    )
    assert events.events == []


def test_pod_events(hook: AIHCHook) -> None:
    created = hook.create_job(job_body("pod-events"))
    _run_to_end(hook, created.job_id)
    events = hook.get_pod_events(created.job_id, "pod-events-worker-0")
    reasons = [e.reason for e in events.events]
    assert reasons[:5] == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    with pytest.raises(AIHCNotFoundError) as raised:
        hook.get_pod_events(created.job_id, "no-such-pod")
    assert raised.value.code == "PodNotFound"


def test_pod_logs_tail_and_marker_paging(hook: AIHCHook, wire: Spy) -> None:
    created = hook.create_job(job_body("logs"))
    _run_to_end(hook, created.job_id)
    pod = "logs-master-0"
    everything = hook.get_pod_logs(created.job_id, pod, marker="")
    full = _lines(everything.logs)
    assert len(full) > 12
    assert full[-1].endswith("[AIHC] training process exited with code 0")
    assert (everything.job_id, everything.pod_name) == (created.job_id, pod)

    tail = hook.get_pod_logs(created.job_id, pod, max_lines=3)
    assert _lines(tail.logs) == full[-3:]

    sent = wire(hook)
    first = hook.get_pod_logs(created.job_id, pod, max_lines=4, marker="")
    assert _lines(first.logs) == full  # a first page is the whole log (DescribeJobLogs.json:10,12):
    assert {"marker", "maxLines"}.isdisjoint(_query(sent.pop(0)))  # neither is sent
    pages: list[str] = []
    markers = [encode_marker(0)]  # the emulator's marker of the first line
    for _ in range(50):
        page = hook.get_pod_logs(created.job_id, pod, max_lines=4, marker=markers[-1])
        lines = _lines(page.logs)
        if not lines:
            break
        assert len(lines) <= 4
        pages.extend(lines)
        assert page.next_marker
        markers.append(page.next_marker)
    assert pages == full  # every line once, in order
    assert [_query(s)["marker"][0] for s in sent] == markers
    assert all(_query(s)["maxLines"] == ["4"] for s in sent)


def test_pod_logs_iterator_reads_every_line(hook: AIHCHook) -> None:
    created = hook.create_job(job_body("log-iter"))
    _run_to_end(hook, created.job_id)
    full = _lines(hook.get_pod_logs(created.job_id, "log-iter-master-0", marker="").logs)
    lines = list(hook.iter_pod_log_lines(created.job_id, "log-iter-master-0", page_lines=5))
    assert lines == full


def test_pod_logs_of_an_unknown_pod(hook: AIHCHook) -> None:
    created = hook.create_job(job_body("no-pod"))
    with pytest.raises(AIHCNotFoundError) as raised:
        hook.get_pod_logs(created.job_id, "no-pod-master-9")
    assert (raised.value.code, raised.value.operation) == ("PodNotFound", "GetPodLogs")


# ---- pools and queues ----------------------------------------------------------------------


def test_list_resource_pools_every_page(
    hook: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(AIHCHook, "list_page_size", 1)
    pools = hook.list_resource_pools()
    assert [pool.pool_id for pool in pools] == ["aihc-serverless", POOL]
    assert aihc_emulator.backend.count("ListResourcePools") == 2


def test_get_resource_pool(hook: AIHCHook) -> None:
    pool = hook.get_resource_pool()
    assert (pool.pool_id, pool.metadata.name) == (POOL, "emulator-pool")
    assert pool.status.gpu_count.total == 64
    assert hook.get_resource_pool("aihc-serverless").pool_id == "aihc-serverless"
    with pytest.raises(AIHCNotFoundError) as raised:
        hook.get_resource_pool("cce-nope")
    assert raised.value.code == "ResourcePoolNotFound"


def test_queues(hook: AIHCHook) -> None:
    assert [q.name for q in hook.list_queues()] == ["default", "research"]
    research = hook.get_queue("research")
    assert (research.name, research.capability["baidu.com/a800_80g_cgpu"]) == ("research", 16)
    managed = hook.get_queue("aihcq-emulator0", "aihc-serverless")
    assert managed.name == "default"
    with pytest.raises(AIHCNotFoundError) as raised:
        hook.get_queue("nope")
    assert raised.value.code == "QueueNotFound"
    assert raised.value.request_id  # the queue endpoints' requestID, read case-insensitively


def test_test_connection_is_one_cheap_call(
    hook: AIHCHook, aihc_emulator: EmulatorServer, wire: Spy
) -> None:
    sent = wire(hook)
    ok, message = hook.test_connection()
    assert ok is True
    assert aihc_emulator.url in message
    assert len(sent) == 1
    assert _query(sent[0])["pageSize"] == ["1"]


def test_list_created_after_stops_paging_at_the_first_older_job(
    hook: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime, timedelta

    monkeypatch.setattr(AIHCHook, "list_page_size", 3)
    created = [hook.create_job(job_body(f"history-{i}")).job_id for i in range(10)]
    before = aihc_emulator.backend.count("ListJobs")

    future = hook.list_jobs(created_after=datetime.now(UTC) + timedelta(hours=1))
    assert future == []
    assert aihc_emulator.backend.count("ListJobs") - before == 1  # one page, then stop

    past = hook.list_jobs(created_after=datetime.now(UTC) - timedelta(hours=1))
    assert [job.job_id for job in past] == created[::-1]
