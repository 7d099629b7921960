"""Transport for the AIHC hook: connection settings, signing per attempt, retries, errors.

Nothing here knows an AIHC endpoint beyond its :class:`Endpoint` row; ``hooks/aihc.py``
declares those and parses the answers.  The pure pieces (:func:`prepare`,
:func:`error_from_response`, :func:`unwrap`, :func:`is_retryable`, :func:`retry_delay`)
are shared by the sync (``requests``) and async (``aiohttp``) senders of
``hooks/_transport.py``, which differ only in how they put bytes on the wire.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from airflow_provider_aihc import __version__
from airflow_provider_aihc.auth.signer import format_timestamp, provider_signed_headers, sign
from airflow_provider_aihc.exceptions import (
    AIHCApiError,
    AIHCAuthError,
    AIHCConfigError,
    AIHCError,
    AIHCNotFoundError,
    AIHCResponseError,
    AIHCServerError,
    AIHCThrottledError,
    AIHCTransportError,
)
from airflow_provider_aihc.hooks._conncheck import (
    host_problems,
    refuse,
    value_problems,
    warn_insecure,
)

#: Region → endpoint host (aihc CLI ``configure.py`` ``host_dict``).
REGION_HOSTS = {
    "cn-beijing": "aihc.bj.baidubce.com",
    "cn-baoding": "aihc.bd.baidubce.com",
    "cn-guangzhou": "aihc.gz.baidubce.com",
    "cn-wuhan": "aihc.fwh.baidubce.com",
    "cn-suzhou": "aihc.su.baidubce.com",
    "cn-yangquan": "aihc.yq.baidubce.com",
}
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
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_CONNECT_TIMEOUT_SECONDS = 10.0
DEFAULT_MAX_RETRIES = 5
#: The most ``max_retries`` may be: a typo such as ``1e9`` must not mean endless retries.
MAX_RETRIES_LIMIT = 20
#: The API generations a connection's extra ``api_version`` may name (``hooks/dialects``).
API_VERSIONS = ("v1", "v2")
#: The longest wrong extra value an error message repeats (a region name fits, a key not).
SHOWN_TEXT_MAX = 12
#: The number extras: ``(name, default, whole numbers only)``.  A timeout must be > 0
#: (aiohttp reads 0 as "no timeout"); ``max_retries`` is within 0..MAX_RETRIES_LIMIT.
NUMBER_EXTRAS: tuple[tuple[str, float, bool], ...] = (
    ("timeout", DEFAULT_TIMEOUT_SECONDS, False),
    ("connect_timeout", DEFAULT_CONNECT_TIMEOUT_SECONDS, False),
    ("max_retries", DEFAULT_MAX_RETRIES, True),
)
#: The header that carries the hex SHA-256 of the body; signed like every ``x-bce-*``
#: header (bce-python-sdk 0.9.79 ``http_headers.BCE_CONTENT_SHA256``, hex digest as
#: ``utils.get_sha256_from_fp`` computes it for BOS uploads), so the body is signed too.
CONTENT_SHA256_HEADER = "x-bce-content-sha256"

Params = Sequence[tuple[str, str | None]]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One AIHC API operation.

    :param operation: the name used in errors and logs, e.g. ``GetJob``.
    :param method: the HTTP method.
    :param path: the path template, e.g. ``/api/v1/aijobs/{job_id}``.
    :param retryable: whether a failed attempt may be sent again (never for create).
    """

    operation: str
    method: str
    path: str
    retryable: bool = True


@dataclass(frozen=True, slots=True)
class ApiRequest:
    """One call, built once and signed afresh for every attempt."""

    endpoint: Endpoint
    path: str
    params: Params = ()
    body: bytes | None = None
    #: Unsigned headers the dialect adds (v2: ``X-API-Version`` or ``version``).
    headers: tuple[tuple[str, str], ...] = ()


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


@dataclass(frozen=True)
class ConnectionConfig:
    """Settings read from an ``aihc`` connection; secrets stay out of ``repr``.

    :param base_url: ``scheme://host[:port]``.
    :param access_key_id: the Access Key ID.
    :param secret_access_key: the Secret Access Key.
    :param security_token: the STS token, if any.
    :param resource_pool_id: the default resource pool.
    :param timeout: read timeout of one attempt, in seconds.
    :param connect_timeout: connect timeout of one attempt, in seconds.
    :param max_retries: attempts after the first for retryable calls.
    :param api_version: the API generation spoken: ``v1`` (REST paths) or ``v2`` (actions).
    :param user_id: the AIHC user the credentials belong to (the ``ai-user-id`` label AIHC
        puts on that user's jobs), if the connection says; adoption then also requires it.
    """

    base_url: str
    access_key_id: str
    secret_access_key: str = field(repr=False)
    security_token: str | None = field(default=None, repr=False)
    resource_pool_id: str | None = None
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    max_retries: int = DEFAULT_MAX_RETRIES
    api_version: str = "v1"
    user_id: str | None = None

    @cached_property
    def host_header(self) -> str:
        """The ``Host`` value: the netloc, without the scheme's default port."""
        parts = urlsplit(self.base_url)
        default_port = {"http": 80, "https": 443}[parts.scheme]
        host = parts.hostname or ""
        return host if parts.port in (None, default_port) else f"{host}:{parts.port}"


