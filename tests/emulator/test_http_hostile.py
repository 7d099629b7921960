"""Hostile and garbled requests over raw sockets: a 400 (or a closed connection), never a
smuggled second answer, never an unhandled exception, and the server keeps serving.

The hand-written server these replace answered a smuggled request when both
``Content-Length`` and ``Transfer-Encoding`` were sent, took the first of two conflicting
lengths, died without answering on ``Content-Length: ²`` or a chunk size of ``-1``, and
waited forever for a body that never came.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from aihc_emulator_client import Client

from airflow_provider_aihc.emulator import EmulatorServer

SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture
def quick_server() -> Iterator[EmulatorServer]:
    with EmulatorServer(body_timeout=0.5) as running:
        yield running


def exchange(server: EmulatorServer, payload: bytes, wait: float = 30.0) -> tuple[bytes, bool]:
    """Send ``payload``; read until the server closes or ``wait`` passes: (bytes, closed).
    ``wait`` is a deadline, not a pace: the exchange ends as soon as the server closes."""
    url = urlsplit(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=wait) as sock:
        sock.sendall(payload)
        data = b""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                return data, False
            except ConnectionResetError:
                return data, True
            if not chunk:
                return data, True
            data += chunk
        return data, False


def post(headers: str, body: bytes) -> bytes:
    return b"POST /api/v1/aijobs HTTP/1.1\r\nHost: x\r\n" + headers.encode() + b"\r\n" + body


HOSTILE = {
    "content-length-and-chunked": post(
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\n" + SMUGGLED
    ),
    "chunked-and-content-length": post(
        "Transfer-Encoding: chunked\r\nContent-Length: 40\r\n", b"0\r\n\r\n" + SMUGGLED
    ),
    "conflicting-content-lengths": post(
        "Content-Length: 2\r\nContent-Length: 40\r\n", b"{}" + SMUGGLED
    ),
    "content-length-superscript-two": b"POST /api/v1/aijobs HTTP/1.1\r\nHost: x\r\n"
    + "Content-Length: ²\r\n\r\n{}".encode()
    + SMUGGLED,
    "content-length-negative": post("Content-Length: -2\r\n", b"{}" + SMUGGLED),
    "chunk-size-minus-one": post("Transfer-Encoding: chunked\r\n", b"-1\r\n{}\r\n0\r\n\r\n"),
    "chunk-size-not-hex": post("Transfer-Encoding: chunked\r\n", b"zz\r\n{}\r\n0\r\n\r\n"),
    "obfuscated-transfer-encoding": post(
        "Content-Length: 5\r\nTransfer-Encoding: xchunked\r\n", b"0\r\n\r\n" + SMUGGLED
    ),
    "header-without-colon": b"GET / HTTP/1.1\r\nHost x\r\n\r\n" + SMUGGLED,
    "bad-request-line": b"NONSENSE\r\n\r\n" + SMUGGLED,
}


@pytest.mark.parametrize("payload", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_request_gets_a_400_or_a_closed_connection(
    quick_server: EmulatorServer, payload: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    data, closed = exchange(quick_server, payload)
    answers = data.count(b"HTTP/1.")
    assert answers <= 1, data
    if answers:
        assert data.split(b" ", 2)[1] == b"400", data
    assert closed, "the connection must not stay open for a smuggled request"
    paths = [record.path for record in quick_server.backend.requests]
    assert "/smuggled" not in paths
    assert "/api/v1/aijobs" not in paths  # the garbled request itself never reached the app
    unhandled = [r for r in caplog.records if "Unhandled exception" in r.getMessage()]
    assert unhandled == []
    assert Client(quick_server.url).request("GET", "/api/v1/resourcepools").status_code == 200


def test_a_body_that_never_arrives_times_out(quick_server: EmulatorServer) -> None:
    started = time.monotonic()
    data, closed = exchange(quick_server, post("Content-Length: 100\r\n", b'{"name"'))
    elapsed = time.monotonic() - started
    assert closed
    assert data.startswith(b"HTTP/1.1 408 "), data
    assert b'"code":"RequestTimeout"' in data
    assert elapsed > 0.4  # the body timeout (0.5 s) was waited; how much longer, load decides
    assert quick_server.backend.requests == []


def test_a_head_that_arrives_slowly_is_still_served(quick_server: EmulatorServer) -> None:
    """The body timeout starts once the head is in; a slow but honest client is answered."""
    url = urlsplit(quick_server.url)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall(b"GET /api/v1/resourcepools HTTP/1.1\r\n")
        time.sleep(0.7)  # the client's slowness itself (longer than the body timeout)
        sock.sendall(b"Host: x\r\nConnection: close\r\n\r\n")
        data = sock.recv(65536)
    assert data.startswith(b"HTTP/1.1 403 "), data  # unsigned: the app answered it
    assert b"AccessDenied" in data


def test_an_oversized_header_is_refused(quick_server: EmulatorServer) -> None:
    data, closed = exchange(
        quick_server, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n"
    )
    assert closed
    assert data.split(b" ", 2)[1] in (b"400", b"431"), data[:80]


@pytest.mark.parametrize("path", ["/api/v1/aijobs/0%0A", "/api/v1/aijobs/%0D%0Ax", "/%00", "//"])
def test_odd_paths_reach_the_app_and_get_its_json_answer(client: Client, path: str) -> None:
    raw = client.session.get(client.base_url + path, timeout=5)
    assert raw.headers["Content-Type"].startswith("application/json"), raw.text
    assert raw.json()["code"] == "AccessDenied"  # unsigned: the App answered, not a router
