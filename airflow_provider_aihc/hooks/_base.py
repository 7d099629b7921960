"""The vocabulary of the AIHC hook and its transport: how an endpoint is declared
(:class:`Endpoint`, its v2 :class:`Action`, the :class:`Call` a caller makes of it), the
request one call makes (:class:`ApiRequest`), signing per attempt, retries and errors.

An :class:`Endpoint` says everything about one operation that is not a value: its name
(in errors and logs), the v1 method and path, the v2 :class:`Action`, what it needs (the
call attributes that carry the pool, the queue id, the job id, the pod, ...), and which
call attributes become which v1 query arguments.  A :class:`Call` subclass
(``hooks/calls.py``) adds the values as fields and the model that reads the answer.
Every call after the create that addresses a job (or lists a pool's jobs) has :data:`QUEUE`
in its ``needs``: the dialects send its ``queueID``, and on a managed pool
(:data:`MANAGED_POOLS`) a call that has none is refused before any request
(:func:`missing_needs`), as Baidu's own client refuses it.

The pure transport pieces (:func:`prepare`, :func:`error_from_response`, :func:`unwrap`,
:func:`is_retryable`, :func:`retry_delay`) are shared by the sync (``requests``) and async
(``aiohttp``) senders of ``hooks/_transport.py``, which differ only in how they put bytes
on the wire.  The connection's settings are read in ``hooks/_connection.py`` (re-exported
here, where callers have always imported them).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar, Generic, TypeVar, cast

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
from airflow_provider_aihc.hooks._connection import API_VERSIONS as API_VERSIONS
from airflow_provider_aihc.hooks._connection import (
    DEFAULT_CONNECT_TIMEOUT_SECONDS as DEFAULT_CONNECT_TIMEOUT_SECONDS,
)
from airflow_provider_aihc.hooks._connection import DEFAULT_MAX_RETRIES as DEFAULT_MAX_RETRIES
from airflow_provider_aihc.hooks._connection import (
    DEFAULT_TIMEOUT_SECONDS as DEFAULT_TIMEOUT_SECONDS,
)
from airflow_provider_aihc.hooks._connection import MAX_RETRIES_LIMIT as MAX_RETRIES_LIMIT
from airflow_provider_aihc.hooks._connection import REGION_HOSTS as REGION_HOSTS
from airflow_provider_aihc.hooks._connection import ConnectionConfig as ConnectionConfig
from airflow_provider_aihc.hooks._connection import (
    config_from_connection as config_from_connection,
)
from airflow_provider_aihc.job_parameters import MANAGED_POOL_IDS

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


T = TypeVar("T")
Params = Sequence[tuple[str, str | None]]

#: What a call may need, each named by the call attribute that carries it.
#: The resource pool of a job call (query ``resourcePoolId``; the hook fills the default).
POOL = "pool"
#: The queue id (v1 ``queueID`` on managed pools, v2 ``queueID``): on a managed pool the
#: queue's id (``aihcq-…``), on a v2 self-managed pool the queue's name.
QUEUE = "queue_id"
#: The managed pools (job_parameters.py cites their source): their job calls need the queue id.
MANAGED_POOLS = MANAGED_POOL_IDS
#: Path arguments: the job, its pod, the pool and queue of a pool or queue call.
JOB = "job_id"
POD = "pod_name"
POOL_ID = "pool_id"
QUEUE_NAME = "queue_name"
PATH_ARGS = (JOB, POD, POOL_ID, QUEUE_NAME)


@dataclass(frozen=True, slots=True)
class Action:
    """An endpoint's v2 action (``?action=<name>``), built from the call's v1 arguments.

    :param name: the action, e.g. ``DescribeJobLogs``.
    :param fields: v1 query arguments a job action's body carries under the same name.
    :param fixed: ``(field, value)`` every request of the action carries.
    :param query: a pool or queue action: ``GET`` with query arguments, no body.
    :param ids: ``(path argument, query argument)`` a query action sends its ids as.
    :param paged: ``pageNo``/``pageSize`` are sent as ``pageNumber``/``pageSize``.
    :param shape: a body the dialect builds itself (``create``, ``list``, ``batch``).
    :param answer: how the flat answer reads back into v1 form (``job``, ``jobs``,
        ``pool``, ``pools``, ``queue``, ``queues``); ``None``: as it is.
    """

    name: str
    fields: tuple[str, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    query: bool = False
    ids: tuple[tuple[str, str], ...] = ()
    paged: bool = False
    shape: str | None = None
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One AIHC API operation.

    :param operation: the name used in errors and logs, e.g. ``GetJob``.
    :param method: the v1 HTTP method.
    :param path: the v1 path template, e.g. ``/api/v1/aijobs/{job_id}``.
    :param retryable: whether a failed attempt may be sent again (never for create).
    :param needs: the call attributes the request needs (:data:`POOL`, :data:`JOB`, ...).
    :param query: ``(call attribute, v1 query argument)``, sent when the value is set.
    :param v1_drops: v1 query arguments v1 cannot send (the hook filters instead).
    :param v2: the v2 action (``None``: the endpoint has none).
    :param v1: whether v1 defines the operation (``False``: only v2 does, and the v1
        dialect refuses it before sending).
    """

    operation: str
    method: str
    path: str
    retryable: bool = True
    needs: tuple[str, ...] = ()
    query: tuple[tuple[str, str], ...] = ()
    v1_drops: tuple[str, ...] = ()
    v2: Action | None = None
    v1: bool = True


class Call(Generic[T]):
    """One call of an endpoint: the subclass declares :attr:`endpoint` and :attr:`model`,
    its dataclass fields carry the values (named as in ``needs`` and ``query``)."""

    __slots__ = ()
    endpoint: ClassVar[Endpoint]
    #: The pydantic model that reads the answer (in v1 wire form).
    model: ClassVar[Any]

    def read(self, data: Any) -> T:
        """The typed answer."""
        return cast("T", self.model.model_validate(data))

    def path_args(self) -> dict[str, str]:
        """The v1 path's arguments."""
        return {name: getattr(self, name) for name in self.endpoint.needs if name in PATH_ARGS}

    def params(self) -> Params:
        """The v1 query arguments whose value is set (not ``None``, not empty): bce-sdk-go's
        ``WithQueryParamFilter`` leaves an empty value out the same way
        (``services/aihc/resource/client.go``, every job call)."""
        pairs = ((wire, getattr(self, attr)) for attr, wire in self.endpoint.query)
        return [(wire, str(value)) for wire, value in pairs if value is not None and value != ""]

    def payload(self) -> Any:
        """The JSON body in v1 wire form (``None``: none)."""
        return None


def missing_needs(call: Call[Any], pool: str | None = None) -> list[str]:
    """The needs of ``call`` it lacks, besides the pool (which the hook defaults) and the
    path arguments (which the dialects check, naming them).

    :param pool: the call's resolved pool: :data:`QUEUE` is a need only on a managed one
        (a self-managed pool finds a job by its id; v2 then names the ``default`` queue).
    """
    skip = (POOL, *PATH_ARGS) if is_managed_pool(pool) else (POOL, QUEUE, *PATH_ARGS)
    return [n for n in call.endpoint.needs if n not in skip and not getattr(call, n, None)]


def is_managed_pool(pool: str | None) -> bool:
    """Whether ``pool`` is a managed pool (:data:`MANAGED_POOLS`), whose job calls need the
    queue id."""
    return pool in MANAGED_POOLS


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
