"""One job's outputs through the five ways of waiting: the create operator waiting in the
worker and deferred, and the sensor poking, rescheduled and deferred on a job a create
operator that does not wait started; then one task prints every XCom they pushed.
``tests/e2e/test_results_dags.py`` scripts what the jobs print and compares.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from _compat import DAG, task

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

JOB = {
    "image": "registry.baidubce.com/aihc-aiak/aiak-megatron:latest",
    "command": "bash /workspace/train.sh",
    "job_resources": {"baidu.com/a800_80g_cgpu": 8},
    "replicas": 2,
}
METRICS = {"loss": r"final loss: (\S+)", "phase": r"phase: (\w+)"}
WAYS = ("create_sync", "create_deferred", "sensor_poke", "sensor_reschedule", "sensor_deferrable")
KEYS = ("result", "metrics", "job_summary")

with DAG("results_five_ways", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    sync = AIHCCreateJobOperator(
        task_id="create_sync",
        name="five-sync",
        wait_for_completion=True,
        poll_interval=0.2,
        metrics=METRICS,
        **JOB,
    )
    deferred = AIHCCreateJobOperator(
        task_id="create_deferred",
        name="five-deferred",
        wait_for_completion=True,
        deferrable=True,
        poll_interval=0.2,
        metrics=METRICS,
        **JOB,
    )
    started = AIHCCreateJobOperator(task_id="create_nowait", name="five-sensed", **JOB)
    poke = AIHCJobSensor(
        task_id="sensor_poke", job_id=started.output, poke_interval=0.2, metrics=METRICS
    )
    resched = AIHCJobSensor(
        task_id="sensor_reschedule",
        job_id=started.output,
        mode="reschedule",
        poke_interval=1,
        metrics=METRICS,
    )
    defer = AIHCJobSensor(
        task_id="sensor_deferrable",
        job_id=started.output,
        deferrable=True,
        poke_interval=0.2,
        metrics=METRICS,
    )

    @task
    def report(**context: Any) -> None:
        ti = context["ti"]
        pushed = {
            way: {key: ti.xcom_pull(task_ids=way, key=key) for key in KEYS}
            for way in (*WAYS, "create_nowait")
        }
        print("FIVE_WAYS " + json.dumps(pushed, sort_keys=True))

    sync >> deferred >> started >> poke >> resched >> defer >> report()
