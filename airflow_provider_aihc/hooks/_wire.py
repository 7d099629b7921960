"""The transport pieces of the AIHC hook, with no I/O: the request one attempt puts on the
wire (:func:`prepare`, signing per attempt), the answer read back (:func:`unwrap`,
:func:`error_from_response`) and the retry decision (:func:`is_retryable`,
:func:`retry_delay`).

They are shared by the sync (``requests``) and async (``aiohttp``) senders of
``hooks/_transport.py``, which differ only in how they put bytes on the wire.  What a
request is made of (:class:`~airflow_provider_aihc.hooks._endpoint.Endpoint`,
:class:`~airflow_provider_aihc.hooks._endpoint.ApiRequest`) is declared in
``hooks/_endpoint.py``; the connection's settings are read in ``hooks/_connection.py``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from airflow_provider_aihc import __version__
from airflow_provider_aihc.auth.signer import format_timestamp, provider_signed_headers, sign
from airflow_provider_aihc.exceptions import (
    AIHCApiError,
    AIHCAuthError,
    AIHCError,
    AIHCNotFoundError,
    AIHCResponseError,
    AIHCServerError,
    AIHCThrottledError,
    AIHCTransportError,
)
from airflow_provider_aihc.hooks._connection import ConnectionConfig
from airflow_provider_aihc.hooks._endpoint import ApiRequest

USER_AGENT = f"airflow-provider-aihc/{__version__}"
#: AIHC error codes that mean the credentials or the signature were refused.
AUTH_ERROR_CODES = frozenset(
    {
        "AccessDenied",
        "InvalidAccessKeyId",
        "InvalidHTTPAuthHeader",
        "RequestExpired",
        "SignatureDoesNotMatch",
    }
)
RETRYABLE_STATUSES = frozenset({429}) | frozenset(range(500, 600))
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 30.0
RETRY_AFTER_CAP_SECONDS = 300.0
#: The header that carries the hex SHA-256 of the body; signed like every ``x-bce-*``
#: header (bce-python-sdk 0.9.79 ``http_headers.BCE_CONTENT_SHA256``, hex digest as
#: ``utils.get_sha256_from_fp`` computes it for BOS uploads), so the body is signed too.
CONTENT_SHA256_HEADER = "x-bce-content-sha256"


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one attempt puts on the wire: the path and query as signed, and the headers."""

    base_url: str
    target: str
    headers: dict[str, str]

    @property
    def url(self) -> str:
        """The whole URL."""
        return self.base_url + self.target


def prepare(config: ConnectionConfig, request: ApiRequest, now: float) -> Attempt:
    """Sign one attempt; the signer's canonical path and query are exactly what is sent.

    Signs ``host``, ``x-bce-date`` and every other ``x-bce-*`` header sent: the STS token
    and :data:`CONTENT_SHA256_HEADER`, the body's hash (bce-auth-v1 signs no body, so a
    body rewritten on the way would otherwise keep a valid signature).

    :param config: the connection settings.
    :param request: the call.
    :param now: epoch seconds, read once by the caller for this attempt.
    """
    headers = {
        "Host": config.host_header,
        "Content-Type": "application/json",
        "x-bce-date": format_timestamp(now),
    }
    if request.body is not None:
        headers[CONTENT_SHA256_HEADER] = hashlib.sha256(request.body).hexdigest()
    if config.security_token:
        headers["x-bce-security-token"] = config.security_token
    headers.update(request.headers)  # not x-bce-*: never signed, as Baidu's SDK sends them
    signed = sign(
        access_key_id=config.access_key_id,
        secret_access_key=config.secret_access_key,
        method=request.endpoint.method,
        path=request.path,
        params=request.params,
        headers=headers,
        timestamp=now,
        headers_to_sign=provider_signed_headers(headers),
    )
    query = f"?{signed.canonical_query_string}" if signed.canonical_query_string else ""
    headers["Authorization"] = signed.authorization
    headers["User-Agent"] = USER_AGENT
    return Attempt(config.base_url, f"{signed.canonical_uri}{query}", headers)


def unwrap(operation: str, status: int, body: bytes, headers: Mapping[str, str]) -> Any:
    """Decode a 2xx answer: the ``result`` of the v1 envelope, or the object itself.

    :raises AIHCResponseError: the body is not a JSON object.
    """
    try:
        payload = json.loads(body) if body.strip() else None
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        raise AIHCResponseError(
            operation,
            status,
            "MalformedResponse",
            f"expected a JSON object, got {_preview(body)}",
            request_id=_header(headers, "x-bce-request-id"),
        )
    return payload.get("result", payload)


def error_from_response(
    operation: str,
    status: int,
    body: bytes,
    headers: Mapping[str, str],
    access_key_id: str | None,
) -> AIHCApiError:
    """Map an error answer to the typed exception; reads the body case-insensitively."""
    fields: dict[str, Any] = {}
    try:
        payload = json.loads(body)
        if isinstance(payload, dict):
            fields = {str(k).lower(): v for k, v in payload.items()}
    except ValueError:
        pass
    code = str(fields.get("code") or "")
    message = str(fields.get("message") or "") or _preview(body)
    request_id = fields.get("requestid") or _header(headers, "x-bce-request-id")
    args = (operation, status, code, message, request_id and str(request_id), access_key_id)
    if status == 429:
        return AIHCThrottledError(*args, retry_after=parse_retry_after(headers))
    if status >= 500:
        return AIHCServerError(*args)
    if status == 404:
        return AIHCNotFoundError(*args)
    if status in (401, 403) or code in AUTH_ERROR_CODES:
        if code == "RequestExpired":
            args = (*args[:3], f"{message} (is this machine's clock right?)", *args[4:])
        return AIHCAuthError(*args)
    return AIHCApiError(*args)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), if any."""
    value = _header(headers, "retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def is_retryable(error: AIHCError) -> bool:
    """Whether a failed attempt of a retryable endpoint may be sent again: no answer, 429,
    5xx, or a 2xx answer that is not AIHC's JSON (a gateway's page)."""
    if isinstance(error, AIHCTransportError | AIHCResponseError):
        return True
    return isinstance(error, AIHCApiError) and error.status in RETRYABLE_STATUSES


def retry_delay(attempt: int, error: AIHCError, rng: random.Random | None = None) -> float:
    """Seconds to wait before attempt ``attempt + 1``: the server's ``Retry-After`` when it
    gave one, else exponential backoff with full jitter.

    :param attempt: the number of the attempt that failed, from 0.
    """
    if isinstance(error, AIHCThrottledError) and error.retry_after is not None:
        return min(error.retry_after, RETRY_AFTER_CAP_SECONDS)
    ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt)
    return (rng or random).uniform(ceiling / 2, ceiling)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _preview(body: bytes, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return "an empty body"
    return repr(text[:limit] + ("…" if len(text) > limit else ""))
