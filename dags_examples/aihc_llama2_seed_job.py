"""The documented AIHC example, Megatron LLaMA2-7B pre-training, submitted as-is from JSON.

``jobs/llama2_7b_pretrain.json`` is a whole create request in AIHC's wire form, rendered
with Jinja (the checkpoint path carries the run id) before it is sent.  It names no job:
the operator's default, ``pretrain-llama2-7b-<hash of the task instance>``, is unique per
run and try series, also for runs without a logical date.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

POLL_SECONDS = float(os.environ.get("AIHC_EXAMPLE_POLL_SECONDS", "60"))

with DAG(
    dag_id="aihc_llama2_seed_job",
    schedule=None,
    start_date=datetime(2025, 1, 1),
    catchup=False,
    template_searchpath=[str(Path(__file__).parent / "jobs")],
    tags=["aihc", "example"],
):
    AIHCCreateJobOperator(
        task_id="pretrain_llama2_7b",
        body="llama2_7b_pretrain.json",
        wait_for_completion=True,
        deferrable=True,
        poll_interval=POLL_SECONDS,
    )
