"""The v1 REST dialect (aihc-api §3): ``/api/v1/aijobs…`` and ``/api/v1/resourcepools…``.

Routes are data (:data:`ROUTES`); each handler parses its parameters, calls the backend and
returns a dict, which :mod:`.app` wraps in the route's envelope.
"""

from __future__ import annotations

from typing import Any

from .errors import invalid_param
from .routes import Call, Route
from .validation import parse_create


def _create_job(c: Call) -> dict[str, Any]:
    request = parse_create(c.json())
    return c.backend.submit(c.pool_id, request, queue_id=c.queue_id, creator=c.access_key_id)


def _list_jobs(c: Call) -> dict[str, Any]:
    return c.backend.list_jobs(
        c.pool_id,
        queue=c.query.get("queue"),
        order_by=c.query.get("orderBy") or "createdAt",
        order=c.query.get("order") or "desc",
        page_no=c.int_param("pageNo", 1),
        page_size=c.int_param("pageSize", 10),
        queue_id=c.queue_id,
    )


def _get_job(c: Call) -> dict[str, Any]:
    return c.backend.get_job(c.pool_id, c.params["jobId"], queue_id=c.queue_id)


def _delete_job(c: Call) -> dict[str, Any]:
    return c.backend.delete_job(c.pool_id, c.params["jobId"], queue_id=c.queue_id)


def _stop_job(c: Call) -> dict[str, Any]:
    return c.backend.stop_job(c.pool_id, c.params["jobId"], queue_id=c.queue_id)


def _update_job(c: Call) -> dict[str, Any]:
    body = c.json()
    if not isinstance(body, dict) or "priority" not in body:
        raise invalid_param("priority is required")
    extra = set(body) - {"priority"}
    if extra:
        raise invalid_param(f"only priority can be updated, got {', '.join(sorted(extra))}")
    return c.backend.update_priority(
        c.pool_id, c.params["jobId"], body["priority"], queue_id=c.queue_id
    )


def _require_framework(c: Call) -> None:
    if not c.query.get("jobFramework"):
        raise invalid_param("jobFramework is required")


def _job_events(c: Call) -> dict[str, Any]:
    _require_framework(c)
    return c.backend.job_events(
        c.pool_id,
        c.params["jobId"],
        start_time=c.time_param("startTime"),
        end_time=c.time_param("endTime"),
        queue_id=c.queue_id,
    )


def _pod_events(c: Call) -> dict[str, Any]:
    _require_framework(c)
    return c.backend.pod_events(
        c.pool_id,
        c.params["jobId"],
        c.params["podName"],
        start_time=c.time_param("startTime"),
        end_time=c.time_param("endTime"),
        queue_id=c.queue_id,
    )


def _pod_logs(c: Call) -> dict[str, Any]:
    chunk = c.optional_int("chunk")
    if chunk is None:
        chunk = c.int_param("chunck", 0)  # bce-sdk-go's spelling
    return c.backend.pod_logs(
        c.pool_id,
        c.params["jobId"],
        c.params["podName"],
        start_time=c.time_param("startTime"),
        end_time=c.time_param("endTime"),
        max_lines=c.optional_int("maxLines"),
        chunk=chunk,
        marker=c.query.get("marker"),
        queue_id=c.queue_id,
    )


def _job_nodes(c: Call) -> dict[str, Any]:
    return c.backend.job_nodes(c.pool_id, c.params["jobId"], queue_id=c.queue_id)


def _list_pools(c: Call) -> dict[str, Any]:
    return c.backend.list_pools(
        page_no=c.int_param("pageNo", 1), page_size=c.int_param("pageSize", 10)
    )


def _get_pool(c: Call) -> dict[str, Any]:
    return c.backend.get_pool(c.params["poolId"])


def _list_queues(c: Call) -> dict[str, Any]:
    return c.backend.list_queues(
        c.params["poolId"],
        page_no=c.int_param("pageNo", 1),
        page_size=c.int_param("pageSize", 10),
    )


def _get_queue(c: Call) -> dict[str, Any]:
    return c.backend.get_queue(c.params["poolId"], c.params["queueName"])


JOB = "/api/v1/aijobs/{jobId}"
POOL = "/api/v1/resourcepools/{poolId}"
ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/aijobs", "CreateJob", _create_job),
    Route("GET", "/api/v1/aijobs", "ListJobs", _list_jobs),
    Route("GET", JOB, "GetJob", _get_job),
    Route("DELETE", JOB, "DeleteJob", _delete_job),
    Route("PUT", JOB, "UpdateJob", _update_job),
    Route("POST", JOB + "/stop", "StopJob", _stop_job),
    Route("GET", JOB + "/events", "GetJobEvents", _job_events, "bare"),
    Route("GET", JOB + "/nodes", "GetJobNodes", _job_nodes),
    Route("GET", JOB + "/pods/{podName}/logs", "GetPodLogs", _pod_logs),
    Route("GET", JOB + "/pods/{podName}/events", "GetPodEvents", _pod_events, "bare"),
    Route("GET", "/api/v1/resourcepools", "ListResourcePools", _list_pools),
    Route("GET", POOL, "GetResourcePool", _get_pool),
    Route("GET", POOL + "/queue", "ListQueues", _list_queues, "queue"),
    Route("GET", POOL + "/queue/{queueName}", "GetQueue", _get_queue, "queue"),
)
