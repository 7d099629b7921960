"""The v2 action dialect (bce-openapi-meta ``schema/aihc/*.json``; bce-python-sdk 0.9.79
``AihcClient``).

Job actions: ``POST /?action=<Action>&resourcePoolId=<pool>&queueID=<queue>``, arguments in
a JSON body, header ``X-API-Version: v2``.  Pool and queue actions: ``GET /?action=…`` with
query arguments and header ``version: v2``.  Answers are flat (``{requestId, jobId, …}``,
flat pods); they are turned back into the v1 forms the models read (``jobType`` →
``jobFramework``, ``Job.*``/``jobSpec.*`` → top level, ``pods`` → ``podList`` in the v1 pod
form, ``totalCount`` → ``total``).

The create body moves ``command`` to the top level and ``jobFramework`` to ``jobType``,
and names the queue twice: ``queue`` in the body and ``queueID`` in the query (the docs:
"保持和queueID一致即可").  A RayJob's spec is a role map holding ``Head`` (documented);
inferred, not documented: a TFJob is sent as one ``Worker`` role
(``jobSpec: {"Worker": spec}``).  Single-job actions send ``queueID`` as given: the
queue's id on a managed pool, its name on a self-managed one
("自运维资源池须填入队列名称，托管资源池须填入队列Id": bce-openapi-meta
``i18n/zh-CN/aihc/StopJob.json:4``).  The callers carry the job's queue (a managed pool's
call without it is refused before sending: ``hooks/_endpoint.py``); a self-managed pool's
call that names none sends ``default``, that pool's default queue.  A list sends its
``queue`` as ``queueID`` too (``hooks/calls.py`` ``ListJobsCall``).  Pools are listed
with ``resourcePoolType=common`` (the managed pool is addressed as ``aihc-serverless``).
``DescribeJobs`` sends the hook's list filters as
``keyword`` (with ``keywordType: name``) and ``status`` (documented); how ``keyword``
matches is not (a substring is inferred), so the hook filters the answer again and its
callers pick keywords that every name they look for starts with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks._endpoint import Action, ApiRequest, Endpoint, Params
from airflow_provider_aihc.hooks.dialects import (
    LIST_FILTERS,
    V1_ONLY_FIELDS,
    check_path_id,
    other_dialects_fields,
)
from airflow_provider_aihc.hooks.dialects.v1 import encode
from airflow_provider_aihc.hooks.dialects.v2_answers import job_info, v1_pool, v1_queue
from airflow_provider_aihc.job_parameters import JOB_FIELDS

JOB_HEADERS = (("X-API-Version", "v2"),)
POOL_HEADERS = (("version", "v2"),)
#: ``queueID`` of a single-job action when the caller names no queue (inferred).
DEFAULT_QUEUE_ID = "default"
_SPEC = "jobSpec"
_JOB_TYPE = "jobType"
#: ``(v1 path, v2 path)`` of the create fields v2 places elsewhere, from their rows (v2
#: paths of one key: the top level).
MOVED = tuple((row.v1, row.v2) for row in JOB_FIELDS if row.v1 and row.v2 and row.v1 != row.v2)
#: What a moved field is when a body lacks it.
_WHEN_ABSENT = {_JOB_TYPE: "PyTorchJob"}


@dataclass(frozen=True)
class Args:
    """One call's arguments, by their v1 names."""

    pool: str | None
    queue_id: str | None
    params: Mapping[str, str | None]
    body: Any
    path: Mapping[str, str]

    def job(self, **more: Any) -> dict[str, Any]:
        """``{"jobId"}`` plus the given non-``None`` fields."""
        fields = {"jobId": self.path["job_id"], **more}
        return {k: v for k, v in fields.items() if v is not None}

    def number(self, name: str) -> int | None:
        value = self.params.get(name)
        return None if value is None or value == "" else int(value)

    def page(self) -> dict[str, Any]:
        return {"pageNumber": self.number("pageNo"), "pageSize": self.number("pageSize")}


def _list_jobs(a: Args) -> dict[str, Any]:
    filters = {k: a.params.get(k) for k in ("queue", "orderBy", "order", *LIST_FILTERS)}
    if filters["keyword"]:
        filters["keywordType"] = "name"
    return {**{k: v for k, v in filters.items() if v}, **a.page()}


