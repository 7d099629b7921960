"""``ConnectionPool`` over real sockets, against tiny asyncio servers that answer with
hand-written bytes: parsing, keep-alive, expiry, the queue, failures, cancellation, TLS,
and the proxy switch of ``shared_async_client``."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import re
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from airflow_provider_aihc.hooks._aio import (
    ConnectionPool,
    HTTPProtocolError,
    Response,
    _ssl_context,
)
from airflow_provider_aihc.hooks._base import ApiRequest, ConnectionConfig, Endpoint
from airflow_provider_aihc.hooks._transport import (
    _HttpxClient,
    asend,
    shared_async_client,
    uses_proxy,
)

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
OK_CLOSE = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"
HOST = {"Host": "aihc.test"}
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


# -- servers ---------------------------------------------------------------------------------


@dataclass
class Server:
    """What a test server saw: connections and the requests read."""

    url: str = ""
    port: int = 0
    accepted: int = 0
    open: int = 0
    max_open: int = 0
    eofs: int = 0  # connections the client closed while the server waited for a request
    requests: list[bytes] = field(default_factory=list)

    def paths(self) -> list[str]:
        """The request targets, in the order they were read."""
        return [request.split(b" ", 2)[1].decode() for request in self.requests]


@dataclass
class Conn:
    """One accepted connection, handed to a handler."""

    server: Server
    index: int  # 1 for the first connection the server accepted
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def read_request(self) -> bytes | None:
        """The next request (head and body), or ``None`` when the client closed."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            self.server.eofs += 1
            return None
        request = head + await self.reader.readexactly(content_length(head))
        self.server.requests.append(request)
        return request

    async def write(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def dribble(self, data: bytes) -> None:
        """Write ``data`` one byte per TCP segment."""
        for i in range(len(data)):
            await self.write(data[i : i + 1])
            await asyncio.sleep(0.001)


Handler = Callable[[Conn], Awaitable[None]]


def content_length(head: bytes) -> int:
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return int(match[1]) if match else 0


@asynccontextmanager
async def serve(
    handler: Handler, *, ssl_context: ssl.SSLContext | None = None, port: int = 0
) -> AsyncIterator[Server]:
    """Run ``handler`` for every connection to a server on 127.0.0.1; yield its record."""
    state = Server()
    tasks: set[asyncio.Task[Any]] = set()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        state.accepted += 1
        state.open += 1
        state.max_open = max(state.max_open, state.open)
        try:
            await handler(Conn(state, state.accepted, reader, writer))
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went away, or the test ended
        finally:
            state.open -= 1
            writer.close()
            tasks.discard(task)

    server = await asyncio.start_server(on_connect, "127.0.0.1", port, ssl=ssl_context)
    state.port = server.sockets[0].getsockname()[1]
    state.url = f"{'https' if ssl_context else 'http'}://127.0.0.1:{state.port}"
    try:
        yield state
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


def answering(*answers: bytes, hold: float = 0.0, dribble: bool = False) -> Handler:
    """Answer the server's n-th request with ``answers[n]`` (the last one repeats) after
    ``hold`` seconds, on every connection until the client closes it."""

    async def handler(conn: Conn) -> None:
        while await conn.read_request() is not None:
            answer = answers[min(len(conn.server.requests), len(answers)) - 1]
            await asyncio.sleep(hold)
            await (conn.dribble(answer) if dribble else conn.write(answer))

    return handler


def first_connection(special: Handler) -> Handler:
    """``special`` on the first connection, ``OK`` to every request on the others."""

    async def handler(conn: Conn) -> None:
        await (special if conn.index == 1 else answering(OK))(conn)

    return handler


def echo_path(hold: float) -> Handler:
    """Answer every request, after ``hold`` seconds, with its target as the body."""

    async def handler(conn: Conn) -> None:
        while (request := await conn.read_request()) is not None:
            await asyncio.sleep(hold)
            path = request.split(b" ", 2)[1]
            await conn.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(path), path))

    return handler


