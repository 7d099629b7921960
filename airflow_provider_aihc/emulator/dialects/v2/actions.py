"""The v2 action dialect: ``POST /?action=…&resourcePoolId=…&queueID=…`` (bce-openapi-meta
``schema/aihc/*.json``).

Job actions are ``POST`` with their arguments in a JSON body (bce-python-sdk 0.9.79
``JobClient``: "Body参数"); pool and queue actions are ``GET`` with query arguments
(``ResourcePoolClient``).  Answers are flat ``{"requestId", ...}``.  Routes are data
(:data:`ACTIONS`); handlers parse into calls on the same state as v1's and render what it
returns (:mod:`.v2.render`, :mod:`.v2.pools`), so a job created in one dialect is seen, stopped and
deleted through the other.

Documented by Baidu (its v2 reference pages, the SDK's docstrings, bce-openapi-meta
``schema/aihc/*.json``): the actions, their arguments and answers below; ``queueID``
required on every single-job action and on ``BatchStopJobs`` (``400 InvalidParam`` when
missing), and on ``DescribeJobs`` in a managed pool; DescribeJobLogs' numbers as strings;
``DescribeJob`` answering ``{requestId, job}`` (the generated clients' models);
``pageNumber`` 1-based with ``pageSize`` 10 by default; ``chunkSize`` 1 by default;
``resourcePoolType`` ``common`` (self-managed), ``dedicatedV2`` or ``bhcmp`` (managed).

Answer shapes of ``BatchStopJobs`` and of the pool and queue actions: the generated
clients' and bce-sdk-go's models (:mod:`.v2.pools`).  Inferred (the emulator's choice):
``DescribeQueues`` refusing ``aihc-serverless`` (third-party); a
``keyword`` matching as a substring; ``status`` as one exact status; the error for an
unknown action (``400 InvalidParam``).  ``DescribeJobPodEvents`` (the fork's name)
is served as ``DescribePodEvents`` (the SDK's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from airflow_provider_aihc.emulator.dialects import tools
from airflow_provider_aihc.emulator.dialects.call import Call, Handler, Route
from airflow_provider_aihc.emulator.dialects.common import (
    check_job_listing,
    check_page,
    events_answer,
    log_page,
)
from airflow_provider_aihc.emulator.dialects.create import parse_create_v2
from airflow_provider_aihc.emulator.state.errors import EmulatorError, invalid_param, malformed_json
from airflow_provider_aihc.emulator.state.jobs import Job, JobFilter
from airflow_provider_aihc.emulator.state.pools import Pool

from .pools import POOL_TYPES, flat_pool, queue_spec
from .pools import pool_type as pool_type_of
from .registry import ACTIONS as REGISTRY_ACTIONS
from .render import job_item
from .services import ACTIONS as SERVICE_ACTIONS

KEYWORD_TYPES = ("name", "queueName")
POOL_KEYWORD_TYPES = ("resourcePoolName", "resourcePoolId")


def _int(args: Mapping[str, Any], name: str, default: int | None) -> int | None:
    """An integer argument (a JSON number or a numeric string), ``default`` when absent."""
    value = args.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise invalid_param(f"{name} must be an integer, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise invalid_param(f"{name} must be an integer, got {value!r}") from None


def _string_number(args: Mapping[str, Any], name: str, default: int | None) -> int | None:
    """A number the definitions type ``String`` (DescribeJobLogs' ``startTime``, ``endTime``,
    ``maxLines``, ``chunkSize``: bce-openapi-meta ``schema/aihc/DescribeJobLogs.json:36-55``).
    A JSON number is refused as a Go server decoding into a string field refuses it."""
    value = args.get(name)
    if value is not None and not isinstance(value, str):
        raise malformed_json(f"{name} must be a JSON string, got {type(value).__name__}")
    return _int(args, name, default)


def _time(args: Mapping[str, Any], name: str) -> float | None:
    value = _int(args, name, None)
    return None if value is None else float(value)


def _string_time(args: Mapping[str, Any], name: str) -> float | None:
    value = _string_number(args, name, None)
    return None if value is None else float(value)


def _str(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    return None if value is None else str(value)


def _job_id(args: Mapping[str, Any]) -> str:
    job_id = args.get("jobId")
    if not isinstance(job_id, str) or not job_id:
        raise invalid_param("jobId is required")
    return job_id


def _pod_name(args: Mapping[str, Any]) -> str:
    pod_name = _str(args, "podName")
    if not pod_name:
        raise invalid_param("podName is required")
    return pod_name


def _choice(value: str | None, allowed: tuple[str, ...], name: str) -> str | None:
    if value is not None and value not in allowed:
        raise invalid_param(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _need_queue_id(c: Call) -> str:
    if not c.queue_id:
        raise invalid_param("queueID is required")
    return c.queue_id


# ---- jobs ----------------------------------------------------------------------------------


def _create_job(c: Call) -> dict[str, Any]:
    request = parse_create_v2(c.json(), c.queue_id)
    job = c.state.submit(
        c.pool_id, request, queue_id=c.queue_id, creator=c.access_key_id, id_style="v2"
    )
    return {"jobId": job.job_id, "jobName": job.name}


def _describe_jobs(c: Call) -> dict[str, Any]:
    args = c.fields()
    where = JobFilter(
        status=_str(args, "status"),
        keyword=_str(args, "keyword"),
        keyword_type=_choice(_str(args, "keywordType"), KEYWORD_TYPES, "keywordType") or "name",
    )
    order_by = _str(args, "orderBy") or "createdAt"
    order = _str(args, "order") or "desc"
    page_no = _int(args, "pageNumber", 1) or 0
    page_size = _int(args, "pageSize", 10) or 0
    check_job_listing(order_by, order, page_no, page_size)
    page = c.state.list_jobs(
        c.pool_id,
        _list_item,
        queue=_str(args, "queue"),
        order_by=order_by,
        order=order,
        page_no=page_no,
        page_size=page_size,
        queue_id=c.queue_id or _str(args, "queue"),
        where=where,
    )
    return {"totalCount": page.total, "jobs": page.items}


def _list_item(job: Job) -> dict[str, Any]:
    return job_item(job, False)


def _describe_job(c: Call) -> dict[str, Any]:
    args = c.fields()
    queue_id = _need_queue_id(c)
    need_detail = bool(args.get("needDetail"))
    item = c.state.get_job(
        c.pool_id, _job_id(args), lambda job: job_item(job, need_detail), queue_id=queue_id
    )
    # ``{requestId, job}``: baiducloud-go-sdk services/aihc/model_describe_job_response.go:8.
    return {"job": item}


def _stop_job(c: Call) -> dict[str, Any]:
    job = c.state.stop_job(c.pool_id, _job_id(c.fields()), queue_id=_need_queue_id(c))
    return {"jobId": job.job_id}


def _delete_job(c: Call) -> dict[str, Any]:
    job = c.state.delete_job(c.pool_id, _job_id(c.fields()), queue_id=_need_queue_id(c))
    return {"jobId": job.job_id, "jobName": job.name}


def _modify_job(c: Call) -> dict[str, Any]:
    args = c.fields()
    if "priority" not in args:
        raise invalid_param("priority is required")
    job = c.state.update_priority(
        c.pool_id, _job_id(args), args["priority"], queue_id=_need_queue_id(c)
    )
    return {"jobId": job.job_id}


def _batch_stop_jobs(c: Call) -> dict[str, Any]:
    """``{result: StopBatchResult}`` whose lists hold ``JobResult{jobId, success, errorMsg}``
    (baiducloud-go-sdk ``services/aihc/model_stop_batch_result.go:4-8``,
    ``model_job_result.go:4-6``)."""
    items = c.fields().get("jobList")
    if not isinstance(items, list) or not items:
        raise invalid_param("jobList must be a non-empty list of {jobId}")
    if not c.pool_id:  # the whole call is refused, not each job (BatchStopTrainingTasksV2.json)
        raise invalid_param("resourcePoolId is required")
    queue_id = _need_queue_id(c)
    done: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for item in items:
        job_id = item.get("jobId") if isinstance(item, dict) else None
        try:
            c.state.stop_job(c.pool_id, _job_id({"jobId": job_id}), queue_id=queue_id)
        except EmulatorError as error:  # each failure is reported, not raised
            failed.append({"jobId": str(job_id), "success": False, "errorMsg": error.message})
        else:
            done.append({"jobId": str(job_id), "success": True})
    return {
        "result": {
            "successNum": len(done),
            "failedNum": len(failed),
            "success": not failed,
            "successList": done,
            "failedList": failed,
        }
    }


def _job_events(c: Call) -> dict[str, Any]:
    args = c.fields()
    events = c.state.job_events(
        c.pool_id,
        _job_id(args),
        start_time=_time(args, "startTime"),
        end_time=_time(args, "endTime"),
        queue_id=_need_queue_id(c),
    )
    return events_answer(events)


def _pod_events(c: Call) -> dict[str, Any]:
    args = c.fields()
    pod_name = _pod_name(args)
    events = c.state.pod_events(
        c.pool_id,
        _job_id(args),
        pod_name,
        start_time=_time(args, "startTime"),
        end_time=_time(args, "endTime"),
        queue_id=_need_queue_id(c),
    )
    return events_answer(events)


def _job_logs(c: Call) -> dict[str, Any]:
    args = c.fields()
    pod_name = _pod_name(args)
    job_id = _job_id(args)
    start_time = _string_time(args, "startTime")
    end_time = _string_time(args, "endTime")
    max_lines = _string_number(args, "maxLines", None)
    chunk = _string_number(args, "chunkSize", 1) or 0
    keywords = _str(args, "keywords")
    page = c.state.pod_logs(
        c.pool_id,
        job_id,
        pod_name,
        start_time=start_time,
        end_time=end_time,
        max_lines=max_lines,
        marker=_str(args, "marker"),
        queue_id=_need_queue_id(c),
    )
    if keywords:  # only the lines of the page that contain it
        page = replace(page, lines=[line for line in page.lines if keywords in line])
    return log_page(page, pod_name, chunk)


def _job_nodes(c: Call) -> dict[str, Any]:
    job_id = _job_id(c.fields())
    nodes = c.state.job_nodes(c.pool_id, job_id, queue_id=_need_queue_id(c))
    return {"jobId": job_id, "nodes": nodes}


def _string_arg(args: Mapping[str, Any]) -> tools.Arg:
    """A body argument the definitions type ``String``: a JSON number is refused."""

    def arg(name: str) -> str | None:
        value = args.get(name)
        if value is not None and not isinstance(value, str):
            raise malformed_json(f"{name} must be a JSON string, got {type(value).__name__}")
        return value

    return arg


def _job_metrics(c: Call) -> dict[str, Any]:
    """``{requestId, jobId, metrics}`` with ``metrics`` one ``Metric{time, value}``
    (baiducloud-go-sdk ``services/aihc/model_describe_job_metrics_response.go:7-9``,
    ``model_metric.go:4-5``): the newest sample, the mean of the pods' (a series is not
    what the generated models read)."""
    job_id, _, series = tools.metrics(c, _string_arg(c.fields()), _need_queue_id(c))
    last = [samples[-1] for samples in series.values() if samples]
    if not last:
        return {"jobId": job_id}
    mean = round(sum(s.value for s in last) / len(last))
    return {"jobId": job_id, "metrics": {**tools.sample(last[0]), "value": mean}}


def _webterminal(c: Call) -> dict[str, Any]:
    """``{requestId, webTerminalUrl}`` (``model_describe_job_webterminal_response.go:7-8``)."""
    url = tools.webterminal(c, _string_arg(c.fields()), _need_queue_id(c))
    return {"webTerminalUrl": url}


# ---- pools and queues (GET, query arguments) -----------------------------------------------


def _describe_pools(c: Call) -> dict[str, Any]:
    pool_type = c.query.get("resourcePoolType")
    if not pool_type:
        raise invalid_param("resourcePoolType is required")
    _choice(pool_type, POOL_TYPES, "resourcePoolType")
    keyword = c.query.get("keyword") or ""
    by_id = c.query.get("keywordType") == "resourcePoolId"
    _choice(c.query.get("keywordType") or None, POOL_KEYWORD_TYPES, "keywordType")

    def wanted(pool: Pool) -> bool:
        of_type = pool_type_of(pool) == pool_type
        return of_type and keyword in (pool.pool_id if by_id else pool.name)

    page_no, page_size = c.int_param("pageNumber", 1), c.int_param("pageSize", 10)
    check_page(page_no, page_size)
    page = c.state.list_pools(flat_pool, page_no=page_no, page_size=page_size, where=wanted)
    return {"totalCount": page.total, "resourcePools": page.items}


def _describe_pool(c: Call) -> dict[str, Any]:
    return c.state.get_pool(c.pool_id, flat_pool)


def _describe_queues(c: Call) -> dict[str, Any]:
    if c.pool_id == "aihc-serverless":
        raise invalid_param("DescribeQueues does not accept resourcePoolId aihc-serverless")
    page_no, page_size = c.int_param("pageNumber", 1), c.int_param("pageSize", 10)
    check_page(page_no, page_size)
    page = c.state.list_queues(c.pool_id, queue_spec, page_no=page_no, page_size=page_size)
    return {"totalCount": page.total, "queues": page.items}


def _describe_queue(c: Call) -> dict[str, Any]:
    queue_id = c.query.get("queueId")
    if not queue_id:
        raise invalid_param("queueId is required")
    return c.state.find_queue(queue_id, queue_spec)


def _job_action(action: str, operation: str, handler: Handler) -> Route:
    return Route("POST", "/", operation, handler, "flat", action)


def _pool_action(action: str, operation: str, handler: Handler) -> Route:
    return Route("GET", "/", operation, handler, "flat", action)


#: v2 action -> route; ``operation`` is the v1 name of the same operation (routes.py).
ACTIONS: dict[str, Route] = {
    route.action or "": route
    for route in (
        _job_action("CreateJob", "CreateJob", _create_job),
        _job_action("DescribeJobs", "ListJobs", _describe_jobs),
        _job_action("DescribeJob", "GetJob", _describe_job),
        _job_action("StopJob", "StopJob", _stop_job),
        _job_action("DeleteJob", "DeleteJob", _delete_job),
        _job_action("ModifyJob", "UpdateJob", _modify_job),
        _job_action("BatchStopJobs", "BatchStopJobs", _batch_stop_jobs),
        _job_action("DescribeJobEvents", "GetJobEvents", _job_events),
        _job_action("DescribePodEvents", "GetPodEvents", _pod_events),
        _job_action("DescribeJobPodEvents", "GetPodEvents", _pod_events),
        _job_action("DescribeJobLogs", "GetPodLogs", _job_logs),
        _job_action("DescribeJobNodes", "GetJobNodes", _job_nodes),
        _job_action("DescribeJobMetrics", "GetJobMetrics", _job_metrics),
        _job_action("DescribeJobWebterminal", "GetJobWebterminal", _webterminal),
        _pool_action("DescribeResourcePools", "ListResourcePools", _describe_pools),
        _pool_action("DescribeResourcePool", "GetResourcePool", _describe_pool),
        _pool_action("DescribeQueues", "ListQueues", _describe_queues),
        _pool_action("DescribeQueue", "GetQueue", _describe_queue),
    )
}
# Models and datasets (registry.py), online services (services.py).
ACTIONS.update(REGISTRY_ACTIONS)
ACTIONS.update(SERVICE_ACTIONS)
