"""Waits that end at a deadline: the job is stopped unless cancel_on_kill=False.

The sync cases' ``execution_timeout`` leaves the create and its XCom pushes time to finish
on a loaded machine before the wait's own end (2 s before it) and Airflow's alarm.

One DAG per case: on Airflow 2.11 ``airflow dags test`` stops at the first timed-out task.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

CASES = {
    "sync-timeout": {"deferrable": False, "execution_timeout": timedelta(seconds=8)},
    "deferred-timeout": {"deferrable": True, "timeout": 3},
    "sync-keep": {
        "deferrable": False,
        "execution_timeout": timedelta(seconds=8),
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
