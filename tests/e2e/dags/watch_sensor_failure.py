"""A job the emulator fails: the deferrable sensor fails with the job's reason, and a
sensor with ``soft_fail=True`` is skipped.  Run by ``tests/e2e/test_watch_dags.py``."""

from __future__ import annotations

from datetime import datetime

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

with DAG("watch_sensor_failure", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    create = AIHCCreateJobOperator(
        task_id="create",
        name="watch-fail",
        image="registry.baidubce.com/aihc-aiak/aiak-megatron:latest",
        command="bash /workspace/train.sh",
        job_resources={"baidu.com/a800_80g_cgpu": 8},
    )
    fails = AIHCJobSensor(
        task_id="sensor_fails", job_id=create.output, deferrable=True, poke_interval=0.2
    )
    skipped = AIHCJobSensor(
        task_id="sensor_soft_fail",
        job_id=create.output,
        poke_interval=0.2,
        soft_fail=True,
        stream_logs=False,
        trigger_rule="all_done",
    )
    create >> fails >> skipped
