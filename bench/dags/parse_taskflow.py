"""The decorators' baseline of `bench/bench_parse.py`: the same shape with two `@task`s."""

from __future__ import annotations

from datetime import datetime

try:
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]

with DAG(dag_id="bench_parse_taskflow", schedule=None, start_date=datetime(2025, 1, 1)) as dag:

    @task
    def prepare() -> str:
        return "python -m prepare --rows 1000"

    @task
    def train(rows: int) -> dict[str, float]:
        import os

        return {"loss": 1.0 / rows, "rank": float(os.environ.get("RANK", "0"))}

    prepare() >> train(1000)
