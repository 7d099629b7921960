"""The README's and the documentation's snippets are code that runs: their Python blocks
build real tasks, and their connection examples parse into working hook settings."""

from __future__ import annotations

import json
import re
import shlex
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), flags=re.S)


def _exports(name: str) -> list[str]:
    """The values the README and the docs assign to ``name`` in their bash blocks."""
    values = []
    for page in PAGES:
        for block in _blocks(page, "bash"):
            joined = block.replace("\\\n", " ")
            for statement in re.findall(rf"export {name}=('.*?')", joined, flags=re.S):
                values.append(shlex.split(statement)[0])
    return values


def _uris() -> list[str]:
    """The connection URIs written inline (```aihc://...```) in the README and the docs."""
    return [uri for page in PAGES for uri in re.findall(r"`(aihc://[^`]+)`", page.read_text())]


def _operator_classes() -> dict[str, type]:
    from airflow_provider_aihc.operators import aihc as operators
    from airflow_provider_aihc.operators import model_registry, service
    from airflow_provider_aihc.sensors.aihc import AIHCJobSensor
    from airflow_provider_aihc.sensors.service import AIHCServiceSensor
    from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger

    return {
        "AIHCCreateDatasetVersionOperator": model_registry.AIHCCreateDatasetVersionOperator,
        "AIHCRegisterModelVersionOperator": model_registry.AIHCRegisterModelVersionOperator,
        "AIHCDeployServiceOperator": service.AIHCDeployServiceOperator,
        "AIHCUpdateServiceOperator": service.AIHCUpdateServiceOperator,
        "AIHCScaleServiceOperator": service.AIHCScaleServiceOperator,
        "AIHCDeleteServiceOperator": service.AIHCDeleteServiceOperator,
        "AIHCServiceSensor": AIHCServiceSensor,
        "AIHCCreateJobOperator": operators.AIHCCreateJobOperator,
        "AIHCStopJobOperator": operators.AIHCStopJobOperator,
        "AIHCDeleteJobOperator": operators.AIHCDeleteJobOperator,
        "AIHCJobSensor": AIHCJobSensor,
        "AIHCJobTrigger": AIHCJobTrigger,
    }


#: What each page's snippets must leave behind: name -> class name (or "function").
EXPECTED = {
    "README.md": {"train": "AIHCCreateJobOperator", "wait": "AIHCJobSensor",
                  "test_my_training_dag": "function"},
    "docs/quickstart.md": {"train": "AIHCCreateJobOperator", "wait": "AIHCJobSensor"},
    "docs/operators/create_job.md": {"train": "AIHCCreateJobOperator"},
    "docs/operators/stop_job.md": {"stop": "AIHCStopJobOperator"},
    "docs/operators/delete_job.md": {"delete": "AIHCDeleteJobOperator"},
    "docs/sensors/job_sensor.md": {"wait": "AIHCJobSensor"},
    "docs/triggers/job_trigger.md": {"trigger": "AIHCJobTrigger"},
    "docs/emulator.md": {"test_my_training_dag_fails_with_its_job": "function"},
    "docs/results.md": {"train": "AIHCCreateJobOperator", "promote": "function"},
    "docs/taskflow.md": {"train": "function", "fit": "function", "test_my_dag": "function"},
    "docs/hook.md": {"gpu_usage": "function"},
    "docs/operators/create_dataset_version.md": {
        "data_version": "AIHCCreateDatasetVersionOperator"},
    "docs/operators/register_model_version.md": {
        "model_version": "AIHCRegisterModelVersionOperator"},
    "docs/operators/deploy_service.md": {"deploy": "AIHCDeployServiceOperator"},
    "docs/operators/update_service.md": {"roll": "AIHCUpdateServiceOperator"},
    "docs/operators/scale_delete_service.md": {
        "night": "AIHCScaleServiceOperator", "gone": "AIHCDeleteServiceOperator"},
    "docs/sensors/service_sensor.md": {"ready": "AIHCServiceSensor"},
    "docs/testing.md": {"test_nightly_finetune": "function",
                        "test_nightly_finetune_fails_with_its_job": "function"},
}  # fmt: skip


def _run_blocks(page: Path) -> dict[str, object]:
    try:
        from airflow.sdk import DAG
    except ImportError:  # Airflow 2.11
        from airflow import DAG  # type: ignore[assignment,no-redef]

    namespace: dict[str, object] = {}
    with DAG("snippets", start_date=datetime(2025, 1, 1), schedule=None):
        for block in _blocks(page, "python"):
            exec(compile(block, str(page), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("page", sorted(EXPECTED))
def test_the_python_snippets_build_what_they_show(page):
    namespace = _run_blocks(ROOT / page)

    classes = _operator_classes()
    for name, kind in EXPECTED[page].items():
        if kind == "function":
            assert callable(namespace[name]), f"{page}: {name}"
        else:
            assert isinstance(namespace[name], classes[kind]), f"{page}: {name} is no {kind}"


def test_every_page_with_python_snippets_is_checked():
    with_python = {str(p.relative_to(ROOT)) for p in PAGES if _blocks(p, "python")}
    assert with_python == set(EXPECTED)


def test_the_readme_dag_is_the_one_it_describes():
    namespace = _run_blocks(README)

    assert namespace["train"].job_resources == {"baidu.com/a800_80g_cgpu": 8}
    assert namespace["wait"].deferrable is True
    assert len(README.read_text()) <= 5000  # one screen or two; the rest is in docs/


@pytest.mark.parametrize("value", _exports("AIRFLOW_CONN_AIHC_DEFAULT") + _uris())
def test_the_connection_examples_parse_into_hook_settings(monkeypatch, value):
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    if value.startswith("{"):
        json.loads(value)  # the JSON form is valid JSON
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", value)

    config = AIHCHook().config

    if "aihc-emulator-ak" in value:  # the emulator's own URI, its host encoded
        assert (config.base_url, config.resource_pool_id) == (
            "http://127.0.0.1:8080", "cce-emulator0")  # fmt: skip
        return
    assert config.base_url == "https://aihc.bj.baidubce.com"
    assert config.access_key_id == "<AK>"
    assert config.resource_pool_id == "cce-xxxxxxxx"


def test_both_connection_forms_are_shown():
    forms = _exports("AIRFLOW_CONN_AIHC_DEFAULT") + _uris()
    assert any(f.startswith("{") for f in forms)
    assert any(f.startswith("aihc://") for f in forms)
    assert any(f.startswith("aihc://") for f in _exports("AIRFLOW_CONN_AIHC_DEFAULT"))
