"""The DAG `bench/bench_parse.py` parses: one AIHCCreateJobOperator and one AIHCJobSensor."""

from __future__ import annotations

from datetime import datetime

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

with DAG(dag_id="bench_parse_aihc", schedule=None, start_date=datetime(2025, 1, 1)) as dag:
    train = AIHCCreateJobOperator(
        task_id="train",
        image="registry.baidubce.com/aihc/pytorch:2.1",
        command="python -m trainer --epochs 1",
        job_resources={"baidu.com/a800_80g_cgpu": 8},
    )
    wait = AIHCJobSensor(task_id="wait_for_training", job_id=train.output, poke_interval=60)
    train >> wait
