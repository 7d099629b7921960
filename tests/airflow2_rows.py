"""Airflow 2.x metadata rows for tests of a trigger's ``cleanup`` (which reads the DB)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def deferred_task_instance(dag_id: str, run_prefix: str) -> Any:
    """The ``wait`` task instance of a fresh run of a one-task DAG, in state ``deferred``;
    earlier runs of ``dag_id`` are deleted first."""
    from airflow.models.dag import DAG
    from airflow.models.dagrun import DagRun
    from airflow.operators.empty import EmptyOperator
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState, TaskInstanceState
    from airflow.utils.types import DagRunType

    start = datetime(2024, 1, 1, tzinfo=UTC)
    dag = DAG(dag_id, schedule=None, start_date=start)
    EmptyOperator(task_id="wait", dag=dag)
    with create_session() as session:
        session.query(DagRun).filter(DagRun.dag_id == dag_id).delete()
    run = dag.create_dagrun(
        run_id=f"{run_prefix}-{datetime.now().timestamp()}",
        run_type=DagRunType.MANUAL,
        state=DagRunState.RUNNING,
        execution_date=start,
        data_interval=(start, start),
    )
    ti = run.get_task_instance("wait")
    ti.set_state(TaskInstanceState.DEFERRED)
    return ti
