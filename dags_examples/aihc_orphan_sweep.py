"""The orphan sweep: stop the AIHC jobs this deployment's tasks left running after they
ended, every few minutes.

A job outlives its task only where nothing of Airflow ran to stop it: a sync wait whose
worker died on the task's last try, or a deferred task marked failed while no triggerer
held its trigger ([Reliability](../docs/reliability.md)).  This DAG closes both.  It needs
``[aihc] deployment_id`` (``AIRFLOW__AIHC__DEPLOYMENT_ID``), unique to this deployment and
set on every component; copy this file into the DAGs folder and unpause it.

``AIHC_ORPHAN_SWEEP_MINUTES`` sets the interval (3 by default): a job is stopped within two
intervals of its task's end.  ``AIHC_ORPHAN_SWEEP_POOLS`` (comma-separated) names the pools
to sweep (default: the connection's ``resource_pool_id``).
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]

from airflow_provider_aihc.operators.sweep import AIHCOrphanSweepOperator

MINUTES = float(os.environ.get("AIHC_ORPHAN_SWEEP_MINUTES", "3"))
POOLS = [pool for pool in os.environ.get("AIHC_ORPHAN_SWEEP_POOLS", "").split(",") if pool]

with DAG(
    dag_id="aihc_orphan_sweep",
    schedule=timedelta(minutes=MINUTES),
    start_date=datetime(2025, 1, 1),
    catchup=False,
    max_active_runs=1,  # sweeps never overlap
    tags=["aihc", "example", "maintenance"],
):
    AIHCOrphanSweepOperator(
        task_id="sweep",
        resource_pool_ids=POOLS,
        # Leave a job whose task instance cannot be found (its DAG run or DAG deleted);
        # True stops it too.
        stop_unknown=False,
        retries=0,  # the next sweep is the retry
        execution_timeout=timedelta(minutes=max(2 * MINUTES, 2)),
    )