#: The bodies a v2 action builds itself (``Action.shape``); the others follow the action.
SHAPES: dict[str, Callable[[Args], dict[str, Any]]] = {
    "create": lambda a: create_body(a.body),
    "list": _list_jobs,
    "batch": lambda a: dict(a.body),
}


def _job_body(action: Action, a: Args) -> dict[str, Any]:
    """A job action's body: ``jobId`` (and ``podName``), the action's ``fields`` from the
    v1 query arguments, its ``fixed`` fields, and the v1 body's fields."""
    if action.shape is not None:
        return SHAPES[action.shape](a)
    fields: dict[str, Any] = {"podName": a.path.get("pod_name")}
    fields.update((k, a.params.get(k)) for k in action.fields)
    fields.update(action.fixed)
    fields.update(a.body or {})
    return a.job(**fields)


def _query(action: Action, a: Args) -> list[tuple[str, str | None]]:
    """A pool or queue action's query: its ``fixed`` arguments, its ids, the page."""
    query: list[tuple[str, str | None]] = [(k, str(v)) for k, v in action.fixed]
    query += [(name, check_path_id(arg, a.path[arg])) for arg, name in action.ids]
    if action.paged:
        query += [(k, str(v)) for k, v in a.page().items() if v]
    return query


def _job(result: dict[str, Any]) -> dict[str, Any]:
    job = result.get("job")
    return job_info(job if isinstance(job, dict) else result)


def _jobs(result: dict[str, Any]) -> dict[str, Any]:
    jobs = result.get("jobs") or []
    total = result.get("totalCount", result.get("total", 0))
    return {"total": total, "jobs": [job_info(j) for j in jobs if isinstance(j, dict)]}


def _queues(result: dict[str, Any]) -> dict[str, Any]:
    queues = [v1_queue(q) for q in result.get("queues") or [] if isinstance(q, dict)]
    return {"total": result.get("totalCount", 0), "queues": queues}


def _pools(result: dict[str, Any]) -> dict[str, Any]:
    pools = result.get("resourcePools") or []
    return {**result, "resourcePools": [v1_pool(p) for p in pools if isinstance(p, dict)]}


#: The answers a v2 action reads back into v1 form (``Action.answer``).
ANSWERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "job": _job,
    "jobs": _jobs,
    "queues": _queues,
    "queue": v1_queue,
    "pools": _pools,
    "pool": v1_pool,
}


class V2Dialect:
    """``/?action=…`` with flat answers."""

    name = "v2"

    def request(
        self,
        endpoint: Endpoint,
        pool: str | None,
        queue_id: str | None,
        params: Params,
        body: Any,
        path_args: Mapping[str, str],
    ) -> ApiRequest:
        """The action's request: a signed ``POST`` with a body, or a ``GET`` query."""
        action = endpoint.v2
        if action is None:
            raise AIHCConfigError(
                f"{endpoint.operation} has no api_version v2 action (only v1 defines it); "
                "use a connection with api_version v1"
            )
        if action.shape == "plain":
            # Model, dataset and service actions: the declared method, query and body as
            # they are, header ``version: v2`` (hooks/_model_calls.py).
            query = [("action", action.name), *params]
            sent = replace(endpoint, path="/")
            return ApiRequest(sent, "/", tuple(query), encode(body), POOL_HEADERS)
        args = Args(pool, queue_id, dict(params), body, path_args)
        if action.query:
            query = [("action", action.name), *_query(action, args)]
            sent = replace(endpoint, method="GET", path="/")
            return ApiRequest(sent, "/", tuple(query), None, POOL_HEADERS)
        job_body = _job_body(action, args)
        query = [("action", action.name), ("resourcePoolId", pool)]
        queue = _queue_id(endpoint, queue_id, job_body, path_args)
        if queue:
            query.append(("queueID", queue))
        sent = replace(endpoint, method="POST", path="/")
        return ApiRequest(sent, "/", tuple(query), encode(job_body), JOB_HEADERS)

    def answer(self, endpoint: Endpoint, result: Any) -> Any:
        """Flat answers in the v1 forms the models read (the action's ``answer`` reader;
        an action without one answers as v1 does)."""
        reader = endpoint.v2.answer if endpoint.v2 is not None else None
        if reader is None or not isinstance(result, dict):
            return result
        return ANSWERS[reader](result)

    def create_problems(self, body: Mapping[str, Any]) -> list[tuple[str, str]]:
        """What only v1 can say: ``faultToleranceConfig`` (v2 takes ``faultToleranceArgs``),
        the v1-only fields, a datasource by ``id``, and fractional quantities (v2's
        ``quantity`` is an Integer: bce-openapi-meta ``schema/aihc/CreateJob.json:78-79``;
        v1's a float)."""
        problems = other_dialects_fields(body, V1_ONLY_FIELDS, "v1")
        for index, source in enumerate(body.get("datasources") or ()):
            if isinstance(source, Mapping) and source.get("id") is not None:
                problems.append(
                    (
                        f"datasources[{index}].id (datasources)",
                        "needs the connection's api_version v1 (v2 datasources have no id); "
                        "name the dataset instead",
                    )
                )
        spec = body.get("jobSpec")
        resources = spec.get("resources") if isinstance(spec, Mapping) else None
        for index, resource in enumerate(resources or ()):
            quantity = resource.get("quantity") if isinstance(resource, Mapping) else None
            if isinstance(quantity, float) and not quantity.is_integer():
                problems.append(
                    (
                        f"jobSpec.resources[{index}].quantity (job_resources)",
                        f"api_version v2 takes whole quantities only, got {quantity!r}; "
                        "round it, or use api_version v1 (which takes fractions)",
                    )
                )
        return problems


