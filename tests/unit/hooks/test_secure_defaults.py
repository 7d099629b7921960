"""Secure defaults of the connection and the transport: http only where it cannot leak,
bodies signed by their hash, pasted values refused by name and never shown, timeouts
and retries bounded, no userinfo in the host, backoff and log paging bounded.  Each case
reproduces a finding of the security review (F3, F6, F7, F8, F9: docs/security.md)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import requests
from hook_helpers import AK, POOL, SK, TOKEN, job_body

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCTransportError
from airflow_provider_aihc.hooks._connection import config_from_connection
from airflow_provider_aihc.hooks._endpoint import ApiRequest, Endpoint
from airflow_provider_aihc.hooks._transport import asend
from airflow_provider_aihc.hooks._wire import CONTENT_SHA256_HEADER, prepare
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.models.job import PodLogs
from airflow_provider_aihc.watch.job import MAX_ERROR_BACKOFF_SECONDS, error_backoff

ConnSetter = Callable[..., None]


def conn(host: str | None = "aihc.bj.baidubce.com", **fields: Any) -> SimpleNamespace:
    extra = fields.pop("extra", {})
    values = {"conn_id": "c", "login": AK, "password": SK, "host": host, "port": None}
    return SimpleNamespace(**{**values, **fields}, extra_dejson=extra)


def refused(connection: SimpleNamespace) -> str:
    with pytest.raises(AIHCConfigError) as raised:
        config_from_connection(connection)
    return str(raised.value)


# -- F3: http only for loopback, or with allow_insecure_http; never for baidubce.com ------


@pytest.mark.parametrize(
    "extra", [{}, {"allow_insecure_http": True}, {"allow_insecure_http": "true"}]
)
def test_http_to_baidu_is_refused_whatever_the_extras(extra: dict[str, Any]) -> None:
    text = refused(conn("http://aihc.bj.baidubce.com", extra=extra))
    assert "https for *.baidubce.com" in text


def test_http_to_another_host_needs_the_extra_and_warns_at_every_read(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert "allow_insecure_http: true" in refused(conn("http://aihc.internal.example"))
    allowed = conn("http://aihc.internal.example", extra={"allow_insecure_http": True})
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            assert config_from_connection(allowed).base_url == "http://aihc.internal.example"
    warnings = [r for r in caplog.records if "sends requests in clear" in r.getMessage()]
    assert len(warnings) == 2


@pytest.mark.parametrize(
    "host", ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9", "http://[::1]"]
)
def test_http_to_loopback_needs_nothing(host: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert config_from_connection(conn(host)).base_url == host
    assert not caplog.records


def test_a_body_is_signed_by_its_hash() -> None:
    config = config_from_connection(conn())
    body = b'{"name": "x"}'
    create = ApiRequest(Endpoint("CreateJob", "POST", "/api/v1/aijobs", False), "/api/v1/aijobs")
    attempt = prepare(config, ApiRequest(create.endpoint, create.path, body=body), time.time())
    assert attempt.headers[CONTENT_SHA256_HEADER] == hashlib.sha256(body).hexdigest()
    assert CONTENT_SHA256_HEADER in attempt.headers["Authorization"].split("/")[4].split(";")


def test_a_rewritten_body_with_the_original_signature_is_refused(
    aihc_emulator: EmulatorServer,
) -> None:
    """The review's F3 reproduction: sign a create, send another body under its headers."""
    config = config_from_connection(conn(aihc_emulator.url, extra={"resource_pool_id": POOL}))
    good = job_body("honest", image="registry.example/train:1")
    path = "/api/v1/aijobs"
    signed = prepare(
        config,
        ApiRequest(
            Endpoint("CreateJob", "POST", path, False),
            path,
            params=(("resourcePoolId", POOL),),
            body=json.dumps(good).encode(),
        ),
        time.time(),
    )
    evil = json.dumps(job_body("honest", image="attacker/miner")).encode()
    answer = requests.post(signed.url, data=evil, headers=signed.headers, timeout=30)
    assert answer.status_code == 400
    assert answer.json()["code"] == "BadDigest"
    assert aihc_emulator.backend.jobs() == []
    honest = requests.post(
        signed.url, data=json.dumps(good).encode(), headers=signed.headers, timeout=30
    )
    assert honest.status_code == 200


# -- F7: whitespace, non-printable and non-ASCII values refused, named, never shown --------


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"extra": {"security_token": " " + TOKEN}}, "extra security_token"),
        ({"extra": {"security_token": TOKEN + "\u200b"}}, "extra security_token"),
        ({"extra": {"security_token": TOKEN + "é"}}, "extra security_token"),
        ({"login": AK + " "}, "login (the Access Key ID)"),
        ({"login": AK + "\x00"}, "login (the Access Key ID)"),
        ({"host": "aihc.bj.baidubce.com\x00"}, "host"),
        ({"host": " aihc.bj.baidubce.com"}, "host"),
        ({"host": None, "extra": {"region": "cn-beijing\t"}}, "extra region"),
        ({"password": SK + "\n"}, "password (the Secret Access Key)"),
    ],
)
def test_a_pasted_value_is_refused_by_field_not_shown(fields: dict[str, Any], named: str) -> None:
    connection = conn(**fields)
    text = refused(connection)
    assert named in text
    for secret in (TOKEN, SK, AK):
        assert secret not in text


