"""What differs between Airflow 2.11 and 3.x and ``airflow.providers.common.compat`` lacks.

Base classes, exceptions, ``conf``, ``mask_secret``, ``redact``, ``Stats`` and ``XCom`` come from
``airflow.providers.common.compat.sdk`` (``airflow.sdk`` on 3.x, the old homes on 2.11) and
are re-exported here so that the package imports them from one place (``XCom`` only when
used: on 2.11 it is ``airflow.models``).  On Airflow 3 the names a DAG file needs are taken
from their home in ``airflow.sdk`` directly, the first choice common.compat itself makes
for each (:data:`_AIRFLOW_3_HOMES`), so that parsing a DAG file does not load common.compat's
three modules and their import tables (issue 37: ~0.4 ms of every parse); common.compat is
still the fallback, and the only source on 2.11.  What stays written out below is what
common.compat does not offer: the version flags (its own are not for other providers to
import), reading a connection off the event loop, and a task instance's state as the DB
holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow import __version__ as _AIRFLOW_VERSION

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import (
        AirflowFailException,
        AirflowNotFoundException,
        AirflowSensorTimeout,
        AirflowSkipException,
        Asset,
        BaseHook,
        BaseOperator,
        BaseOperatorLink,
        BaseSensorOperator,
        Context,
        DecoratedOperator,
        PokeReturnValue,
        TaskDeferred,
        conf,
        mask_secret,
        task_decorator_factory,
    )

#: The names re-exported from ``airflow.providers.common.compat.sdk``, each imported when
#: first asked for: a DAG file that needs ``BaseOperator`` does not pay for ``BaseHook``.
_FROM_COMPAT_SDK = frozenset(
    {
        "AirflowFailException",
        "AirflowNotFoundException",
        "AirflowSensorTimeout",
        "AirflowSkipException",
        "Asset",
        "BaseHook",
        "BaseOperator",
        "BaseOperatorLink",
        "BaseSensorOperator",
        "Context",
        "PokeReturnValue",
        "TaskDeferred",
        "conf",
        "mask_secret",
        "DecoratedOperator",
        "task_decorator_factory",
    }
)
#: On Airflow 3, where the names a DAG file needs live: for each, the first module
#: ``airflow.providers.common.compat.sdk`` (1.23) tries, read from its ``_IMPORT_MAP``.  A name
#: missing there (another 3.x) falls back to common.compat.
_AIRFLOW_3_HOMES = {
    "AirflowSensorTimeout": "airflow.sdk.exceptions",
    "AirflowSkipException": "airflow.sdk.exceptions",
    "BaseOperator": "airflow.sdk",
    "BaseOperatorLink": "airflow.sdk",
    "BaseSensorOperator": "airflow.sdk",
    "Context": "airflow.sdk",
    "DecoratedOperator": "airflow.sdk.bases.decorator",
    "PokeReturnValue": "airflow.sdk",
    "conf": "airflow.sdk.configuration",
    "task_decorator_factory": "airflow.sdk.bases.decorator",
}

_MAJOR, _MINOR = (int(part) for part in _AIRFLOW_VERSION.split(".")[:2])
AIRFLOW_V_3_0_PLUS = (_MAJOR, _MINOR) >= (3, 0)
AIRFLOW_V_3_2_PLUS = (_MAJOR, _MINOR) >= (3, 2)
AIRFLOW_V_3_3_PLUS = (_MAJOR, _MINOR) >= (3, 3)

__all__ = [
    "AIRFLOW_V_3_0_PLUS",
    "AIRFLOW_V_3_2_PLUS",
    "AIRFLOW_V_3_3_PLUS",
    "AirflowFailException",
    "AirflowNotFoundException",
    "AirflowSensorTimeout",
    "AirflowSkipException",
    "Asset",
    "BaseHook",
    "BaseOperator",
    "BaseOperatorLink",
    "BaseSensorOperator",
    "Context",
    "DecoratedOperator",
    "PokeReturnValue",
    "TaskDeferred",
    "aget_connection",
    "aget_task_state",
    "asset_or_time_schedule",
    "conf",
    "get_xcom_value",
    "is_sensitive_name",
    "mask_secret",
    "redact",
    "stats",
    "task_decorator_factory",
]


def asset_or_time_schedule(assets: Sequence[Any], cron: str, *, timezone: str = "UTC") -> Any:
    """A schedule that runs on an update of any of ``assets``, and also on ``cron``.

    Airflow 3's ``AssetOrTimeSchedule``; on 2.11 (datasets) ``DatasetOrTimeSchedule``.
    Imported when called: DAG files that do not use it do not pay for it.

    :param assets: the assets (datasets on 2.11) whose updates trigger a run.
    :param cron: the time schedule, e.g. ``"@weekly"``, as a ``CronTriggerTimetable``.
    :param timezone: the cron's time zone.
    """
    if AIRFLOW_V_3_2_PLUS:
        from airflow.sdk import AssetOrTimeSchedule, CronTriggerTimetable

        timetable = CronTriggerTimetable(cron, timezone=timezone)
        return AssetOrTimeSchedule(timetable=timetable, assets=list(assets))
    if AIRFLOW_V_3_0_PLUS:  # 3.0 and 3.1: not in airflow.sdk yet
        from airflow.timetables.assets import AssetOrTimeSchedule as Schedule
        from airflow.timetables.trigger import CronTriggerTimetable as Trigger

        return Schedule(timetable=Trigger(cron, timezone=timezone), assets=list(assets))
    from airflow.timetables.datasets import DatasetOrTimeSchedule
    from airflow.timetables.trigger import CronTriggerTimetable as Cron

    return DatasetOrTimeSchedule(timetable=Cron(cron, timezone=timezone), datasets=list(assets))


async def aget_connection(conn_id: str) -> Any:
    """Read a connection without blocking the event loop (the triggerer's)."""
    from airflow.providers.common.compat.sdk import BaseHook

    if AIRFLOW_V_3_0_PLUS and hasattr(BaseHook, "aget_connection") and not _in_process_comms():
        return await BaseHook.aget_connection(conn_id)
    from asgiref.sync import sync_to_async

    return await sync_to_async(BaseHook.get_connection)(conn_id)


def _in_process_comms() -> bool:
    """Whether this trigger runs in line under ``dag.test()`` (``airflow dags test``).

    There, Airflow 3 hands the trigger an in-process supervisor whose comms have ``send``
    but no ``asend`` (Airflow 3.3.2's ``InProcessSupervisorComms``), so the async lookup
    skips the metadata DB and a connection stored there (``airflow connections add``, the
    UI) is "not defined"; the sync lookup, through ``send``, finds it.
    """
    try:
        from airflow.sdk.execution_time import task_runner
    except ImportError:  # Airflow 2.11
        return False
    comms = getattr(task_runner, "SUPERVISOR_COMMS", None)
    return comms is not None and not hasattr(comms, "asend")


async def aget_task_state(dag_id: str, task_id: str, run_id: str, map_index: int) -> str | None:
    """A task instance's state as the metadata DB holds it now, read off the event loop.

    For triggers, which must tell a user's mark-failed or clear (the task instance left
    ``deferred``) from a triggerer restart or a handover to another triggerer (it is still
    ``deferred``): in ``cleanup`` before Airflow 3.3, in ``on_kill`` from 3.3.  3.x asks the
    execution API through the triggerer's supervisor (``GetTaskStates``); 2.x reads the DB.
    """
    from asgiref.sync import sync_to_async

    return await sync_to_async(_task_state)(dag_id, task_id, run_id, map_index)


def _task_state(dag_id: str, task_id: str, run_id: str, map_index: int) -> str | None:
    if AIRFLOW_V_3_0_PLUS:
        from airflow.sdk.execution_time.task_runner import RuntimeTaskInstance

        states = RuntimeTaskInstance.get_task_states(
            dag_id=dag_id, task_ids=[task_id], run_ids=[run_id], map_index=map_index
        )
        return _state_text(states.get(run_id, {}).get(task_id))
    from airflow.models.taskinstance import TaskInstance

    instance = TaskInstance.get_task_instance(dag_id, run_id, task_id, map_index)
    return _state_text(None if instance is None else instance.state)


def _state_text(state: Any) -> str | None:
    """The state's value, e.g. ``"deferred"``, whether an enum member or a string."""
    return None if state is None else str(getattr(state, "value", state))


def get_xcom_value(ti_key: Any, key: str) -> Any:
    """The XCom ``key`` of a task instance (``ti_key``: its key, or the runtime instance).

    Operator links read their URL with it: on Airflow 3 in the worker at the end of the task
    (the API server then reads the link's ``xcom_key`` itself); on 2.x in the webserver.
    """
    from airflow.providers.common.compat.sdk import XCom  # airflow.models on 2.11: not at import

    return XCom.get_value(ti_key=ti_key, key=key)


def redact(value: Any) -> Any:
    """``value`` with every secret registered with Airflow's masker replaced by ``***``
    (``airflow.sdk``'s masker on 3.x, ``airflow.utils.log.secrets_masker`` on 2.11)."""
    from airflow.providers.common.compat.sdk import redact as _redact

    return _redact(value)


def is_sensitive_name(name: str) -> bool:
    """Whether Airflow's masker hides a value named ``name`` (an env var, an argument):
    its sensitive-name rule, ``[core] sensitive_var_conn_names`` included.

    ``airflow.sdk._shared.secrets_masker`` on 3.2+, ``airflow.sdk.execution_time`` on
    3.0-3.1, ``airflow.utils.log.secrets_masker`` on 2.11; imported when first called.
    """
    import importlib

    for module in (
        "airflow.sdk._shared.secrets_masker",
        "airflow.sdk.execution_time.secrets_masker",
        "airflow.utils.log.secrets_masker",
    ):
        try:
            rule = importlib.import_module(module).should_hide_value_for_key
        except (ImportError, AttributeError):
            continue
        return bool(rule(name))
    raise ImportError("Airflow's secrets masker was not found")  # pragma: no cover


def min_masked_length() -> int:
    """The shortest value Airflow's masker masks (``[logging] min_length_masked_secret``,
    5 by default): shorter ones would hide every such string in the log.  A bare ``conf``
    inside the module is not served by its ``__getattr__``, and calling that each time
    would look it up again: on 2.11 a failed ``airflow.sdk`` import, whose traceback is
    cyclic garbage, in every trigger that copies logs."""
    conf = globals().get("conf") or __getattr__("conf")
    return int(conf.getint("logging", "min_length_masked_secret", fallback=5))


def stats() -> Any:
    """Airflow's ``Stats`` (StatsD or OpenTelemetry, as configured): ``airflow.stats`` on
    2.11, ``airflow.sdk.observability.stats`` on 3.x; imported when first used."""
    from airflow.providers.common.compat.sdk import Stats

    return Stats


def __getattr__(name: str) -> Any:
    """A name of :data:`_FROM_COMPAT_SDK`, imported when first used: on Airflow 3 from its
    home in :data:`_AIRFLOW_3_HOMES` when it has one there, else from common.compat."""
    if name not in _FROM_COMPAT_SDK:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _from_airflow_3_home(name) if AIRFLOW_V_3_0_PLUS else None
    if value is None:
        from airflow.providers.common.compat import sdk

        value = getattr(sdk, name)
    globals()[name] = value
    return value


def _from_airflow_3_home(name: str) -> Any:
    """``name`` from its module in :data:`_AIRFLOW_3_HOMES`, or ``None`` (no home listed,
    or that module lacks it in this Airflow version)."""
    home = _AIRFLOW_3_HOMES.get(name)
    if home is None:
        return None
    import importlib

    try:
        return getattr(importlib.import_module(home), name)
    except (ImportError, AttributeError):
        return None
