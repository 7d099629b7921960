"""What only AIHC's v2 API can say (a TFJob), kept for a day, with TensorBoard, an alert and
private-registry credentials (whose password must never reach a log)."""

from __future__ import annotations

from datetime import datetime

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

REGISTRY_PASSWORD = "registry-pw-5f1e9c"

with DAG("create_v2_additions", start_date=datetime(2024, 1, 1), schedule=None):
    AIHCCreateJobOperator(
        task_id="tf_train",
        name="tf-train",
        image="registry.example.com/private/tf:2.15",
        command="python train.py",
        job_framework="TFJob",
        replicas=2,
        retention_period="{{ '1d' }}",
        tensorboard_config={"enableTensorboard": True, "logPath": "/mnt/tb"},
        alert_config={"alertName": "stalled", "for": "10m"},
        image_config={"username": "robot", "password": REGISTRY_PASSWORD},
        wait_for_completion=True,
        poll_interval=0.2,
    )
