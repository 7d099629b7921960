"""The orphan sweep in a real DAG run (tests/e2e/test_orphan_sweep.py).

``plant`` creates, with the real submitter and the connection's tag key, the jobs a sweep
meets: one of its own task instance (ended by the time the sweep runs), one of another
deployment for the same task instance, one its task only started, one of the ``after``
task (no state yet when the sweep runs) and one of a DAG run that does not exist.  A dry
run, then the sweep.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from typing import Any

from _compat import DAG, task

from airflow_provider_aihc.operators.sweep import AIHCOrphanSweepOperator


def _plant(context: Any, *, watched: bool = True, **identity: Any) -> str:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.operators._identity import TaskIdentity
    from airflow_provider_aihc.operators._submit import JobSubmitter
    from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

    ti = replace(TaskIdentity.from_context(context), created_after=None, **identity)
    maker = AIHCCreateJobOperator(task_id="maker", image="busybox", command="sleep 600")
    request, pool = maker.build_request(default_name=ti.default_name())
    log = logging.getLogger("airflow.task")
    job = JobSubmitter(AIHCHook(), pool, ti, log, watched=watched).submit(request)
    print(f"planted {job.job_id} for {identity or 'this task instance'} watched={watched}")
    return job.job_id


with DAG(
    dag_id="orphan_sweep_cases",
    schedule=None,
    start_date=datetime(2025, 1, 1),
    catchup=False,
):

    @task
    def plant(**context: Any) -> dict[str, str]:
        return {
            "ended": _plant(context),
            "foreign": _plant(context, deployment="staging"),
            "started_only": _plant(context, task_id="plant_unwatched", watched=False),
            "live": _plant(context, task_id="after"),
            "unknown": _plant(context, run_id="a_deleted_run"),
        }

    @task
    def after() -> None:
        print("after the sweep")

    dry = AIHCOrphanSweepOperator(task_id="dry_run", report_only=True)
    sweep = AIHCOrphanSweepOperator(task_id="sweep")
    plant() >> dry >> sweep >> after()
