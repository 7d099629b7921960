"""The decorators' DAG of `bench/bench_parse.py`: one `@task.aihc`, one `@task.aihc_python`."""

from __future__ import annotations

from datetime import datetime

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]

from airflow_provider_aihc.decorators import aihc_python_task, aihc_task

with DAG(dag_id="bench_parse_decorators", schedule=None, start_date=datetime(2025, 1, 1)) as dag:

    @aihc_task(image="registry.baidubce.com/aihc/pytorch:2.1")
    def prepare() -> str:
        return "python -m prepare --rows 1000"

    @aihc_python_task(image="registry.baidubce.com/aihc/pytorch:2.1", replicas=2)
    def train(rows: int) -> dict[str, float]:
        import os

        return {"loss": 1.0 / rows, "rank": float(os.environ.get("RANK", "0"))}

    prepare() >> train(1000)