def gated(release: asyncio.Event, answer: bytes = OK) -> Handler:
    """Answer ``answer`` to each request once ``release`` is set."""

    async def handler(conn: Conn) -> None:
        while await conn.read_request() is not None:
            await release.wait()
            await conn.write(answer)

    return handler


async def eventually(condition: Callable[[], bool], within: float = 3.0) -> None:
    """Wait until ``condition()`` holds; fail after ``within`` seconds."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.005)


async def turn_until(condition: Callable[[], bool], turns: int = 10_000) -> None:
    """Yield one event-loop turn at a time until ``condition()`` holds, so the caller runs
    in the very turn after the change (before callbacks it scheduled)."""
    for _ in range(turns):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


# -- pools -----------------------------------------------------------------------------------

PoolFactory = Callable[..., ConnectionPool]


@pytest.fixture
async def make_pool() -> AsyncIterator[PoolFactory]:
    """Build pools (closed at the end); keyword arguments override the defaults."""
    made: list[ConnectionPool] = []

    def make(url: str, **overrides: float) -> ConnectionPool:
        settings: dict[str, Any] = {
            "max_connections": 4,
            "keepalive": 30.0,
            "connect_timeout": 3.0,
            "timeout": 3.0,
        }
        settings.update(overrides)
        made.append(ConnectionPool(url, **settings))
        return made[-1]

    yield make
    for pool in made:
        await pool.aclose()


async def get(pool: ConnectionPool, path: str = "/") -> Response:
    """One GET; a pool that lost its slots would hang here, so bound the wait."""
    async with asyncio.timeout(5):
        return await pool.request("GET", path, HOST, None)


def assert_no_leak(pool: ConnectionPool) -> None:
    """Every counted socket is an idle one, and nobody waits (a cancelled waiter may stay
    queued until the next hand-over skips it)."""
    assert pool._open == len(pool._idle)
    assert all(waiter.done() for waiter in pool._waiters)


async def assert_recovers(pool: ConnectionPool, server: Server) -> None:
    """After a failure on the first socket, the next request gets ``OK`` on a new one."""
    assert_no_leak(pool)
    response = await get(pool)
    assert (response.status, response.body) == (200, b"ok")
    assert server.accepted == 2
    assert pool._open == len(pool._idle) == 1


# -- 1. parsing ------------------------------------------------------------------------------


async def test_content_length_body_and_request_bytes(make_pool: PoolFactory) -> None:
    answer = (
        b"HTTP/1.1 201 Created\r\nX-Bce-Request-Id: r-1\r\nContent-Length: 11\r\n\r\nhello world"
    )
    async with serve(answering(answer)) as server:
        pool = make_pool(server.url)
        posted = await pool.request("POST", "/api/v1/aijobs?a=1", HOST, b'{"x":1}')
        got = await pool.request("GET", "/api/v1/aijobs/j-1", HOST, None)
    assert posted == Response(
        201, {"x-bce-request-id": "r-1", "content-length": "11"}, b"hello world"
    )
    assert got.body == b"hello world"
    post, get_ = server.requests
    assert post.startswith(b"POST /api/v1/aijobs?a=1 HTTP/1.1\r\nHost: aihc.test\r\n")
    assert post.endswith(b'Content-Length: 7\r\n\r\n{"x":1}')
    assert get_ == b"GET /api/v1/aijobs/j-1 HTTP/1.1\r\nHost: aihc.test\r\n\r\n"


CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;name=value\r\nhello\r\n1\r\n \r\nB\r\nchunked wor\r\n2\r\nld\r\n"
    b"0\r\nX-Trailer: yes\r\n\r\n"
)


async def test_chunked_body_with_extension_and_trailer(make_pool: PoolFactory) -> None:
    async with serve(answering(CHUNKED, OK)) as server:
        pool = make_pool(server.url)
        first = await get(pool)
        second = await get(pool)  # the trailer was consumed: the socket is clean
    assert first.body == b"hello chunked world"
    assert first.headers == {"transfer-encoding": "chunked"}
    assert second.body == b"ok"
    assert server.accepted == pool.opened == 1


def _chunked(body: bytes, size: int) -> bytes:
    chunks = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"


PAYLOAD = b'{"result": {"jobId": "j-1", "status": "Running"}}' * 20


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
        % (len(gzip.compress(PAYLOAD)), gzip.compress(PAYLOAD)),
        b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n"
        + _chunked(zlib.compress(PAYLOAD), 100),
    ],
    ids=["gzip-content-length", "deflate-chunked"],
)
async def test_compressed_body_is_decoded(make_pool: PoolFactory, answer: bytes) -> None:
    async with serve(answering(answer)) as server:
        response = await get(make_pool(server.url))
    assert response.body == PAYLOAD


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n",  # no body, whatever it says
    ],
    ids=["204", "304-with-length"],
)
async def test_bodiless_status_does_not_wait_for_a_body(
    make_pool: PoolFactory, answer: bytes
) -> None:
    async with serve(answering(answer, OK)) as server:
        pool = make_pool(server.url, timeout=1.0)
        empty = await get(pool)
        after = await get(pool)
    assert (empty.status, empty.body) == (int(answer[9:12]), b"")
    assert after.body == b"ok"
    assert server.accepted == 1


async def _interim_then_final(conn: Conn) -> None:
    while await conn.read_request() is not None:
        await conn.write(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n")
        await asyncio.sleep(0.02)
        await conn.write(b"HTTP/1.1 100 Continue\r\n\r\n" + OK)


async def test_interim_answers_are_skipped(make_pool: PoolFactory) -> None:
    async with serve(_interim_then_final) as server:
        pool = make_pool(server.url)
        first = await get(pool)
        second = await get(pool)
    assert first == second == Response(200, {"content-length": "2"}, b"ok")
    assert server.accepted == 1


@pytest.mark.parametrize(
    ("answer", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"hello"),
        (CHUNKED, b"hello chunked world"),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", b"hi"),
    ],
    ids=["content-length", "chunked", "interim"],
)
async def test_answer_written_byte_by_byte(
    make_pool: PoolFactory, answer: bytes, body: bytes
) -> None:
    async with serve(answering(answer, dribble=True)) as server:
        pool = make_pool(server.url)
        first = await get(pool)
        second = await get(pool)
    assert first.status == 200
    assert first.body == second.body == body
    assert server.accepted == 1


async def test_head_split_inside_its_terminator(make_pool: PoolFactory) -> None:
    answer = b"HTTP/1.1 200 OK\r\nX-Part: two\r\nContent-Length: 4\r\n\r\nbody"
    cut = answer.index(b"\r\n\r\n") + 3

    async def handler(conn: Conn) -> None:
        while await conn.read_request() is not None:
            await conn.write(answer[:cut])
            await asyncio.sleep(0.05)
            await conn.write(answer[cut:])

    async with serve(handler) as server:
        response = await get(make_pool(server.url))
    assert response == Response(200, {"x-part": "two", "content-length": "4"}, b"body")


# -- 2. keep-alive ---------------------------------------------------------------------------


async def test_sequential_requests_share_one_socket(make_pool: PoolFactory) -> None:
    async with serve(echo_path(0)) as server:
        pool = make_pool(server.url)
        bodies = [(await get(pool, f"/{i}")).body for i in range(5)]
        assert_no_leak(pool)
        assert pool._open == 1
    assert bodies == [b"/0", b"/1", b"/2", b"/3", b"/4"]
    assert server.accepted == pool.opened == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ],
    ids=["connection-close", "http-1.0"],
)
async def test_answer_that_ends_the_connection(make_pool: PoolFactory, answer: bytes) -> None:
    async with serve(answering(answer)) as server:  # the server itself would keep it open
        pool = make_pool(server.url)
        for _ in range(3):
            assert (await get(pool)).body == b"ok"
        assert server.accepted == pool.opened == 3
        assert pool._open == 0
        await eventually(lambda: server.eofs == 3)  # the client closed each one


async def test_body_delimited_by_close_is_read_whole(make_pool: PoolFactory) -> None:
    async def handler(conn: Conn) -> None:
        if await conn.read_request() is None:
            return
        await conn.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst ")
        for part in (b"second ", b"third"):
            await asyncio.sleep(0.02)
            await conn.write(part)

    async with serve(first_connection(handler)) as server:
        pool = make_pool(server.url)
        response = await get(pool)
        assert response.body == b"first second third"
        assert pool._open == 0
        assert (await get(pool)).body == b"ok"
    assert server.accepted == 2


# -- 3. idle expiry --------------------------------------------------------------------------


async def test_idle_socket_expires(make_pool: PoolFactory) -> None:
    async with serve(answering(OK)) as server:
        pool = make_pool(server.url, keepalive=0.05)
        await get(pool)
        await get(pool)  # within the keep-alive: reused
        assert server.accepted == 1
        await asyncio.sleep(0.1)
        await get(pool)
        assert server.accepted == pool.opened == 2
        await eventually(lambda: server.eofs == 1)  # the expired one was closed
        assert_no_leak(pool)
        assert pool._open == 1


async def test_socket_the_server_closed_while_idle_is_not_reused(make_pool: PoolFactory) -> None:
    async def answer_once(conn: Conn) -> None:
        if await conn.read_request() is not None:
            await conn.write(OK)  # then close, as a server's idle timeout would

    async with serve(first_connection(answer_once)) as server:
        pool = make_pool(server.url, max_connections=1)
        await get(pool)
        await eventually(lambda: all(c.closed for c in pool._idle))
        assert (await get(pool)).body == b"ok"
        assert server.accepted == pool.opened == 2
        assert pool._open == len(pool._idle) == 1


async def test_socket_that_sent_unasked_bytes_is_not_reused(make_pool: PoolFactory) -> None:
    async def chatty(conn: Conn) -> None:
        if await conn.read_request() is not None:
            await conn.write(OK)
            await asyncio.sleep(0.02)
            await conn.write(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
            await conn.read_request()  # keeps the socket open; returns when the client closes

    async with serve(first_connection(chatty)) as server:
        pool = make_pool(server.url, max_connections=1)
        await get(pool)
        await eventually(lambda: server.eofs == 1)  # the client dropped it on its own
        assert (await get(pool)).body == b"ok"
        assert server.accepted == pool.opened == 2
        assert pool._open == len(pool._idle) == 1


# -- 4. concurrency --------------------------------------------------------------------------


async def test_at_most_max_connections_sockets(make_pool: PoolFactory) -> None:
    async with serve(echo_path(0.03)) as server:
        pool = make_pool(server.url, max_connections=2)
        bodies = await asyncio.gather(*(get(pool, f"/{i}") for i in range(10)))
        assert_no_leak(pool)
    assert [r.body for r in bodies] == [f"/{i}".encode() for i in range(10)]
    assert sorted(server.paths()) == sorted(f"/{i}" for i in range(10))
    assert server.max_open == server.accepted == pool.opened == 2
    assert pool._open == 2


async def test_queued_requests_get_the_slot_of_a_dropped_socket(make_pool: PoolFactory) -> None:
    async def close_each(conn: Conn) -> None:
        while (request := await conn.read_request()) is not None:
            await asyncio.sleep(0.01)
            path = request.split(b" ", 2)[1]
            await conn.write(
                b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                % (len(path), path)
            )

    async with serve(close_each) as server:
        pool = make_pool(server.url, max_connections=1)
        answers = await asyncio.gather(*(get(pool, f"/{i}") for i in range(4)))
    assert [a.body for a in answers] == [b"/0", b"/1", b"/2", b"/3"]
    assert server.paths() == ["/0", "/1", "/2", "/3"]
    assert server.accepted == pool.opened == 4
    assert pool._open == 0
    assert not pool._waiters


async def test_queued_requests_survive_a_failed_one(make_pool: PoolFactory) -> None:
    async with serve(answering(b"garbage\r\n\r\n", OK, hold=0.01)) as server:
        pool = make_pool(server.url, max_connections=1)
        results = await asyncio.gather(
            *(get(pool, f"/{i}") for i in range(4)), return_exceptions=True
        )
    assert isinstance(results[0], HTTPProtocolError)
    assert [r.body for r in results[1:] if isinstance(r, Response)] == [b"ok"] * 3
    assert server.accepted == 2
    assert_no_leak(pool)
    assert pool._open == 1


async def test_queued_requests_go_in_order(make_pool: PoolFactory) -> None:
    async with serve(echo_path(0.01)) as server:
        pool = make_pool(server.url, max_connections=1)
        tasks = [asyncio.create_task(get(pool, f"/{i}")) for i in range(6)]
        await asyncio.gather(*tasks)
    assert server.paths() == [f"/{i}" for i in range(6)]
    assert server.accepted == 1


# -- 5. failures -----------------------------------------------------------------------------


async def test_timeout_names_it_and_drops_the_socket(make_pool: PoolFactory) -> None:
    async def silent(conn: Conn) -> None:
        await conn.read_request()
        await conn.read_request()  # never answers; returns when the client closes

    async with serve(first_connection(silent)) as server:
        pool = make_pool(server.url, max_connections=1, timeout=0.2)
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=r"no answer within 0\.2 s"):
            await get(pool)
        assert 0.15 < time.monotonic() - started < 2.0
        await eventually(lambda: server.eofs == 1)  # the client closed that socket
        await assert_recovers(pool, server)


async def test_server_closing_mid_body(make_pool: PoolFactory) -> None:
    async def half(conn: Conn) -> None:
        if await conn.read_request() is not None:
            await conn.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")

    async with serve(first_connection(half)) as server:
        pool = make_pool(server.url, max_connections=1)
        with pytest.raises(ConnectionResetError, match="mid-answer") as raised:
            await get(pool)
        assert isinstance(raised.value, OSError)
        await assert_recovers(pool, server)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"SPAM 200 OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", "status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", "more bytes"),
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 70_000, "too large"),
    ],
    ids=["garbage", "status-code", "header", "length", "chunk", "extra-bytes", "huge-head"],
)
async def test_malformed_answer(make_pool: PoolFactory, answer: bytes, message: str) -> None:
    async with serve(answering(answer, OK)) as server:
        pool = make_pool(server.url, max_connections=1)
        with pytest.raises(HTTPProtocolError, match=message):
            await get(pool)
        await assert_recovers(pool, server)


async def test_connection_refused_then_served(make_pool: PoolFactory) -> None:
    async with serve(answering(OK)) as gone:
        port = gone.port
    pool = make_pool(f"http://127.0.0.1:{port}", max_connections=1)
    with pytest.raises(ConnectionRefusedError):
        await get(pool)
    results = await asyncio.gather(*(get(pool) for _ in range(3)), return_exceptions=True)
    assert [type(r) for r in results] == [ConnectionRefusedError] * 3  # none left waiting
    assert pool._open == 0
    assert pool.opened == 0
    async with serve(answering(OK), port=port) as server:
        assert (await get(pool)).body == b"ok"
    assert server.accepted == 1
    assert pool._open == len(pool._idle) == 1


# -- 6. cancellation -------------------------------------------------------------------------


async def hold_one_queue_one(
    pool: ConnectionPool, server: Server
) -> tuple[asyncio.Task[Response], asyncio.Task[Response]]:
    """With one slot: a request the server holds (``/held``), and one queued behind it."""
    holder = asyncio.create_task(get(pool, "/held"))
    await eventually(lambda: server.paths() == ["/held"])
    queued = asyncio.create_task(get(pool, "/queued"))
    await eventually(lambda: len(pool._waiters) == 1)
    return holder, queued


@pytest.mark.parametrize(("answer", "sockets"), [(OK, 1), (OK_CLOSE, 2)], ids=["kept", "dropped"])
async def test_cancelling_a_queued_request(
    make_pool: PoolFactory, answer: bytes, sockets: int
) -> None:
    """The slot the cancelled request waited for is not lost, whether the holder's socket
    is kept or dropped (and the cancelled waiter skipped when the slot is passed on)."""
    release = asyncio.Event()
    async with serve(gated(release, answer)) as server:
        pool = make_pool(server.url, max_connections=1)
        holder, queued = await hold_one_queue_one(pool, server)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        assert all(waiter.done() for waiter in pool._waiters)  # no live waiter is left
        release.set()
        assert (await holder).body == b"ok"
        assert_no_leak(pool)
        assert (await get(pool, "/after")).body == b"ok"
        assert server.paths() == ["/held", "/after"]
        assert server.accepted == sockets
        assert pool._open == len(pool._idle) == (answer == OK)


@pytest.mark.parametrize(
    ("answer", "sockets"), [(OK, 1), (OK_CLOSE, 2)], ids=["socket", "free-slot"]
)
async def test_cancelling_a_request_just_handed_a_socket(
    make_pool: PoolFactory, answer: bytes, sockets: int
) -> None:
    """Cancelled after it was handed the live socket (or the slot of a dropped one) but
    before it ran: what it was handed goes back to the pool."""
    release = asyncio.Event()
    async with serve(gated(release, answer)) as server:
        pool = make_pool(server.url, max_connections=1)
        holder, queued = await hold_one_queue_one(pool, server)
        waiter = pool._waiters[0]
        release.set()
        await turn_until(waiter.done)
        assert (waiter.result() is not None) is (answer == OK)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        assert (await holder).body == b"ok"
        assert_no_leak(pool)
        assert pool._open == (answer == OK)
        assert (await get(pool, "/after")).body == b"ok"
    assert server.paths() == ["/held", "/after"]
    assert server.accepted == sockets


async def test_cancelling_mid_answer(make_pool: PoolFactory) -> None:
    head_sent = asyncio.Event()

    async def stall(conn: Conn) -> None:
        if await conn.read_request() is not None:
            await conn.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel")
            head_sent.set()
            await conn.read_request()  # returns when the client closes

    async with serve(first_connection(stall)) as server:
        pool = make_pool(server.url, max_connections=1)
        task = asyncio.create_task(get(pool))
        await head_sent.wait()
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await eventually(lambda: server.eofs == 1)  # that socket was closed, not reused
        await assert_recovers(pool, server)


async def test_cancel_racing_the_release(make_pool: PoolFactory) -> None:
    """A queued request cancelled after the busy socket's answer arrived, before its task
    released the socket: CancelledError (it was ValueError before 5e96ebf)."""
    release = asyncio.Event()
    async with serve(gated(release)) as server:
        pool = make_pool(server.url, max_connections=1)
        release.set()
        await get(pool)
        release.clear()
        connection = pool._idle[0]
        answered = connection._waiter
        holder = asyncio.create_task(get(pool, "/held"))
        await eventually(lambda: connection._waiter is not answered)
        queued = asyncio.create_task(get(pool, "/queued"))
        await eventually(lambda: len(pool._waiters) == 1)
        release.set()
        # Step once per loop turn: we run right after the answer is parsed, before `holder`.
        await turn_until(lambda: connection._waiter is not None and connection._waiter.done())
        assert not holder.done()
        queued.cancel()
        assert (await holder).body == b"ok"
        with pytest.raises(asyncio.CancelledError):
            await queued
        assert_no_leak(pool)
        assert (await get(pool, "/after")).body == b"ok"
        assert pool._open == len(pool._idle) == 1
    assert server.paths() == ["/", "/held", "/after"]
    assert server.accepted == 1


async def test_cancel_then_aclose(make_pool: PoolFactory) -> None:
    """A queued request cancelled just before ``aclose()``: CancelledError (it was
    ValueError before 5e96ebf); the request in flight still gets its answer."""
    release = asyncio.Event()
    async with serve(gated(release)) as server:
        pool = make_pool(server.url, max_connections=1)
        holder, queued = await hold_one_queue_one(pool, server)
        queued.cancel()
        await pool.aclose()
        release.set()
        assert (await holder).body == b"ok"
        with pytest.raises(asyncio.CancelledError):
            await queued
        assert not pool._waiters
        assert pool._open == 0


# -- 7. aclose -------------------------------------------------------------------------------


async def test_aclose_closes_idle_sockets_and_refuses_requests(make_pool: PoolFactory) -> None:
    async with serve(echo_path(0.03)) as server:
        pool = make_pool(server.url, max_connections=2)
        await asyncio.gather(get(pool, "/a"), get(pool, "/b"))
        assert len(pool._idle) == 2
        assert server.eofs == 0
        await pool.aclose()
        assert pool.is_closed
        await eventually(lambda: server.eofs == 2)
        with pytest.raises(RuntimeError, match="closed"):
            await get(pool)
    assert server.accepted == 2


async def test_aclose_fails_waiters_and_closes_busy_socket_after_answer(
    make_pool: PoolFactory,
) -> None:
    release = asyncio.Event()
    async with serve(gated(release)) as server:
        pool = make_pool(server.url, max_connections=1)
        holder, queued = await hold_one_queue_one(pool, server)
        await pool.aclose()
        with pytest.raises(RuntimeError, match="closed"):
            await queued
        release.set()
        assert (await holder).body == b"ok"  # the answer in flight is still read
        await eventually(lambda: server.eofs == 1)  # then its socket is closed
        assert not pool._idle
    assert server.paths() == ["/held"]


# -- 8. TLS ----------------------------------------------------------------------------------


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@pytest.fixture
def tls_server_context(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[ssl.SSLContext]:
    """The server side of TLS; no CA variables set, and a fresh client context."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    _ssl_context.cache_clear()
    yield context
    _ssl_context.cache_clear()


