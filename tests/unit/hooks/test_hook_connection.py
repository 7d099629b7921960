"""The ``aihc`` connection: JSON and URI env forms, hosts, required fields, STS, default pool."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from urllib.parse import quote

import pytest
from hook_helpers import AK, POOL, SK, TOKEN, Sent, job_body, total_requests

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCAuthError, AIHCConfigError
from airflow_provider_aihc.hooks.aihc import AIHCHook

Spy = Callable[[AIHCHook], list[Sent]]


def _signed_headers(sent: Sent) -> list[str]:
    return sent.headers["Authorization"].split("/")[4].split(";")


def test_json_env_form_reaches_the_emulator(aihc_emulator: EmulatorServer) -> None:
    hook = AIHCHook()
    assert hook.config.base_url == aihc_emulator.url
    assert (hook.config.access_key_id, hook.config.resource_pool_id) == (AK, POOL)
    assert hook.test_connection() == (True, f"Connected to AIHC at {aihc_emulator.url}")
    assert aihc_emulator.backend.count("ListResourcePools", 200) == 1


def test_uri_env_form_reaches_the_emulator(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = quote(aihc_emulator.url, safe="")
    uri = f"aihc://{AK}:{SK}@{host}?resource_pool_id={POOL}&max_retries=2"
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_URI", uri)
    hook = AIHCHook("aihc_uri")
    assert hook.config.base_url == aihc_emulator.url
    assert (hook.config.resource_pool_id, hook.config.max_retries) == (POOL, 2)
    created = hook.create_job(job_body("uri-form"))
    assert hook.get_job(created.job_id).name == "uri-form"


def test_uri_form_with_secret_needing_escapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "s/k+with=odd@chars"
    with EmulatorServer(access_key_id="ak-uri", secret_access_key=secret) as server:
        uri = f"aihc://ak-uri:{quote(secret, safe='')}@{quote(server.url, safe='')}"
        monkeypatch.setenv("AIRFLOW_CONN_AIHC_URI", uri + f"?resource_pool_id={POOL}")
        hook = AIHCHook("aihc_uri")
        assert hook.config.secret_access_key == secret
        assert hook.test_connection()[0] is True


@pytest.mark.parametrize(
    ("host", "port", "expected"),
    [
        ("aihc.bj.baidubce.com", None, "https://aihc.bj.baidubce.com"),
        ("aihc.bj.baidubce.com", 8443, "https://aihc.bj.baidubce.com:8443"),
        ("https://aihc.gz.baidubce.com/", None, "https://aihc.gz.baidubce.com"),
        ("http://127.0.0.1:8080", None, "http://127.0.0.1:8080"),
        ("http://localhost", 9000, "http://localhost:9000"),
    ],
)
def test_host_forms(
    set_conn: Callable[..., None], host: str, port: int | None, expected: str
) -> None:
    set_conn(host=host, port=port)
    config = AIHCHook().config
    assert config.base_url == expected
    assert config.host_header == expected.split("://", 1)[1]


def test_bare_host_means_https_with_verification(set_conn: Callable[..., None]) -> None:
    set_conn(host="aihc.bj.baidubce.com")
    hook = AIHCHook()
    assert hook.config.base_url.startswith("https://")
    assert hook.session.verify is True


@pytest.mark.parametrize(
    ("region", "host"),
    [
        ("cn-beijing", "aihc.bj.baidubce.com"),
        ("cn-guangzhou", "aihc.gz.baidubce.com"),
        ("cn-wuhan", "aihc.fwh.baidubce.com"),
    ],
)
def test_empty_host_takes_the_region_host(
    set_conn: Callable[..., None], region: str, host: str
) -> None:
    set_conn(host="", extra={"region": region})
    assert AIHCHook().config.base_url == f"https://{host}"


def test_host_wins_over_region(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"region": "cn-beijing"})
    assert AIHCHook().config.base_url == aihc_emulator.url


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"host": "", "extra": {"region": "mars-1"}}, "region"),
        ({"host": "", "extra": {"region": None}}, "region"),
        ({"login": ""}, "login"),
        ({"login": None}, "login"),
        ({"password": ""}, "password"),
        ({"host": "ftp://aihc.bj.baidubce.com"}, "host"),
        ({"host": "https://aihc.bj.baidubce.com/api/v1"}, "host"),
        ({"host": "http://127.0.0.1:99999"}, "port"),
        ({"extra": {"max_retries": "lots"}}, "max_retries"),
        ({"extra": {"timeout": -1}}, "timeout"),
    ],
)
def test_unusable_connection_names_the_field(
    set_conn: Callable[..., None],
    aihc_emulator: EmulatorServer,
    overrides: dict[str, object],
    named: str,
) -> None:
    set_conn("aihc_bad", **overrides)
    hook = AIHCHook("aihc_bad")
    with pytest.raises(AIHCConfigError, match=named) as raised:
        hook.get_job("pytorchjob-1")
    assert "aihc_bad" in str(raised.value)
    assert SK not in str(raised.value)
    ok, message = hook.test_connection()
    assert ok is False
    assert named in message
    assert total_requests(aihc_emulator) == 0


def test_every_problem_is_named_at_once(set_conn: Callable[..., None]) -> None:
    set_conn(login="", password="", host="", extra={"region": "nowhere"})
    with pytest.raises(AIHCConfigError) as raised:
        _ = AIHCHook().config
    text = str(raised.value)
    assert all(word in text for word in ("login", "password", "region"))


def test_sts_token_is_sent_signed_and_verified(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer, wire: Spy
) -> None:
    set_conn(extra={"security_token": TOKEN})
    hook = AIHCHook()
    sent = wire(hook)
    job = hook.create_job(job_body("sts-job"))
    assert hook.get_job(job.job_id).job_id == job.job_id
    for request in sent:
        assert request.headers["x-bce-security-token"] == TOKEN
        signed = ["host", "x-bce-date", "x-bce-security-token"]
        if request.body:  # a body is signed by its hash (security review F3)
            signed.insert(1, "x-bce-content-sha256")
        assert _signed_headers(request) == signed
    assert aihc_emulator.backend.count("GetJob", 200) == 1


def test_sts_token_is_covered_by_the_signature(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer, wire: Spy
) -> None:
    """Change the token after signing: the emulator must notice (it checks signed x-bce-*)."""
    set_conn(extra={"security_token": TOKEN})
    hook = AIHCHook()
    sent = wire(hook)
    inner = hook.session.request

    def tamper(method: str, url: str, **kwargs: object) -> object:
        headers = dict(kwargs.pop("headers"))  # type: ignore[call-overload]
        headers["x-bce-security-token"] = "another-token"
        return inner(method, url, headers=headers, **kwargs)

    hook.session.request = tamper  # type: ignore[method-assign]
    with pytest.raises(AIHCAuthError) as raised:
        hook.get_job("pytorchjob-1")
    assert raised.value.code == "SignatureDoesNotMatch"
    assert TOKEN not in str(raised.value)
    assert len(sent) == 1


def test_without_token_only_host_and_date_are_signed(hook: AIHCHook, wire: Spy) -> None:
    sent = wire(hook)
    hook.list_resource_pools()
    assert "x-bce-security-token" not in sent[0].headers
    assert _signed_headers(sent[0]) == ["host", "x-bce-date"]


def test_connection_pool_is_the_default(hook: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    created = hook.create_job(job_body("default-pool"))
    assert hook.get_job(created.job_id).resource_pool_id == POOL
    assert aihc_emulator.backend.job(created.job_id)["resourcePoolId"] == POOL
    assert hook.resource_pool() == POOL
    assert hook.resource_pool("aihc-serverless") == "aihc-serverless"


def test_missing_pool_names_resource_pool_id(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"resource_pool_id": None})
    hook = AIHCHook()
    calls: list[Callable[[], object]] = [
        lambda: hook.create_job(job_body("no-pool")),
        lambda: hook.get_job("pytorchjob-1"),
        hook.list_jobs,
        lambda: hook.stop_job("pytorchjob-1"),
        lambda: hook.get_pod_logs("pytorchjob-1", "pod-0"),
        hook.get_resource_pool,
        hook.list_queues,
    ]
    for call in calls:
        with pytest.raises(AIHCConfigError, match="resource_pool_id"):
            call()
    assert total_requests(aihc_emulator) == 0
    # Pool endpoints that need no pool still work, and an explicit pool is enough.
    assert {pool.pool_id for pool in hook.list_resource_pools()} == {POOL, "aihc-serverless"}
    assert hook.list_jobs(POOL) == []


def test_secrets_stay_out_of_the_config_repr(set_conn: Callable[..., None]) -> None:
    set_conn(extra={"security_token": TOKEN})
    config = AIHCHook().config
    assert config.security_token == TOKEN
    for text in (repr(config), str(config)):
        assert SK not in text
        assert TOKEN not in text
        assert AK in text


def test_extra_numbers_are_read(set_conn: Callable[..., None]) -> None:
    set_conn(extra={"timeout": "2.5", "connect_timeout": 1, "max_retries": "0"})
    config = AIHCHook().config
    assert (config.timeout, config.connect_timeout, config.max_retries) == (2.5, 1.0, 0)


SECONDS = "extra timeout must be a number of seconds > 0, or empty for the default 60; got"


def _set_extra(monkeypatch: pytest.MonkeyPatch, host: str | None, **extra: object) -> None:
    """The connection as a form saves it: blank optional fields as ``null`` or ``""``."""
    conn = {"conn_type": "aihc", "login": AK, "password": SK, "host": host, "extra": extra}
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_FORM", json.dumps(conn))


@pytest.mark.parametrize("blank", [None, "", "  "])
def test_blank_optional_extras_take_their_defaults(
    monkeypatch: pytest.MonkeyPatch, aihc_emulator: EmulatorServer, blank: object
) -> None:
    fields = ("timeout", "connect_timeout", "max_retries", "api_version", "region")
    _set_extra(monkeypatch, aihc_emulator.url, **dict.fromkeys(fields, blank))
    hook = AIHCHook("aihc_form")
    config = hook.config
    assert (config.timeout, config.connect_timeout, config.max_retries) == (60.0, 10.0, 5)
    assert config.api_version == "v1"
    assert hook.test_connection()[0] is True


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"timeout": "soon"}, f"{SECONDS} 'soon'"),
        ({"connect_timeout": "inf"}, "extra connect_timeout must be a number of seconds > 0"),
        ({"timeout": "nan"}, "extra timeout must be a number of seconds > 0"),
        ({"timeout": [30]}, f"{SECONDS} a list"),
        (
            {"max_retries": 2.5},
            "extra max_retries must be a whole number from 0 to 20, or empty for the default 5;"
            " got 2.5",
        ),
        ({"max_retries": True}, "extra max_retries must be a whole number from 0 to 20"),
        ({"max_retries": -1}, "extra max_retries must be a whole number from 0 to 20"),
        ({"api_version": "v3"}, "extra api_version must be one of v1, v2, or empty; got 'v3'"),
        ({"api_version": 2}, "extra api_version must be one of v1, v2, or empty; got 2"),
    ],
)
def test_a_wrong_extra_is_named_with_what_is_allowed(
    monkeypatch: pytest.MonkeyPatch,
    aihc_emulator: EmulatorServer,
    extra: dict[str, object],
    expected: str,
) -> None:
    _set_extra(monkeypatch, aihc_emulator.url, **extra)
    hook = AIHCHook("aihc_form")
    with pytest.raises(AIHCConfigError) as raised:
        hook.get_job("pytorchjob-1")
    assert expected in str(raised.value)
    assert total_requests(aihc_emulator) == 0


def test_every_wrong_extra_is_reported_in_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {"timeout": "soon", "max_retries": 99, "api_version": "{v3}", "region": "mars-1"}
    _set_extra(monkeypatch, "", **extra)
    with pytest.raises(AIHCConfigError) as raised:
        _ = AIHCHook("aihc_form").config
    text = str(raised.value)
    named = re.findall(r"extra (\w+) must", text)
    assert named == ["region", "timeout", "max_retries", "api_version"]
    assert text.endswith("got '{v3}'")  # a quoted value is text, not a template


@pytest.mark.parametrize("region", ["mars-1", ["cn-beijing"], 7])
def test_a_wrong_region_lists_the_regions(
    monkeypatch: pytest.MonkeyPatch, aihc_emulator: EmulatorServer, region: object
) -> None:
    _set_extra(monkeypatch, "", region=region)
    with pytest.raises(AIHCConfigError) as raised:
        _ = AIHCHook("aihc_form").config
    text = str(raised.value)
    assert "extra region must be one of cn-beijing, cn-baoding," in text
    assert "cn-yangquan, or empty; got" in text


def test_a_secret_pasted_into_a_number_field_is_not_shown(
    monkeypatch: pytest.MonkeyPatch, aihc_emulator: EmulatorServer
) -> None:
    _set_extra(monkeypatch, "", timeout=SK, region=TOKEN + "x" * 20)
    with pytest.raises(AIHCConfigError) as raised:
        _ = AIHCHook("aihc_form").config
    text = str(raised.value)
    assert f"{SECONDS} a str of {len(SK)} characters" in text
    assert "extra region must be one of" in text
    assert SK not in text
    assert TOKEN not in text
