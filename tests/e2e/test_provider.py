"""Airflow sees the provider: its metadata, the ``aihc`` connection type and its form."""

from __future__ import annotations

import json
import subprocess

import pytest
from e2e_paths import AIRFLOW

from airflow_provider_aihc.get_provider_info import get_provider_info
from airflow_provider_aihc.hooks._connection import (
    API_VERSIONS,
    DEFAULT_CONNECT_TIMEOUT_SECONDS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_SECONDS,
    REGION_HOSTS,
)

pytestmark = pytest.mark.dagrun

#: The connection's extras and the Airflow 2 form field of each (Airflow 2 accepts text,
#: integer, password and boolean fields only: any other drops the connection type).
EXTRAS = {
    "region": "StringField",
    "resource_pool_id": "StringField",
    "security_token": "PasswordField",
    "api_version": "StringField",
    "timeout": "StringField",
    "connect_timeout": "StringField",
    "max_retries": "IntegerField",
}


def _airflow(*args: str) -> str:
    done = subprocess.run([AIRFLOW, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_airflow_lists_the_provider_under_its_distribution_name(airflow_db):
    listed = json.loads(_airflow("providers", "list", "--output", "json"))

    [ours] = [p for p in listed if p["package_name"] == "airflow-provider-aihc"]
    assert ours["version"] == get_provider_info()["versions"][0]


def test_a_connection_added_with_type_aihc_keeps_it(airflow_db):
    _airflow(
        "connections", "add", "aihc_cli_check", "--conn-type", "aihc",
        "--conn-login", "AK", "--conn-password", "SK", "--conn-host", "aihc.bj.baidubce.com",
        "--conn-extra", '{"resource_pool_id": "cce-1"}',
    )  # fmt: skip
    try:
        [conn] = json.loads(_airflow("connections", "get", "aihc_cli_check", "--output", "json"))
        assert conn["conn_type"] == "aihc"
        assert conn["host"] == "aihc.bj.baidubce.com"
    finally:
        _airflow("connections", "delete", "aihc_cli_check")


def test_the_hook_and_connection_type_are_registered():
    info = get_provider_info()
    [conn_type] = info["connection-types"]
    assert conn_type["connection-type"] == "aihc"
    assert conn_type["hook-class-name"] == "airflow_provider_aihc.hooks.aihc.AIHCHook"
    assert set(conn_type["conn-fields"]) == set(EXTRAS)
    assert conn_type["conn-fields"]["security_token"]["schema"]["format"] == "password"


def test_the_form_offers_the_regions_the_hook_knows_and_shows_its_defaults():
    """Region as a drop-down, the timeouts and retries as fields with defaults."""
    fields = get_provider_info()["connection-types"][0]["conn-fields"]
    assert fields["region"]["schema"]["enum"] == list(REGION_HOSTS)
    assert fields["api_version"]["schema"]["enum"] == list(API_VERSIONS)  # the hook's own
    defaults = {name: fields[name]["schema"].get("default") for name in fields}
    assert defaults["timeout"] == DEFAULT_TIMEOUT_SECONDS
    assert defaults["connect_timeout"] == DEFAULT_CONNECT_TIMEOUT_SECONDS
    assert defaults["max_retries"] == DEFAULT_MAX_RETRIES
    assert fields["max_retries"]["schema"]["type"] == ["integer", "null"]


def test_the_connection_form_builds_on_airflow_2():
    pytest.importorskip("flask_appbuilder", reason="Airflow 3 renders conn-fields instead")
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    widgets = AIHCHook.get_connection_form_widgets()

    assert set(widgets) == set(EXTRAS)
    kinds = {name: widget.field_class.__name__ for name, widget in widgets.items()}
    assert kinds == EXTRAS
    assert all(region in widgets["region"].kwargs["description"] for region in REGION_HOSTS)
    assert float(widgets["timeout"].kwargs["default"]) == DEFAULT_TIMEOUT_SECONDS
    assert widgets["max_retries"].kwargs["default"] == DEFAULT_MAX_RETRIES
    assert AIHCHook.get_ui_field_behaviour()["relabeling"]["login"] == "Access Key ID"


@pytest.mark.parametrize(
    ("field", "value", "valid"),
    [
        ("region", "cn-beijing", True),
        ("region", "", True),
        ("region", "mars-1", False),
        ("timeout", "0.5", True),
        ("timeout", "abc", False),
        ("max_retries", "3", True),
        ("max_retries", "-1", False),
    ],
)
def test_the_airflow_2_form_accepts_only_what_the_connection_can_use(
    field: str, value: str, valid: bool
) -> None:
    pytest.importorskip("flask_appbuilder", reason="Airflow 3 renders conn-fields instead")
    from flask import Flask
    from werkzeug.datastructures import MultiDict
    from wtforms import Form

    from airflow_provider_aihc.hooks.aihc import AIHCHook

    form_class = type("AIHCForm", (Form,), AIHCHook.get_connection_form_widgets())
    with Flask(__name__).test_request_context():
        form = form_class(MultiDict({field: value}))
        assert form.validate() is valid, form.errors