async def test_https_verified_against_ssl_cert_file(
    make_pool: PoolFactory,
    tls_server_context: ssl.SSLContext,
    certificate: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    async with serve(answering(OK), ssl_context=tls_server_context) as server:
        pool = make_pool(f"https://localhost:{server.port}")
        assert (await get(pool)).body == b"ok"
        assert (await get(pool)).body == b"ok"
    assert server.requests[0].startswith(b"GET / HTTP/1.1\r\n")
    assert server.accepted == pool.opened == 1


async def test_https_with_an_unknown_issuer_fails(
    make_pool: PoolFactory,
    tls_server_context: ssl.SSLContext,
    certificate: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with serve(answering(OK), ssl_context=tls_server_context) as server:
        pool = make_pool(f"https://localhost:{server.port}", max_connections=1)
        with pytest.raises(ssl.SSLError, match="certificate verify failed"):
            await get(pool)  # checked against certifi's bundle
        assert pool._open == 0
        assert not server.requests
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        _ssl_context.cache_clear()
        assert (await get(pool)).body == b"ok"  # the same pool, now trusting the cert
        assert pool._open == len(pool._idle) == 1


# -- 9. proxies ------------------------------------------------------------------------------


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy variable in either case; returns ``monkeypatch`` to set some."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


PROXY = "http://proxy.internal:3128"
API = "https://aihc.bj.baidubce.com"


@pytest.mark.parametrize(
    ("env", "base_url", "expected"),
    [
        ({}, API, False),
        ({"HTTPS_PROXY": PROXY}, API, True),
        ({"https_proxy": PROXY}, API, True),
        ({"HTTPS_PROXY": PROXY}, "http://aihc.bj.baidubce.com", False),
        ({"HTTP_PROXY": PROXY}, "http://aihc.bj.baidubce.com", True),
        ({"HTTP_PROXY": PROXY}, API, False),
        ({"ALL_PROXY": PROXY}, API, True),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "baidubce.com"}, API, False),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "other.com, .baidubce.com"}, API, False),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "aihc.bj.baidubce.com"}, API + ":8443", False),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "*"}, API, False),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "other.com"}, API, True),
        ({"ALL_PROXY": PROXY, "no_proxy": "127.0.0.1"}, "http://127.0.0.1:8080", False),
    ],
)
def test_uses_proxy(
    no_proxy_env: pytest.MonkeyPatch, env: dict[str, str], base_url: str, expected: bool
) -> None:
    for name, value in env.items():
        no_proxy_env.setenv(name, value)
    assert uses_proxy(base_url) is expected


