"""Waits that end at a deadline: the job is stopped unless cancel_on_kill=False.

One DAG per case: on Airflow 2.11 ``airflow dags test`` stops at the first timed-out task.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

CASES = {
    "sync-timeout": {"deferrable": False, "execution_timeout": timedelta(seconds=3)},
    "deferred-timeout": {"deferrable": True, "timeout": 3},
    "sync-keep": {
        "deferrable": False,
        "execution_timeout": timedelta(seconds=3),
        "cancel_on_kill": False,
    },
}

for name, case in CASES.items():
    with DAG(f"create_{name.replace('-', '_')}", start_date=datetime(2024, 1, 1), schedule=None):
        AIHCCreateJobOperator(
            task_id="train",
            name=name,
            image="registry.example/trainer:1",
            command="python train.py",
            wait_for_completion=True,
            poll_interval=0.3,
            **case,
        )
