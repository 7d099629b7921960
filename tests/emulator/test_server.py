"""The HTTP server: standalone process, keep-alive, raw HTTP/1.1 edges, concurrency.

Garbled and smuggled requests are in test_http_hostile.py.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import ssl
import subprocess
import sys
import time
from urllib.parse import urlsplit

import httpx
import pytest
from aihc_emulator_client import POOL, Client

from airflow_provider_aihc.auth import signer
from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_SECRET_ACCESS_KEY,
    EmulatorServer,
)


def raw_exchange(server: EmulatorServer, payload: bytes, reads: int = 1) -> bytes:
    host, port = urlsplit(server.url).hostname, urlsplit(server.url).port
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(payload)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            if data.count(b"HTTP/1.1 ") >= reads and data.endswith(b"}"):
                break
        return data


def test_standalone_process_prints_its_url_and_serves(tmp_path: object) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "airflow_provider_aihc.emulator",
            "--port",
            "0",
            "--seconds-per-status",
            "0.2",
            "--running-seconds",
            "0.2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+) .*localhost only", line)
        assert match, line
        client = Client(match.group(1))
        job_id = client.create("standalone")["jobId"]
        deadline = time.monotonic() + 10
        while client.status(job_id) != "Succeeded":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_main_reports_a_taken_port() -> None:
    with EmulatorServer() as server:
        port = str(urlsplit(server.url).port)
        result = subprocess.run(
            [sys.executable, "-m", "airflow_provider_aihc.emulator", "--port", port],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert result.returncode == 1
    assert "cannot listen" in result.stderr


def test_start_stop_and_restart_are_clean() -> None:
    server = EmulatorServer()
    server.start()
    url = server.url
    assert re.match(r"^http://127\.0\.0\.1:\d+$", url)
    with pytest.raises(RuntimeError):
        server.start()
    server.stop()
    server.stop()  # idempotent
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/api/v1/resourcepools", timeout=2)


def test_start_fails_loudly_on_a_taken_port(server: EmulatorServer) -> None:
    with pytest.raises(RuntimeError, match="could not start"):
        EmulatorServer(port=int(urlsplit(server.url).port or 0)).start()


def test_keep_alive_reuses_one_connection(client: Client, server: EmulatorServer) -> None:
    for _ in range(5):
        assert client.request("GET", "/api/v1/resourcepools").status_code == 200
    assert server.connections_total == 1


def test_connection_close_is_honoured(server: EmulatorServer) -> None:
    data = raw_exchange(server, b"GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"\r\nConnection: close\r\n" in data
    assert b"x-bce-request-id: " in data


def test_two_pipelined_requests_on_one_connection(server: EmulatorServer) -> None:
    one = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
    data = raw_exchange(server, one + one, reads=2)
    assert data.count(b"HTTP/1.1 403") == 2


def test_chunked_body_and_expect_continue(server: EmulatorServer) -> None:
    host = urlsplit(server.url).netloc
    body = json.dumps({"name": "chunky", "jobSpec": {"image": "i", "command": "c"}}).encode()
    stamp = time.time()
    headers = {"Host": host, "x-bce-date": signer.format_timestamp(stamp)}
    signed = signer.sign(
        access_key_id=DEFAULT_ACCESS_KEY_ID,
        secret_access_key=DEFAULT_SECRET_ACCESS_KEY,
        method="POST",
        path="/api/v1/aijobs",
        params={"resourcePoolId": POOL},
        headers=headers,
        timestamp=stamp,
        headers_to_sign=["host", "x-bce-date"],
    )
    head = (
        f"POST /api/v1/aijobs?resourcePoolId={POOL} HTTP/1.1\r\nHost: {host}\r\n"
        f"x-bce-date: {headers['x-bce-date']}\r\nAuthorization: {signed.authorization}\r\n"
        "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    ).encode()
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:]))
    data = raw_exchange(server, head + chunks + b"0\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK")
    assert [j["name"] for j in server.backend.jobs()] == ["chunky"]


def _auth_headers(url: str, path: str, params: dict[str, str]) -> dict[str, str]:
    stamp = time.time()
    headers = {"Host": urlsplit(url).netloc, "x-bce-date": signer.format_timestamp(stamp)}
    signed = signer.sign(
        access_key_id=DEFAULT_ACCESS_KEY_ID,
        secret_access_key=DEFAULT_SECRET_ACCESS_KEY,
        method="GET",
        path=path,
        params=params,
        headers=headers,
        timestamp=stamp,
        headers_to_sign=signer.provider_signed_headers(headers),
    )
    return {**headers, "Authorization": signed.authorization}


async def test_concurrent_keep_alive_clients(client: Client, server: EmulatorServer) -> None:
    """200 clients, each with its own keep-alive connection, 5 polls each, all answered."""
    job_id = client.create("popular")["jobId"]
    path = f"/api/v1/aijobs/{job_id}"
    params = {"resourcePoolId": POOL}
    before = server.connections_total

    tls = ssl.create_default_context()  # one context: building 200 of them is the slow part

    async def poller() -> list[int]:
        async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=tls) as http:
            codes = []
            for _ in range(5):
                headers = _auth_headers(server.url, path, params)
                response = await http.get(f"{path}?resourcePoolId={POOL}", headers=headers)
                codes.append(response.status_code)
            return codes

    results = await asyncio.gather(*(poller() for _ in range(200)))
    assert all(codes == [200] * 5 for codes in results)
    assert server.connections_total - before == 200
    assert server.backend.count("GetJob", 200) == 1000


async def test_a_thousand_keep_alive_pollers(client: Client, server: EmulatorServer) -> None:
    """1,000 open connections polling at once (raw asyncio streams: no client overhead)."""
    job_id = client.create("watched")["jobId"]
    path = f"/api/v1/aijobs/{job_id}"
    headers = _auth_headers(server.url, path, {"resourcePoolId": POOL})
    request = (
        f"GET {path}?resourcePoolId={POOL} HTTP/1.1\r\n"
        + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        + "\r\n"
    ).encode()
    host, port = urlsplit(server.url).hostname, urlsplit(server.url).port

    async def poller() -> list[bytes]:
        reader, writer = await asyncio.open_connection(host, port)
        statuses = []
        for _ in range(3):
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"Content-Length: (\d+)", head)
            assert length is not None
            await reader.readexactly(int(length.group(1)))
            statuses.append(head.split(b" ", 2)[1])
        writer.close()
        return statuses

    # No bound on the time it takes (a loaded machine decides that; pytest-timeout ends a
    # hang): every connection is served, none refused or dropped.
    results = await asyncio.gather(*(poller() for _ in range(1000)))
    assert all(codes == [b"200"] * 3 for codes in results)
    assert server.backend.count("GetJob", 200) == 3000
