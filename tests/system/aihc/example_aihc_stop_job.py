"""System test: a job stopped while it runs, then deleted.

What it checks on a real region: the status a stopped job ends in (``ManualTermination``
is expected, and unverified by Baidu's sources) and that a stop and a delete AIHC accepts.
What it costs: one job of ``AIHC_SYSTEM_TEST_RESOURCES`` running until it is stopped, a
poll interval or two after it is created.
"""

from __future__ import annotations

import time
from datetime import datetime

try:
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]

from system_runner import CONN_ID, TERMINAL, JobSettings, get_test_run

from airflow_provider_aihc.operators.aihc import (
    AIHCCreateJobOperator,
    AIHCDeleteJobOperator,
    AIHCStopJobOperator,
)

DAG_ID = "example_aihc_stop_job"
S = JobSettings.from_env()

with DAG(DAG_ID, schedule=None, start_date=datetime(2025, 1, 1), catchup=False) as dag:
    create = AIHCCreateJobOperator(
        task_id="create_job", **S.job("sleep 3600")
    )  # stopped below, or by the spend limit
    stop = AIHCStopJobOperator(
        task_id="stop_job", aihc_conn_id=CONN_ID, job_id=create.output, resource_pool_id=S.pool
    )

    @task
    def wait_until_stopped(job_id: str) -> str:
        """The status the stopped job ends in (fails if it does not end in time)."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        hook, deadline = AIHCHook(aihc_conn_id=CONN_ID), time.monotonic() + S.max_job_minutes * 60
        while (status := hook.get_job(job_id, S.pool).status) not in TERMINAL:
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {status} after the stop")
            time.sleep(S.poll_seconds)
        print(f"AIHC job {job_id} ended {status} after the stop")
        return status

    delete = AIHCDeleteJobOperator(
        task_id="delete_job", aihc_conn_id=CONN_ID, job_id=create.output, resource_pool_id=S.pool
    ).as_teardown(setups=create)
    create >> stop >> wait_until_stopped(create.output) >> delete


test_run = get_test_run(dag)