def config_from_connection(conn: Any) -> ConnectionConfig:
    """Read an ``aihc`` Airflow connection.

    :param conn: an Airflow ``Connection``.
    :raises AIHCConfigError: naming the field that is missing or wrong.
    """
    extra: Mapping[str, Any] = conn.extra_dejson or {}
    problems = header_problems(conn, extra)
    if problems:  # checked first: a broken value must not reach the parsing below
        raise refuse(conn.conn_id, problems)
    if not conn.login:
        problems.append("login (the Access Key ID) is empty")
    if not conn.password:
        problems.append("password (the Secret Access Key) is empty")
    try:
        region = _choice_extra(extra, "region", tuple(REGION_HOSTS)) if not conn.host else None
        base_url = _base_url(conn.host, conn.port, region, extra)
    except AIHCConfigError as err:
        problems.append(str(err))
        base_url = ""
    numbers: dict[str, float] = {}
    api_version = "v1"
    for key, default, whole in NUMBER_EXTRAS:
        try:
            numbers[key] = _number_extra(extra, key, default, whole=whole)
        except AIHCConfigError as err:
            problems.append(str(err))
    try:
        api_version = _choice_extra(extra, "api_version", API_VERSIONS) or "v1"
    except AIHCConfigError as err:
        problems.append(str(err))
    if problems:
        raise refuse(conn.conn_id, problems)
    warn_insecure(conn.conn_id, base_url)
    return ConnectionConfig(
        base_url=base_url,
        access_key_id=conn.login,
        secret_access_key=conn.password,
        security_token=extra.get("security_token") or None,
        resource_pool_id=extra.get("resource_pool_id") or None,
        timeout=numbers["timeout"],
        connect_timeout=numbers["connect_timeout"],
        max_retries=int(numbers["max_retries"]),
        api_version=api_version,
        user_id=str(extra.get("user_id") or "").strip() or None,
    )


def header_problems(conn: Any, extra: Mapping[str, Any]) -> list[str]:
    """The connection fields whose value would break a request header or the signature: a
    line break, leading or trailing whitespace, a non-printable or non-ASCII character
    (named, their values never shown: a header injection or a pasted secret).

    :param conn: an Airflow ``Connection``.
    :param extra: its extras.
    """
    fields = {
        "login (the Access Key ID)": conn.login,
        "host": conn.host,
        "extra region": None if _is_blank(extra.get("region")) else extra.get("region"),
        "extra security_token": extra.get("security_token"),
    }
    secret = {"password (the Secret Access Key)": conn.password}
    return value_problems(fields) + value_problems(secret, header=False)


def _number_extra(extra: Mapping[str, Any], key: str, default: float, *, whole: bool) -> float:
    """A number extra: empty (absent, ``null``, ``""``, as connection forms save a field
    left blank) means ``default``.

    :raises AIHCConfigError: naming the extra and what it may be.
    """
    value: Any = extra.get(key)
    if _is_blank(value):
        return default
    number = math.nan
    if not isinstance(value, bool):
        with contextlib.suppress(TypeError, ValueError, OverflowError):
            number = float(value)
    if whole and math.isfinite(number) and number.is_integer() and number >= 0:
        if number <= MAX_RETRIES_LIMIT:
            return number
    elif not whole and math.isfinite(number) and number > 0:
        return number
    allowed = (
        f"a whole number from 0 to {MAX_RETRIES_LIMIT}" if whole else "a number of seconds > 0"
    )
    raise AIHCConfigError(
        f"extra {key} must be {allowed}, or empty for the default {default:g}; got {_shown(value)}"
    )


def _choice_extra(extra: Mapping[str, Any], key: str, allowed: Sequence[str]) -> str | None:
    """A choice extra, trimmed and lowercased; ``None`` when empty (absent, ``null``, ``""``).

    :raises AIHCConfigError: naming the extra and the values it may take.
    """
    value = extra.get(key)
    if _is_blank(value):
        return None
    if isinstance(value, str) and value.strip().lower() in allowed:
        return value.strip().lower()
    raise AIHCConfigError(
        f"extra {key} must be one of {', '.join(allowed)}, or empty; got {_shown(value)}"
    )


def _is_blank(value: object) -> bool:
    """An extra left empty: absent, ``null`` or blank text (connection forms save these)."""
    return value is None or (isinstance(value, str) and not value.strip())


def _shown(value: object) -> str:
    """A wrong extra's value for an error message: numbers and short text as they are;
    anything longer only by its type and length (it may be a key or token pasted into the
    wrong field)."""
    if isinstance(value, bool | int | float) or (
        isinstance(value, str) and len(value) <= SHOWN_TEXT_MAX
    ):
        return repr(value)
    length = f" of {len(value)} characters" if isinstance(value, str) else ""
    return f"a {type(value).__name__}{length}"


def _base_url(
    host: str | None, port: int | None, region: str | None, extra: Mapping[str, Any]
) -> str:
    if not host:
        if not region:
            raise AIHCConfigError(
                f"host is empty and extra region is not set (one of {', '.join(REGION_HOSTS)})"
            )
        host = REGION_HOSTS[region]
    if "://" not in host:
        host = "https://" + host
    parts = urlsplit(host)
    if "@" in parts.netloc:
        raise AIHCConfigError("; ".join(host_problems(parts, extra)))
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not 0-65535
    except ValueError:
        raise AIHCConfigError(f"host has an invalid port, got {host!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AIHCConfigError(f"host must be a host name or an http(s) URL, got {host!r}")
    problems = host_problems(parts, extra)
    if problems:  # before any message below repeats the host
        raise AIHCConfigError("; ".join(problems))
    if parts.path not in ("", "/") or parts.query:
        raise AIHCConfigError(f"host must not carry a path or query, got {host!r}")
    netloc = parts.netloc if parts.port or not port else f"{parts.netloc}:{port}"
    return f"{parts.scheme}://{netloc}"


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
