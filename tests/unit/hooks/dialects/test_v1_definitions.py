"""The v1 requests the hook puts on the wire, held to Baidu's own v1 client.

``definitions/v1_job_actions.json`` records, per v1 action, what bce-sdk-go's hand-written
client (``services/aihc/resource/client.go``, ``api/v1/aiJob.go``) sends: the method, the
path, each query parameter and whether the client refuses to send without it, and the
create body's fields with their JSON types, each with its file and line. Every request here
goes over real HTTP to the emulator; the hook's session is spied on, so what is checked is
what left the process. A disagreement with the client would be a strict ``xfail`` naming
its source; none is left (the managed pools' ``queueID`` is held here: each
call carries it, and without it is refused before anything is sent, as the client refuses).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from hook_helpers import POOL, Sent, job_body

from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCNotFoundError
from airflow_provider_aihc.hooks import _endpoint
from airflow_provider_aihc.hooks.aihc import AIHCHook

TABLE = json.loads((Path(__file__).parents[1] / "definitions" / "v1_job_actions.json").read_text())
DEFINED: dict[str, dict[str, Any]] = TABLE["actions"]
MANAGED_POOLS: list[str] = TABLE["managed_pools"]["values"]
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "String": (str,),
    "Integer": (int,),
    "Number": (int, float),
    "Boolean": (bool,),
    "List": (list,),
    "Object": (dict,),
}
#: A create body with every field the provider can send on v1 filled in.
FULL_CREATE = job_body(
    "v1-defined",
    labels=[{"key": "team", "value": "ml"}],
    datasources=[{"type": "pfs", "name": "pfs-7xWeAt", "mountPath": "/mnt/data"}],
    faultTolerance=True,
    faultToleranceConfig={"enabledHangDetection": True, "hangDetectionTimeoutMinutes": 5},
    enableBccl=False,
    retentionPeriod="7d",
    runningTimeoutStopTimeUnit="12h",
    codeSource={"filePath": "/code/train.tar.gz", "mountPath": "/workspace"},
    logCollectionFilePatterns=["/workspace/logs/*.log"],
    requiredNodeAffinity=["192.168.0.11"],
    preferredNodeAffinity=["192.168.0.12"],
)
Call = Callable[[AIHCHook, str, "str | None"], Any]
#: Each v1 action, as the hook's public method that sends it (given a job id and the queue
#: id the caller knows: ``None`` on a self-managed pool, where v1 needs none).
CALLS: dict[str, Call] = {
    "GetJob": lambda hook, job, queue: hook.get_job(job, queue_id=queue),
    "StopJob": lambda hook, job, queue: hook.stop_job(job, queue_id=queue),
    "DeleteJob": lambda hook, job, queue: hook.delete_job(job, queue_id=queue),
    "UpdateJob": lambda hook, job, queue: hook.update_job_priority(job, "high", queue_id=queue),
    "GetJobEvents": lambda hook, job, queue: hook.get_job_events(
        job, start_time="2026-01-01T00:00:00Z", end_time="2026-01-02T00:00:00Z", queue_id=queue
    ),
    "GetPodEvents": lambda hook, job, queue: hook.get_pod_events(
        job, f"{job}-master-0", queue_id=queue
    ),
    "GetPodLogs": lambda hook, job, queue: hook.get_pod_logs(
        job, f"{job}-master-0", start_time=1, max_lines=10, marker="m", queue_id=queue
    ),
    # bce-sdk-go sends the one queue as both ``queue`` and ``queueID`` (client.go:477-478).
    "ListJobs": lambda hook, job, queue: hook.list_jobs(
        queue=queue, queue_id=queue, order_by="createdAt", order="desc"
    ),
    "GetJobMetrics": lambda hook, job, queue: hook.get_job_metrics(
        job,
        "GpuUsage",
        start_time=1,
        end_time=2,
        time_step="60",
        rate_interval="300",
        queue_id=queue,
    ),
    "GetJobWebterminal": lambda hook, job, queue: hook.get_job_webterminal(
        job,
        hook.get_job(job, queue_id=queue).name + "-master-0",
        ping_timeout=600,
        handshake_timeout=30,
        queue_id=queue,
    ),
    "GetJobNodes": lambda hook, job, queue: hook.get_job_nodes(job, queue_id=queue),
    "ListPoolNodes": lambda hook, job, queue: hook.list_pool_nodes(order="asc"),
    "ListResourcePools": lambda hook, job, queue: hook.list_resource_pools(),
    "GetResourcePool": lambda hook, job, queue: hook.get_resource_pool(),
    "ListQueues": lambda hook, job, queue: hook.list_queues(),
    "GetQueue": lambda hook, job, queue: hook.get_queue("default"),
}


def path_pattern(template: str) -> re.Pattern[str]:
    """The defined path with each ``{argument}`` standing for one segment."""
    return re.compile("^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template)) + "$")


def sent_as(action: str, sent: list[Sent]) -> Sent:
    """The last request of ``sent`` that is ``action`` by its method and path."""
    defined = DEFINED[action]
    pattern = path_pattern(defined["path"])
    matching = [
        one
        for one in sent
        if one.method == defined["method"] and pattern.match(urlsplit(one.url).path)
    ]
    assert matching, f"no {defined['method']} {defined['path']} among {[s.url for s in sent]}"
    return matching[-1]


def query_problems(action: str, request: Sent, *, managed: bool) -> list[str]:
    """What the request's query holds that the client would not send, or lacks."""
    defined: Mapping[str, Any] = DEFINED[action]["query"]
    query = dict(parse_qsl(urlsplit(request.url).query, keep_blank_values=True))
    problems = [f"{name} is not a v1 {action} parameter" for name in query if name not in defined]
    for name, fact in defined.items():
        required = fact.get("required") is True or (managed and "required" in fact)
        if required and not query.get(name):
            problems.append(f"{name} is required ({fact['source']})")
    return problems


