"""The README's snippets are code that runs: its Python blocks build real tasks, and its
connection examples parse into working hook settings."""

from __future__ import annotations

import json
import re
import shlex
from datetime import datetime
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
BASH_BLOCKS = re.findall(r"```bash\n(.*?)```", README, flags=re.S)


def _exports(name: str) -> list[str]:
    """The values the README assigns to ``name`` in its bash blocks."""
    values = []
    for block in BASH_BLOCKS:
        joined = block.replace("\\\n", " ")
        for statement in re.findall(rf"export {name}=('.*?')", joined, flags=re.S):
            values.append(shlex.split(statement)[0])
    return values


def test_the_python_snippets_build_the_tasks_they_show():
    try:
        from airflow.sdk import DAG
    except ImportError:  # Airflow 2.11
        from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
    from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

    assert len(PYTHON_BLOCKS) >= 3
    namespace: dict[str, object] = {}
    with DAG("readme", start_date=datetime(2025, 1, 1), schedule=None) as dag:
        for block in PYTHON_BLOCKS:
            exec(compile(block, "README.md", "exec"), namespace)

    tasks = {task.task_id: task for task in dag.tasks}
    assert isinstance(tasks["train"], AIHCCreateJobOperator)
    assert isinstance(tasks["wait"], AIHCJobSensor)
    assert tasks["train"].job_resources == {"baidu.com/a800_80g_cgpu": 8}
    assert "test_my_training_dag" in namespace  # the emulator fixture example is a test


@pytest.mark.parametrize("value", _exports("AIRFLOW_CONN_AIHC_DEFAULT"))
def test_the_connection_examples_parse_into_hook_settings(monkeypatch, value):
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    if value.startswith("{"):
        json.loads(value)  # the JSON form is valid JSON
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", value)

    config = AIHCHook().config

    assert config.base_url == "https://aihc.bj.baidubce.com"
    assert config.access_key_id == "<AK>"
    assert config.resource_pool_id == "cce-xxxxxxxx"


def test_both_connection_forms_are_shown():
    forms = _exports("AIRFLOW_CONN_AIHC_DEFAULT")
    assert any(f.startswith("{") for f in forms)
    assert any(f.startswith("aihc://") for f in forms)
