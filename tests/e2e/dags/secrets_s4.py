"""What the second security review found (S4-1, S4-2, S4-9, S4-10, issue #38 point 7), in one
real DAG run: ``tests/e2e/test_secrets_masked.py`` scripts what the jobs print, then reads
Rendered Templates as Airflow stored them, the XComs a downstream task received and the
run's output."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from _compat import DAG, task

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

#: An env token with a quote and a backslash: JSON text escapes it, so the masker's
#: pattern of the value registered at render no longer matched it inside the payload.
QUOTED_TOKEN = 'hf_"S4-1\\quoted-token'
#: An argument no one registered (it could be an upstream XCom); its name is sensitive.
API_KEY = "S4-1-API-KEY-UNREGISTERED"
REPORT = "SECRETS_S4 "

with DAG(
    "secrets_s4",
    schedule=None,
    start_date=datetime(2024, 1, 1),
    params={"api_key": API_KEY, "note": QUOTED_TOKEN},
):

    @task.aihc_python(image="python:3.11", poll_interval=0.2, envs={"HF_TOKEN": QUOTED_TOKEN})
    def s4_payload(api_key: str, note: str) -> None:
        print(len(api_key), len(note))

    # A deferred wait; short ordinary env values; a diverged loss and key names that
    # Airflow's key-name rule hides.
    train = AIHCCreateJobOperator(
        task_id="s4_train",
        name="s4-train",
        image="registry.example/train:1",
        command="python train.py",
        envs={"NCCL_DEBUG": "WARN", "OMP_NUM_THREADS": "8"},
        wait_for_completion=True,
        deferrable=True,
        poll_interval=0.2,
        metrics={"loss": r"loss=(\S+)", "tokenizer_version": r"tokenizer_version=(\S+)"},
    )

    # A deferred sensor on a job the test created (conf ``job_id``): nothing in this run
    # rendered that job, so only the streamer's own masking hides its token.
    sensed = AIHCJobSensor(
        task_id="s4_sensor",
        job_id="{{ dag_run.conf['job_id'] }}",
        deferrable=True,
        poke_interval=0.2,
    )

    @task
    def s4_report(**context: Any) -> None:
        ti = context["ti"]
        pulled = {key: ti.xcom_pull(task_ids="s4_train", key=key) for key in ("result", "metrics")}
        print(REPORT + json.dumps(pulled, sort_keys=True))

    payload = s4_payload(api_key="{{ params.api_key }}", note="{{ params.note }}")
    payload >> train >> sensed >> s4_report()
