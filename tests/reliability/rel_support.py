"""Helpers of the reliability tests that run the provider in this process."""

from __future__ import annotations

import itertools
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_RESOURCE_POOL_ID,
    DEFAULT_SECRET_ACCESS_KEY,
)
from airflow_provider_aihc.emulator.server import EmulatorServer

# airflow.sdk.exceptions from 3.2, airflow.exceptions before: common.compat's choice.
from airflow_provider_aihc.version_compat import TaskDeferred as TaskDeferred

POOL = DEFAULT_RESOURCE_POOL_ID
_RUNS = itertools.count(1)

#: Figures the suite reports at the end of the session (``conftest.pytest_terminal_summary``).
FIGURES: Counter[str] = Counter()


@dataclass
class StubTaskInstance:
    """The parts of a task instance the operators and the sensor use: identity and XCom.

    Where the point is the provider's own logic (validation, adoption, what a kill does),
    the tests call ``execute``/``poke``/``on_kill`` directly with this instead of going
    through a DAG run; the DAG-run paths are ``rel_driver.py``'s.
    """

    dag_id: str = "reliability"
    task_id: str = "train"
    run_id: str = field(default_factory=lambda: f"manual__rel-{next(_RUNS)}")
    map_index: int = -1
    try_number: int = 1
    xcom: dict[str, Any] = field(default_factory=dict)

    def xcom_push(self, key: str, value: Any) -> None:
        self.xcom[key] = value


def task_context(ti: StubTaskInstance | None = None) -> dict[str, Any]:
    """A task context holding ``ti`` (a fresh task instance when omitted)."""
    return {"ti": ti or StubTaskInstance()}


def connection_json(server: EmulatorServer, **extra: Any) -> str:
    """``AIRFLOW_CONN_*`` JSON for ``server`` with the default credentials."""
    login = extra.pop("login", DEFAULT_ACCESS_KEY_ID)
    password = extra.pop("password", DEFAULT_SECRET_ACCESS_KEY)
    return replace(server.connection(**extra), login=login, password=password).json


def total_requests(server: EmulatorServer) -> int:
    """Every API request the emulator saw."""
    return sum(server.backend.counts().values())


#: Fault-matrix seeds per run (~2 s each on Airflow 3.3, ~1.5 s on 2.11).
DEFAULT_SEEDS = 60
DRIVER_TIMEOUT = 900


def matrix_seeds() -> list[int]:
    count = int(os.environ.get("AIHC_REL_SEEDS", DEFAULT_SEEDS))
    start = int(os.environ.get("AIHC_REL_SEED_START", 0))
    return list(range(start, start + count))


@dataclass
class DriverRun:
    """The driver's results, keyed by case id, and everything it printed."""

    returncode: int
    results: dict[str, dict[str, Any]]
    output: str
    airflow_home: Path

    def case(self, case_id: str) -> dict[str, Any]:
        assert case_id in self.results, (
            f"case {case_id} has no result (driver exit {self.returncode}):\n" + self.output[-4000:]
        )
        return self.results[case_id]
