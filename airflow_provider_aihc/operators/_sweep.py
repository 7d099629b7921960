"""What the orphan sweep does with each job of a pool: a plain function over the pool's
listing and the task-instance states (issue #34).

A job is stopped only when every one of these holds, in order (the first that fails
decides, and names why the job is left):

1. it runs (not in a final status);
2. its identity tag verifies under the connection's tag key (``_identity.tag_verifies``):
   nobody without the key can make a job the sweep would stop, and a job whose labels were
   changed or copied onto another name is never touched;
3. its ``airflow-deployment`` label is this deployment's: a deployment that shares the AIHC
   credentials and the DAG files (staging beside production) is left alone;
4. its ``airflow-watched`` label is ``true``: the task waited for the job and would have
   stopped it when killed; a job a task only starts outlives it by design;
5. its task instance has ended (:data:`ENDED_STATES`), or it cannot be found (a deleted DAG
   run or DAG) and the user opted in (``stop_unknown``).

A task instance in any other state (running, deferred, queued, scheduled, up for retry or
reschedule, restarting, or none yet after a clear) keeps its job: its next try adopts it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from airflow_provider_aihc.operators._identity import (
    DAG_LABEL,
    DEPLOYMENT_LABEL,
    TI_LABEL,
    WATCHED_LABEL,
    TaskIdentity,
    tag_verifies,
)

if TYPE_CHECKING:
    from airflow_provider_aihc.models.job import JobSummary

#: The task-instance states after which no try of the task will watch its job again.
ENDED_STATES = frozenset({"failed", "success", "upstream_failed", "skipped", "removed"})

STOP, LEAVE, REPORT = "stop", "leave", "report"


@dataclass(frozen=True, slots=True)
class TaskInstanceState:
    """A task instance of the metadata database and its state (``None``: no state yet)."""

    dag_id: str
    task_id: str
    run_id: str
    map_index: int
    state: str | None

    @property
    def key(self) -> str:
        """The ``airflow-ti`` label of its jobs."""
        return TaskIdentity(self.dag_id, self.task_id, self.run_id, self.map_index).key

    def __str__(self) -> str:
        mapped = f"[{self.map_index}]" if self.map_index >= 0 else ""
        return f"{self.dag_id}/{self.run_id}/{self.task_id}{mapped}"


@dataclass(frozen=True, slots=True)
class SweepDecision:
    """What the sweep does with one job, and why (for the log)."""

    job: JobSummary
    action: str
    reason: str
    task_instance: TaskInstanceState | None = None


def claimed_dag_ids(jobs: Iterable[JobSummary], key: str, deployment: str) -> set[str]:
    """The DAGs whose task-instance states the sweep needs: those of the running,
    verifying, watched jobs of this deployment."""
    return {
        job.labels_dict.get(DAG_LABEL, "") for job in jobs if _claim(job, key, deployment) is None
    }


def plan_sweep(
    jobs: Iterable[JobSummary],
    states: Mapping[str, TaskInstanceState],
    *,
    key: str,
    deployment: str,
    stop_unknown: bool = False,
) -> list[SweepDecision]:
    """A decision for every running job that carries an ``airflow-ti`` label.

    :param jobs: the pool's listing.
    :param states: the task instances of :func:`claimed_dag_ids`, by their
        :attr:`TaskInstanceState.key`.
    :param key: the connection's tag key (``_identity.tag_key``).
    :param deployment: this deployment's ``[aihc] deployment_id`` (not empty).
    :param stop_unknown: stop a job whose task instance is not in ``states``.
    """
    decisions = []
    for job in jobs:
        if job.is_terminal or TI_LABEL not in job.labels_dict:
            continue
        refused = _claim(job, key, deployment)
        if refused is not None:
            decisions.append(SweepDecision(job, LEAVE, refused))
            continue
        ti = states.get(job.labels_dict[TI_LABEL])
        if ti is None:
            action = STOP if stop_unknown else REPORT
            decisions.append(SweepDecision(job, action, "its task instance cannot be found"))
        elif ti.state in ENDED_STATES:
            decisions.append(SweepDecision(job, STOP, f"its task instance is {ti.state}", ti))
        else:
            decisions.append(SweepDecision(job, LEAVE, f"its task is {ti.state or 'no state'}", ti))
    return decisions


def _claim(job: JobSummary, key: str, deployment: str) -> str | None:
    """Why the job is not one this deployment's sweep may stop, or ``None``."""
    labels = job.labels_dict
    if job.is_terminal or TI_LABEL not in labels:
        return "it is not running, or no Airflow task created it"
    if not tag_verifies(key, labels, job.name):
        return "its labels do not verify under the connection's tag key"
    if labels.get(DEPLOYMENT_LABEL, "") != deployment:
        return f"Airflow deployment {labels.get(DEPLOYMENT_LABEL) or '(none)'!r} created it"
    if labels.get(WATCHED_LABEL) != "true":
        return "its task only started it (no wait, or cancel_on_kill=False)"
    return None


_MAPPED_KEY = re.compile(r"(?P<task_id>.+)_(?P<map_index>\d+)")


def states_from_task_sdk(
    dag_id: str, task_states: Mapping[str, Mapping[str, str | None]]
) -> list[TaskInstanceState]:
    """Read the Task SDK's ``get_task_states`` answer (``{run_id: {task: state}}``, where
    a mapped task instance is ``<task_id>_<map_index>``) as task instances.

    ``<name>_<digits>`` may be a mapped task instance or a task so named: both readings
    are returned (a job's ``airflow-ti`` label matches one of them at most).
    """
    found = []
    for run_id, tasks in task_states.items():
        for name, state in tasks.items():
            found.append(TaskInstanceState(dag_id, name, run_id, -1, state))
            if mapped := _MAPPED_KEY.fullmatch(name):
                index = int(mapped["map_index"])
                found.append(TaskInstanceState(dag_id, mapped["task_id"], run_id, index, state))
    return found
