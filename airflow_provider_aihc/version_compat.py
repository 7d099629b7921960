"""The one place that knows Airflow 2.11 from 3.x.

Everything else imports Airflow's base classes and helpers from here.  Airflow 3 moved the
authoring interface to ``airflow.sdk``; 2.11 keeps it under ``airflow.models`` and friends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow import __version__ as _AIRFLOW_VERSION

_MAJOR, _MINOR = (int(part) for part in _AIRFLOW_VERSION.split(".")[:2])
AIRFLOW_V_3_0_PLUS = (_MAJOR, _MINOR) >= (3, 0)
AIRFLOW_V_3_2_PLUS = (_MAJOR, _MINOR) >= (3, 2)
AIRFLOW_V_3_3_PLUS = (_MAJOR, _MINOR) >= (3, 3)

if TYPE_CHECKING or AIRFLOW_V_3_0_PLUS:
    from airflow.sdk import (
        Asset,
        BaseHook,
        BaseOperator,
        BaseOperatorLink,
        BaseSensorOperator,
        PokeReturnValue,
        conf,
    )
    from airflow.sdk import Context as Context
    from airflow.sdk.log import mask_secret

    try:  # the task SDK's own in recent 3.x, where airflow.exceptions' are deprecated aliases
        from airflow.sdk.exceptions import AirflowSensorTimeout, AirflowSkipException
    except ImportError:  # pragma: no cover - Airflow 3.0
        from airflow.exceptions import (  # type: ignore[no-redef]
            AirflowSensorTimeout,
            AirflowSkipException,
        )
else:  # pragma: no cover - exercised by the Airflow 2.11 test run
    from airflow.configuration import conf
    from airflow.datasets import Dataset as Asset
    from airflow.exceptions import AirflowSensorTimeout, AirflowSkipException
    from airflow.hooks.base import BaseHook
    from airflow.models.baseoperator import BaseOperator
    from airflow.models.baseoperatorlink import BaseOperatorLink
    from airflow.sensors.base import BaseSensorOperator, PokeReturnValue
    from airflow.utils.context import Context as Context
    from airflow.utils.log.secrets_masker import mask_secret

__all__ = [
    "AIRFLOW_V_3_0_PLUS",
    "AIRFLOW_V_3_2_PLUS",
    "AIRFLOW_V_3_3_PLUS",
    "AirflowSensorTimeout",
    "AirflowSkipException",
    "Asset",
    "BaseHook",
    "BaseOperator",
    "BaseOperatorLink",
    "BaseSensorOperator",
    "Context",
    "PokeReturnValue",
    "aget_connection",
    "aget_task_state",
    "asset_or_time_schedule",
    "conf",
    "get_xcom_value",
    "mask_secret",
]


def asset_or_time_schedule(assets: Sequence[Any], cron: str, *, timezone: str = "UTC") -> Any:
    """A schedule that runs on an update of any of ``assets``, and also on ``cron``.

    Airflow 3's ``AssetOrTimeSchedule``; on 2.11 (datasets) ``DatasetOrTimeSchedule``.
    Imported when called: DAG files that do not use it do not pay for it.

    :param assets: the assets (datasets on 2.11) whose updates trigger a run.
    :param cron: the time schedule, e.g. ``"@weekly"``, as a ``CronTriggerTimetable``.
    :param timezone: the cron's time zone.
    """
    if AIRFLOW_V_3_0_PLUS:
        from airflow.sdk import AssetOrTimeSchedule, CronTriggerTimetable

        timetable = CronTriggerTimetable(cron, timezone=timezone)
        return AssetOrTimeSchedule(timetable=timetable, assets=list(assets))
    from airflow.timetables.datasets import DatasetOrTimeSchedule
    from airflow.timetables.trigger import CronTriggerTimetable as Cron

    return DatasetOrTimeSchedule(timetable=Cron(cron, timezone=timezone), datasets=list(assets))


async def aget_connection(conn_id: str) -> Any:
    """Read a connection without blocking the event loop (the triggerer's)."""
    if AIRFLOW_V_3_0_PLUS and hasattr(BaseHook, "aget_connection"):
        return await BaseHook.aget_connection(conn_id)
    from asgiref.sync import sync_to_async

    return await sync_to_async(BaseHook.get_connection)(conn_id)


async def aget_task_state(dag_id: str, task_id: str, run_id: str, map_index: int) -> str | None:
    """A task instance's state as the metadata DB holds it now, read off the event loop.

    For triggers on Airflow < 3.3, which must tell a user's mark-failed or clear (the task
    instance left ``deferred``) from a mere triggerer restart (it is still ``deferred``).
    3.0-3.2 ask the execution API through the triggerer's supervisor; 2.x reads the DB.
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
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        state = session.scalar(
            select(TaskInstance.state).where(
                TaskInstance.dag_id == dag_id,
                TaskInstance.task_id == task_id,
                TaskInstance.run_id == run_id,
                TaskInstance.map_index == map_index,
            )
        )
    return _state_text(state)


def _state_text(state: Any) -> str | None:
    """The state's value, e.g. ``"deferred"``, whether an enum member or a string."""
    return None if state is None else str(getattr(state, "value", state))


def get_xcom_value(ti_key: Any, key: str) -> Any:
    """The XCom ``key`` of a task instance (``ti_key``: its key, or the runtime instance).

    Operator links read their URL with it: on Airflow 3 in the worker at the end of the task
    (the API server then reads the link's ``xcom_key`` itself); on 2.x in the webserver.
    """
    from importlib import import_module

    module = "airflow.sdk.execution_time.xcom" if AIRFLOW_V_3_0_PLUS else "airflow.models.xcom"
    return import_module(module).XCom.get_value(ti_key=ti_key, key=key)
