"""The job tools (metrics, nodes, the web terminal, batch stop, a pool's nodes) against the
emulator over real HTTP, in each dialect that defines them: the answer read, the request
as Baidu's definitions say (v2 arguments as strings, ``queueID`` carried), a missing
required argument refused by the emulator by name, and a bad value refused by the hook
before anything is sent, naming the argument and what it takes."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from hook_helpers import POOL, Sent, job_body, total_requests

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCApiError, AIHCConfigError, AIHCNotFoundError
from airflow_provider_aihc.hooks import calls
from airflow_provider_aihc.hooks._tools import METRIC_TYPES
from airflow_provider_aihc.hooks.aihc import AIHCHook

Spy = Callable[[AIHCHook], list[Sent]]
ConnSetter = Callable[..., None]
MANAGED = "aihc-serverless"
MANAGED_QUEUE_ID = "aihcq-emulator0"


@pytest.fixture(params=["v1", "v2"])
def api_hook(request: pytest.FixtureRequest, set_conn: ConnSetter) -> AIHCHook:
    """A hook on the emulator in each dialect."""
    set_conn(extra={"api_version": request.param})
    return AIHCHook()


def _query(sent: Sent) -> dict[str, list[str]]:
    return parse_qs(urlsplit(sent.url).query, keep_blank_values=True)


def _running(hook: AIHCHook, name: str, pool: str | None = None, queue: str | None = None) -> str:
    """A new two-pod job, polled until it runs (the emulator moves one status per GET)."""
    body = job_body(name, queue=queue) if queue else job_body(name)
    job_id = hook.create_job(body, pool).job_id
    for _ in range(10):
        if hook.get_job_brief(job_id, pool, queue_id=queue).status == "Running":
            return job_id
    raise AssertionError("the job never ran")


# ---- metrics --------------------------------------------------------------------------------


def test_metrics_of_a_running_job_are_a_busy_series(api_hook: AIHCHook, wire: Spy) -> None:
    job_id = _running(api_hook, "metrics-run")
    sent = wire(api_hook)
    answer = api_hook.get_job_metrics(job_id, "GpuUsage", start_time=0, time_step="60")
    assert answer.job_id == job_id
    assert answer.points, answer
    assert 70 <= answer.points[-1].value <= 99
    assert answer.points[-1].time is not None
    if api_hook.config.api_version == "v1":
        assert [p.pod_name for p in answer.pod_metrics] == [
            "metrics-run-master-0",
            "metrics-run-worker-0",
        ]
        assert _query(sent[0])["metricType"] == ["GpuUsage"]
        assert "/metrics" in sent[0].url
    else:  # every argument a JSON string, queueID in the query
        body = json.loads(sent[0].body or b"{}")
        assert body == {"jobId": job_id, "metricType": "GpuUsage", "startTime": "0",
                        "timeStep": "60"}  # fmt: skip
        assert _query(sent[0])["queueID"] == ["default"]
        assert _query(sent[0])["action"] == ["DescribeJobMetrics"]


def test_metrics_of_an_ended_job_stop_at_its_end(api_hook: AIHCHook) -> None:
    job_id = _running(api_hook, "metrics-ended")
    api_hook.stop_job(job_id)
    ended = api_hook.get_job(job_id)
    assert ended.is_terminal
    assert ended.finished_at is not None
    answer = api_hook.get_job_metrics(job_id, "GpuUsage", time_step="1")
    assert answer.points[-1].time == ended.finished_at.replace(microsecond=0)
    later = int(ended.finished_at.timestamp()) + 3600
    after = api_hook.get_job_metrics(job_id, "GpuUsage", end_time=later, time_step="60")
    assert after.points[-1].value == 0


def test_metrics_before_a_job_runs_are_zero(api_hook: AIHCHook) -> None:
    job_id = api_hook.create_job(job_body("metrics-queued")).job_id
    answer = api_hook.get_job_metrics(job_id, "GpuMemoryUsage")
    assert answer.points
    assert all(p.value == 0 for p in answer.points)


async def test_metrics_async_on_a_managed_pool_carry_the_queue_id(
    set_conn: ConnSetter, aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"api_version": "v2", "resource_pool_id": MANAGED})
    hook = AIHCHook()
    job_id = _running(hook, "metrics-managed", queue=MANAGED_QUEUE_ID)
    answer = await hook.aget_job_metrics(job_id, "CpuUsage", queue_id=MANAGED_QUEUE_ID)
    assert answer.job_id == job_id
    assert answer.points
    before = total_requests(aihc_emulator)
    with pytest.raises(AIHCConfigError, match="GetJobMetrics needs queue_id"):
        await hook.aget_job_metrics(job_id, "CpuUsage")
    assert total_requests(aihc_emulator) == before


def test_an_unknown_metric_type_is_refused_before_sending(
    api_hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    with pytest.raises(AIHCConfigError) as raised:
        api_hook.get_job_metrics("some-job", "GpuUse")
    assert "metric_type must be one of GpuUsage, GpuMemoryUsage" in str(raised.value)
    assert "'GpuUse'" in str(raised.value)
    naive = datetime(2026, 1, 1)
    with pytest.raises(AIHCConfigError, match="start_time must be an aware datetime"):
        api_hook.get_job_metrics("some-job", "GpuUsage", start_time=naive)
    assert total_requests(aihc_emulator) == 0
    assert len(METRIC_TYPES) == 22


def test_the_hook_and_the_emulator_take_the_same_metric_types() -> None:
    """Two copies of one list (i18n/zh-CN/aihc/DescribeJobMetrics.json:9): the emulator
    imports nothing of the client, so this holds them together."""
    from airflow_provider_aihc.emulator.state.samples import METRIC_TYPES as SERVED

    assert set(SERVED) == set(METRIC_TYPES)


def test_the_emulator_refuses_metrics_without_a_metric_type(api_hook: AIHCHook) -> None:
    job_id = api_hook.create_job(job_body("metrics-untyped")).job_id
    with pytest.raises(AIHCApiError, match="metricType is required") as raised:
        api_hook.send(calls.GetJobMetrics(job_id, metric_type=""))
    assert raised.value.status == 400


# ---- the web terminal -----------------------------------------------------------------------


def test_the_web_terminal_of_a_pod(api_hook: AIHCHook, wire: Spy) -> None:
    job_id = _running(api_hook, "terminal")
    sent = wire(api_hook)
    answer = api_hook.get_job_webterminal(job_id, "terminal-master-0", ping_timeout=600)
    assert answer.web_terminal_url.startswith("wss://")
    assert answer.web_terminal_url.endswith(f"/{job_id}/terminal-master-0")
    if api_hook.config.api_version == "v2":
        body = json.loads(sent[0].body or b"{}")
        assert body == {"jobId": job_id, "podName": "terminal-master-0",
                        "pingTimeoutSecond": "600"}  # fmt: skip
    else:  # bce-sdk-go sends podName in the path and the query (client.go:451)
        assert _query(sent[0])["podName"] == ["terminal-master-0"]
    with pytest.raises(AIHCNotFoundError, match="not found"):
        api_hook.get_job_webterminal(job_id, "terminal-master-9")


def test_bad_terminal_timeouts_are_refused_before_sending(
    api_hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    with pytest.raises(AIHCConfigError, match=r"ping_timeout must be whole seconds, 1 to 3600"):
        api_hook.get_job_webterminal("job", "pod", ping_timeout=3601)
    with pytest.raises(AIHCConfigError, match=r"handshake_timeout must be .* at least 1"):
        api_hook.get_job_webterminal("job", "pod", handshake_timeout=0)
    with pytest.raises(AIHCConfigError, match="pod_name must be a non-empty id"):
        api_hook.get_job_webterminal("job", "")
    assert total_requests(aihc_emulator) == 0


def test_the_emulator_refuses_a_terminal_timeout_out_of_range(api_hook: AIHCHook) -> None:
    job_id = api_hook.create_job(job_body("terminal-range")).job_id
    call = calls.GetJobWebterminal(job_id, "terminal-range-master-0", ping_timeout=0)
    with pytest.raises(AIHCApiError, match="pingTimeoutSecond must be whole seconds"):
        api_hook.send(call)


# ---- job nodes ------------------------------------------------------------------------------


def test_the_nodes_of_a_job(api_hook: AIHCHook) -> None:
    queued = api_hook.create_job(job_body("nodes-queued")).job_id
    assert api_hook.get_job_nodes(queued).nodes == []
    job_id = _running(api_hook, "nodes-run")
    nodes = api_hook.get_job_nodes(job_id)
    assert nodes.job_id == job_id
    assert len(nodes.nodes) == 2
    assert all(n.startswith("192.168.") for n in nodes.nodes)


async def test_the_nodes_of_a_job_async_on_a_managed_pool(set_conn: ConnSetter) -> None:
    set_conn(extra={"api_version": "v1", "resource_pool_id": MANAGED})
    hook = AIHCHook()
    job_id = _running(hook, "nodes-managed", queue=MANAGED_QUEUE_ID)
    nodes = await hook.aget_job_nodes(job_id, queue_id=MANAGED_QUEUE_ID)
    assert len(nodes.nodes) == 2


# ---- batch stop -----------------------------------------------------------------------------


def test_stop_jobs_reports_each_job(set_conn: ConnSetter, wire: Spy) -> None:
    set_conn(extra={"api_version": "v2"})
    hook = AIHCHook()
    first = _running(hook, "batch-a")
    second = hook.create_job(job_body("batch-b")).job_id
    sent = wire(hook)
    result = hook.stop_jobs([first, second, "pytorchjob-missing"])
    assert (result.success_num, result.failed_num, result.success) == (2, 1, False)
    assert {j.job_id for j in result.success_list} == {first, second}
    assert result.failed_list[0].job_id == "pytorchjob-missing"
    assert result.failed_list[0].error_msg
    assert json.loads(sent[0].body or b"{}") == {
        "jobList": [{"jobId": first}, {"jobId": second}, {"jobId": "pytorchjob-missing"}]
    }
    assert _query(sent[0])["action"] == ["BatchStopJobs"]
    assert _query(sent[0])["queueID"] == ["default"]
    assert hook.get_job(first).is_terminal


async def test_stop_jobs_async_on_a_managed_pool(set_conn: ConnSetter) -> None:
    set_conn(extra={"api_version": "v2", "resource_pool_id": MANAGED})
    hook = AIHCHook()
    job_id = hook.create_job(job_body("batch-managed", queue=MANAGED_QUEUE_ID)).job_id
    result = await hook.astop_jobs([job_id], queue_id=MANAGED_QUEUE_ID)
    assert result.success
    assert result.success_num == 1
    with pytest.raises(AIHCConfigError, match="BatchStopJobs needs queue_id"):
        await hook.astop_jobs([job_id])


def test_stop_jobs_is_refused_on_v1_and_for_bad_lists_before_sending(
    set_conn: ConnSetter, aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"api_version": "v1"})
    hook = AIHCHook()
    with pytest.raises(AIHCConfigError, match="BatchStopJobs has no api_version v1 action"):
        hook.stop_jobs(["pytorchjob-a"])
    with pytest.raises(AIHCConfigError, match="job_ids must name at least one job"):
        hook.stop_jobs([])
    with pytest.raises(AIHCConfigError, match="job_ids must name each job once"):
        hook.stop_jobs(["pytorchjob-a", "pytorchjob-a"])
    assert total_requests(aihc_emulator) == 0


def test_the_emulator_refuses_a_batch_stop_without_a_job_list(set_conn: ConnSetter) -> None:
    set_conn(extra={"api_version": "v2"})
    with pytest.raises(AIHCApiError, match="jobList"):
        AIHCHook().send(calls.StopJobs(()))


# ---- a pool's nodes -------------------------------------------------------------------------


def test_the_nodes_of_a_pool_all_pages(set_conn: ConnSetter, wire: Spy) -> None:
    set_conn(extra={"api_version": "v1"})
    hook = AIHCHook()
    hook.list_page_size = 3
    busy = _running(hook, "pool-busy")
    sent = wire(hook)
    nodes = hook.list_pool_nodes(order="asc")
    assert len(nodes) == 8
    assert len(sent) == 3
    assert [n.node_name for n in nodes] == sorted(n.node_name for n in nodes)
    assert all(n.gpu_total == 8 for n in nodes)
    assert sum(n.gpu_allocated for n in nodes) == 16, busy
    assert urlsplit(sent[0].url).path == f"/api/v1/resourcepools/{POOL}/nodes"
    assert _query(sent[1])["pageNo"] == ["2"]


def test_the_nodes_of_a_pool_are_refused_on_v2_before_sending(
    set_conn: ConnSetter, aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"api_version": "v2"})
    hook = AIHCHook()
    with pytest.raises(AIHCConfigError, match="ListPoolNodes has no api_version v2 action"):
        hook.list_pool_nodes()
    with pytest.raises(AIHCConfigError, match="order must be one of asc, desc"):
        hook.list_pool_nodes(order="up")
    assert total_requests(aihc_emulator) == 0
