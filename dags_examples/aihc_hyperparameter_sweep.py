"""A learning-rate sweep: one AIHC job per value (dynamic task mapping), then the best.

Each mapped task instance gets its own job (its name and labels carry the map index), and
each waits in the triggerer, so a wide sweep holds no worker slots while it trains.  Each
trial pushes its final loss as XCom ``metrics`` (``metrics``: the last match of a regex in
its master pod's log); ``pick_best`` gets them all, in map-index order, and reads no log.
"""

from __future__ import annotations

import os
from datetime import datetime

try:
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

POLL_SECONDS = float(os.environ.get("AIHC_EXAMPLE_POLL_SECONDS", "60"))
LEARNING_RATES = ["1e-4", "3e-4", "1e-3"]
METRICS = {"loss": r"lm loss: ([0-9.E+-]+)"}

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
        metrics=METRICS,
    ).expand_kwargs(
        [
            {"command": f"python -m trainer --lr {lr}", "labels": {"learning-rate": lr}}
            for lr in LEARNING_RATES
        ]
    )

    @task
    def pick_best(job_ids: list[str], metrics: list[dict[str, float]]) -> str:
        """The trial whose final loss is lowest."""
        final = {job_id: trial["loss"] for job_id, trial in zip(job_ids, metrics, strict=True)}
        for job_id, loss in final.items():
            print(f"{job_id}: final loss {loss}")
        best = min(final, key=final.__getitem__)
        print(f"Best trial: {best} (loss {final[best]})")
        return best

    pick_best(trials.output, trials.output["metrics"])