def _queue_id(
    endpoint: Endpoint, queue_id: str | None, body: Mapping[str, Any], path: Mapping[str, str]
) -> str | None:
    if endpoint.v2 is not None and endpoint.v2.shape == "create":
        return str(body.get("queue") or DEFAULT_QUEUE_ID)
    if "job_id" in path or (endpoint.v2 is not None and endpoint.v2.shape == "batch"):
        return queue_id or DEFAULT_QUEUE_ID
    return queue_id


def create_body(v1_body: Mapping[str, Any]) -> dict[str, Any]:
    """A v1 create body in v2 form: the fields v2 places elsewhere moved (``command`` to
    the top level, ``jobFramework`` as ``jobType``: :data:`MOVED`), TFJob and RayJob roles."""
    body = dict(v1_body)
    spec = dict(body.pop(_SPEC, {}))
    for v1, v2 in MOVED:
        source = spec if v1[0] == _SPEC else body
        body[v2[-1]] = source.pop(v1[-1], _WHEN_ABSENT.get(v2[-1]))
    body[_SPEC] = _roles(body[_JOB_TYPE], spec)
    board = body.get("tensorboardConfig")
    if isinstance(board, dict) and "enableTensorboard" in board:
        board = dict(board)
        board["enable"] = board.pop("enableTensorboard")
        body["tensorboardConfig"] = board
    return body


def _roles(job_type: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A role map for the job types that take one, else the spec; whole quantities.

    A RayJob's ``jobSpec`` maps roles to specs and must hold ``Head`` ("若 jobType=RayJob：
    传递Map结构（Key必须包含Head…）", bce-openapi-meta ``i18n/zh-CN/aihc/CreateJob.json:8``);
    the one spec the operator builds is the head's.  A TFJob is sent as one ``Worker``
    role (inferred).  A spec that already is a role map (from ``body``) is kept.
    """
    resources = spec.get("resources")
    if isinstance(resources, list):
        spec["resources"] = [_whole(r) for r in resources]
    if job_type == "TFJob":
        return {"Worker": spec}
    if job_type == "RayJob":
        return spec if "Head" in spec else {"Head": spec}
    return spec


def _whole(resource: Any) -> Any:
    """``quantity`` ``2.0`` as ``2`` (create_problems refuses real fractions)."""
    quantity = resource.get("quantity") if isinstance(resource, dict) else None
    if isinstance(quantity, float) and quantity.is_integer():
        return {**resource, "quantity": int(quantity)}
    return resource


V2 = V2Dialect()
