"""The decorators are registered, and typed like the operator they make."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from airflow_provider_aihc.decorators import aihc_python_task, aihc_task
from airflow_provider_aihc.get_provider_info import get_provider_info
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

#: Decorator parameters that are not the operator's.
OWN = {"python_callable", "multiple_outputs"}
#: The operator parameter the function itself provides.
MADE = {"command"}


def _parameters(function: Any) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(function).parameters)


@pytest.mark.parametrize("decorator", [aihc_task, aihc_python_task])
def test_every_operator_parameter_is_a_typed_keyword_of_the_decorator(decorator: Any) -> None:
    """An IDE completes what the operator takes: same names, kinds, annotations and
    defaults (the wait excepted: a TaskFlow task waits for its job by default)."""
    operator = _parameters(AIHCCreateJobOperator.__init__)
    operator.pop("self")
    ours = _parameters(decorator)

    assert set(ours) - OWN == set(operator) - MADE
    for name, parameter in operator.items():
        if name in MADE:
            continue
        mine = ours[name]
        assert mine.kind == parameter.kind, name
        assert mine.annotation == parameter.annotation, name
        expected = True if name == "wait_for_completion" else parameter.default
        assert mine.default == expected, name


def test_both_decorators_are_registered_where_airflow_reads_them() -> None:
    import importlib

    registered = {d["name"]: d["class-name"] for d in get_provider_info()["task-decorators"]}

    assert set(registered) == {"aihc", "aihc_python"}
    for name, path in registered.items():
        module, attribute = path.rsplit(".", 1)
        assert (
            getattr(importlib.import_module(module), attribute)
            is {
                "aihc": aihc_task,
                "aihc_python": aihc_python_task,
            }[name]
        )


def test_airflow_finds_them_as_task_attributes() -> None:
    """``task.aihc`` and ``task.aihc_python`` resolve through Airflow's ProvidersManager."""
    from airflow.providers.common.compat.sdk import task

    assert task.aihc is aihc_task
    assert task.aihc_python is aihc_python_task
