"""The two senders: ``requests`` for workers, the loop's shared ``aiohttp`` session for
triggers.

Both run one attempt the same way (sign afresh with :func:`prepare`, send, read at most
:data:`MAX_ANSWER_BYTES`, decode or map the error) under the same :class:`RetryPolicy`;
only the I/O differs.  The first attempt is made directly; tenacity takes over (with that
failure as its first attempt) only when it failed in a way the policy retries.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
)

from airflow_provider_aihc.exceptions import AIHCError, AIHCTransportError
from airflow_provider_aihc.hooks._connection import ConnectionConfig
from airflow_provider_aihc.hooks._endpoint import ApiRequest
from airflow_provider_aihc.hooks._sessions import Lease, borrowed, requests_verify
from airflow_provider_aihc.hooks._wire import (
    error_from_response,
    is_retryable,
    prepare,
    retry_delay,
    unwrap,
)

if TYPE_CHECKING:
    import requests

log = logging.getLogger(__name__)

#: The most an answer may hold after decompression; AIHC's largest are a few hundred KiB.
MAX_ANSWER_BYTES = 32 * 1024 * 1024
#: Bytes read from ``requests`` at a time (urllib3 decompresses at most this much per read).
READ_CHUNK_BYTES = 64 * 1024
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When a failed call is sent again and how long to wait first, for both senders:
    only endpoints that may be repeated, only :func:`is_retryable` errors, at most
    ``max_retries`` times, waiting :func:`retry_delay` (``Retry-After`` when given).
    The last error is raised as itself.

    :param max_retries: attempts after the first (the connection's extra ``max_retries``).
    """

    max_retries: int

    @staticmethod
    @lru_cache(maxsize=64)
    def of(max_retries: int) -> RetryPolicy:
        """The policy of a connection's ``max_retries`` (one object for both senders)."""
        return RetryPolicy(max_retries)

    # tenacity keeps a call's iteration state on the controller (per thread, not per
    # coroutine): each call that is retried gets its own controller, built from the one
    # policy.  The controller holds its own bound methods (``iter_state.actions``): a
    # reference cycle per call, garbage only the cyclic collector frees.  Built for every
    # call, that was about 30 objects of cyclic garbage per request, at 10,000 triggers
    # what set off the triggerer's full collections (issue #37).  So the first attempt is
    # made without it, and tenacity is entered only once it has failed in a way it may
    # retry (:meth:`retries_after`), as the first of its attempts.

    def retries_after(self, request: ApiRequest, error: BaseException) -> bool:
        """Whether a first attempt that failed with ``error`` is sent again."""
        return self.max_retries > 0 and _may_retry(request, error)

    def retrying(self, request: ApiRequest, sleep: Callable[[float], None]) -> Retrying:
        """The policy for one sync call."""
        return Retrying(sleep=sleep, **self._rules(request))

    def aretrying(
        self, request: ApiRequest, sleep: Callable[[float], Awaitable[None]]
    ) -> AsyncRetrying:
        """The policy for one async call."""
        return AsyncRetrying(sleep=sleep, **self._rules(request))

    def _rules(self, request: ApiRequest) -> dict[str, Any]:
        return {
            "retry": retry_if_exception(partial(_may_retry, request)),
            "stop": stop_after_attempt(self.max_retries + 1),
            "wait": _wait,
            "before_sleep": partial(_log_retry, request),
            "reraise": True,
        }


def _may_retry(request: ApiRequest, error: BaseException) -> bool:
    return request.endpoint.retryable and isinstance(error, AIHCError) and is_retryable(error)


def _wait(state: RetryCallState) -> float:
    error = state.outcome.exception() if state.outcome else None
    assert isinstance(error, AIHCError)  # _may_retry let only these through
    return retry_delay(state.attempt_number - 1, error)


def _log_retry(request: ApiRequest, state: RetryCallState) -> None:
    log.warning(
        "AIHC %s attempt %d failed (%s); retrying in %.1f s",
        request.endpoint.operation,
        state.attempt_number,
        state.outcome.exception() if state.outcome else None,
        state.upcoming_sleep,
    )


def decode(
    config: ConnectionConfig,
    request: ApiRequest,
    status: int,
    body: bytes,
    headers: Mapping[str, str],
) -> Any:
    """The decoded result of a 2xx answer (typed, when the request's
    :attr:`~ApiRequest.read` reads it); raises the typed error for any other."""
    operation = request.endpoint.operation
    log.debug("AIHC %s %s -> HTTP %d", operation, request.path, status)
    if 200 <= status < 300:
        typed = request.read(body) if request.read is not None else None
        return typed if typed is not None else unwrap(operation, status, body, headers)
    raise error_from_response(operation, status, body, headers, config.access_key_id)


