"""The v1 REST dialect: ``/api/v1/aijobs…`` and ``/api/v1/resourcepools…`` (bce-sdk-go
``services/aihc/resource/client.go``).

Routes are data (:data:`ROUTES`); each handler parses its parameters into a call on the
state, renders what it returns (:mod:`.v1.render`) and returns a dict, which ``http/app.py``
wraps in the route's envelope.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_aihc.emulator.dialects import tools
from airflow_provider_aihc.emulator.dialects.call import Call, Route
from airflow_provider_aihc.emulator.dialects.common import (
    check_job_listing,
    check_page,
    events_answer,
    log_page,
)
from airflow_provider_aihc.emulator.dialects.create import parse_create
from airflow_provider_aihc.emulator.state.errors import invalid_param
from airflow_provider_aihc.emulator.state.jobs import Job

from . import render


def _create_job(c: Call) -> dict[str, Any]:
    request = parse_create(c.json())
    job = c.state.submit(c.pool_id, request, queue_id=c.queue_id, creator=c.access_key_id)
    return render.job_ref(job)


def _list_jobs(c: Call) -> dict[str, Any]:
    order_by = c.query.get("orderBy") or "createdAt"
    order = c.query.get("order") or "desc"
    page_no = c.int_param("pageNo", 1)
    page_size = c.int_param("pageSize", 10)
    check_job_listing(order_by, order, page_no, page_size)
    page = c.state.list_jobs(
        c.pool_id,
        lambda job: render.job_info(job, False),
        queue=c.query.get("queue"),
        order_by=order_by,
        order=order,
        page_no=page_no,
        page_size=page_size,
        queue_id=c.queue_id,
    )
    return {
        "total": page.total,
        "jobs": page.items,
        "orderBy": order_by,
        "order": order,
        "pageNo": page_no,
        "pageSize": page_size,
    }


def _get_job(c: Call) -> dict[str, Any]:
    return c.state.get_job(c.pool_id, c.params["jobId"], _with_pods, queue_id=c.queue_id)


def _with_pods(job: Job) -> dict[str, Any]:
    return render.job_info(job, True)


def _delete_job(c: Call) -> dict[str, Any]:
    return render.job_ref(c.state.delete_job(c.pool_id, c.params["jobId"], queue_id=c.queue_id))


def _stop_job(c: Call) -> dict[str, Any]:
    return render.job_ref(c.state.stop_job(c.pool_id, c.params["jobId"], queue_id=c.queue_id))


def _update_job(c: Call) -> dict[str, Any]:
    body = c.json()
    if not isinstance(body, dict) or "priority" not in body:
        raise invalid_param("priority is required")
    extra = set(body) - {"priority"}
    if extra:
        raise invalid_param(f"only priority can be updated, got {', '.join(sorted(extra))}")
    job = c.state.update_priority(
        c.pool_id, c.params["jobId"], body["priority"], queue_id=c.queue_id
    )
    return {"jobId": job.job_id}


def _require_framework(c: Call) -> None:
    if not c.query.get("jobFramework"):
        raise invalid_param("jobFramework is required")


def _job_events(c: Call) -> dict[str, Any]:
    _require_framework(c)
    events = c.state.job_events(
        c.pool_id,
        c.params["jobId"],
        start_time=c.time_param("startTime"),
        end_time=c.time_param("endTime"),
        queue_id=c.queue_id,
    )
    return events_answer(events)


def _pod_events(c: Call) -> dict[str, Any]:
    _require_framework(c)
    events = c.state.pod_events(
        c.pool_id,
        c.params["jobId"],
        c.params["podName"],
        start_time=c.time_param("startTime"),
        end_time=c.time_param("endTime"),
        queue_id=c.queue_id,
    )
    return events_answer(events)


def _pod_logs(c: Call) -> dict[str, Any]:
    chunk = c.optional_int("chunk")
    if chunk is None:
        chunk = c.int_param("chunck", 0)  # bce-sdk-go's spelling
    page = c.state.pod_logs(
        c.pool_id,
        c.params["jobId"],
        c.params["podName"],
        start_time=c.time_param("startTime"),
        end_time=c.time_param("endTime"),
        max_lines=c.optional_int("maxLines"),
        marker=c.query.get("marker"),
        queue_id=c.queue_id,
    )
    return log_page(page, c.params["podName"], chunk)


def _job_nodes(c: Call) -> dict[str, Any]:
    job_id = c.params["jobId"]
    nodes = c.state.job_nodes(c.pool_id, job_id, queue_id=c.queue_id)
    return {"jobId": job_id, "nodeName": nodes}


def _job_metrics(c: Call) -> dict[str, Any]:
    """``TaskPromMetricsResult`` (bce-sdk-go ``services/aihc/api/v1/aiJob.go:388-401``)."""
    job_id, _, series = tools.metrics(c, tools.path_and_query(c), c.queue_id)
    pods = [
        {"podName": pod, "metrics": [tools.sample(s) for s in samples]}
        for pod, samples in series.items()
    ]
    return {"jobId": job_id, "podMetrics": pods}


def _webterminal(c: Call) -> dict[str, Any]:
    """``SSHResult`` (``aiJob.go:415-417``); a managed pool needs ``queueID``
    (``client.go:443-445``)."""
    return {"WebTerminalUrl": tools.webterminal(c, tools.path_and_query(c), c.queue_id)}


def _pool_nodes(c: Call) -> dict[str, Any]:
    """``NodePage`` (``api/v1/resourcePool.go:95-102``)."""
    page_no = c.int_param("pageNo", 1)
    page_size = c.int_param("pageSize", 10)
    if page_no < 1 or page_size < 1:  # client.go:104-106
        raise invalid_param("invalid pageNo or pageSize")
    order = c.query.get("order") or "asc"
    found = tools.nodes(c, c.params["poolId"])
    found.sort(key=lambda n: str(n.get(c.query.get("orderBy") or "nodeName", "")))
    if order == "desc":
        found.reverse()
    start = (page_no - 1) * page_size
    return {
        "nodes": found[start : start + page_size],
        "total": len(found),
        "orderBy": c.query.get("orderBy") or "nodeName",
        "order": order,
        "pageNo": page_no,
        "pageSize": page_size,
    }


def _list_pools(c: Call) -> dict[str, Any]:
    page_no = c.int_param("pageNo", 1)
    page_size = c.int_param("pageSize", 10)
    check_page(page_no, page_size)
    page = c.state.list_pools(render.pool_info, page_no=page_no, page_size=page_size)
    return {
        "resourcePools": page.items,
        "total": page.total,
        "totalCount": page.total,
        "pageNo": page_no,
        "pageSize": page_size,
    }


def _get_pool(c: Call) -> dict[str, Any]:
    return {"resourcePool": c.state.get_pool(c.params["poolId"], render.pool_info)}


def _list_queues(c: Call) -> dict[str, Any]:
    page_no, page_size = c.int_param("pageNo", 1), c.int_param("pageSize", 10)
    check_page(page_no, page_size)
    page = c.state.list_queues(
        c.params["poolId"], render.queue_info, page_no=page_no, page_size=page_size
    )
    return {"queues": page.items, "total": page.total}


def _get_queue(c: Call) -> dict[str, Any]:
    queue = c.state.get_queue(c.params["poolId"], c.params["queueName"], render.queue_info)
    return {"queue": queue}


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
    Route("GET", JOB + "/metrics", "GetJobMetrics", _job_metrics),
    Route("GET", JOB + "/pods/{podName}/webterminal", "GetJobWebterminal", _webterminal),
    Route("GET", JOB + "/pods/{podName}/logs", "GetPodLogs", _pod_logs),
    Route("GET", JOB + "/pods/{podName}/events", "GetPodEvents", _pod_events, "bare"),
    Route("GET", "/api/v1/resourcepools", "ListResourcePools", _list_pools),
    Route("GET", POOL, "GetResourcePool", _get_pool),
    Route("GET", POOL + "/nodes", "ListPoolNodes", _pool_nodes),
    Route("GET", POOL + "/queue", "ListQueues", _list_queues, "queue"),
    Route("GET", POOL + "/queue/{queueName}", "GetQueue", _get_queue, "queue"),
)
