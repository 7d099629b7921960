"""The retraining loop's end in one DAG run, each step once whatever is lost on the way:
dataset version → model version → deploy (deferred) → roll (sync) → a stuck roll
(deferred, reverted) → sensor → scale → delete.  ``test_service_loop.py`` loses answers;
``stick_next_rollout`` tells the emulator (its control API) to stick the broken roll's
rollout; Airflow's own retries (``retry_delay`` 0) do the rest."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from _compat import DAG, task

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
from airflow_provider_aihc.sensors.service import AIHCServiceSensor

POLL = 0.2
RETRY = {"retries": 1, "retry_delay": timedelta(seconds=0)}
IMAGE = "registry.example/ranker-server:1"
SERVICE_CONF = {
    "name": "loop-ranker",
    "acceleratorType": "A100",
    "workloadType": "",
    "instanceCount": 2,
    "resourcePool": {"resourcePoolId": "cce-emulator0", "queueName": "default"},
    "containers": [
        {"name": "server", "cpus": 4, "memory": 16, "acceleratorCount": 1,
         "image": {"imageType": 2, "imageUrl": IMAGE}}
    ],
}  # fmt: skip
#: Every task whose XComs the test reads, and the keys it reads.
XCOM_KEYS = {
    "register_data": ("return_value",),
    "register_model": ("return_value",),
    "deploy": ("return_value", "service_id"),
    "roll": ("return_value", "change_id"),
    "roll_broken": ("return_value", "change_id"),
    "scale": ("return_value",),
}

with DAG("service_loop", start_date=datetime(2024, 1, 1), schedule=None):
    data = AIHCCreateDatasetVersionOperator(
        task_id="register_data",
        dataset_name="loop-clicks",
        storage_path="/datasets/clicks",
        mount_path="/mnt/data",
        create_dataset={
            "storage_type": "PFS",
            "storage_instance": "pfs-7xWeAt",
            "import_format": "FOLDER",
        },
        **RETRY,
    )
    model = AIHCRegisterModelVersionOperator(
        task_id="register_model",
        model_name="loop-ranker",
        model_format="HuggingFace",
        storage_bucket="loop-models",
        storage_path="/loop-ranker/{{ run_id | replace(':', '-') | replace('+', '-') }}",
        model_metrics={"loss": 1.5},
        dataset_version_id=data.output["dataset_version_id"],
        **RETRY,
    )
    deploy = AIHCDeployServiceOperator(
        task_id="deploy",
        service_conf=SERVICE_CONF,
        deferrable=True,
        poll_interval=POLL,
        timeout=120,
        **RETRY,
    )
    roll = AIHCUpdateServiceOperator(
        task_id="roll",
        service_id=deploy.output["service_id"],
        model_version=model.output,
        max_surge=25,
        max_unavailable=0,
        poll_interval=POLL,
        timeout=120,
        **RETRY,
    )

    @task
    def stick_next_rollout():
        """The service's next rollout never becomes ready (``ImagePullBackOff``)."""
        import os
        from urllib.request import Request, urlopen

        from airflow_provider_aihc.emulator.http.control import TOKEN_ENV, TOKEN_HEADER
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        script = {"kind": "rollout_stuck", "match": "loop-ranker", "reason": "ImagePullBackOff"}
        host = AIHCHook.get_connection("aihc_default").host
        headers = {"Content-Type": "application/json", TOKEN_HEADER: os.environ[TOKEN_ENV]}
        urlopen(Request(f"{host}/_emulator/scripts", json.dumps(script).encode(), headers))

    # The emulator sticks this rollout: the task fails, and first puts the previous
    # configuration back.  No retry: a later try cannot revert what this one sent.
    roll_broken = AIHCUpdateServiceOperator(
        task_id="roll_broken",
        service_id=deploy.output["service_id"],
        image="registry.example/ranker-server:broken",
        on_failure="revert",
        deferrable=True,
        poll_interval=POLL,
        timeout=120,
    )
    serving = AIHCServiceSensor(
        task_id="serving",
        service_id=deploy.output["service_id"],
        expected_instance_count=2,
        poke_interval=POLL,
        timeout=120,
        trigger_rule="all_done",
    )
    scale = AIHCScaleServiceOperator(
        task_id="scale",
        service_id=deploy.output["service_id"],
        instance_count=1,
        poll_interval=POLL,
        timeout=120,
        **RETRY,
    )

    @task
    def report(service_id: str, **context):
        """Before the teardown: each task's XComs, the service as AIHC answers it, and the
        emulator's own counts (its control API)."""
        from urllib.request import urlopen

        from airflow_provider_aihc.hooks.aihc import AIHCHook

        ti = context["ti"]
        for task_id, keys in XCOM_KEYS.items():
            values = {key: ti.xcom_pull(task_ids=task_id, key=key) for key in keys}
            print(f"XCOM {task_id} {json.dumps(values, sort_keys=True)}")
        hook = AIHCHook()
        live = hook.get_service(service_id).service
        print(f"LIVE {json.dumps(live, sort_keys=True, default=str)}")
        with urlopen(f"{AIHCHook.get_connection('aihc_default').host}/_emulator/state") as answer:
            print(f"STATE {answer.read().decode()}")

    delete_version = AIHCDeleteModelVersionOperator(
        task_id="delete_version",
        model_id=model.output["model_id"],
        version_id=model.output["model_version_id"],
        **RETRY,
    )
    delete_service = AIHCDeleteServiceOperator(
        task_id="delete_service", service_id=deploy.output["service_id"], **RETRY
    )

    reported = report(deploy.output["service_id"])
    [model, deploy] >> roll >> stick_next_rollout() >> roll_broken >> serving >> scale >> reported
    reported >> [delete_version, delete_service]
