"""Both senders against hostile or broken servers (raw sockets on 127.0.0.1): header
injection refused before connecting, answers capped with bounded memory, malformed answers
typed and retried like a 5xx, one CA rule, proxies from the environment."""

from __future__ import annotations

import asyncio
import json
import ssl
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import certifi
import pytest
import requests
from hook_helpers import AK, SK, TOKEN
from raw_server import answering, forward_proxy, ok, self_signed, serve

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import (
    AIHCConfigError,
    AIHCNotFoundError,
    AIHCResponseError,
    AIHCTransportError,
)
from airflow_provider_aihc.hooks import _sessions, _transport
from airflow_provider_aihc.hooks._connection import ConnectionConfig
from airflow_provider_aihc.hooks._endpoint import ApiRequest, Endpoint
from airflow_provider_aihc.hooks._transport import asend, send
from airflow_provider_aihc.hooks.aihc import AIHCHook

JOB = b'{"result": {"jobId": "j-1"}}'
GET_JOB = ApiRequest(Endpoint("GetJob", "GET", "/api/v1/aijobs/{job_id}"), "/api/v1/aijobs/j-1")
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
Sender = Callable[[ConnectionConfig, ApiRequest], Awaitable[Any]]


async def _no_sleep(seconds: float) -> None:
    pass


async def send_async(config: ConnectionConfig, request: ApiRequest) -> Any:
    return await asend("raw", config, request, sleep=_no_sleep)


async def send_sync(config: ConnectionConfig, request: ApiRequest) -> Any:
    with requests.Session() as session:
        return await asyncio.to_thread(send, session, config, request, sleep=lambda _: None)


SENDERS = [pytest.param(send_async, id="async"), pytest.param(send_sync, id="sync")]


def config(url: str, **fields: Any) -> ConnectionConfig:
    return ConnectionConfig(url, AK, SK, **{"max_retries": 0, "timeout": 5.0, **fields})


def set_conn(monkeypatch: pytest.MonkeyPatch, url: str, **overrides: Any) -> None:
    conn: dict[str, Any] = {"conn_type": "aihc", "login": AK, "password": SK, "host": url}
    conn["extra"] = {"resource_pool_id": "pool-1", "max_retries": 0, **overrides.pop("extra", {})}
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", json.dumps({**conn, **overrides}))


# ---- a line break in a header value is refused when the connection is read -----------------

INJECTED = "\r\nX-Injected: 1"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"login": AK + INJECTED}, "login (the Access Key ID)"),
        ({"host": "{url}" + INJECTED}, "host"),
        ({"host": "{url}\n"}, "host"),
        ({"host": "", "extra": {"region": "cn-beijing" + INJECTED}}, "extra region"),
        ({"extra": {"security_token": TOKEN + INJECTED}}, "extra security_token"),
        ({"extra": {"security_token": TOKEN + "\r"}}, "extra security_token"),
    ],
)
async def test_a_line_break_in_a_header_value_is_refused_before_connecting(
    monkeypatch: pytest.MonkeyPatch, overrides: dict[str, Any], field: str
) -> None:
    overrides = dict(overrides)
    async with serve(ok(JOB)) as server:
        host = overrides.pop("host", "{url}").format(url=server.url)
        set_conn(monkeypatch, host, **overrides)
        for call in (
            lambda: asyncio.to_thread(AIHCHook().get_job_brief, "j-1"),
            lambda: AIHCHook().aget_job_brief("j-1"),
        ):
            with pytest.raises(AIHCConfigError) as raised:
                await call()
            message = str(raised.value)
            assert f"{field} contains a line break" in message
            assert "X-Injected" not in message
            assert TOKEN not in message
            assert SK not in message
    assert server.accepted == 0


# ---- answers are capped after decompression, with bounded memory ---------------------------


