"""The v2 action dialect (aihc-api §10; bce-python-sdk 0.9.79 ``AihcClient``).

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
(``jobSpec: {"Worker": spec}``); single-job actions send ``queueID`` as given, else
``default`` (the self-managed pools' default queue: v2 wants a queueID on them and a job
id alone does not name its queue; a job in another queue of a self-managed pool needs
``queue_id``); pools are listed with ``resourcePoolType=common`` (the managed pool is
addressed as ``aihc-serverless``).  ``DescribeJobs`` sends the hook's list filters as
``keyword`` (with ``keywordType: name``) and ``status`` (documented); how ``keyword``
matches is not (a substring is inferred), so the hook filters the answer again and its
callers pick keywords that every name they look for starts with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_aihc.hooks._base import ApiRequest, Endpoint, Params
from airflow_provider_aihc.hooks.dialects import (
    LIST_FILTERS,
    V1_ONLY_FIELDS,
    check_path_id,
    other_dialects_fields,
)
from airflow_provider_aihc.hooks.dialects.v1 import encode
from airflow_provider_aihc.hooks.dialects.v2_answers import job_info, v1_pool, v1_queue

JOB_HEADERS = (("X-API-Version", "v2"),)
POOL_HEADERS = (("version", "v2"),)
#: ``queueID`` of a single-job action when the caller names no queue (inferred).
DEFAULT_QUEUE_ID = "default"
POOL_TYPE = "common"


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


@dataclass(frozen=True)
class Action:
    """A v2 action: job actions build a body, pool actions a query."""

    name: str
    body: Callable[[Args], dict[str, Any]] | None = None
    query: Callable[[Args], Params] | None = None


def _list_jobs(a: Args) -> dict[str, Any]:
    filters = {k: a.params.get(k) for k in ("queue", "orderBy", "order", *LIST_FILTERS)}
    if filters["keyword"]:
        filters["keywordType"] = "name"
    return {**{k: v for k, v in filters.items() if v}, **a.page()}


def _logs(a: Args) -> dict[str, Any]:
    # Every argument is a String (bce-openapi-meta schema/aihc/DescribeJobLogs.json:36-67).
    # An empty marker is still sent: META says the first request sends none ("第一次请求不写
    # marker 参数", i18n/zh-CN/aihc/DescribeJobLogs.json:12), but what a request without one
    # returns (the first lines, or the newest as the aihc CLI's --tail reads it) is not
    # defined anywhere; the emulator takes "" as "from the first line" (fidelity S3-20).
    return a.job(
        podName=a.path["pod_name"],
        startTime=a.params.get("startTime") or None,
        endTime=a.params.get("endTime") or None,
        maxLines=a.params.get("maxLines") or None,
        marker=a.params.get("marker"),
    )


def _events(a: Args) -> dict[str, Any]:
    return a.job(startTime=a.params.get("startTime"), endTime=a.params.get("endTime"))


def _pools(a: Args) -> Params:
    page = a.page()
    return [("resourcePoolType", POOL_TYPE), *((k, str(v)) for k, v in page.items() if v)]


def _queues(a: Args) -> Params:
    pool = check_path_id("resource_pool_id", a.path["pool_id"])
    return [("resourcePoolId", pool), *((k, str(v)) for k, v in a.page().items() if v)]


#: v1 operation -> v2 action.
ACTIONS: dict[str, Action] = {
    "CreateJob": Action("CreateJob", body=lambda a: create_body(a.body)),
    "ListJobs": Action("DescribeJobs", body=_list_jobs),
    "GetJob": Action("DescribeJob", body=lambda a: a.job(needDetail=True)),
    "StopJob": Action("StopJob", body=lambda a: a.job()),
    "DeleteJob": Action("DeleteJob", body=lambda a: a.job()),
    "UpdateJob": Action("ModifyJob", body=lambda a: a.job(priority=a.body["priority"])),
    "GetJobEvents": Action("DescribeJobEvents", body=_events),
    "GetPodLogs": Action("DescribeJobLogs", body=_logs),
    "GetPodEvents": Action("DescribePodEvents", body=lambda a: a.job(podName=a.path["pod_name"])),
    "ListResourcePools": Action("DescribeResourcePools", query=_pools),
    "GetResourcePool": Action(
        "DescribeResourcePool",
        query=lambda a: [("resourcePoolId", check_path_id("pool_id", a.path["pool_id"]))],
    ),
    "ListQueues": Action("DescribeQueues", query=_queues),
    "GetQueue": Action(
        "DescribeQueue",
        query=lambda a: [("queueId", check_path_id("queue_name", a.path["queue_name"]))],
    ),
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
        action = ACTIONS[endpoint.operation]
        args = Args(pool, queue_id, dict(params), body, path_args)
        if action.query is not None:
            query = [("action", action.name), *action.query(args)]
            sent = Endpoint(endpoint.operation, "GET", "/", endpoint.retryable)
            return ApiRequest(sent, "/", tuple(query), None, POOL_HEADERS)
        assert action.body is not None
        job_body = action.body(args)
        query = [("action", action.name), ("resourcePoolId", pool)]
        queue = _queue_id(endpoint, queue_id, job_body, path_args)
        if queue:
            query.append(("queueID", queue))
        sent = Endpoint(endpoint.operation, "POST", "/", endpoint.retryable)
        return ApiRequest(sent, "/", tuple(query), encode(job_body), JOB_HEADERS)

    def answer(self, endpoint: Endpoint, result: Any) -> Any:
        """Flat answers in the v1 forms the models read."""
        if not isinstance(result, dict):
            return result
        if endpoint.operation == "GetJob":
            job = result.get("job")
            return job_info(job if isinstance(job, dict) else result)
        if endpoint.operation == "ListJobs":
            jobs = result.get("jobs") or []
            total = result.get("totalCount", result.get("total", 0))
            return {"total": total, "jobs": [job_info(j) for j in jobs if isinstance(j, dict)]}
        if endpoint.operation == "ListQueues":
            queues = [v1_queue(q) for q in result.get("queues") or [] if isinstance(q, dict)]
            return {"total": result.get("totalCount", 0), "queues": queues}
        if endpoint.operation == "GetQueue":
            return v1_queue(result)
        if endpoint.operation == "ListResourcePools":
            pools = result.get("resourcePools") or []
            items = [v1_pool(p) for p in pools if isinstance(p, dict)]
            return {**result, "resourcePools": items}
        if endpoint.operation == "GetResourcePool":
            return v1_pool(result)
        return result

    def create_problems(self, body: Mapping[str, Any]) -> list[tuple[str, str]]:
        """What only v1 can say: ``faultToleranceConfig`` (v2 takes ``faultToleranceArgs``),
        the v1-only fields, a datasource by ``id``, and fractional quantities (v2's
        ``quantity`` is an Integer: bce-openapi-meta ``schema/aihc/CreateJob.json:78-79``;
        v1's a float)."""
        problems: list[tuple[str, str]] = []
        if body.get("faultToleranceConfig") is not None:
            problems.append(
                (
                    "faultToleranceConfig (fault_tolerance_config)",
                    "api_version v2 has no faultToleranceConfig; give faultToleranceArgs "
                    "(--flag=value text) in body, or use api_version v1",
                )
            )
        problems += other_dialects_fields(body, V1_ONLY_FIELDS, "v1")
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
    if endpoint.operation == "CreateJob":
        return str(body.get("queue") or DEFAULT_QUEUE_ID)
    if "job_id" in path:
        return queue_id or DEFAULT_QUEUE_ID
    return queue_id


def create_body(v1_body: Mapping[str, Any]) -> dict[str, Any]:
    """A v1 create body in v2 form: top-level ``command``, ``jobType``, TFJob roles."""
    body = dict(v1_body)
    spec = dict(body.pop("jobSpec", {}))
    job_type = body.pop("jobFramework", "PyTorchJob")
    body["command"] = spec.pop("command", None)
    body["jobType"] = job_type
    body["jobSpec"] = _roles(job_type, spec)
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