def body_problems(fields: Mapping[str, Any], body: Any, where: str = "") -> list[str]:
    """Each body field that is not defined, or not of its defined JSON type (nested too)."""
    problems = []
    for name, value in body.items():
        fact = fields.get(name)
        if fact is None:
            problems.append(f"{where}{name} is not defined")
            continue
        allowed = JSON_TYPES[fact["type"]]
        if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, allowed):
            problems.append(f"{where}{name} is {type(value).__name__}, defined {fact['type']}")
        elif "fields" in fact and isinstance(value, dict):
            problems += body_problems(fact["fields"], value, f"{where}{name}.")
        elif "items" in fact and isinstance(value, list):
            for index, item in enumerate(value):
                problems += body_problems(fact["items"], item, f"{where}{name}[{index}].")
    return problems


def required_body_fields(fields: Mapping[str, Any], body: Mapping[str, Any]) -> list[str]:
    return [
        f"{name} is required"
        for name, f in fields.items()
        if f.get("required") and name not in body
    ]


def test_the_table_names_every_action_with_a_method_a_path_and_sources() -> None:
    assert set(DEFINED) == {"CreateJob", *CALLS}
    for action, defined in DEFINED.items():
        assert defined["method"] in {"GET", "POST", "PUT", "DELETE"}, action
        assert defined["path"].startswith("/api/v1/"), action
        facts = [*defined["query"].values(), *defined.get("body", {}).values()]
        assert all(re.search(r"\.go:\d", fact["source"]) for fact in facts), action


def test_the_create_request_is_what_the_v1_client_sends(
    hook: AIHCHook, wire: Callable[[AIHCHook], list[Sent]]
) -> None:
    sent = wire(hook)
    hook.create_job(FULL_CREATE)
    request = sent_as("CreateJob", sent)
    assert query_problems("CreateJob", request, managed=False) == []
    body = json.loads(request.body or b"{}")
    fields = DEFINED["CreateJob"]["body"]
    assert body_problems(fields, body) + required_body_fields(fields, body) == []
    assert set(FULL_CREATE) <= set(body)


