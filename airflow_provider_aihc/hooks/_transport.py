"""The two senders: ``requests`` for workers, a shared keep-alive pool for triggers.

Both run the same loop: sign the attempt afresh (:func:`prepare`), send, decode or map the
error, and ask :func:`next_delay` whether and when to try again.  Only the I/O differs.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from airflow_provider_aihc.exceptions import AIHCError, AIHCTransportError
from airflow_provider_aihc.hooks._aio import ConnectionPool, Response
from airflow_provider_aihc.hooks._base import (
    ApiRequest,
    ConnectionConfig,
    error_from_response,
    is_retryable,
    prepare,
    retry_delay,
    unwrap,
)

if TYPE_CHECKING:
    import requests

log = logging.getLogger(__name__)

#: Connections one triggerer process keeps open per endpoint, however many triggers poll.
ASYNC_MAX_CONNECTIONS = 16
#: How long an idle pooled connection is kept (httpx's default is 5 s).
KEEPALIVE_SECONDS = 120.0
Clock = Callable[[], float]


def next_delay(
    request: ApiRequest, error: AIHCError, attempt: int, max_retries: int
) -> float | None:
    """Seconds to wait before retrying, or ``None`` to give up and raise ``error``."""
    if not request.endpoint.retryable or not is_retryable(error) or attempt >= max_retries:
        return None
    delay = retry_delay(attempt, error)
    log.warning(
        "AIHC %s attempt %d failed (%s); retrying in %.1f s",
        request.endpoint.operation,
        attempt + 1,
        error,
        delay,
    )
    return delay


def decode(
    config: ConnectionConfig,
    request: ApiRequest,
    status: int,
    body: bytes,
    headers: Mapping[str, str],
) -> Any:
    """The decoded result of a 2xx answer; raises the typed error for any other."""
    operation = request.endpoint.operation
    log.debug("AIHC %s %s -> HTTP %d", operation, request.path, status)
    if 200 <= status < 300:
        return unwrap(operation, status, body, headers)
    raise error_from_response(operation, status, body, headers, config.access_key_id)


def send(
    session: requests.Session,
    config: ConnectionConfig,
    request: ApiRequest,
    *,
    clock: Clock = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Send ``request`` with ``requests``, retrying what may be retried."""
    import requests

    attempt = 0
    while True:
        signed = prepare(config, request, clock())
        try:
            try:
                response = session.request(
                    request.endpoint.method,
                    signed.url,
                    data=request.body,
                    headers=signed.headers,
                    timeout=(config.connect_timeout, config.timeout),
                    allow_redirects=False,
                )
            except requests.RequestException as err:
                raise AIHCTransportError(request.endpoint.operation, _describe(err)) from err
            return decode(config, request, response.status_code, response.content, response.headers)
        except AIHCError as err:
            delay = next_delay(request, err, attempt, config.max_retries)
            if delay is None:
                raise
        sleep(delay)
        attempt += 1


async def asend(
    client: AsyncClient,
    config: ConnectionConfig,
    request: ApiRequest,
    *,
    clock: Clock = time.time,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Any:
    """Send ``request`` with the loop's shared client, retrying what may be retried."""
    attempt = 0
    while True:
        signed = prepare(config, request, clock())
        try:
            try:
                response = await client.request(
                    request.endpoint.method,
                    signed.target,
                    signed.headers,
                    request.body,
                )
            except client.errors as err:
                raise AIHCTransportError(request.endpoint.operation, _describe(err)) from err
            return decode(config, request, response.status, response.body, response.headers)
        except AIHCError as err:
            delay = next_delay(request, err, attempt, config.max_retries)
            if delay is None:
                raise
        await sleep(delay)
        attempt += 1


class AsyncClient(Protocol):
    """What :func:`asend` needs of a client: one request, its whole answer."""

    #: The exceptions that mean "no usable answer" (mapped to ``AIHCTransportError``).
    errors: tuple[type[Exception], ...]

    @property
    def is_closed(self) -> bool: ...

    async def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
    ) -> Response: ...

    async def aclose(self) -> None: ...


class _HttpxClient:
    """httpx, for an endpoint reached through a proxy (``HTTPS_PROXY`` and friends)."""

    def __init__(self, config: ConnectionConfig) -> None:
        import httpx

        _quiet_httpx()
        self.base_url = config.base_url
        self.errors: tuple[type[Exception], ...] = (httpx.HTTPError,)
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout, pool=None),
            limits=httpx.Limits(
                max_connections=ASYNC_MAX_CONNECTIONS,
                max_keepalive_connections=ASYNC_MAX_CONNECTIONS,
                keepalive_expiry=KEEPALIVE_SECONDS,
            ),
            follow_redirects=False,
            trust_env=True,
        )
        # httpcore reassigns every waiting request at each step, so a thousand triggers
        # polling at once cost it quadratic CPU: queue them here instead.
        self._gate = asyncio.Semaphore(ASYNC_MAX_CONNECTIONS)

    @property
    def is_closed(self) -> bool:
        return self._client.is_closed

    async def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
    ) -> Response:
        async with self._gate:
            answer = await self._client.request(
                method, self.base_url + target, content=body, headers=headers
            )
        return Response(answer.status_code, dict(answer.headers), answer.content)

    async def aclose(self) -> None:
        await self._client.aclose()


_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[Any, ...], AsyncClient]
] = weakref.WeakKeyDictionary()


def shared_async_client(config: ConnectionConfig) -> AsyncClient:
    """One pooled client per endpoint and event loop, shared by every trigger in the process.

    Triggers come and go; the pool stays, so a thousand watched jobs use a handful of
    keep-alive connections rather than one each.  An endpoint that the environment sends
    through a proxy gets httpx (which speaks to proxies); every other one gets
    :class:`~airflow_provider_aihc.hooks._aio.ConnectionPool`.
    """
    loop = asyncio.get_running_loop()
    key = (config.base_url, config.timeout, config.connect_timeout)
    clients = _CLIENTS.setdefault(loop, {})
    client = clients.get(key)
    if client is None or client.is_closed:
        if uses_proxy(config.base_url):
            client = _HttpxClient(config)
        else:
            client = ConnectionPool(
                config.base_url,
                max_connections=ASYNC_MAX_CONNECTIONS,
                keepalive=KEEPALIVE_SECONDS,
                connect_timeout=config.connect_timeout,
                timeout=config.timeout,
            )
        clients[key] = client
    return client


def uses_proxy(base_url: str) -> bool:
    """Whether the environment (``HTTP(S)_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) sends
    requests to ``base_url`` through a proxy."""
    import urllib.request

    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.netloc)


def _quiet_httpx() -> None:
    """httpx logs every request at INFO: one line per poll per job in a triggerer's log.

    Airflow 3 already sets it to WARNING; do the same on 2.11 unless the user set a level.
    """
    httpx_log = logging.getLogger("httpx")
    if httpx_log.level == logging.NOTSET:
        httpx_log.setLevel(logging.WARNING)


def _describe(err: Exception) -> str:
    """The exception's class and message: URLs only, never headers."""
    text = str(err).strip()
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
