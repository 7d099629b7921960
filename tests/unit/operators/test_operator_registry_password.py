"""The private-registry password of ``image_config`` is masked like the secret key as soon
as the operator's fields are rendered: before rendered fields are stored or anything logs."""

from __future__ import annotations

import json
from typing import Any

import jinja2
import pytest

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

if AIRFLOW_V_3_0_PLUS:
    from airflow.sdk.log import redact
else:  # pragma: no cover - exercised by the Airflow 2.11 test run
    from airflow.utils.log.secrets_masker import redact


@pytest.mark.parametrize(
    ("where", "password"),
    [
        ("image_config", "pw-dict-41c7"),
        ("image_config_json", "pw-json-9d02"),
        ("body", "pw-body-77ae"),
    ],
)
def test_the_password_is_registered_with_the_masker_when_rendered(
    aihc_emulator: EmulatorServer, where: str, password: str
) -> None:
    config = {"username": "robot", "password": "{{ params.pw }}"}
    params: dict[str, Any] = {"image": "i", "command": "c"}
    if where == "image_config":
        params["image_config"] = config
    elif where == "image_config_json":
        params["image_config"] = json.dumps(config)
    else:
        params["body"] = {"jobSpec": {"imageConfig": config}}
    operator = AIHCCreateJobOperator(task_id="train", **params)
    assert redact(f"logged {password}") == f"logged {password}"  # not yet known

    operator.render_template_fields({"params": {"pw": password}}, jinja2.Environment())

    assert redact(f"logged {password}") == "logged ***"
    request, _ = operator.build_request(default_name="train")
    assert password not in repr(request)
    assert aihc_emulator.backend.requests == []
