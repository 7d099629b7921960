"""Lineage cases: a job that mounts every kind of datasource and carries secrets, and a job
that fails.  One DAG each: on Airflow 2.11 ``airflow dags test`` stops at a failed task."""

from __future__ import annotations

from datetime import datetime

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.version_compat import Asset

#: Values that must never reach a lineage event.
SECRETS = {
    "WANDB_API_KEY": "wandb-canary-7f3a91",
    "HF_TOKEN": "hf-canary-c0ffee42",
    "DB_PASSWORD": "db-canary-pass-553",
    "MINIO_SECRET": "minio-canary-secret-19",
}
REGISTRY_PASSWORD = "registry-canary-pw-8d2e"
DATASOURCES = [
    {"type": "pfs", "name": "pfs-7xWeAt", "sourcePath": "/datasets/clicks", "mountPath": "/d"},
    {"type": "bos", "name": "corpus", "sourcePath": "web/2025/", "mountPath": "/bos"},
    {"type": "cfs", "name": "cfs-a1", "mountPath": "/cfs"},
    {"type": "hostPath", "name": "ssd", "sourcePath": "/mnt/ssd/cache", "mountPath": "/cache"},
    {"type": "dataset", "name": "ds-42", "sourcePath": "/v3", "mountPath": "/ds"},
    {"type": "emptydir", "name": "devshm", "mountPath": "/dev/shm"},
]
OUTLETS = [Asset("bos://models/clicks/v3"), Asset("file:///tmp/aihc-lineage/report.json")]
JOB = {
    "image": "registry.example/private/trainer:1",
    "command": "python train.py",
    "wait_for_completion": True,
    "deferrable": False,
    "poll_interval": 0.2,
    "retries": 0,
}

with DAG("lineage_kinds", start_date=datetime(2024, 1, 1), schedule=None):
    AIHCCreateJobOperator(
        task_id="train",
        name="lineage-kinds",
        datasources=DATASOURCES,
        envs=[{"name": name, "value": value} for name, value in SECRETS.items()],
        body={"jobSpec": {"imageConfig": {"username": "bot", "password": REGISTRY_PASSWORD}}},
        outlets=OUTLETS,
        **JOB,
    )

with DAG("lineage_failure", start_date=datetime(2024, 1, 1), schedule=None):
    AIHCCreateJobOperator(task_id="train", name="lineage-fails", datasources=DATASOURCES, **JOB)
