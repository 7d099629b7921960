"""The baseline DAG of `bench/bench_parse.py`: the same shape with two EmptyOperators."""

from __future__ import annotations

from datetime import datetime

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]

try:
    from airflow.providers.standard.operators.empty import EmptyOperator
except ImportError:  # Airflow 2.11 without the standard provider
    from airflow.operators.empty import EmptyOperator  # type: ignore[no-redef]

with DAG(dag_id="bench_parse_empty", schedule=None, start_date=datetime(2025, 1, 1)) as dag:
    train = EmptyOperator(task_id="train")
    wait = EmptyOperator(task_id="wait_for_training")
    train >> wait
