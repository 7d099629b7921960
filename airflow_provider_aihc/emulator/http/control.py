"""The control API under ``/_emulator/``: unsigned, answered only to loopback clients.

======  ================================  =================================================
POST    ``/_emulator/faults``             a fault or a list, e.g. ``{"kind": "error",
                                          "status": 503, "operation": "CreateJob", "times": 2}``
                                          (kinds: ``error``, ``throttle`` (``retry_after``),
                                          ``drop_before``, ``drop_after``, ``delay``
                                          (``seconds``), ``malformed``, ``passthrough``,
                                          ``error_after`` (act, then a 5xx))
POST    ``/_emulator/scripts``            a script or a list: ``{"kind": "fail", "match":
                                          "train", "reason": "CUDA OOM",
                                          "after_running_polls": 2}``, ``{"kind": "hold",
                                          "status": "Running"}``, ``{"kind": "status",
                                          "status": "Weird"}``
POST    ``/_emulator/scripts``            service scripts too: ``{"kind": "rollout_stuck",
                                          "match": "svc", "reason": "CrashLoopBackOff",
                                          "rollout": "modify"}``, ``{"kind":
                                          "silent_revert", "after_polls": 1}``
POST    ``/_emulator/choices``            the flagged choices (``state/choices.py``):
                                          ``{"unique_names": true, "token_mismatch":
                                          "error"}``
POST    ``/_emulator/reset``              forget everything; optional ``{"progression":
                                          {"polls_per_status": 1, ...}}``
POST    ``/_emulator/progression``        change the pace: the fields of ``Progression``
GET     ``/_emulator/state``              ``{jobs: [...], requests: {op: n}, pendingFaults,
                                          pendingScripts, progression, registry: {models,
                                          modelVersions, datasets, datasetVersions,
                                          services, serviceChanges}, choices}``
GET     ``/_emulator/jobs/{id}``          one job's state (what ``AIHCJobLink`` opens when the
                                          connection points at the emulator)
POST    ``/_emulator/jobs/{id}/status``   ``{"status": "Failed", "reason": "...",
                                          "hold": false}``
======  ================================  =================================================

Answers are plain JSON (no envelope); errors use the API's error body.

Safe on a developer's laptop (security review F4), a control request is answered only when

* it comes from a loopback address, for a loopback ``Host`` (``127.0.0.0/8``, ``::1``,
  ``localhost``, any port): a web page that rebinds its own name to 127.0.0.1 sends its
  own name as ``Host`` and is refused;
* a ``POST`` also carries the per-process control token in :data:`TOKEN_HEADER` (printed
  by the standalone emulator at start, :attr:`EmulatorServer.control_token` in process,
  :data:`TOKEN_ENV` for the processes the pytest fixture starts), is ``application/json``,
  and is not cross-origin (no foreign ``Origin``, ``Sec-Fetch-Site`` same-origin or none):
  a browser cannot send it from another site.

``GET`` needs no token, so that the **AIHC Job** link opens the job page in a browser;
job views show registry passwords and env values as :data:`REDACTED`, and list the
fields hidden under ``redacted``.
"""

from __future__ import annotations

import copy
import hmac
import ipaddress
import json
import os
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, fields
from typing import Any
from urllib.parse import urlsplit

from airflow_provider_aihc.emulator.backend import Backend
from airflow_provider_aihc.emulator.state.errors import EmulatorError, invalid_param, malformed_json
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering.scenarios import fault_from_json, script_from_json

from .wire import Request, Response, error_response, json_response

Payload = dict[str, Any]

#: The header that carries the control token on every control ``POST``.
TOKEN_HEADER = "X-AIHC-Emulator-Token"
#: The environment variable a standalone emulator takes its token from (else a random
#: one), and the pytest fixture sets for the processes a test starts.
TOKEN_ENV = "AIHC_EMULATOR_CONTROL_TOKEN"
#: What job views show instead of a registry password or an env value.
REDACTED = "***"
_SAME_SITE = frozenset({"same-origin", "none"})


