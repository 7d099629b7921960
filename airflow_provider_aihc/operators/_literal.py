"""The create operator's literal parameters, checked when it is constructed: at DAG parse.

A nightly DAG whose ``replicas=-2`` is found only when its task runs fails at 02:00; found
here, it is a DAG import error naming the field, seen as soon as the file is saved.  Only
values that no template or XCom can change are checked (a string without Jinja marks, a
number, a bool); everything else waits for :meth:`AIHCCreateJobOperator.build_request`
(run time, or :meth:`~AIHCCreateJobOperator.validate` in a DAG's CI).  Each problem is
said with the text and the field label the run-time validation uses (the rules are shared:
:mod:`airflow_provider_aihc.job_parameters`, :mod:`airflow_provider_aihc.operators._checks`;
a test holds the two equal), so a mistake reads the same whenever it is found.

Standard library only, as everything the operator module needs at DAG parse.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_aihc.job_parameters import (
    JOB_FRAMEWORKS,
    MANAGED_POOL_IDS,
    MAX_COUNT,
    PRIORITIES,
    field,
    name_problem,
    period_problem,
    show,
)
from airflow_provider_aihc.operators._checks import (
    managed_queue_problems,
    queue_timeout_problems,
    wait_problems,
)

__all__ = ["is_literal", "literal_problems"]

#: What makes a string a Jinja template (Airflow's default delimiters).
_TEMPLATE_MARKS = ("{{", "{%", "{#")
#: Parameters that name one of a few values.
_CHOICES = {"priority": PRIORITIES, "job_framework": JOB_FRAMEWORKS}
#: Parameters that are a duration such as ``1d``.
_PERIODS = ("retention_period", "max_running_time")


def is_literal(value: object) -> bool:
    """Whether ``value`` is what the task will send, whatever the run: not a template, an
    XCom or any object rendered later."""
    if isinstance(value, str):
        return not any(mark in value for mark in _TEMPLATE_MARKS)
    return isinstance(value, bool | int | float)


def _label(parameter: str) -> str:
    """The run-time label of a parameter's field: ``jobSpec.replicas (replicas)``."""
    return f"{field(parameter).wire} ({parameter})"


def _required(parameter: str, value: object, body: object) -> list[tuple[str, str]]:
    """A required text field: given neither by itself nor by ``body``, or blank."""
    if value is None and body is None:
        return [(field(parameter).wire, f"required; pass {parameter}= or set it in body")]
    if isinstance(value, str) and is_literal(value) and not value.strip():
        return [(_label(parameter), f"must not be empty or blank, got {show(value)}")]
    return []


def literal_problems(given: dict[str, Any], *, command_made_by_task: bool) -> list[tuple[str, str]]:
    """``(field, problem)`` for each literal parameter that cannot work.

    :param given: the operator's parameters, by name, as passed.
    :param command_made_by_task: the command is made when the task runs (the decorators').
    """
    body = given.get("body")
    problems = _required("image", given.get("image"), body)
    if not command_made_by_task:
        problems += _required("command", given.get("command"), body)
    name = given.get("name")
    if isinstance(name, str) and is_literal(name):
        problem = name_problem(name)
        problems += [(_label("name"), problem)] if problem else []
    replicas = given.get("replicas")
    if isinstance(replicas, int) and not isinstance(replicas, bool):
        if replicas < 1:
            problems.append((_label("replicas"), f"must be >= 1, got {show(replicas)}"))
        elif replicas > MAX_COUNT:
            problems.append((_label("replicas"), f"must be <= {MAX_COUNT}, got {show(replicas)}"))
    for parameter, allowed in _CHOICES.items():
        value = given.get(parameter)
        if is_literal(value) and value not in allowed:
            problem = f"must be one of {', '.join(allowed)}; got {show(value)}"
            problems.append((_label(parameter), problem))
    for parameter in _PERIODS:
        value = given.get(parameter)
        if isinstance(value, str) and is_literal(value):
            problem = period_problem(value)
            problems += [(_label(parameter), problem)] if problem else []
    if given.get("wait_for_completion"):
        problems += wait_problems(given.get("poll_interval"), given.get("timeout"))
        problems += queue_timeout_problems(given.get("queue_timeout"))
    pool, queue = given.get("resource_pool_id"), given.get("job_queue")
    if isinstance(pool, str) and is_literal(pool) and body is None and queue in (None, "default"):
        problems += managed_queue_problems(pool, "default", MANAGED_POOL_IDS.__contains__)
    return problems
