"""Stop and delete a run's job as teardown tasks, whatever happened in between.

Teardowns run even when the work between them fails, so an evaluation that crashes does
not leave eight GPUs training for nobody.
"""

from __future__ import annotations

import os
from datetime import datetime

try:
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]

from airflow_provider_aihc.operators.aihc import (
    AIHCCreateJobOperator,
    AIHCDeleteJobOperator,
    AIHCStopJobOperator,
)
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

POLL_SECONDS = float(os.environ.get("AIHC_EXAMPLE_POLL_SECONDS", "60"))

with DAG(
    dag_id="aihc_cleanup",
    schedule=None,
    start_date=datetime(2025, 1, 1),
    catchup=False,
    tags=["aihc", "example"],
):
    train = AIHCCreateJobOperator(
        task_id="train",
        image="registry.baidubce.com/aihc-aiak/aiak-megatron:ubuntu20.04-cu11.8-torch1.14.0-py38_v1.2.7.12_release",
        command="python -m trainer --epochs 1",
        job_resources={"baidu.com/a800_80g_cgpu": 8},
    )
    wait = AIHCJobSensor(
        task_id="wait_for_training", job_id=train.output, poke_interval=POLL_SECONDS
    )

    @task
    def use_the_model(job_id: str) -> None:
        print(f"Evaluating the checkpoint of AIHC job {job_id}")

    stop = AIHCStopJobOperator(task_id="stop_job", job_id=train.output).as_teardown(setups=train)
    delete = AIHCDeleteJobOperator(task_id="delete_job", job_id=train.output).as_teardown(
        setups=train
    )
    train >> wait >> use_the_model(train.output) >> stop >> delete