@pytest.mark.parametrize("action", sorted(CALLS))
def test_each_call_on_a_self_managed_pool_is_what_the_v1_client_sends(
    hook: AIHCHook, wire: Callable[[AIHCHook], list[Sent]], action: str
) -> None:
    job_id = hook.create_job(job_body(f"v1-{action.lower()}")).job_id
    sent = wire(hook)
    try:
        CALLS[action](hook, job_id, None)
    except AIHCNotFoundError:  # a pod call before the pod exists: the request still went
        assert "{pod_name}" in DEFINED[action]["path"]
    request = sent_as(action, sent)
    assert query_problems(action, request, managed=False) == []
    if "body" in DEFINED[action]:
        body = json.loads(request.body or b"{}")
        fields = DEFINED[action]["body"]
        assert body_problems(fields, body) + required_body_fields(fields, body) == []


#: The job calls the v1 client refuses on a managed pool without ``queueID``.
MANAGED_QUEUE_CALLS = sorted(
    action
    for action, defined in DEFINED.items()
    if action in CALLS and isinstance(defined["query"].get("queueID", {}).get("required"), str)
)


def test_the_managed_pools_need_the_queue_id_on_these_calls() -> None:
    assert MANAGED_QUEUE_CALLS == [
        "DeleteJob",
        "GetJob",
        "GetJobWebterminal",
        "ListJobs",
        "StopJob",
        "UpdateJob",
    ]
    assert set(MANAGED_POOLS) == _endpoint.MANAGED_POOLS  # the code knows the table's pools


@pytest.mark.parametrize("action", MANAGED_QUEUE_CALLS)
def test_each_call_on_a_managed_pool_carries_the_queue_id(
    set_conn: Callable[..., None], wire: Callable[[AIHCHook], list[Sent]], action: str
) -> None:
    set_conn(extra={"resource_pool_id": MANAGED_POOLS[0]})
    hook = AIHCHook()
    body = job_body(f"v1-managed-{action.lower()}", queue="aihcq-emulator0")
    job_id = hook.create_job(body).job_id
    sent = wire(hook)
    try:
        CALLS[action](hook, job_id, "aihcq-emulator0")
    finally:
        hook.session.close()
    assert query_problems(action, sent_as(action, sent), managed=True) == []


@pytest.mark.parametrize("action", MANAGED_QUEUE_CALLS)
def test_each_call_on_a_managed_pool_without_the_queue_id_is_refused_before_sending(
    set_conn: Callable[..., None], wire: Callable[[AIHCHook], list[Sent]], action: str
) -> None:
    set_conn(extra={"resource_pool_id": MANAGED_POOLS[0]})
    hook = AIHCHook()
    job_id = hook.create_job(job_body(f"v1-unqueued-{action.lower()}", queue="aihcq-emulator0"))
    sent = wire(hook)
    try:
        with pytest.raises(AIHCConfigError, match=r"needs queue_id on managed resource pool"):
            CALLS[action](hook, job_id.job_id, None)
    finally:
        hook.session.close()
    assert sent == []


def test_the_create_on_a_managed_pool_carries_the_body_queue_as_queue_id(
    set_conn: Callable[..., None], wire: Callable[[AIHCHook], list[Sent]]
) -> None:
    set_conn(extra={"resource_pool_id": MANAGED_POOLS[0]})
    hook = AIHCHook()
    sent = wire(hook)
    try:
        hook.create_job(job_body("v1-managed-create", queue="aihcq-emulator0"))
    finally:
        hook.session.close()
    query = dict(parse_qsl(urlsplit(sent_as("CreateJob", sent).url).query))
    assert query == {"resourcePoolId": MANAGED_POOLS[0], "queueID": "aihcq-emulator0"}


def test_the_self_managed_pool_of_these_tests_is_not_a_managed_one() -> None:
    assert POOL not in MANAGED_POOLS