def _config(base_url: str) -> ConnectionConfig:
    return ConnectionConfig(base_url, "ak", "sk", timeout=3.0, connect_timeout=3.0)


async def test_shared_client_is_the_pool_unless_proxied(no_proxy_env: pytest.MonkeyPatch) -> None:
    config = _config("http://127.0.0.1:9")
    pool = shared_async_client(config)
    assert isinstance(pool, ConnectionPool)
    assert shared_async_client(config) is pool
    await pool.aclose()
    no_proxy_env.setenv("HTTP_PROXY", PROXY)
    proxied = shared_async_client(config)  # the closed one is replaced
    assert isinstance(proxied, _HttpxClient)
    assert shared_async_client(config) is proxied
    await proxied.aclose()


async def forward_proxy(conn: Conn) -> None:
    """An HTTP forward proxy: read an absolute-form request, relay it, relay the answer."""
    while (request := await conn.read_request()) is not None:
        line, _, rest = request.partition(b"\r\n")
        method, url, version = line.split(b" ")
        parts = urlsplit(url.decode())
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            writer.write(b"%s %s %s\r\n%s" % (method, target.encode(), version, rest))
            head = await reader.readuntil(b"\r\n\r\n")
            answer = head + await reader.readexactly(content_length(head))
        finally:
            writer.close()
        await conn.write(answer)


