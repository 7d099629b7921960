"""What a handler sees (:class:`Call`) and what a route is (:class:`Route`), for both dialects.

A v1 route is a method and a path pattern (``{name}`` matches one segment); a v2 route is a
method and an ``action`` (``POST /?action=DescribeJob``).  ``operation`` is the name faults
and the request log use; it is the same for the two dialects' versions of one operation
(``GetJob`` is v1 ``GET /api/v1/aijobs/{id}`` and v2 ``DescribeJob``), so a fault queued
for ``GetJob`` hits a poll in either dialect.
"""

from __future__ import annotations

import calendar
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from airflow_provider_aihc.emulator.state.errors import EmulatorError, invalid_param, malformed_json
from airflow_provider_aihc.emulator.state.store import State

#: How a handler's result is wrapped: v1 ``{"requestId", "result"}``, v1 events bare,
#: v1 queues ``{"requestID", "result"}``, v2 flat ``{"requestId", ...}``.
Envelope = Literal["result", "bare", "queue", "flat"]


@dataclass(frozen=True)
class Call:
    """What a handler gets: path parameters, decoded query, body, the state."""

    state: State
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
        return parse_time(name, self.query.get(name))

    def json(self) -> Any:
        """The body as JSON (``400 MalformedJSON`` when it is not)."""
        try:
            return json.loads(self.body or b"null")
        except (ValueError, UnicodeDecodeError):
            raise malformed_json("the request body is not valid JSON") from None

    def fields(self) -> dict[str, Any]:
        """The body as a JSON object; an empty body is ``{}`` (v2 actions)."""
        body = self.json()
        if body is None:
            return {}
        if not isinstance(body, dict):
            raise EmulatorError(400, "InappropriateJSON", "the request body must be a JSON object")
        return body


def parse_time(name: str, value: str | None) -> float | None:
    """A time argument: unix seconds, or ``YYYY-MM-DDTHH:MM:SSZ`` (``None`` when unset)."""
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


Handler = Callable[[Call], dict[str, Any]]


@dataclass(frozen=True)
class Route:
    """One endpoint: ``{name}`` in the pattern matches one path segment."""

    method: str
    pattern: str
    operation: str
    handler: Handler
    envelope: Envelope = "result"
    #: The v2 ``action`` (then ``pattern`` is ``/``); ``None`` for a v1 path.
    action: str | None = None

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
