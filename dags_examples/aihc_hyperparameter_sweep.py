"""A learning-rate sweep: one AIHC job per value (dynamic task mapping), then the best.

Each mapped task instance gets its own job (its name and labels carry the map index), and
each waits in the triggerer, so a wide sweep holds no worker slots while it trains.
"""

from __future__ import annotations

import os
import re
from datetime import datetime

try:
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]

from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

POLL_SECONDS = float(os.environ.get("AIHC_EXAMPLE_POLL_SECONDS", "60"))
LEARNING_RATES = ["1e-4", "3e-4", "1e-3"]
LOSS = re.compile(r"lm loss: ([0-9.E+-]+)")

with DAG(
    dag_id="aihc_hyperparameter_sweep",
    schedule=None,
    start_date=datetime(2025, 1, 1),
    catchup=False,
    tags=["aihc", "example"],
):
    trials = AIHCCreateJobOperator.partial(
        task_id="trial",
        image="registry.baidubce.com/aihc-aiak/aiak-megatron:ubuntu20.04-cu11.8-torch1.14.0-py38_v1.2.7.12_release",
        job_resources={"baidu.com/a800_80g_cgpu": 8},
        wait_for_completion=True,
        deferrable=True,
        poll_interval=POLL_SECONDS,
    ).expand_kwargs(
        [
            {"command": f"python -m trainer --lr {lr}", "labels": {"learning-rate": lr}}
            for lr in LEARNING_RATES
        ]
    )

    @task
    def pick_best(job_ids: list[str]) -> str:
        """The job whose final loss is lowest."""
        hook = AIHCHook()
        final = {}
        for job_id in job_ids:
            master = hook.get_job(job_id).pod_names[0]
            losses = [
                float(m.group(1))
                for line in hook.iter_pod_log_lines(job_id, master)
                if (m := LOSS.search(line))
            ]
            final[job_id] = losses[-1]
            print(f"{job_id}: final loss {losses[-1]}")
        best = min(final, key=final.__getitem__)
        print(f"Best trial: {best} (loss {final[best]})")
        return best

    pick_best(trials.output)
