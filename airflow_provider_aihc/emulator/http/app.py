"""The HTTP face of the emulator, with no sockets: a request in, a response out.

Routes are data, one table per dialect: :data:`~.v1.routes.ROUTES` (method + path
pattern) and :data:`~.v2.actions.ACTIONS` (``/?action=…``), each naming an operation and a
handler; handlers only parse, call the one state and render.  One place,
:meth:`App.handle`, authenticates, injects the steering's faults, maps
:class:`~.errors.EmulatorError` to ``{"requestId", "code", "message"}`` (both dialects) and records
the request in the steering's request log.

Envelopes (bce-sdk-go ``bce/response.go``; v2 reference pages): v1
``{"requestId", "result"}`` for job and pool endpoints, job and pod events unwrapped
(``{"events", "total"}``), queue endpoints
``{"requestID", "result"}``; v2 flat ``{"requestId", ...}``.  Every answer has an
``x-bce-request-id`` header.  A v2 request whose ``X-API-Version`` or ``version`` header
names another version is ``404 InvalidVersion`` (a BCE common code; when the server
answers it is inferred); a missing header is accepted (aihc-gen omits it on job actions).
Paths are split on ``/`` before percent-decoding, so an encoded ``/`` (``%2F``) stays
inside its segment: a job id ``../resourcepools`` cannot reach another endpoint.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from airflow_provider_aihc.emulator.backend import Backend
from airflow_provider_aihc.emulator.dialects.call import Call, Envelope, Route
from airflow_provider_aihc.emulator.dialects.v1 import ROUTES
from airflow_provider_aihc.emulator.dialects.v2 import ACTIONS
from airflow_provider_aihc.emulator.state.errors import EmulatorError, invalid_param
from airflow_provider_aihc.emulator.steering.requestlog import RequestRecord
from airflow_provider_aihc.emulator.steering.scenarios import PRE_FAULTS, Fault

from .control import handle_control, refuse_foreign_host
from .verify import authenticate, check_body_digest, query_pairs
from .wire import Request, Response, error_response, json_response

log = logging.getLogger(__name__)

CONTROL_PREFIX = "/_emulator/"
VERSION_HEADERS = ("x-api-version", "version")
V2 = "v2"


def resolve(
    method: str, raw_path: str, raw_query: str = ""
) -> tuple[Route | None, dict[str, str], bool]:
    """The route for a request, its parameters, and whether the path (or action) exists."""
    action = _action(raw_path, raw_query)
    if action is not None:
        route = ACTIONS.get(action)
        if route is None:
            return None, {}, False
        return (route, {}, True) if route.method == method else (None, {}, True)
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


def _action(raw_path: str, raw_query: str) -> str | None:
    """The v2 ``action`` of a request to ``/``, if it names one."""
    if raw_path not in ("", "/"):
        return None
    return next((v for k, v in query_pairs(raw_query) if k == "action"), None)


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

    :param backend: the state and the steering.
    :param credentials: access key id → secret access key accepted.
    :param wall_clock: the clock signatures are checked against (not the jobs' clock).
    :param control_token: the token control ``POST`` requests must carry (control.py).
    :param loopback_host_only: refuse every API request, not only control requests, whose
        ``Host`` is not a loopback name (DNS rebinding; for an emulator that runs what it
        is sent).
    """

    def __init__(
        self,
        backend: Backend,
        credentials: Mapping[str, str],
        wall_clock: Callable[[], float] = time.time,
        *,
        control_token: str = "",
        loopback_host_only: bool = False,
    ) -> None:
        self.backend = backend
        self.credentials = dict(credentials)
        self.wall_clock = wall_clock
        self.control_token = control_token
        self.loopback_host_only = loopback_host_only

    def __call__(self, request: Request) -> Response:
        """Answer one request."""
        if request.path.startswith(CONTROL_PREFIX):
            return handle_control(self.backend, request, self.control_token)
        if self.loopback_host_only:
            try:
                refuse_foreign_host(request.headers)
            except EmulatorError as error:
                return error_response(error, str(uuid.uuid4()))
        return self.handle(request)

    def handle(self, request: Request) -> Response:
        """Answer one API request: fault, authenticate, route, handle, record."""
        route, params, path_known = resolve(request.method, request.path, request.query)
        operation = route.operation if route else "Unknown"
        request_id = str(uuid.uuid4())
        fault = self.backend.faults.take_fault(operation)
        if fault is not None and fault.kind in PRE_FAULTS:
            response = fault_response(fault, request_id)
        else:
            response = self._answer(request, route, params, path_known, request_id)
            if fault is not None and fault.kind == "drop_after":
                response.drop = True
            elif fault is not None and fault.kind == "error_after":
                error = EmulatorError(fault.status, fault.code, fault.message)
                response = error_response(error, request_id)
            elif fault is not None and fault.kind == "delay":
                response.delay = fault.seconds
        kind = fault.kind if fault is not None and fault.kind != "passthrough" else None
        status = 0 if response.drop else response.status
        action = route.action if route else None
        self.backend.record(
            RequestRecord(operation, request.method, request.path, status, kind, action)
        )
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
            check_body_digest(request.headers, request.body)
            if route is None:
                raise _no_route(request, path_known)
            if route.action is not None:
                _check_version(request.headers)
            query: dict[str, str] = {}
            for key, value in query_pairs(request.query):
                query.setdefault(key, value)
            call = Call(self.backend.state, params, query, request.body, access_key_id)
            return _envelope(route.envelope, route.handler(call), request_id)
        except EmulatorError as error:
            return error_response(error, request_id)
        except Exception:
            log.exception("AIHC emulator failed on %s %s", request.method, request.path)
            internal = EmulatorError(500, "InternalError", "emulator internal error")
            return error_response(internal, request_id)


def _check_version(headers: list[tuple[str, str]]) -> None:
    """A v2 action sent with another version header is refused (module docstring)."""
    for name, value in headers:
        if name.lower() in VERSION_HEADERS and value.strip() != V2:
            raise EmulatorError(404, "InvalidVersion", f"unsupported API version {value!r}")


def _envelope(kind: Envelope, result: dict[str, Any], request_id: str) -> Response:
    if kind == "bare":
        return json_response(200, result, request_id)
    if kind == "flat":
        return json_response(200, {"requestId": request_id, **result}, request_id)
    key = "requestID" if kind == "queue" else "requestId"
    return json_response(200, {key: request_id, "result": result}, request_id)


def _no_route(request: Request, path_known: bool) -> EmulatorError:
    if path_known:
        return EmulatorError(405, "MethodNotAllowed", f"{request.method} is not allowed here")
    if _action(request.path, request.query) is not None:
        return invalid_param(f"unknown action {_action(request.path, request.query)!r}")
    return EmulatorError(404, "InvalidURI", f"no such API: {request.method} {request.path}")
