"""System test: one tiny job created, watched to its end in the triggerer, then deleted.

What it checks on a real region: that a create AIHC accepts, the statuses a job really
passes through, a deferred wait to ``Succeeded`` with the job's log, and the teardowns.
What it costs: one job of ``AIHC_SYSTEM_TEST_RESOURCES`` (default one CPU) running
``AIHC_SYSTEM_TEST_COMMAND`` (default ``sleep 20``), stopped after
``AIHC_SYSTEM_TEST_MAX_JOB_MINUTES`` at the latest.
"""

from __future__ import annotations

from datetime import datetime

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]

from system_runner import CONN_ID, JobSettings, get_test_run

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator, AIHCDeleteJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

DAG_ID = "example_aihc_job"
S = JobSettings.from_env()

with DAG(DAG_ID, schedule=None, start_date=datetime(2025, 1, 1), catchup=False) as dag:
    create = AIHCCreateJobOperator(task_id="create_job", **S.job())
    wait = AIHCJobSensor(
        task_id="wait_for_job",
        aihc_conn_id=CONN_ID,
        job_id=create.output,
        resource_pool_id=S.pool,
        deferrable=True,
        poke_interval=S.poll_seconds,
        timeout=S.max_job_minutes * 60,
    )
    delete = AIHCDeleteJobOperator(
        task_id="delete_job", aihc_conn_id=CONN_ID, job_id=create.output, resource_pool_id=S.pool
    ).as_teardown(setups=create)
    create >> wait >> delete


test_run = get_test_run(dag)