def send(
    session: requests.Session,
    config: ConnectionConfig,
    request: ApiRequest,
    *,
    clock: Clock = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Send ``request`` with ``requests``, retrying what :class:`RetryPolicy` allows."""
    import requests

    def attempt() -> Any:
        signed = prepare(config, request, clock())
        try:
            with session.request(
                request.endpoint.method,
                signed.url,
                data=request.body,
                headers=signed.headers,
                timeout=(config.connect_timeout, config.timeout),
                allow_redirects=False,
                stream=True,
                verify=requests_verify(),
                auth=_keep_signature,  # else requests puts ~/.netrc's login over ours
            ) as response:
                chunks = response.iter_content(READ_CHUNK_BYTES)
                body = read_capped(request, chunks)
        except requests.RequestException as err:
            raise AIHCTransportError(request.endpoint.operation, _describe(err)) from err
        return decode(config, request, response.status_code, body, response.headers)

    policy = RetryPolicy.of(config.max_retries)
    try:
        return attempt()
    except AIHCError as err:
        if not policy.retries_after(request, err):
            raise
        first = err
    return policy.retrying(request, sleep)(_failed_first(first, attempt))


async def asend(
    conn_id: str,
    config: ConnectionConfig,
    request: ApiRequest,
    *,
    clock: Clock = time.time,
    sleep: Callable[[float], Awaitable[None]],
) -> Any:
    """Send ``request`` over the running loop's session of ``conn_id``, retrying what
    :class:`RetryPolicy` allows."""
    async with borrowed(conn_id, config.base_url) as lease:  # (aiohttp is loaded by now)
        policy = RetryPolicy.of(config.max_retries)
        try:
            return await _aattempt(lease, config, request, clock)
        except AIHCError as err:
            if not policy.retries_after(request, err):
                raise
            first = err
        retrying = policy.aretrying(request, sleep)
        return await retrying(_afailed_first(first, _aattempt), lease, config, request, clock)


def _failed_first(first: AIHCError, attempt: Callable[..., Any]) -> Callable[..., Any]:
    """``attempt`` for tenacity after a first attempt failed outside it: its attempt 1
    raises that failure (so its wait, log and count are tenacity's, as if it had made
    it), the next ones are made."""
    failures = [first]

    def again(*args: Any) -> Any:
        if failures:
            raise failures.pop()
        return attempt(*args)

    return again


def _afailed_first(
    first: AIHCError, attempt: Callable[..., Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    """Async :func:`_failed_first`."""
    failures = [first]

    async def again(*args: Any) -> Any:
        if failures:
            raise failures.pop()
        return await attempt(*args)

    return again


async def _aattempt(
    lease: Lease, config: ConnectionConfig, request: ApiRequest, clock: Clock
) -> Any:
    import aiohttp
    from yarl import URL

    signed = prepare(config, request, clock())
    timeout = aiohttp.ClientTimeout(
        total=None, sock_connect=config.connect_timeout, sock_read=config.timeout
    )
    try:
        async with lease.http.request(
            request.endpoint.method,
            URL(signed.url, encoded=True),  # exactly the path and query that were signed
            data=request.body,
            headers=signed.headers,
            timeout=timeout,
            allow_redirects=False,
            proxy=lease.proxy,
            proxy_auth=lease.proxy_auth,
        ) as response:
            body = await aread_capped(request, response.content.iter_any())
    except (aiohttp.ClientError, TimeoutError) as err:
        raise AIHCTransportError(request.endpoint.operation, _describe(err)) from err
    return decode(config, request, response.status, body, response.headers)


def read_capped(request: ApiRequest, chunks: Iterable[bytes]) -> bytes:
    """The whole body from ``chunks``, refused as soon as it passes :data:`MAX_ANSWER_BYTES`.

    :raises AIHCTransportError: the answer is larger than the cap.
    """
    body = bytearray()
    for chunk in chunks:
        _append_capped(request, body, chunk)
    return bytes(body)


async def aread_capped(request: ApiRequest, chunks: AsyncIterable[bytes]) -> bytes:
    """Async :func:`read_capped`."""
    body = bytearray()
    async for chunk in chunks:
        _append_capped(request, body, chunk)
    return bytes(body)


def _append_capped(request: ApiRequest, body: bytearray, chunk: bytes) -> None:
    if len(body) + len(chunk) > MAX_ANSWER_BYTES:
        reason = f"the answer is larger than {MAX_ANSWER_BYTES} bytes; it was not read"
        raise AIHCTransportError(request.endpoint.operation, reason)
    body += chunk


def _keep_signature(prepared: requests.PreparedRequest) -> requests.PreparedRequest:
    """The ``auth`` of every sync request: it is signed already, leave it as it is."""
    return prepared


def _describe(err: BaseException) -> str:
    """The exception's class and message: URLs only, never headers (``requests`` quotes a
    refused header's value, which may be a token: only its class is kept)."""
    if type(err).__name__ == "InvalidHeader":
        return "InvalidHeader: a header value was refused (check the connection's fields)"
    text = str(err).strip()
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