JOB = b'{"result": {"jobId": "j-1"}}'
GET_JOB = ApiRequest(Endpoint("GetJob", "GET", "/api/v1/aijobs/{job_id}"), "/api/v1/aijobs/j-1")


async def test_asend_through_a_forward_proxy(no_proxy_env: pytest.MonkeyPatch) -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(JOB), JOB)
    async with serve(answering(answer)) as api, serve(forward_proxy) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        client = shared_async_client(_config(api.url))
        try:
            assert isinstance(client, _HttpxClient)
            assert await asend(client, _config(api.url), GET_JOB) == {"jobId": "j-1"}
        finally:
            await client.aclose()
    assert proxy.requests[0].startswith(f"GET {api.url}/api/v1/aijobs/j-1 HTTP/1.1\r\n".encode())
    assert api.requests[0].startswith(b"GET /api/v1/aijobs/j-1 HTTP/1.1\r\n")
    assert b"\r\nAuthorization: bce-auth-v1/ak/" in api.requests[0]


async def test_asend_over_the_pool_skips_the_proxy(no_proxy_env: pytest.MonkeyPatch) -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(JOB), JOB)
    async with serve(answering(answer)) as api, serve(forward_proxy) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        no_proxy_env.setenv("NO_PROXY", "127.0.0.1")
        client = shared_async_client(_config(api.url))
        try:
            assert isinstance(client, ConnectionPool)
            assert await asend(client, _config(api.url), GET_JOB) == {"jobId": "j-1"}
        finally:
            await client.aclose()
    assert proxy.accepted == 0
    assert api.requests[0].startswith(b"GET /api/v1/aijobs/j-1 HTTP/1.1\r\n")


# -- compressed bodies the client did not ask for -------------------------------------------


async def test_corrupt_compressed_body_is_a_protocol_error(make_pool: PoolFactory) -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello"
    async with serve(answering(answer, OK)) as server:
        pool = make_pool(server.url, max_connections=1)
        with pytest.raises(HTTPProtocolError, match="undecodable gzip body"):
            await get(pool)
        await assert_recovers(pool, server)


async def test_empty_body_with_content_encoding(make_pool: PoolFactory) -> None:
    answer = b"HTTP/1.1 204 No Content\r\nContent-Encoding: gzip\r\n\r\n"
    async with serve(answering(answer)) as server:
        response = await get(make_pool(server.url))
    assert (response.status, response.body) == (204, b"")