def control_headers(token: str | None = None) -> dict[str, str]:
    """The headers of a control ``POST``: JSON, and the token (default: :data:`TOKEN_ENV`).

    :param token: the emulator's control token.
    """
    return {
        "Content-Type": "application/json",
        TOKEN_HEADER: token or os.environ.get(TOKEN_ENV, ""),
    }


def handle_control(backend: Backend, request: Request, token: str) -> Response:
    """Answer one control request (module docstring: who is answered).

    :param token: this emulator's control token.
    """
    request_id = str(uuid.uuid4())
    try:
        if not _is_loopback(request.peer):
            raise EmulatorError(403, "AccessDenied", "the control API answers localhost only")
        refuse_foreign_host(request.headers)
        if request.method == "POST":
            _check_post(request.headers, token)
        action = _resolve(request.method, request.path)
        body = _json(request.body)
        return json_response(200, action(backend, body), request_id)
    except EmulatorError as error:
        return error_response(error, request_id)


def refuse_foreign_host(headers: Iterable[tuple[str, str]]) -> None:
    """Refuse a request whose ``Host`` is not a loopback name (DNS rebinding).

    :raises EmulatorError: ``403 AccessDenied``.
    """
    host = _header(headers, "host") or ""
    try:
        name = urlsplit(f"//{host}").hostname or ""
        urlsplit(f"//{host}").port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        name = ""
    if not (name == "localhost" or _is_loopback(name)):
        raise EmulatorError(
            403, "AccessDenied", "the emulator answers only requests for a loopback Host"
        )


def _check_post(headers: list[tuple[str, str]], token: str) -> None:
    """A control ``POST``: same-origin, JSON, with the token."""
    site = (_header(headers, "sec-fetch-site") or "none").strip().lower()
    origin = _header(headers, "origin")
    if site not in _SAME_SITE or (
        origin is not None and urlsplit(origin).netloc != (_header(headers, "host") or "")
    ):
        raise EmulatorError(403, "AccessDenied", "cross-origin control requests are refused")
    kind = (_header(headers, "content-type") or "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise EmulatorError(
            415, "UnsupportedMediaType", "control requests must be sent as application/json"
        )
    sent = _header(headers, TOKEN_HEADER) or ""
    if not token or not hmac.compare_digest(sent.encode(), token.encode()):
        raise EmulatorError(
            403,
            "AccessDenied",
            f"missing or wrong {TOKEN_HEADER}: the emulator prints its control token at start",
        )


def redacted(job: Payload) -> Payload:
    """A job view without secrets, at every depth of its body (v1's ``jobSpec``, v2's role
    maps such as ``{"Worker": spec}`` and ``{"Head": spec}``): every registry password
    (``imageConfig.password``), every env value (``envs[].value``) and every BOS temporary
    token (``codeSource.bosTemporaryToken``) shown as :data:`REDACTED`, their paths listed
    under ``redacted``."""
    view = copy.deepcopy(job)
    hidden: list[str] = []
    _hide(view.get("body"), "body", hidden, 0)
    view["redacted"] = hidden
    return view


#: The holders of secrets in a job body, and the key each hides (``envs``: every value).
_SECRET_KEYS = {"imageConfig": "password", "codeSource": "bosTemporaryToken"}
#: Deeper than any job body the create validation accepts.
_MAX_DEPTH = 32


