"""The DAGs of ``make test-chaos``: every kind of task the provider has, each a DAG of its own.

``deploy/chaos.py`` triggers them through the REST API while it kills the deployment's
processes and the emulator misbehaves. A task's id is in its job's default name
(``<task>-<hash>``), which is what the storm's emulator scripts match: ``long`` jobs wait
in the queue before they run, ``held`` jobs never end unless they are stopped (so a job a
killed task should have stopped is still running at the end), ``clear`` jobs wait long
enough in the queue to be cleared while they run.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from airflow.sdk import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

IMAGE = "registry.baidubce.com/aihc/pytorch:2.1"
#: Polls of two seconds: a wait notices its job's end soon, as the judgement measures.
JOB: dict[str, Any] = {
    "image": IMAGE,
    "command": "python -m trainer --epochs 1",
    "job_resources": {"baidu.com/a800_80g_cgpu": 8},
    "poll_interval": 2,
}
#: Every task may be hit by a worker kill, a lost create answer or a fault: it retries,
#: and each retry adopts the job an earlier try created.
RETRIES: dict[str, Any] = {"retries": 3, "retry_delay": timedelta(seconds=3)}
#: A killed (marked failed, timed out) task has one retry: a worker killed before its
#: deferral makes the next try adopt the job, which it must still stop.
ONE_RETRY: dict[str, Any] = {"retries": 1, "retry_delay": timedelta(seconds=3)}
#: Shorter than a ``held`` job (never) and a ``long`` one: the timeout always comes first.
EXECUTION_TIMEOUT = timedelta(seconds=25)


def _dag(dag_id: str) -> DAG:
    return DAG(
        dag_id=dag_id,
        schedule=None,
        start_date=datetime(2025, 1, 1),
        catchup=False,
        max_active_runs=64,
        tags=["aihc", "chaos-test"],
    )


def _training(dag_id: str, task_id: str, **task: Any) -> DAG:
    with _dag(dag_id) as dag:
        AIHCCreateJobOperator(task_id=task_id, wait_for_completion=True, **{**JOB, **task})
    return dag


# Create and wait in the worker (a slot held while the job runs).
worker_wait = _training("chaos_worker_wait", "train", **RETRIES)
worker_wait_long = _training("chaos_worker_wait_long", "train_long", **RETRIES)
# Create and defer (the wait in the triggerer, the log streamed into the task log).
deferred = _training("chaos_deferred", "train", deferrable=True, **RETRIES)
deferred_long = _training("chaos_deferred_long", "train_long", deferrable=True, **RETRIES)
# Marked failed while deferred: the job (held) must be stopped.
mark_failed = _training("chaos_mark_failed", "held_mark", deferrable=True, **ONE_RETRY)
# execution_timeout, deferred and in the worker: the job must be stopped.
timeout_deferred = _training(
    "chaos_timeout_deferred",
    "held_timeout",
    deferrable=True,
    execution_timeout=EXECUTION_TIMEOUT,
    **ONE_RETRY,
)
timeout_worker = _training(
    "chaos_timeout_worker", "long_timeout", execution_timeout=EXECUTION_TIMEOUT, **ONE_RETRY
)
# Cleared while deferred: the first series' job must be stopped, the second trains again.
cleared = _training("chaos_clear", "clear_train", deferrable=True, **RETRIES)

# One job, watched three ways: a sensor in poke, in reschedule and in deferrable mode.
with _dag("chaos_sensors") as sensors:
    submit = AIHCCreateJobOperator(task_id="submit", wait_for_completion=False, **JOB, **RETRIES)
    job_id: Any = submit.output  # rendered at run time
    modes: dict[str, dict[str, Any]] = {
        "poke": {"mode": "poke", "poke_interval": 3},
        "reschedule": {"mode": "reschedule", "poke_interval": 8},
        "deferred": {"deferrable": True, "poke_interval": 2},
    }
    for mode, options in modes.items():
        AIHCJobSensor(task_id=f"watch_{mode}", job_id=job_id, **options, **RETRIES)

# A mapped sweep: one deferred job per map index.
with _dag("chaos_sweep") as sweep:
    AIHCCreateJobOperator.partial(
        task_id="trial", wait_for_completion=True, deferrable=True, **JOB, **RETRIES
    ).expand_kwargs([{"labels": {"learning-rate": lr}} for lr in ("1e-4", "3e-4", "1e-3")])
