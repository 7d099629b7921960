"""Tasks for the runs users make (tests/e2e/runs_driver.py): clears, retries, bad input."""

from __future__ import annotations

from datetime import datetime, timedelta

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

JOB = {
    "image": "registry.example/trainer:1",
    "command": "python train.py",
    "retries": 2,
    "retry_delay": timedelta(seconds=0),
}
WAIT = {"wait_for_completion": True, "poll_interval": 0.05}
RETRIES = {"retries": 2, "retry_delay": timedelta(seconds=0), "poke_interval": 0.05}


def _dag(dag_id: str) -> DAG:
    return DAG(dag_id, start_date=datetime(2024, 1, 1), schedule=None, catchup=False)


with _dag("series_train"):
    AIHCCreateJobOperator(task_id="train", deferrable=True, **WAIT, **JOB)

with _dag("series_sync"):
    AIHCCreateJobOperator(task_id="train", deferrable=False, **WAIT, **JOB)

with _dag("series_bad_priority"):
    AIHCCreateJobOperator(task_id="train", priority="{{ 'urgent' }}", **JOB)

with _dag("series_fixed_name"):
    AIHCCreateJobOperator(task_id="train", name="fixed-name", **JOB)

with _dag("series_undefined_template"):  # ds_nodash: missing without a logical date
    AIHCCreateJobOperator(task_id="train", name="job-{{ ds_nodash }}{{ no_such_value }}", **JOB)

with _dag("series_sensor_no_connection"):  # nobody defined aihc_nowhere; fails, not skips
    AIHCJobSensor(
        task_id="wait",
        job_id="pytorchjob-1",
        aihc_conn_id="aihc_nowhere",
        soft_fail=True,
        **RETRIES,
    )

with _dag("series_sensor_missing_xcom"):  # "train" pushed nothing: the id renders "None"
    AIHCJobSensor(task_id="wait", job_id="{{ ti.xcom_pull(task_ids='train') }}", **RETRIES)

with _dag("series_sensor_missing_job"):  # a well-formed id of no job: 404 JobNotFound
    AIHCJobSensor(task_id="wait", job_id="pytorchjob-nosuchjob", **RETRIES)

with _dag("series_sensor_missing_job_deferred"):
    AIHCJobSensor(task_id="wait", job_id="pytorchjob-nosuchjob", deferrable=True, **RETRIES)