def _hide(value: Any, path: str, hidden: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _hide(item, f"{path}[{index}]", hidden, depth + 1)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        where = f"{path}.{key}"
        secret = _SECRET_KEYS.get(key)
        if secret and isinstance(item, dict) and secret in item:
            item[secret] = REDACTED
            hidden.append(f"{where}.{secret}")
        elif key == "envs" and isinstance(item, list):
            for index, env in enumerate(item):
                if isinstance(env, dict) and "value" in env:
                    env["value"] = REDACTED
                    hidden.append(f"{where}[{index}].value")
        _hide(item, where, hidden, depth + 1)


def _header(headers: Iterable[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name.lower()), None)


def _faults(backend: Backend, body: Any) -> Payload:
    faults = [fault_from_json(item) for item in _items(body)]
    backend.add_fault(*faults)
    return {"queued": len(faults), "pendingFaults": backend.faults.pending()}


def _scripts(backend: Backend, body: Any) -> Payload:
    scripts = [script_from_json(item) for item in _items(body)]
    backend.add_script(*scripts)
    return {"queued": len(scripts), "pendingScripts": backend.scripts.pending()}


def _reset(backend: Backend, body: Any) -> Payload:
    progression = None
    if isinstance(body, dict) and body.get("progression") is not None:
        progression = progression_from_json(body["progression"])
    backend.reset(progression)
    return {"reset": True, "progression": asdict(backend.progression)}


def _progression(backend: Backend, body: Any) -> Payload:
    backend.progression = progression_from_json(body)
    return {"progression": asdict(backend.progression)}


def _state(backend: Backend, body: Any) -> Payload:
    del body
    return {
        "jobs": [redacted(job) for job in backend.jobs()],
        "requests": backend.counts(),
        "pendingFaults": backend.faults.pending(),
        "pendingScripts": backend.scripts.pending(),
        "progression": asdict(backend.progression),
        "registry": backend.registry_counts(),
        "choices": asdict(backend.choices),
    }


def _choices(backend: Backend, body: Any) -> Payload:
    if not isinstance(body, dict) or set(body) - {"unique_names", "token_mismatch"}:
        raise invalid_param("choices take unique_names (bool) and token_mismatch (replay|error)")
    unique = body.get("unique_names")
    if unique is not None and not isinstance(unique, bool):
        raise invalid_param("unique_names must be true or false")
    backend.set_choices(unique_names=unique, token_mismatch=body.get("token_mismatch"))
    return {"choices": asdict(backend.choices)}


def _job_status(job_id: str) -> Callable[[Backend, Any], Payload]:
    def action(backend: Backend, body: Any) -> Payload:
        if not isinstance(body, dict) or not isinstance(body.get("status"), str):
            raise invalid_param("status (a string) is required")
        reason = body.get("reason") or ""
        backend.set_status(job_id, body["status"], str(reason), bool(body.get("hold", False)))
        return redacted(backend.job(job_id))

    return action


_ACTIONS: dict[tuple[str, str], Callable[[Backend, Any], Payload]] = {
    ("POST", "faults"): _faults,
    ("POST", "scripts"): _scripts,
    ("POST", "reset"): _reset,
    ("POST", "progression"): _progression,
    ("POST", "choices"): _choices,
    ("GET", "state"): _state,
}


def progression_from_json(data: Any) -> Progression:
    """A :class:`Progression` from its field names (unknown fields are an error)."""
    if not isinstance(data, dict):
        raise invalid_param("progression must be an object")
    unknown = set(data) - {f.name for f in fields(Progression)}
    if unknown:
        raise invalid_param(f"unknown progression fields: {', '.join(sorted(unknown))}")
    return Progression(**data)


def _job_view(job_id: str) -> Callable[[Backend, Any], Payload]:
    def action(backend: Backend, body: Any) -> Payload:
        del body
        try:
            return redacted(backend.job(job_id))
        except KeyError:
            raise EmulatorError(404, "JobNotFound", f"job {job_id!r} not found") from None

    return action


def _resolve(method: str, path: str) -> Callable[[Backend, Any], Payload]:
    parts = path.strip("/").split("/")[1:]
    if len(parts) == 2 and parts[0] == "jobs" and method == "GET":
        return _job_view(parts[1])
    if len(parts) == 3 and parts[0] == "jobs" and parts[2] == "status" and method == "POST":
        return _job_status(parts[1])
    action = _ACTIONS.get((method, "/".join(parts)))
    if action is None:
        raise EmulatorError(404, "InvalidURI", f"no such control API: {method} {path}")
    return action


def _items(body: Any) -> list[dict[str, Any]]:
    items = body if isinstance(body, list) else [body]
    if not items or not all(isinstance(item, dict) for item in items):
        raise invalid_param("expected an object or a list of objects")
    return items


def _json(body: bytes) -> Any:
    if not body:
        return None
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise malformed_json("the request body is not valid JSON") from None


def _is_loopback(peer: str) -> bool:
    try:
        return ipaddress.ip_address(peer.split("%")[0]).is_loopback
    except ValueError:
        return False
