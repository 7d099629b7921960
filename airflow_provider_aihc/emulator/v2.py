"""The v2 action dialect (aihc-api §10): ``POST /?action=…&resourcePoolId=…&queueID=…``.

Job actions are ``POST`` with their arguments in a JSON body (bce-python-sdk 0.9.79
``JobClient``: "Body参数"); pool and queue actions are ``GET`` with query arguments
(``ResourcePoolClient``).  Answers are flat ``{"requestId", ...}``.  Routes are data
(:data:`ACTIONS`); handlers parse, call the same backend as v1 and return a dict, so a job
created in one dialect is seen, stopped and deleted through the other.

Documented by Baidu (docs ids in aihc-api §10, the SDK's docstrings, bce-openapi-meta
``schema/aihc/*.json``): the actions, their arguments and answers below; ``queueID``
required on every single-job action and on ``BatchStopJobs`` (``400 InvalidParam`` when
missing), and on ``DescribeJobs`` in a managed pool; DescribeJobLogs' numbers as strings;
``DescribeJob`` answering ``{requestId, job}`` (the generated clients' models);
``pageNumber`` 1-based with ``pageSize`` 10 by default; ``chunkSize`` 1 by default;
``resourcePoolType`` ``common`` (self-managed) or ``dedicatedV2`` (managed).

Answer shapes of ``BatchStopJobs`` and of the pool and queue actions: the generated
clients' and bce-sdk-go's models (``views_v2_pools``).  Inferred (the emulator's choice):
``DescribeQueues`` refusing ``aihc-serverless`` (third-party); a
``keyword`` matching as a substring; ``status`` as one exact status; the error for an
unknown action (``400 InvalidParam``).  ``DescribeJobPodEvents`` (the fork's name)
is served as ``DescribePodEvents`` (the SDK's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import EmulatorError, invalid_param, malformed_json
from .jobs import JobFilter
from .pools import Pool
from .routes import Call, Handler, Route
from .validation import parse_create_v2
from .views_v2 import job_item
from .views_v2_pools import flat_pool, queue_spec

MANAGED_POOL_TYPE = "dedicatedV2"
POOL_TYPES = ("common", MANAGED_POOL_TYPE)
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
    return c.backend.submit(
        c.pool_id, request, queue_id=c.queue_id, creator=c.access_key_id, id_style="v2"
    )


def _describe_jobs(c: Call) -> dict[str, Any]:
    args = c.fields()
    where = JobFilter(
        status=_str(args, "status"),
        keyword=_str(args, "keyword"),
        keyword_type=_choice(_str(args, "keywordType"), KEYWORD_TYPES, "keywordType") or "name",
    )
    page = c.backend.list_jobs(
        c.pool_id,
        queue=_str(args, "queue"),
        order_by=_str(args, "orderBy") or "createdAt",
        order=_str(args, "order") or "desc",
        page_no=_int(args, "pageNumber", 1) or 0,
        page_size=_int(args, "pageSize", 10) or 0,
        queue_id=c.queue_id or _str(args, "queue"),
        where=where,
        view=job_item,
    )
    return {"totalCount": page["total"], "jobs": page["jobs"]}


def _describe_job(c: Call) -> dict[str, Any]:
    args = c.fields()
    queue_id = _need_queue_id(c)
    need_detail = bool(args.get("needDetail"))
    item = c.backend.get_job(
        c.pool_id, _job_id(args), queue_id=queue_id, view=job_item, with_pods=need_detail
    )
    # ``{requestId, job}``: baiducloud-go-sdk services/aihc/model_describe_job_response.go:8.
    return {"job": item}


def _stop_job(c: Call) -> dict[str, Any]:
    result = c.backend.stop_job(c.pool_id, _job_id(c.fields()), queue_id=_need_queue_id(c))
    return {"jobId": result["jobId"]}


def _delete_job(c: Call) -> dict[str, Any]:
    return c.backend.delete_job(c.pool_id, _job_id(c.fields()), queue_id=_need_queue_id(c))


def _modify_job(c: Call) -> dict[str, Any]:
    args = c.fields()
    if "priority" not in args:
        raise invalid_param("priority is required")
    return c.backend.update_priority(
        c.pool_id, _job_id(args), args["priority"], queue_id=_need_queue_id(c)
    )


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
            c.backend.stop_job(c.pool_id, _job_id({"jobId": job_id}), queue_id=queue_id)
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
    return c.backend.job_events(
        c.pool_id,
        _job_id(args),
        start_time=_time(args, "startTime"),
        end_time=_time(args, "endTime"),
        queue_id=_need_queue_id(c),
    )


def _pod_events(c: Call) -> dict[str, Any]:
    args = c.fields()
    pod_name = _pod_name(args)
    return c.backend.pod_events(
        c.pool_id,
        _job_id(args),
        pod_name,
        start_time=_time(args, "startTime"),
        end_time=_time(args, "endTime"),
        queue_id=_need_queue_id(c),
    )


def _job_logs(c: Call) -> dict[str, Any]:
    args = c.fields()
    pod_name = _pod_name(args)
    return c.backend.pod_logs(
        c.pool_id,
        _job_id(args),
        pod_name,
        start_time=_string_time(args, "startTime"),
        end_time=_string_time(args, "endTime"),
        max_lines=_string_number(args, "maxLines", None),
        chunk=_string_number(args, "chunkSize", 1) or 0,
        marker=_str(args, "marker"),
        queue_id=_need_queue_id(c),
        keywords=_str(args, "keywords"),
    )


def _job_nodes(c: Call) -> dict[str, Any]:
    result = c.backend.job_nodes(c.pool_id, _job_id(c.fields()), queue_id=_need_queue_id(c))
    return {"jobId": result["jobId"], "nodes": result["nodeName"]}


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
        managed = pool.serverless == (pool_type == MANAGED_POOL_TYPE)
        return managed and keyword in (pool.pool_id if by_id else pool.name)

    page = c.backend.list_pools(
        page_no=c.int_param("pageNumber", 1),
        page_size=c.int_param("pageSize", 10),
        where=wanted,
    )
    pools = [flat_pool(p, pool_type) for p in page["resourcePools"]]
    return {"totalCount": page["totalCount"], "resourcePools": pools}


def _describe_pool(c: Call) -> dict[str, Any]:
    pool = c.backend.get_pool(c.pool_id)["resourcePool"]
    managed = c.backend.is_managed(c.pool_id or "")
    return flat_pool(pool, MANAGED_POOL_TYPE if managed else "common")


def _describe_queues(c: Call) -> dict[str, Any]:
    if c.pool_id == "aihc-serverless":
        raise invalid_param("DescribeQueues does not accept resourcePoolId aihc-serverless")
    page = c.backend.list_queues(
        c.pool_id,
        page_no=c.int_param("pageNumber", 1),
        page_size=c.int_param("pageSize", 10),
    )
    queues = [queue_spec(q, c.pool_id or "") for q in page["queues"]]
    return {"totalCount": page["total"], "queues": queues}


def _describe_queue(c: Call) -> dict[str, Any]:
    queue_id = c.query.get("queueId")
    if not queue_id:
        raise invalid_param("queueId is required")
    found = c.backend.find_queue(queue_id)
    return queue_spec(found["queue"], found["resourcePoolId"])


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
        _pool_action("DescribeResourcePools", "ListResourcePools", _describe_pools),
        _pool_action("DescribeResourcePool", "GetResourcePool", _describe_pool),
        _pool_action("DescribeQueues", "ListQueues", _describe_queues),
        _pool_action("DescribeQueue", "GetQueue", _describe_queue),
    )
}
