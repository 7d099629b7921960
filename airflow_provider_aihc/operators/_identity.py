"""Which task instance a job belongs to: labels, a deterministic name, a client token.

A task instance is ``(dag_id, task_id, run_id, map_index)``; the try number is left out on
purpose, so that every try of one task instance finds the job an earlier try created.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

#: The label that identifies the task instance exactly; the others are for people.
TI_LABEL = "airflow-ti"
DAG_LABEL = "airflow-dag-id"
TASK_LABEL = "airflow-task-id"
RUN_LABEL = "airflow-run-id"
MAP_INDEX_LABEL = "airflow-map-index"
TRY_LABEL = "airflow-try-number"
IDENTITY_LABELS = frozenset(
    {TI_LABEL, DAG_LABEL, TASK_LABEL, RUN_LABEL, MAP_INDEX_LABEL, TRY_LABEL}
)

NAME_MAX_LENGTH = 50
CLOCK_SKEW_MARGIN = timedelta(hours=6)
LABEL_VALUE_MAX_LENGTH = 63
_NAMESPACE = uuid.UUID("6f1d1c52-7a43-4c1e-9d55-3f0f0c2b9a11")


@dataclass(frozen=True, slots=True)
class TaskIdentity:
    """The task instance a job is created for."""

    dag_id: str
    task_id: str
    run_id: str
    map_index: int = -1
    try_number: int = 1
    #: No job of this task instance is older: its DAG run's start, less a margin for
    #: clock skew between Airflow and AIHC. ``None``: read the pool's whole history.
    created_after: datetime | None = None

    @classmethod
    def from_context(cls, context: Any) -> TaskIdentity:
        """Read the identity from an Airflow task context."""
        ti = context["ti"]
        run_start = getattr(context.get("dag_run"), "start_date", None)
        return cls(
            dag_id=ti.dag_id,
            task_id=ti.task_id,
            run_id=ti.run_id,
            map_index=int(getattr(ti, "map_index", -1) if ti.map_index is not None else -1),
            try_number=int(getattr(ti, "try_number", 1) or 1),
            created_after=run_start - CLOCK_SKEW_MARGIN
            if isinstance(run_start, datetime)
            else None,
        )

    @property
    def key(self) -> str:
        """A short, stable hash of the task instance (label-safe)."""
        raw = "\0".join((self.dag_id, self.task_id, self.run_id, str(self.map_index)))
        return hashlib.sha256(raw.encode()).hexdigest()[:20]

    def labels(self) -> dict[str, str]:
        """Labels that mark a job as this task instance's."""
        return {
            TI_LABEL: self.key,
            DAG_LABEL: label_value(self.dag_id),
            TASK_LABEL: label_value(self.task_id),
            RUN_LABEL: label_value(self.run_id),
            MAP_INDEX_LABEL: str(self.map_index),
            TRY_LABEL: str(self.try_number),
        }

    def default_name(self) -> str:
        """``<task>-<hash>``: lowercase alphanumerics and ``-``, at most 50 characters."""
        stem = job_name_part(self.task_id)[: NAME_MAX_LENGTH - 9] or "job"
        return f"{stem}-{self.key[:8]}"

    def client_token(self, generation: int) -> str:
        """An idempotency token for the ``generation``-th job of this task instance."""
        return str(uuid.uuid5(_NAMESPACE, f"{self.key}/{generation}"))


def generation_name(base: str, generation: int) -> str:
    """The name of the ``generation``-th job (0 is the first): ``base``, ``base-r2``, …"""
    if generation == 0:
        return base
    suffix = f"-r{generation + 1}"
    return base[: NAME_MAX_LENGTH - len(suffix)].rstrip("-") + suffix


def label_value(value: str) -> str:
    """A Kubernetes-safe label value: ``[A-Za-z0-9._-]``, alphanumeric ends, ≤ 63 chars."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-._")
    return safe[:LABEL_VALUE_MAX_LENGTH].rstrip("-._") or "none"


def job_name_part(value: str) -> str:
    """Lowercase alphanumerics and ``-`` only, no leading or trailing ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
