"""A task instance for calling ``AIHCCreateJobOperator.execute`` directly: identity, try
numbers and XCom, as Airflow gives them to the task (the DAG-run paths are tests/e2e's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class TaskInstanceStub:
    """The parts of a task instance the operator reads.

    ``max_tries`` follows Airflow: ``retries`` at first, ``try_number + retries`` after a
    clear (:meth:`clear`); :meth:`retry` is the next try of the same series.
    """

    retries: int = 2
    dag_id: str = "series"
    task_id: str = "train"
    run_id: str = "manual__2026-01-01T00:00:00+00:00"
    map_index: int = -1
    try_number: int = 1
    max_tries: int = -1
    xcom: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_tries < 0:
            self.max_tries = self.retries

    def xcom_push(self, key: str, value: Any) -> None:
        self.xcom[key] = value

    def xcom_pull(self, task_ids: str | None = None, key: str = "return_value", **_: Any) -> Any:
        """This task's own XCom (what the operator pulls back after a deferral)."""
        return self.xcom.get(key)

    def retry(self) -> TaskInstanceStub:
        """The next try of this series."""
        self.try_number += 1
        return self

    def clear(self) -> TaskInstanceStub:
        """What Airflow's clear does, then the scheduler's start of the next try."""
        self.max_tries = self.try_number + self.retries
        self.try_number += 1
        return self


@dataclass
class RunStub:
    """The ``dag_run`` of the context: only ``start_date`` is read."""

    start_date: datetime


class TaskStub:
    """The ``task`` of the context: only ``retries`` is read."""

    def __init__(self, retries: int) -> None:
        self.retries = retries


def context_of(ti: TaskInstanceStub) -> dict[str, Any]:
    """The task context Airflow passes to ``execute``."""
    return {"ti": ti, "task": TaskStub(ti.retries)}
