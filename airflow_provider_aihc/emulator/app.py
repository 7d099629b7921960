"""The HTTP face of the emulator, with no sockets: a request in, a response out.

Routes are data (:data:`ROUTES`: method + path pattern → operation name → handler);
handlers only parse, call the backend and return a dict.  One place, :meth:`App.handle`,
authenticates, injects faults, maps :class:`EmulatorError` to
``{"requestId", "code", "message"}`` and records the request.

Envelopes (aihc-api §3.1): ``{"requestId", "result"}`` for job and pool endpoints;
job and pod events unwrapped (``{"events", "total"}``); queue endpoints
``{"requestID", "result"}``.  Every answer has an ``x-bce-request-id`` header.
Paths are split on ``/`` before percent-decoding, so an encoded ``/`` (``%2F``) stays
inside its segment: a job id ``../resourcepools`` cannot reach another endpoint.
"""

from __future__ import annotations

import calendar
import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

from .backend import Backend
from .control import handle_control
from .errors import EmulatorError, invalid_param, malformed_json
from .requestlog import RequestRecord
from .scenarios import PRE_FAULTS, Fault
from .verify import authenticate, query_pairs
from .wire import Request, Response, error_response, json_response

log = logging.getLogger(__name__)

CONTROL_PREFIX = "/_emulator/"
Envelope = Literal["result", "bare", "queue"]


@dataclass(frozen=True)
class Call:
    """What a handler gets: path parameters, decoded query, body, the backend."""

    backend: Backend
    params: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes
    access_key_id: str

    @property
    def pool_id(self) -> str:
        """The ``resourcePoolId`` query parameter (``""`` when absent)."""
        return self.query.get("resourcePoolId", "")

    @property
    def queue_id(self) -> str | None:
        """The ``queueID`` query parameter, if sent."""
        return self.query.get("queueID")

    def int_param(self, name: str, default: int) -> int:
        """An integer query parameter, ``default`` when absent or empty."""
        value = self.optional_int(name)
        return default if value is None else value

    def optional_int(self, name: str) -> int | None:
        """An integer query parameter, ``None`` when absent or empty."""
        value = self.query.get(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except ValueError:
            raise invalid_param(f"{name} must be an integer, got {value!r}") from None

    def time_param(self, name: str) -> float | None:
        """A time query parameter: unix seconds, or ``YYYY-MM-DDTHH:MM:SSZ``."""
        value = self.query.get(name)
        if not value:
            return None
        try:
            return float(value)
        except ValueError:
            pass
        try:
            return float(calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%SZ")))
        except ValueError:
            raise invalid_param(f"{name} must be unix seconds, got {value!r}") from None

    def json(self) -> Any:
        """The body as JSON (``400 MalformedJSON`` when it is not)."""
        try:
            return json.loads(self.body or b"null")
        except (ValueError, UnicodeDecodeError):
            raise malformed_json("the request body is not valid JSON") from None


Handler = Callable[[Call], dict[str, Any]]


@dataclass(frozen=True)
class Route:
    """One endpoint: ``{name}`` in the pattern matches one path segment."""

    method: str
    pattern: str
    operation: str
    handler: Handler
    envelope: Envelope = "result"

    def match(self, segments: list[str]) -> dict[str, str] | None:
        """The path parameters if the (decoded) segments fit the pattern."""
        parts = self.pattern.strip("/").split("/")
        if len(parts) != len(segments):
            return None
        params = {}
        for part, segment in zip(parts, segments, strict=True):
            if part.startswith("{"):
                if not segment:
                    return None
                params[part[1:-1]] = segment
            elif part != segment:
                return None
        return params


# ---- handlers -----------------------------------------------------------------------------


def _create_job(c: Call) -> dict[str, Any]:
    return c.backend.create_job(c.pool_id, c.json(), queue_id=c.queue_id, creator=c.access_key_id)


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


def resolve(method: str, raw_path: str) -> tuple[Route | None, dict[str, str], bool]:
    """The route for a request, its parameters, and whether the path exists at all."""
    segments = [unquote(s) for s in raw_path.strip("/").split("/")]
    path_known = False
    for route in ROUTES:
        params = route.match(segments)
        if params is None:
            continue
        path_known = True
        if route.method == method:
            return route, params, True
    return None, {}, path_known


def fault_response(fault: Fault, request_id: str) -> Response:
    """The answer of a fault that replaces the request (error, throttle, malformed, drop)."""
    if fault.kind == "drop_before":
        return Response(0, b"", drop=True)
    if fault.kind == "malformed":
        html = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
        return Response(
            200, html, [("Content-Type", "text/html"), ("x-bce-request-id", request_id)]
        )
    response = error_response(EmulatorError(fault.status, fault.code, fault.message), request_id)
    if fault.kind == "throttle":
        response.headers.append(("Retry-After", f"{fault.retry_after:g}"))
    return response


class App:
    """Request → response, for the API and the control API.

    :param backend: the state.
    :param credentials: access key id → secret access key accepted.
    :param wall_clock: the clock signatures are checked against (not the jobs' clock).
    """

    def __init__(
        self,
        backend: Backend,
        credentials: Mapping[str, str],
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.credentials = dict(credentials)
        self.wall_clock = wall_clock

    def __call__(self, request: Request) -> Response:
        """Answer one request."""
        if request.path.startswith(CONTROL_PREFIX):
            return handle_control(self.backend, request)
        return self.handle(request)

    def handle(self, request: Request) -> Response:
        """Answer one API request: fault, authenticate, route, handle, record."""
        route, params, path_known = resolve(request.method, request.path)
        operation = route.operation if route else "Unknown"
        request_id = str(uuid.uuid4())
        fault = self.backend.faults.take_fault(operation)
        if fault is not None and fault.kind in PRE_FAULTS:
            response = fault_response(fault, request_id)
        else:
            response = self._answer(request, route, params, path_known, request_id)
            if fault is not None and fault.kind == "drop_after":
                response.drop = True
            elif fault is not None and fault.kind == "delay":
                response.delay = fault.seconds
        kind = fault.kind if fault is not None and fault.kind != "passthrough" else None
        status = 0 if response.drop else response.status
        self.backend.record(RequestRecord(operation, request.method, request.path, status, kind))
        return response

    def _answer(
        self,
        request: Request,
        route: Route | None,
        params: dict[str, str],
        path_known: bool,
        request_id: str,
    ) -> Response:
        try:
            access_key_id = authenticate(
                self.credentials,
                request.method,
                request.path,
                request.query,
                request.headers,
                self.wall_clock(),
            )
            if route is None:
                raise _no_route(request, path_known)
            query: dict[str, str] = {}
            for key, value in query_pairs(request.query):
                query.setdefault(key, value)
            call = Call(self.backend, params, query, request.body, access_key_id)
            return _envelope(route.envelope, route.handler(call), request_id)
        except EmulatorError as error:
            return error_response(error, request_id)
        except Exception:
            log.exception("AIHC emulator failed on %s %s", request.method, request.path)
            internal = EmulatorError(500, "InternalError", "emulator internal error")
            return error_response(internal, request_id)


def _envelope(kind: Envelope, result: dict[str, Any], request_id: str) -> Response:
    if kind == "bare":
        return json_response(200, result, request_id)
    key = "requestID" if kind == "queue" else "requestId"
    return json_response(200, {key: request_id, "result": result}, request_id)


def _no_route(request: Request, path_known: bool) -> EmulatorError:
    if path_known:
        return EmulatorError(405, "MethodNotAllowed", f"{request.method} is not allowed here")
    return EmulatorError(404, "InvalidURI", f"no such API: {request.method} {request.path}")
