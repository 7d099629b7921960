"""Plain request and response values shared by the app, the control API and the server."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_aihc.emulator.state.errors import EmulatorError

JSON_TYPE = "application/json; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request as received.

    :param method: the method, upper case.
    :param target: the request target, ``/path?query``, as sent.
    :param headers: header pairs as received (names in their sent case).
    :param body: the body bytes.
    :param peer: the client's address.
    """

    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    peer: str = "127.0.0.1"

    @property
    def path(self) -> str:
        """The raw path, without the query."""
        return self.target.partition("?")[0]

    @property
    def query(self) -> str:
        """The raw query, without ``?``."""
        return self.target.partition("?")[2]


@dataclass(slots=True)
class Response:
    """One answer; ``drop`` closes the connection instead, ``delay`` holds the answer."""

    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)
    drop: bool = False
    delay: float = 0.0


def json_response(
    status: int, payload: Any, request_id: str, headers: list[tuple[str, str]] | None = None
) -> Response:
    """A JSON answer with the request id header."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(
        status,
        body,
        [("Content-Type", JSON_TYPE), ("x-bce-request-id", request_id), *(headers or [])],
    )


def error_response(error: EmulatorError, request_id: str) -> Response:
    """``{"requestId", "code", "message"}`` with the error's status."""
    payload = {"requestId": request_id, "code": error.code, "message": error.message}
    return json_response(error.status, payload, request_id)
