"""A small asyncio HTTP/1.1 client for the triggerer: one keep-alive pool per endpoint.

A triggerer polls a thousand jobs every few seconds, each poll one small GET.  httpx spent
about 1.6 ms of CPU per request here (3-5 ms with many in flight, in httpcore's pool
bookkeeping); this client, an :class:`asyncio.Protocol` that writes one request and parses
one response at a time, spends about a tenth of that.  It does only what the AIHC API
needs: ``http`` and ``https`` (verified against ``SSL_CERT_FILE``/``SSL_CERT_DIR`` or
certifi's bundle), ``Content-Length`` and chunked bodies, keep-alive with an idle expiry,
at most ``max_connections`` sockets with the other requests queued in order.  Proxies are
not its business: the transport hands a proxied endpoint to httpx instead.
"""

from __future__ import annotations

import asyncio
import collections
import os
import ssl
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from urllib.parse import urlsplit

__all__ = ["ConnectionPool", "HTTPProtocolError", "Response"]

#: A response head larger than this is not an API answer.
MAX_HEAD_BYTES = 64 * 1024
_CRLF = b"\r\n"


class HTTPProtocolError(OSError):
    """The server's bytes were not a well-formed HTTP/1.1 response."""


@dataclass(frozen=True, slots=True)
class Response:
    """One answer: the status, the headers (names lower-cased) and the whole body."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Connection(asyncio.Protocol):
    """One socket: sends a request, parses its response, then waits for the next."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._buffer = bytearray()
        self._waiter: asyncio.Future[Response] | None = None
        self._head: tuple[int, dict[str, str]] | None = None
        self._length: int | None = None  # body bytes expected; None: chunked or to EOF
        self._chunked = False
        self._body = bytearray()
        self.keep_alive = True

    # -- asyncio.Protocol ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self.close()  # bytes nobody asked for: this socket cannot be trusted again
            return
        self._buffer += data
        try:
            self._parse()
        except HTTPProtocolError as err:
            self._fail(err)

    def eof_received(self) -> bool:
        self.keep_alive = False
        if self._waiter is not None and not self._waiter.done():
            if self._head is not None and self._length is None and not self._chunked:
                try:
                    self._finish(bytes(self._body))  # a body delimited by the close
                except HTTPProtocolError as err:
                    self._fail(err)
            else:
                self._fail(ConnectionResetError("the server closed the connection mid-answer"))
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.keep_alive = False
        if self._waiter is not None and not self._waiter.done():
            self._fail(exc or ConnectionResetError("the connection was closed"))

    # -- one exchange ----------------------------------------------------------------------

    def send(self, request: bytes) -> asyncio.Future[Response]:
        """Write one request; the future resolves to its response."""
        assert self.transport is not None
        self._waiter = self.loop.create_future()
        self._buffer.clear()
        self._body.clear()
        self._head, self._length, self._chunked = None, None, False
        self.transport.write(request)
        return self._waiter

    def close(self) -> None:
        self.keep_alive = False
        if self.transport is not None and not self.closed:
            self.closed = True
            self.transport.close()

    def usable(self, now: float, keepalive: float) -> bool:
        """Whether an idle connection may carry another request."""
        return self.keep_alive and not self.closed and now - self.idle_since < keepalive

    def _fail(self, error: BaseException) -> None:
        self.close()
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(error)

    def _finish(self, body: bytes) -> None:
        assert self._head is not None
        assert self._waiter is not None
        status, headers = self._head
        encoding = headers.get("content-encoding", "identity").lower()
        if body and encoding in ("gzip", "x-gzip", "deflate"):
            try:
                body = zlib.decompress(body, wbits=47)  # gzip or zlib, by the header
            except zlib.error as err:
                raise HTTPProtocolError(f"undecodable {encoding} body: {err}") from None
        self._waiter.set_result(Response(status, headers, body))

    def _parse(self) -> None:
        if self._head is None and not self._parse_head():
            return
        if self._chunked:
            self._parse_chunks()
        elif self._length is None:
            self._body += self._buffer  # until the server closes
            self._buffer.clear()
        elif len(self._buffer) >= self._length:
            if len(self._buffer) > self._length:
                raise HTTPProtocolError("more bytes than the Content-Length")
            self._finish(bytes(self._buffer))

    def _parse_head(self) -> bool:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise HTTPProtocolError("response head too large")
            return False
        lines = bytes(self._buffer[:end]).decode("latin-1").split("\r\n")
        del self._buffer[: end + 4]
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise HTTPProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(code)
        if 100 <= status < 200:  # an interim answer: the real one follows
            return self._parse_head() if self._buffer else False
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise HTTPProtocolError(f"malformed header line: {line[:80]!r}")
            headers[name.strip().lower()] = value.strip()
        self._head = (status, headers)
        connection = headers.get("connection", "").lower()
        self.keep_alive = version == "HTTP/1.1" and "close" not in connection
        if status in (204, 304):
            self._length = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._chunked = True
        elif "content-length" in headers:
            try:
                self._length = int(headers["content-length"])
            except ValueError:
                raise HTTPProtocolError("malformed Content-Length") from None
        else:
            self.keep_alive = False  # the body ends when the server closes
        return True

    def _parse_chunks(self) -> None:
        while True:
            line_end = self._buffer.find(_CRLF)
            if line_end < 0:
                return
            size_text = bytes(self._buffer[:line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise HTTPProtocolError("malformed chunk size") from None
            if size == 0:
                if self._buffer.find(b"\r\n\r\n", line_end) < 0:
                    return  # the trailer section has not ended yet
                self._finish(bytes(self._body))
                return
            start = line_end + 2
            if len(self._buffer) < start + size + 2:
                return
            self._body += self._buffer[start : start + size]
            del self._buffer[: start + size + 2]


class ConnectionPool:
    """Keep-alive HTTP/1.1 connections to one ``scheme://host:port``, shared by every
    caller on one event loop.

    :param base_url: ``http(s)://host[:port]``.
    :param max_connections: sockets open at once; further requests wait their turn.
    :param keepalive: seconds an idle socket is kept.
    :param connect_timeout: seconds to open a socket (and finish TLS).
    :param timeout: seconds for an answer once its request is written.
    """

    #: Every failure to get an answer: refused, reset, timed out, TLS, malformed.
    errors: tuple[type[Exception], ...] = (OSError,)

    def __init__(
        self,
        base_url: str,
        *,
        max_connections: int,
        keepalive: float,
        connect_timeout: float,
        timeout: float,
    ) -> None:
        parts = urlsplit(base_url)
        self.scheme = parts.scheme
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if self.scheme == "https" else 80)
        self.max_connections = max_connections
        self.keepalive = keepalive
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        self.opened = 0  # sockets opened over the pool's life
        self._open = 0
        self._idle: list[_Connection] = []
        self._waiters: collections.deque[asyncio.Future[_Connection | None]] = collections.deque()
        self._closed = False

    @property
    def is_closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._closed

    async def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
    ) -> Response:
        """Send one request and read its whole answer.  A failure is never retried here
        (the caller knows whether the call may be sent twice); a socket the server closed
        while idle is noticed when it closes, and never reused.

        :param target: the path and query, exactly as signed.
        :param headers: every header to send but ``Content-Length`` (``Host`` included).
        """
        if self._closed:
            raise RuntimeError("the connection pool is closed")
        lines = [f"{method} {target} HTTP/1.1"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        payload = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
        connection = await self._acquire()
        try:
            async with asyncio.timeout(self.timeout):
                return await connection.send(payload)
        except TimeoutError:
            connection.close()
            raise TimeoutError(f"no answer within {self.timeout:g} s") from None
        except BaseException:
            connection.close()  # failed, cancelled or timed out mid-answer: never reuse it
            raise
        finally:
            self._release(connection)

    async def aclose(self) -> None:
        """Close every idle socket; sockets in use close when their answer is read."""
        self._closed = True
        for connection in self._idle:
            connection.close()
        self._idle.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(RuntimeError("the connection pool is closed"))

    async def _acquire(self) -> _Connection:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()  # the most recently used: the least likely stale
            if connection.usable(now, self.keepalive):
                return connection
            connection.close()
            self._open -= 1
        if self._open >= self.max_connections:
            waiter: asyncio.Future[_Connection | None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                handed = await waiter
            except asyncio.CancelledError:
                # A cancelled waiter stays queued: _hand_back skips the done ones.
                if waiter.done() and not waiter.cancelled():
                    self._hand_back(waiter.result())  # handed over as we were cancelled
                raise
            if handed is not None:
                return handed
        else:
            self._open += 1  # a waiter handed ``None`` was given this slot by _release
        try:
            return await self._connect()
        except BaseException:
            self._open -= 1
            self._wake_one()
            raise

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        context = _ssl_context() if self.scheme == "https" else None
        async with asyncio.timeout(self.connect_timeout):
            _, connection = await loop.create_connection(
                lambda: _Connection(loop),
                self.host,
                self.port,
                ssl=context,
                server_hostname=self.host if context else None,
            )
        self.opened += 1
        return connection

    def _release(self, connection: _Connection) -> None:
        if connection.keep_alive and not connection.closed and not self._closed:
            connection.idle_since = time.monotonic()
            self._hand_back(connection)
            return
        connection.close()
        self._open -= 1
        self._wake_one()

    def _hand_back(self, connection: _Connection | None) -> None:
        """Give a free connection to the first live waiter, else keep it idle."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        if connection is not None:
            self._idle.append(connection)
        else:
            self._open -= 1

    def _wake_one(self) -> None:
        """A socket closed: let the first waiter open a new one in its place."""
        if self._waiters and self._open < self.max_connections:
            self._open += 1
            self._hand_back(None)


@cache
def _ssl_context() -> ssl.SSLContext:
    """Verify servers against ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set, else certifi's
    bundle (what ``requests`` uses on the worker side)."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if not cafile and not capath:
        import certifi

        cafile = certifi.where()
    return ssl.create_default_context(cafile=cafile, capath=capath)
