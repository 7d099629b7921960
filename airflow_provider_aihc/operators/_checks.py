"""What is wrong with a task's input (the create operator's, the sensor's), found before
anything is sent.

:func:`literal_problems` checks the create operator's literal parameters when it is
constructed: at DAG parse.  A nightly DAG whose ``replicas=-2`` is found only when its task
runs fails at 02:00; found here, it is a DAG import error naming the field, seen as soon as
the file is saved.  Only values no template or XCom can change are checked (a string
without Jinja marks, a number, a bool); everything else waits for ``build_request`` (run
time, or ``validate()`` in a DAG's CI).  Each problem is said with the text and the field
label the run-time validation uses (the rules are shared: :mod:`airflow_provider_aihc.
job_parameters` and the functions here; a test holds the two equal).

Standard library only at import: the operator module imports this at DAG parse.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from collections.abc import Callable

    from airflow_provider_aihc.hooks.aihc import AIHCHook

#: Context keys a run without a logical date lacks (Airflow 3 manual, API, asset runs).
LOGICAL_DATE_KEYS = ("ds", "ds_nodash", "ts", "ts_nodash", "logical_date", "data_interval")


def template_problem(error: Exception) -> str:
    """What is wrong with a template, with a hint when it needs a logical date."""
    import jinja2

    problem = f"template does not render: {error}"
    if isinstance(error, jinja2.UndefinedError) and any(
        f"'{key}" in str(error) for key in LOGICAL_DATE_KEYS
    ):
        problem += (
            " (runs without a logical date have no ds, ts or logical_date: manual, API "
            "and asset-triggered runs on Airflow 3; use run_id or dag_run.run_after)"
        )
    return problem


def connection_problems(hook: AIHCHook) -> list[tuple[str, str]]:
    """What is wrong with the task's connection, as ``("aihc_conn_id", problem)``: it is not
    defined, or a field of it cannot work.  Empty when the connection is usable."""
    from airflow_provider_aihc.exceptions import AIHCConfigError
    from airflow_provider_aihc.version_compat import AirflowNotFoundException

    try:
        hook.config  # noqa: B018 - reads the connection; names what is unusable
    except AIHCConfigError as err:
        return [("aihc_conn_id", str(err))]
    except AirflowNotFoundException:
        unparsed = unparsed_env_connection(hook.aihc_conn_id)
        if unparsed:
            return [("aihc_conn_id", unparsed)]
        return [("aihc_conn_id", f"connection {hook.aihc_conn_id!r} is not defined")]
    return []


def unparsed_env_connection(conn_id: str) -> str | None:
    """Why ``AIRFLOW_CONN_<ID>`` is set but is no connection, or ``None``: Airflow's
    environment backend skips a value it cannot parse, and the connection then reads as
    "not defined", sending the user looking for a missing variable."""
    import os

    name = f"AIRFLOW_CONN_{conn_id.upper()}"
    value = os.environ.get(name)
    if not value:
        return None
    try:
        from airflow.models.connection import Connection
    except ImportError:  # pragma: no cover - Airflow without airflow-core
        return None
    try:
        if value.lstrip().startswith("{"):
            Connection.from_json(value, conn_id=conn_id)
        else:
            Connection(conn_id=conn_id, uri=value)
    except Exception as err:  # what Airflow's parser says, whatever it raises
        return (
            f"connection {conn_id!r} is set in {name} but does not parse ({err}); in a URI, "
            "URL-encode a host that carries a scheme (aihc://AK:SK@http%3A%2F%2Fhost%3Aport) "
            "or use the JSON form (docs/connection.md)"
        )
    return None


def wait_problems(poll_interval: Any, timeout: Any) -> list[tuple[str, str]]:
    """What is wrong with the waiting parameters, as ``(parameter, problem)`` pairs."""
    problems = []
    if not _seconds(poll_interval) > 0:  # NaN compares False
        problems.append(("poll_interval", f"must be seconds > 0, got {poll_interval!r}"))
    if timeout is not None and not _seconds(timeout) >= 0:
        problems.append(("timeout", f"must be seconds >= 0 or None, got {timeout!r}"))
    return problems


def queue_timeout_problems(value: object) -> list[tuple[str, str]]:
    """``[("queue_timeout", problem)]`` unless ``value`` is ``None`` or seconds > 0."""
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return [("queue_timeout", f"must be seconds > 0 or None, got {value!r}")]
    return []


def _seconds(value: Any) -> float:
    """``value`` as a finite number of seconds, else NaN (a bool, ``inf``, ``"abc"``, ...)."""
    if isinstance(value, bool):
        return math.nan
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return seconds if math.isfinite(seconds) else math.nan


def managed_queue_problems(
    pool: str, queue: str | None, is_managed: Callable[[str], bool]
) -> list[tuple[str, str]]:
    """``[("queue (job_queue)", problem)]`` when ``pool`` is a managed pool and ``queue``
    names no queue id: every call after the create must carry the queue's id there
    (bce-sdk-go ``services/aihc/resource/client.go:175-177``; "托管资源池须填入队列Id":
    bce-openapi-meta ``i18n/zh-CN/aihc/StopJob.json:4``), and ``default`` is a name.

    :param is_managed: the hook's
        :meth:`~airflow_provider_aihc.hooks.aihc.AIHCHook.is_managed_pool`, asked only
        when ``queue`` names no queue (it may ask AIHC).
    """
    if (queue and queue != "default") or not is_managed(pool):
        return []
    return [
        (
            "queue (job_queue)",
            f"resource pool {pool!r} is managed: job_queue must be the id of one of its "
            f"queues (aihcq-...), which AIHC needs on every call for the job; got {queue!r}",
        )
    ]


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
