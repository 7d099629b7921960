"""A create whose answer is lost, then a task retry: exactly one job."""

from __future__ import annotations

from datetime import datetime, timedelta

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

with DAG("create_lost_answer", start_date=datetime(2024, 1, 1), schedule=None):
    AIHCCreateJobOperator(
        task_id="train",
        image="registry.example/trainer:1",
        command="python train.py",
        retries=2,
        retry_delay=timedelta(seconds=0),
        wait_for_completion=True,
        deferrable=False,
        poll_interval=0.2,
    )
