"""The one place that knows Airflow 2.11 from 3.x.

Everything else imports Airflow's base classes and helpers from here.  Airflow 3 moved the
authoring interface to ``airflow.sdk``; 2.11 keeps it under ``airflow.models`` and friends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow import __version__ as _AIRFLOW_VERSION

_MAJOR, _MINOR = (int(part) for part in _AIRFLOW_VERSION.split(".")[:2])
AIRFLOW_V_3_0_PLUS = (_MAJOR, _MINOR) >= (3, 0)
AIRFLOW_V_3_2_PLUS = (_MAJOR, _MINOR) >= (3, 2)
AIRFLOW_V_3_3_PLUS = (_MAJOR, _MINOR) >= (3, 3)

if TYPE_CHECKING or AIRFLOW_V_3_0_PLUS:
    from airflow.sdk import (
        BaseHook,
        BaseOperator,
        BaseOperatorLink,
        BaseSensorOperator,
    )
    from airflow.sdk import Context as Context
    from airflow.sdk import conf
    from airflow.sdk.log import mask_secret
else:  # pragma: no cover - exercised by the Airflow 2.11 test run
    from airflow.configuration import conf
    from airflow.hooks.base import BaseHook
    from airflow.models.baseoperator import BaseOperator
    from airflow.models.baseoperatorlink import BaseOperatorLink
    from airflow.sensors.base import BaseSensorOperator
    from airflow.utils.context import Context as Context
    from airflow.utils.log.secrets_masker import mask_secret

__all__ = [
    "AIRFLOW_V_3_0_PLUS",
    "AIRFLOW_V_3_2_PLUS",
    "AIRFLOW_V_3_3_PLUS",
    "BaseHook",
    "BaseOperator",
    "BaseOperatorLink",
    "BaseSensorOperator",
    "Context",
    "aget_connection",
    "conf",
    "mask_secret",
]


async def aget_connection(conn_id: str) -> Any:
    """Read a connection without blocking the event loop (the triggerer's)."""
    if AIRFLOW_V_3_0_PLUS and hasattr(BaseHook, "aget_connection"):
        return await BaseHook.aget_connection(conn_id)
    from asgiref.sync import sync_to_async

    return await sync_to_async(BaseHook.get_connection)(conn_id)