def test_test_connection_never_answers_with_the_token(
    set_conn: ConnSetter, aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"security_token": " STS-LEADING-SPACE-TOKEN-abcdef"})
    ok, message = AIHCHook().test_connection()
    assert ok is False
    assert "extra security_token has leading or trailing whitespace" in message
    assert "STS-LEADING" not in message


# -- F8: timeouts > 0; max_retries bounded ------------------------------------------------


@pytest.mark.parametrize("key", ["timeout", "connect_timeout"])
@pytest.mark.parametrize("value", [0, "0", 0.0, -1])
def test_a_zero_timeout_is_refused(key: str, value: object) -> None:
    assert f"extra {key} must be a number of seconds > 0" in refused(conn(extra={key: value}))


@pytest.mark.parametrize("value", [21, 1e9, "1000000000"])
def test_max_retries_has_a_maximum(value: object) -> None:
    text = refused(conn(extra={"max_retries": value}))
    assert "extra max_retries must be a whole number from 0 to 20" in text


def test_the_async_sender_keeps_a_read_timeout() -> None:
    """Before the fix ``timeout: 0`` reached aiohttp as "no read timeout" (F8); the smallest
    value accepted now still times a silent server out."""

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        await asyncio.sleep(3600)

    async def run() -> None:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        config = config_from_connection(
            conn(f"http://127.0.0.1:{port}", extra={"timeout": 0.2, "max_retries": 0})
        )
        request = ApiRequest(Endpoint("GetJob", "GET", "/x"), "/x")
        try:
            with pytest.raises(AIHCTransportError):
                await asyncio.wait_for(asend("silent", config, request, sleep=asyncio.sleep), 60)
        finally:
            server.close()

    asyncio.run(run())


# -- F9: userinfo refused in host ---------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "https://robot:RegistryPw@aihc.internal.example",
        "aihc.bj.baidubce.com@evil.example",
        "http://robot@127.0.0.1:8080",
    ],
)
def test_userinfo_in_the_host_is_refused_and_not_shown(host: str) -> None:
    text = refused(conn(host))
    assert "host must not carry a user name or password" in text
    assert "RegistryPw" not in text
    assert "evil.example" not in text


# -- F6: the backoff never overflows -------------------------------------------------------


@pytest.mark.parametrize("errors", [1024, 1025, 2000, 10**6])
def test_the_error_backoff_is_capped_before_it_is_computed(errors: int) -> None:
    assert error_backoff(5.0, errors, None) == MAX_ERROR_BACKOFF_SECONDS


# -- iter_pod_log_lines: bounded by markers seen and by pages ------------------------------


def test_pod_log_paging_stops_on_a_cycling_marker(
    set_conn: ConnSetter, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_conn()
    hook = AIHCHook()
    asked: list[str] = []

    def cycling(*args: Any, marker: str = "", **kwargs: Any) -> PodLogs:
        asked.append(marker)
        following = {"": "A", "A": "B", "B": "A"}[marker]
        return PodLogs.model_validate(
            {"logs": [f"line after {marker or 'start'}"], "nextMarker": following}
        )

    monkeypatch.setattr(hook, "get_pod_logs", cycling)
    lines: Iterator[str] = hook.iter_pod_log_lines("job-1", "pod-0")
    assert list(lines) == ["line after start", "line after A", "line after B"]
    assert asked == ["", "A", "B"]


def test_a_refused_header_is_described_without_its_value() -> None:
    from airflow_provider_aihc.hooks._transport import _describe

    err = requests.exceptions.InvalidHeader(
        "Invalid leading whitespace in header value: ' STS-LEADING-SPACE-TOKEN-abcdef'"
    )
    assert "STS-LEADING" not in _describe(err)
    assert _describe(err).startswith("InvalidHeader")


def test_short_ordinary_extras_do_not_make_airflow_warn_and_secret_ones_are_masked(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #38 point 7: Airflow's ``extra_dejson`` hands every extra value to the
    masker, so ``api_version: "v2"`` warned "too short" in every task; the extras are read
    without it, and the secret ones are masked by name."""
    from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS, redact

    if AIRFLOW_V_3_0_PLUS:
        from airflow.sdk import Connection
    else:
        from airflow.models import Connection

    token = "sts-token-" + "x" * 20
    conn = Connection(
        conn_id="aihc_short_extras", conn_type="aihc", login=AK, password=SK,
        host="aihc.bj.baidubce.com",
        extra=json.dumps({"api_version": "v2", "resource_pool_id": POOL, "security_token": token}),
    )  # fmt: skip
    with caplog.at_level(logging.WARNING):
        config = config_from_connection(conn)
    assert config.api_version == "v2"
    assert "too short" not in caplog.text + capsys.readouterr().out
    assert token not in str(redact(f"token={token}"))
