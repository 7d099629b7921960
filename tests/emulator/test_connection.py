"""``EmulatorServer.connection(**extra)`` and the standalone server's printed lines give the
Airflow connection that points at the emulator, in JSON and URI form, and both work."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_RESOURCE_POOL_ID,
    DEFAULT_SECRET_ACCESS_KEY,
    EmulatorServer,
)
from airflow_provider_aihc.emulator.connection import CONN_ENV, connection_to


def _hook(monkeypatch: pytest.MonkeyPatch, value: str, conn_id: str = "aihc_form") -> object:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", value)
    return AIHCHook(conn_id)


def test_the_json_form_has_the_server_credentials_and_the_default_pool(
    server: EmulatorServer,
) -> None:
    conn = json.loads(server.connection().json)
    assert conn == {
        "conn_type": "aihc",
        "login": DEFAULT_ACCESS_KEY_ID,
        "password": DEFAULT_SECRET_ACCESS_KEY,
        "host": server.url,
        "extra": {"resource_pool_id": DEFAULT_RESOURCE_POOL_ID},
    }


def test_extras_are_added_and_none_leaves_one_out(server: EmulatorServer) -> None:
    conn = server.connection(api_version="v2", max_retries=0, resource_pool_id=None)
    assert conn.extra == {"api_version": "v2", "max_retries": 0}


@pytest.mark.parametrize("form", ["json", "uri"])
def test_both_forms_reach_the_emulator_through_the_hook(
    form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with EmulatorServer(access_key_id="ak-form", secret_access_key="s/k+form?&=") as server:
        conn = server.connection(max_retries=1, api_version="v2")
        hook = _hook(monkeypatch, getattr(conn, form))
        config = hook.config  # type: ignore[attr-defined]
        assert (config.access_key_id, config.secret_access_key) == ("ak-form", "s/k+form?&=")
        assert (config.max_retries, config.api_version) == (1, "v2")
        assert config.resource_pool_id == DEFAULT_RESOURCE_POOL_ID
        pools = hook.list_resource_pools()  # type: ignore[attr-defined]
        assert DEFAULT_RESOURCE_POOL_ID in [pool.metadata.id for pool in pools]
        assert server.backend.count("ListResourcePools", 200) == 1


def test_a_uri_of_string_extras_is_plain_query_parameters() -> None:
    conn = connection_to("http://127.0.0.1:8080")
    assert conn.uri == (
        "aihc://aihc-emulator-ak:aihc-emulator-sk@http%3A%2F%2F127.0.0.1%3A8080"
        "?resource_pool_id=cce-emulator0"
    )
    assert replace(conn, extra={}).uri.endswith("%3A8080")


def test_env_names_the_connection(server: EmulatorServer) -> None:
    conn = server.connection()
    assert conn.env() == {CONN_ENV: conn.json}
    assert list(conn.env("aihc_other")) == ["AIRFLOW_CONN_AIHC_OTHER"]


def _printed(*args: str) -> list[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "airflow_provider_aihc.emulator", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        return [process.stdout.readline() for _ in range(3)]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_standalone_server_prints_its_connection_in_both_forms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, as_json, as_uri = _printed()
    url = first.split("listening on ")[1].split()[0]
    assert as_json.startswith(f"AIHC emulator connection (JSON): {CONN_ENV}='")
    assert as_uri.startswith(f"AIHC emulator connection (URI): {CONN_ENV}='aihc://")
    printed_json = as_json.split("='", 1)[1].rstrip().removesuffix("'")
    printed_uri = as_uri.split("='", 1)[1].rstrip().removesuffix("'")
    assert printed_json == connection_to(url).json
    assert printed_uri == connection_to(url).uri


def test_a_secret_given_on_the_command_line_is_never_printed() -> None:
    lines = _printed("--secret-access-key", "not-the-default-secret")
    assert not any("not-the-default-secret" in line for line in lines)
    assert json.loads(lines[1].split("='", 1)[1].rstrip().removesuffix("'"))["password"] == "<SK>"
