"""The DAGs of ``make test-deployment``'s scenarios: one training task each, short polls.

Each task's id is in its job's default name (``<task>-<hash>``), which is what the
scenarios' emulator scripts match to hold a job in ``Running``.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any

from airflow.sdk import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

IMAGE = (
    "registry.baidubce.com/aihc-aiak/aiak-megatron:"
    "ubuntu20.04-cu11.8-torch1.14.0-py38_v1.2.7.12_release"
)
JOB: dict[str, Any] = {
    "image": IMAGE,
    "command": "python -m trainer --epochs 1",
    "job_resources": {"baidu.com/a800_80g_cgpu": 8},
    "poll_interval": 2,
}
RETRY_ONCE = {"retries": 1, "retry_delay": timedelta(seconds=5)}
#: Scenario 2's poll: short, so that after a takeover few lines are shown twice (the new
#: trigger resumes the log the health-check threshold plus two polls before it started).
TAKEOVER_POLL_SECONDS = float(os.environ.get("AIHC_DEPLOY_TAKEOVER_POLL_SECONDS", "1"))


def training_dag(dag_id: str, task_id: str, **task: Any) -> DAG:
    """A DAG of one ``AIHCCreateJobOperator`` task that waits for its job."""
    with DAG(
        dag_id=dag_id,
        schedule=None,
        start_date=datetime(2025, 1, 1),
        catchup=False,
        tags=["aihc", "deployment-test"],
    ) as dag:
        AIHCCreateJobOperator(task_id=task_id, wait_for_completion=True, **{**JOB, **task})
    return dag


# 2: the deferred wait survives the SIGKILL of its triggerer.
takeover = training_dag(
    "deploy_takeover", "takeover", deferrable=True, poll_interval=TAKEOVER_POLL_SECONDS
)
# 3: the Celery worker dies while the create request waits for its answer.
worker_crash = training_dag("deploy_worker_crash", "crash_create", deferrable=True, **RETRY_ONCE)
# 4: clearing a succeeded task trains again; a failed try's retry adopts the job.
clear_retry = training_dag("deploy_clear", "train", deferrable=True, **RETRY_ONCE)
failed_try = training_dag("deploy_failed_try", "sync_train", **RETRY_ONCE)
# 5: "Mark as failed" on a deferred wait, and an execution_timeout on a sync wait.
mark_failed = training_dag("deploy_mark_failed", "mark_failed", deferrable=True)
exec_timeout = training_dag(
    "deploy_exec_timeout", "exec_timeout", execution_timeout=timedelta(seconds=20)
)
# 7: the orphan sweep stops the job a killed task left running (no on_kill ran), and never
# a healthy deferred wait's.
sweep_deferred = training_dag("deploy_sweep_deferred", "sweep_deferred", deferrable=True)
sweep_sync = training_dag("deploy_sweep_sync", "sweep_sync")  # retries=0: the last try
sweep_healthy = training_dag("deploy_sweep_healthy", "sweep_healthy", deferrable=True)
