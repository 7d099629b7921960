"""Registry passwords and env tokens are registered with Airflow's masker on the path both
plain and mapped tasks render by (security review F1, F2), in every accepted spelling and
form, and validation errors never echo them."""

from __future__ import annotations

import json
import uuid
from typing import Any

import jinja2
import pytest

from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.models.build import build_create_request
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

if AIRFLOW_V_3_0_PLUS:
    from airflow.sdk.log import redact
else:  # pragma: no cover - exercised by the Airflow 2.11 test run
    from airflow.utils.log.secrets_masker import redact

BASE: dict[str, Any] = {"image": "i", "command": "c"}


def secret(kind: str) -> str:
    """A value no earlier test registered (the masker is process-wide)."""
    return f"{kind}-{uuid.uuid4().hex[:12]}"


def render(operator: AIHCCreateJobOperator, *, mapped: bool = False) -> None:
    context: dict[str, Any] = {"params": {}}
    if mapped:  # what MappedOperator.render_template_fields calls on the unmapped task
        operator._do_render_template_fields(
            operator, operator.template_fields, context, jinja2.Environment(), set()
        )
    else:
        operator.render_template_fields(context, jinja2.Environment())


def hidden(value: str) -> bool:
    return redact(f"logged {value}") == "logged ***"


@pytest.mark.parametrize("mapped", [False, True], ids=["plain", "mapped"])
@pytest.mark.parametrize(
    "form",
    ["dict", "json_text", "python_literal", "body_snake", "body_literal", "body_job_spec"],
)
def test_a_registry_password_is_masked_in_every_form(form: str, mapped: bool) -> None:
    password = secret("RegPw")
    config = {"username": "robot", "password": password}
    params: dict[str, Any] = dict(BASE)
    if form == "dict":
        params["image_config"] = config
    elif form == "json_text":
        params["image_config"] = json.dumps(config)
    elif form == "python_literal":  # what "{{ var.json.registry }}" renders to
        params["image_config"] = str(config)
    elif form == "body_snake":
        params["body"] = json.dumps({"jobSpec": {"image_config": config}})
    elif form == "body_literal":
        params["body"] = str({"jobSpec": {"imageConfig": config}})
    else:
        params["body"] = {"job_spec": {"image_config": config}}
    operator = AIHCCreateJobOperator(task_id="train", **params)
    assert not hidden(password)
    render(operator, mapped=mapped)
    assert hidden(password)


@pytest.mark.parametrize("mapped", [False, True], ids=["plain", "mapped"])
@pytest.mark.parametrize("form", ["camel", "snake_text", "parameter", "parameter_text"])
def test_a_code_sources_bos_token_is_masked(form: str, mapped: bool) -> None:
    """v1 ``codeSource.bosTemporaryToken`` (bce-sdk-go ``CodeSourceV3``) reads a BOS object:
    in ``body`` or in the ``code_source`` parameter, as a dict or as text."""
    token = secret("BosTok")
    params: dict[str, Any] = dict(BASE)
    source = {"bosBucket": "b", "bosTemporaryToken": token}
    if form == "camel":
        params["body"] = {"codeSource": source}
    elif form == "snake_text":
        params["body"] = json.dumps(
            {"code_source": {"bos_bucket": "b", "bos_temporary_token": token}}
        )
    else:
        params["code_source"] = source if form == "parameter" else json.dumps(source)
    operator = AIHCCreateJobOperator(task_id="train", **params)
    assert not hidden(token)
    render(operator, mapped=mapped)
    assert hidden(token)


@pytest.mark.parametrize("mapped", [False, True], ids=["plain", "mapped"])
@pytest.mark.parametrize("form", ["dict", "list", "json_text", "python_literal", "in_body"])
def test_a_sensitive_env_value_is_masked_in_every_form(form: str, mapped: bool) -> None:
    token, plain = secret("hf"), secret("visible")
    pairs = {"HF_TOKEN": token, "NUM_WORKERS_SETTING": plain}
    listed = [{"name": k, "value": v} for k, v in pairs.items()]
    envs: Any = {
        "dict": pairs,
        "list": listed,
        "json_text": json.dumps(pairs),
        "python_literal": str(listed),
        "in_body": None,
    }[form]
    params: dict[str, Any] = dict(BASE, envs=envs)
    if form == "in_body":
        params["body"] = json.dumps({"jobSpec": {"envs": listed}})
    operator = AIHCCreateJobOperator(task_id="train", **params)
    render(operator, mapped=mapped)
    assert hidden(token)
    assert not hidden(plain)  # only names that look secret (Airflow's rule)


def test_an_invalid_request_still_has_its_secrets_masked() -> None:
    password, token, bos = secret("RegPw"), secret("tok"), secret("BosTok")
    operator = AIHCCreateJobOperator(
        task_id="train",
        image="i",
        command="c",
        replicas="{{ 0 }}",  # invalid when rendered: the walk, not the request, finds them
        image_config={"username": "u", "password": password},
        envs={"API_TOKEN": token},
        code_source={"bosTemporaryToken": bos},
    )
    render(operator)
    assert hidden(password)
    assert hidden(token)
    assert hidden(bos)


def test_the_mapped_path_loads_the_body_file(tmp_path: Any) -> None:
    password = secret("RegPw")
    (tmp_path / "job.json").write_text(
        json.dumps(
            {
                "jobSpec": {
                    "image": "i",
                    "command": "c",
                    "imageConfig": {"username": "u", "password": password},
                }
            }
        )
    )
    operator = AIHCCreateJobOperator(task_id="train", body="job.json")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(tmp_path)))
    operator._do_render_template_fields(operator, operator.template_fields, {}, env, set())
    assert json.loads(str(operator.body))["jobSpec"]["image"] == "i"
    assert hidden(password)


def test_the_mapped_path_names_the_field_that_does_not_render() -> None:
    operator = AIHCCreateJobOperator(task_id="train", image="{{ missing.attr }}", command="c")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    with pytest.raises(AIHCValidationError) as raised:
        operator._do_render_template_fields(operator, operator.template_fields, {}, env, set())
    assert [field for field, _ in raised.value.errors] == ["image"]


@pytest.mark.parametrize("value", [["hf_ECHOED_1"], {"v": "hf_ECHOED_2"}])
@pytest.mark.parametrize("form", ["list", "dict"])
def test_a_validation_error_never_echoes_an_env_value(value: object, form: str) -> None:
    envs: Any = [{"name": "HF_TOKEN", "value": value}] if form == "list" else {"HF": value}
    with pytest.raises(AIHCValidationError) as raised:
        build_create_request(image="i", command="c", name="n", envs=envs)
    text = str(raised.value)
    assert "jobSpec.envs[0].value" in text
    assert "hf_ECHOED" not in text