def gzip_bomb(size: int) -> bytes:
    """``size`` zero bytes, gzip-compressed (about a thousandth of that on the wire)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    return b"".join([*(packer.compress(block) for _ in range(size >> 20)), packer.flush()])


CAP = 1 << 20
BOMB = gzip_bomb(256 * CAP)  # 256 MiB unpacked


@pytest.mark.parametrize("sender", SENDERS)
@pytest.mark.parametrize(
    ("head", "body"),
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d" % len(BOMB),
            BOMB,
            id="gzip-bomb",
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nConnection: close", bytes(4 * CAP), id="no-length"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked",
            b"%x\r\n%s\r\n0\r\n\r\n" % (4 * CAP, bytes(4 * CAP)),
            id="chunked",
        ),
    ],
)
async def test_an_answer_past_the_cap_is_a_transport_error_with_bounded_memory(
    monkeypatch: pytest.MonkeyPatch, sender: Sender, head: bytes, body: bytes
) -> None:
    assert _transport.MAX_ANSWER_BYTES == 32 * 1024 * 1024
    monkeypatch.setattr(_transport, "MAX_ANSWER_BYTES", CAP)
    async with serve(answering(head, body)) as server:
        tracemalloc.start()
        try:
            with pytest.raises(AIHCTransportError, match="larger than 1048576 bytes"):
                await sender(config(server.url, max_retries=1), GET_JOB)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(server.requests) == 2  # retried like a 5xx
    assert peak < 16 * CAP, f"peak {peak} bytes for a {CAP}-byte cap"


# ---- malformed answers are typed, and retried like a 5xx -----------------------------------

MALFORMED = {
    "conflicting-lengths": (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5", b"ok"),
    "signed-length": (b"HTTP/1.1 200 OK\r\nContent-Length: +5", b"hello"),
    "underscore-length": (b"HTTP/1.1 200 OK\r\nContent-Length: 0_5", b"hello"),
    "hex-chunk-size": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked",
        b"0x5\r\nhello\r\n0\r\n\r\n",
    ),
    "status-2000": (b"HTTP/1.1 2000 OK\r\nContent-Length: 2", b"{}"),
    "unknown-transfer-coding": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunkedx\r\nConnection: close",
        b"5\r\nhello\r\n0\r\n\r\n",
    ),
    "2000-interim-answers": (
        b"HTTP/1.1 100 Continue\r\n\r\n" * 2000 + b"HTTP/1.1 200 OK\r\nContent-Length: 2",
        b"ok",
    ),
    "corrupt-gzip": (
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9",
        b"not gzip!",
    ),
    "header-without-colon": (b"HTTP/1.1 200 OK\r\nbroken header\r\nContent-Length: 2", b"{}"),
}


@pytest.mark.parametrize(("head", "body"), MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_malformed_answer_is_a_typed_error_retried_like_a_5xx(
    head: bytes, body: bytes
) -> None:
    async with serve(answering(head, body)) as server:
        with pytest.raises((AIHCTransportError, AIHCResponseError)):
            await send_async(config(server.url, max_retries=2, timeout=2.0), GET_JOB)
    assert len(server.requests) == 3


async def test_conflicting_lengths_are_a_transport_error() -> None:
    head, body = MALFORMED["conflicting-lengths"]
    async with serve(answering(head, body)) as server:
        with pytest.raises(AIHCTransportError, match="Content-Length"):
            await send_async(config(server.url), GET_JOB)


# ---- one CA rule: REQUESTS_CA_BUNDLE, else SSL_CERT_FILE/SSL_CERT_DIR, else certifi --------


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ssl.SSLContext, Path]:
    """A server context with a self-signed CA, its CA file; no CA variables set."""
    for name in CA_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    ca_file, key_file = self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(ca_file, key_file)
    return context, ca_file


@pytest.mark.parametrize("sender", SENDERS)
@pytest.mark.parametrize(
    ("variables", "trusted"),
    [
        ({"REQUESTS_CA_BUNDLE": "{ca}"}, True),
        ({"REQUESTS_CA_BUNDLE": "{dir}"}, False),  # a directory without hashed names
        ({"SSL_CERT_FILE": "{ca}"}, True),
        ({}, False),  # certifi's bundle does not know the test CA
        ({"REQUESTS_CA_BUNDLE": "{certifi}", "SSL_CERT_FILE": "{ca}"}, False),
        ({"REQUESTS_CA_BUNDLE": "{ca}", "SSL_CERT_FILE": "{certifi}"}, True),
    ],
)
async def test_the_ca_rule(
    tls: tuple[ssl.SSLContext, Path],
    monkeypatch: pytest.MonkeyPatch,
    sender: Sender,
    variables: dict[str, str],
    trusted: bool,
) -> None:
    context, ca_file = tls
    paths = {"ca": ca_file, "dir": ca_file.parent, "certifi": certifi.where()}
    for name, value in variables.items():
        monkeypatch.setenv(name, value.format(**paths))
    async with serve(ok(JOB), ssl_context=context) as server:
        if trusted:
            assert await sender(config(server.url), GET_JOB) == {"jobId": "j-1"}
        else:
            with pytest.raises(AIHCTransportError, match=r"(?i)certificate"):
                await sender(config(server.url), GET_JOB)


@pytest.mark.parametrize("sender", SENDERS)
async def test_a_ca_variable_naming_nothing_is_a_config_error(
    tls: tuple[ssl.SSLContext, Path], monkeypatch: pytest.MonkeyPatch, sender: Sender
) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/nonexistent/ca.pem")
    async with serve(ok(JOB), ssl_context=tls[0]) as server:
        with pytest.raises(
            AIHCConfigError, match=r"REQUESTS_CA_BUNDLE names '/nonexistent/ca\.pem'"
        ):
            await sender(config(server.url), GET_JOB)
    assert server.accepted == 0


async def test_a_rotated_bundle_reaches_the_triggerer_with_its_next_session(
    tls: tuple[ssl.SSLContext, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    context, ca_file = tls
    async with serve(ok(JOB), ssl_context=context) as server:
        with pytest.raises(AIHCTransportError):
            await send_async(config(server.url), GET_JOB)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca_file))
        with pytest.raises(AIHCTransportError):  # the session keeps the bundle it was built with
            await send_async(config(server.url), GET_JOB)
        _sessions._LOOPS[asyncio.get_running_loop()].current["raw"].expires = 0.0
        assert await send_async(config(server.url), GET_JOB) == {"jobId": "j-1"}


# ---- proxies from the environment, never ~/.netrc's login in place of the signature --------


@pytest.fixture
def proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


async def test_the_async_sender_goes_through_the_environments_proxy(
    aihc_emulator: EmulatorServer, proxy_env: pytest.MonkeyPatch
) -> None:
    job_id = "pytorchjob-missing"
    async with serve(forward_proxy) as proxy:
        proxy_env.setenv("HTTP_PROXY", proxy.url)
        with pytest.raises(AIHCNotFoundError):  # signed, relayed, answered
            await AIHCHook().aget_job_brief(job_id)
        assert proxy.requests[0].startswith(
            f"GET {aihc_emulator.url}/api/v1/aijobs/{job_id}?".encode()
        )
        proxy_env.setenv("NO_PROXY", "127.0.0.1")  # read with the next session
        _sessions._LOOPS[asyncio.get_running_loop()].current["aihc_default"].expires = 0.0
        with pytest.raises(AIHCNotFoundError):
            await AIHCHook().aget_job_brief(job_id)
    assert len(proxy.requests) == 1  # NO_PROXY: the second went straight to AIHC
    assert aihc_emulator.backend.count("GetJob", 404) == 2


@pytest.mark.parametrize("sender", SENDERS)
async def test_a_netrc_default_entry_neither_breaks_nor_replaces_the_signature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sender: Sender
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("default login someone password hunter2\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    async with serve(ok(JOB)) as server:
        assert await sender(config(server.url), GET_JOB) == {"jobId": "j-1"}
    [request] = server.requests
    assert b"\r\nAuthorization: bce-auth-v1/" in request
    assert b"Basic" not in request
