"""What is wrong with a task's input (the create operator's, the sensor's), found before
anything is sent."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

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
        return [("aihc_conn_id", f"connection {hook.aihc_conn_id!r} is not defined")]
    return []


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
