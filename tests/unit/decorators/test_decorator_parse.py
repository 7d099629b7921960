"""What a DAG file pays and gets when it uses the decorators, before any task runs."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime
from typing import Any

import pytest

from airflow_provider_aihc.decorators.aihc import AIHCCommandDecoratedOperator, aihc_task
from airflow_provider_aihc.decorators.aihc_python import (
    AIHCPythonDecoratedOperator,
    aihc_python_task,
)
from airflow_provider_aihc.exceptions import AIHCValidationError

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]


def test_a_dag_file_using_both_decorators_loads_no_hook_model_or_http_client() -> None:
    """DAG parsing stays cheap: beyond what Airflow's own decorators load, nothing of the
    hook, the pydantic models or an HTTP client."""
    code = (
        "import sys\n"
        "from airflow.providers.common.compat.sdk import DecoratedOperator, task\n"
        "before = set(sys.modules)\n"  # what Airflow's own decorators load
        "from airflow_provider_aihc.decorators import aihc_task, aihc_python_task\n"
        "@aihc_task(image='i')\n"
        "def a() -> str:\n"
        "    return 'true'\n"
        "@aihc_python_task(image='i')\n"
        "def b() -> None:\n"
        "    pass\n"
        "heavy = [m for m in set(sys.modules) - before if m.startswith(("
        "'airflow_provider_aihc.hooks', 'airflow_provider_aihc.models', 'pydantic', "
        "'aiohttp', 'requests'))]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def _task(decorator: Any, function: Any, **kwargs: Any) -> Any:
    with DAG("decorated", start_date=datetime(2025, 1, 1), schedule=None):
        return decorator(function, **kwargs)().operator


def test_the_decorated_task_is_the_operator_waiting_by_default() -> None:
    def train() -> str:
        return "python train.py"

    operator = _task(aihc_task, train, image="img", replicas=2, aihc_conn_id="other")

    assert isinstance(operator, AIHCCommandDecoratedOperator)
    assert (operator.image, operator.replicas, operator.aihc_conn_id) == ("img", 2, "other")
    assert operator.wait_for_completion is True
    assert {"op_args", "op_kwargs", "image", "envs", "body"} <= set(operator.template_fields)


def test_default_args_still_reach_parameters_the_decorator_was_not_given() -> None:
    def train() -> str:
        return "true"

    with DAG(
        "defaults",
        start_date=datetime(2025, 1, 1),
        schedule=None,
        default_args={"aihc_conn_id": "from_default_args", "poll_interval": 5},
    ):
        operator = aihc_python_task(train, image="img")().operator
    assert isinstance(operator, AIHCPythonDecoratedOperator)
    assert (operator.aihc_conn_id, operator.poll_interval) == ("from_default_args", 5)


def test_a_command_parameter_is_refused_the_function_makes_it() -> None:
    def train() -> str:
        return "true"

    with pytest.raises(TypeError, match="do not pass command"):
        _task(aihc_task, train, image="img", command="echo")


@pytest.mark.parametrize(
    ("returned", "command"),
    [
        ("python train.py --lr 0.1", "python train.py --lr 0.1"),
        (
            ["python", "train.py", "--name", "my run", "it's"],
            "python train.py --name 'my run' 'it'\"'\"'s'",
        ),
    ],
)
def test_the_command_is_the_string_or_the_shell_quoted_list(returned: Any, command: str) -> None:
    def make() -> Any:
        return returned

    operator = _task(aihc_task, make, image="img")
    assert operator._generate_command({}) == command


@pytest.mark.parametrize("returned", [None, 3, ["ok", 4], "  "])
def test_anything_else_fails_without_retries_naming_the_command(returned: Any) -> None:
    def make() -> Any:
        return returned

    operator = _task(aihc_task, make, image="img")
    with pytest.raises(AIHCValidationError, match="command"):
        operator._generate_command({})


THRESHOLD = 0.5


def test_a_name_from_the_dag_file_is_refused_when_the_task_is_made() -> None:
    """In the job it is a NameError, after the job waited for its GPUs (newcomer trial)."""

    def evaluate(loss: float) -> bool:
        import math  # imported inside: in the job too

        def better(x: float) -> bool:
            return x < THRESHOLD  # a nested function's global counts as well

        return better(math.fabs(loss)) and len(str(loss)) > 0

    with (
        pytest.raises(AIHCValidationError) as refused,
        DAG("outside", start_date=datetime(2025, 1, 1), schedule=None),
    ):
        aihc_python_task(evaluate, image="img")(0.3)
    ((field, problem),) = refused.value.errors
    assert field == "python_callable"
    assert "evaluate() uses 'THRESHOLD' from outside the function" in problem
    assert "'math'" not in problem
    assert "'len'" not in problem


def test_an_enclosing_functions_variable_is_refused_too() -> None:
    limit = 3

    def count() -> int:
        return limit

    with pytest.raises(AIHCValidationError, match="uses 'limit'"):
        _task(aihc_python_task, count, image="img")


def test_a_self_contained_function_is_accepted() -> None:
    def train(rows: int, lr: float = 0.1) -> dict[str, float]:
        import os
        from datetime import datetime

        rank = int(os.environ.get("RANK", "0"))
        return {"lr": lr * rows + rank, "t": datetime.now().timestamp(), "n": float(len([]))}

    with DAG("inside", start_date=datetime(2025, 1, 1), schedule=None):
        operator = aihc_python_task(train, image="img")(rows=10).operator
    assert isinstance(operator, AIHCPythonDecoratedOperator)
