"""The create operator's secret-bearing parameters (``envs``, ``image_config``,
``code_source``, ``body``)
behave as plain attributes, but none of their values is in the instance ``__dict__``, the
part of an operator that OpenLineage's full task info lists (the whole path, listener and
redaction included: tests/e2e/test_lineage_events.py)."""

from __future__ import annotations

import copy
import json

import jinja2

from airflow_provider_aihc.operators._sealed import STORE, Sealed
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

TOKEN = "hf-sealed-canary-31"
PASSWORD = "registry-sealed-canary-77"
BOS_TOKEN = "bos-sealed-canary-53"


def _operator() -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(
        task_id="train",
        image="busybox",
        command="true",
        envs={"HF_TOKEN": "{{ params.token }}"},
        image_config={"username": "bot", "password": PASSWORD},
        code_source={"bosBucket": "code", "bosTemporaryToken": BOS_TOKEN},
        body='{"jobSpec": {"imageConfig": {"password": "' + PASSWORD + '"}}}',
    )


def _full_task_info(operator: AIHCCreateJobOperator) -> str:
    """The ``task`` of OpenLineage's ``airflow`` run facet with ``include_full_task_info``."""
    from airflow.providers.openlineage.utils.utils import TaskInfoComplete

    return json.dumps(TaskInfoComplete(operator), default=repr)


def test_the_parameters_read_and_render_as_attributes_outside_the_instance_dict() -> None:
    operator = _operator()
    operator.render_template_fields({"params": {"token": TOKEN}}, jinja2.Environment())

    assert operator.envs == {"HF_TOKEN": TOKEN}
    assert operator.image_config == {"username": "bot", "password": PASSWORD}
    assert PASSWORD in operator.body
    info = json.loads(_full_task_info(operator))
    assert info["image"] == "busybox"  # the full task info: every attribute, but these
    assert operator.code_source == {"bosBucket": "code", "bosTemporaryToken": BOS_TOKEN}
    assert not {"envs", "image_config", "code_source", "body"} & set(info)
    assert info[STORE] == "<sealed: body, code_source, envs, image_config>"
    text = json.dumps(info)
    assert TOKEN not in text
    assert PASSWORD not in text
    assert BOS_TOKEN not in text


def test_an_unset_parameter_reads_none_and_copies_are_independent() -> None:
    operator = AIHCCreateJobOperator(task_id="train", image="busybox", command="true")
    assert (operator.envs, operator.image_config, operator.body) == (None, None, None)

    operator.envs = {"A_KEY": "one"}
    clone = copy.deepcopy(operator)
    clone.envs["A_KEY"] = "two"

    assert operator.envs == {"A_KEY": "one"}
    assert isinstance(vars(clone)[STORE], Sealed)
    assert vars(clone)[STORE] is not vars(operator)[STORE]


def test_a_shallow_copy_renders_without_rewriting_the_original() -> None:
    """Airflow's ``prepare_for_execution`` is ``copy.copy``; the copy is then rendered.
    Regression: the shared store let the copy's rendered values replace the original's."""
    operator = AIHCCreateJobOperator(
        task_id="train", image="busybox", command="true", envs={"RUN": "{{ run_id }}"}
    )
    clone = copy.copy(operator)
    clone.envs = {"RUN": "manual__1"}
    clone.body = {"name": "x"}

    assert operator.envs == {"RUN": "{{ run_id }}"}
    assert operator.body is None
    assert clone.envs == {"RUN": "manual__1"}
