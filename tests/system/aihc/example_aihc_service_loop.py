"""System test: the retraining loop's end, on a real region, deleting what it created.

A dataset version and a model version (metadata only: they point at
``AIHC_SYSTEM_TEST_LOOP_BUCKET``, default ``aihc-system-test``, nothing is read), an
online service of one small CPU instance of ``AIHC_SYSTEM_TEST_IMAGE`` created and waited
for in the triggerer, rolled onto the model version (sync, reverting on failure), scaled to
0, then deleted with the model version by teardowns; the runner deletes whatever of this
session's is left (services named after the session, their model versions).
What it checks on a real region: that AIHC accepts these requests as Baidu's definitions
write them, and the rollout the sensor judges.  What it costs: one CPU instance for a few
minutes, bounded by ``AIHC_SYSTEM_TEST_MAX_JOB_MINUTES`` per wait.  These actions exist
only in the v2 action API: the loop uses connection ``aihc_system_test_v2`` whatever
``AIHC_SYSTEM_TEST_API_VERSION`` says.
"""

from __future__ import annotations

import os
from datetime import datetime

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]

from system_runner import CONN_ID_V2, ENV, JobSettings, get_test_run

from airflow_provider_aihc.operators.model_registry import (
    AIHCCreateDatasetVersionOperator,
    AIHCDeleteModelVersionOperator,
    AIHCRegisterModelVersionOperator,
)
from airflow_provider_aihc.operators.service import (
    AIHCDeleteServiceOperator,
    AIHCDeployServiceOperator,
    AIHCScaleServiceOperator,
    AIHCUpdateServiceOperator,
)

DAG_ID = "example_aihc_service_loop"
S = JobSettings.from_env()
BUCKET = os.environ.get(f"{ENV}LOOP_BUCKET", "aihc-system-test")
#: Everything this session creates is named after it, so the runner's cleanup finds it.
NAME = f"{S.run_id}-loop"
WAIT = {"aihc_conn_id": CONN_ID_V2, "poll_interval": S.poll_seconds,
        "timeout": S.max_job_minutes * 60}  # fmt: skip
SERVICE_CONF = {
    "name": NAME,
    "acceleratorType": "",
    "workloadType": "",
    "instanceCount": 1,
    "resourcePool": {"resourcePoolId": S.pool, "queueName": S.queue or "default"},
    "containers": [
        {"name": "server", "cpus": 1, "memory": 1, "acceleratorCount": 0,
         "image": {"imageType": 2, "imageUrl": S.image},
         "command": ["sh", "-c", "sleep 3600"]}
    ],
}  # fmt: skip

with DAG(DAG_ID, schedule=None, start_date=datetime(2025, 1, 1), catchup=False) as dag:
    data = AIHCCreateDatasetVersionOperator(
        task_id="register_data",
        aihc_conn_id=CONN_ID_V2,
        dataset_name=NAME,
        storage_path=f"/{NAME}/data",
        mount_path="/mnt/data",
        create_dataset={"storage_type": "BOS", "storage_instance": BUCKET,
                        "import_format": "FOLDER"},
    )  # fmt: skip
    model = AIHCRegisterModelVersionOperator(
        task_id="register_model",
        aihc_conn_id=CONN_ID_V2,
        model_name=NAME,
        model_format="HuggingFace",
        storage_bucket=BUCKET,
        storage_path=f"/{NAME}/model",
        dataset_version_id=data.output["dataset_version_id"],
    )
    deploy = AIHCDeployServiceOperator(
        task_id="deploy", service_conf=SERVICE_CONF, deferrable=True, **WAIT
    )
    roll = AIHCUpdateServiceOperator(
        task_id="roll",
        service_id=deploy.output["service_id"],
        model_version=model.output,
        max_surge=100,
        max_unavailable=0,
        on_failure="revert",
        **WAIT,
    )
    scale = AIHCScaleServiceOperator(
        task_id="scale", service_id=deploy.output["service_id"], instance_count=0, **WAIT
    )
    delete_service = AIHCDeleteServiceOperator(
        task_id="delete_service", aihc_conn_id=CONN_ID_V2, service_id=deploy.output["service_id"]
    ).as_teardown(setups=deploy)
    delete_version = AIHCDeleteModelVersionOperator(
        task_id="delete_version",
        aihc_conn_id=CONN_ID_V2,
        model_id=model.output["model_id"],
        version_id=model.output["model_version_id"],
    ).as_teardown(setups=model)
    [model, deploy] >> roll >> scale >> [delete_service, delete_version]


test_run = get_test_run(dag, creates_jobs=False)
