"""Weekly retraining on AIHC: new data → train on GPUs → wait (deferred) → evaluate → promote.

Copy this file, point the ``aihc_default`` connection at your AIHC region and pool, and
replace the data check and the promotion with your own.  A manual run can override any
``params`` value (image, learning rate, data root, promotion threshold).
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta

try:
    from airflow.sdk import DAG, Param, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]
    from airflow.models.param import Param  # type: ignore[no-redef]

from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

#: How often to look at the job. Minutes are plenty for real training; the demo uses less.
POLL_SECONDS = float(os.environ.get("AIHC_EXAMPLE_POLL_SECONDS", "60"))
LOSS = re.compile(r"lm loss: ([0-9.E+-]+)")

with DAG(
    dag_id="aihc_scheduled_retraining",
    schedule="@weekly",
    start_date=datetime(2025, 1, 1),
    catchup=False,
    params={
        "image": Param(
            "registry.baidubce.com/aihc-aiak/aiak-megatron:ubuntu20.04-cu11.8-torch1.14.0-py38_v1.2.7.12_release",
            type="string",
        ),
        "learning_rate": Param(3e-4, type="number", minimum=0),
        "data_root": Param("/mnt/cluster/datasets/clicks", type="string"),
        "promote_below_loss": Param(11.0, type="number"),
    },
    tags=["aihc", "example"],
):

    @task.short_circuit
    def new_data_arrived(params=None, ds=None) -> bool:
        """Skip the week when there is nothing new (replace with your storage check)."""
        print(f"Looking for training data in {params['data_root']}/{ds}")
        return True

    train = AIHCCreateJobOperator(
        task_id="train",
        # No name: "train-<hash of the task instance>", unique per run and try series. Runs
        # without a logical date (manual, API, asset-triggered) have no ds: the data date
        # is the logical date when there is one, else when the run was started.
        image="{{ params.image }}",
        command=(
            "python -m trainer --data {{ params.data_root }}/"
            "{{ (dag_run.logical_date or dag_run.run_after) | ds }}"
            " --lr {{ params.learning_rate }}"
            " --output /mnt/cluster/models/{{ run_id | replace(':', '-') | replace('+', '-') }}"
        ),
        job_resources={"baidu.com/a800_80g_cgpu": 8},
        envs={
            "DATA_DATE": "{{ (dag_run.logical_date or dag_run.run_after) | ds }}",
            "CUDA_DEVICE_MAX_CONNECTIONS": "1",
        },
        datasources=[{"type": "pfs", "name": "pfs-7xWeAt", "mountPath": "/mnt/cluster"}],
        labels={"pipeline": "weekly-retraining"},
        retries=2,
    )

    wait = AIHCJobSensor(
        task_id="wait_for_training",
        job_id=train.output,
        deferrable=True,
        poke_interval=POLL_SECONDS,
        timeout=timedelta(hours=48).total_seconds(),
    )

    @task
    def evaluate(job_id: str) -> float:
        """The final training loss, read from the job's own log."""
        hook = AIHCHook()
        master = hook.get_job(job_id).pod_names[0]
        losses = [
            float(m.group(1))
            for line in hook.iter_pod_log_lines(job_id, master)
            if (m := LOSS.search(line))
        ]
        print(f"Job {job_id}: final loss {losses[-1]} after {len(losses)} reports")
        return losses[-1]

    @task.short_circuit
    def good_enough(loss: float, params=None) -> bool:
        return loss < params["promote_below_loss"]

    @task
    def promote(job_id: str, ds=None) -> None:
        """Register the model (replace with your registry's call)."""
        print(f"Promoting the model trained by AIHC job {job_id} on data of {ds}")

    loss = evaluate(train.output)
    new_data_arrived() >> train
    wait >> loss
    good_enough(loss) >> promote(train.output)
