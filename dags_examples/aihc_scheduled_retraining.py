"""Data-aware retraining on AIHC, closed into a loop: new training data → a dataset version
→ train on GPUs → wait (deferred) → gate on the final loss → register the model version →
roll it onto the online service as a canary → wait for the rollout, reverting on failure →
promote, which updates the model asset.

* ``aihc_training_data_update`` stands for whatever lands the training data (your ETL):
  its task declares the training-data asset as an outlet, so each successful run marks the
  asset updated.  A system outside Airflow does the same through the REST API (Airflow 3:
  ``POST /api/v2/assets/events`` with the asset's id; 2.11: ``POST /api/v1/datasets/events``
  with its URI).
* ``aihc_scheduled_retraining`` runs when the training data is updated, and weekly whatever
  happens (``AssetOrTimeSchedule`` on Airflow 3, datasets on 2.11); to retrain only on new
  data, use ``schedule=[TRAINING_DATA]``.  Its ``promote`` step updates the model asset,
  on which serving or reporting DAGs can be scheduled in turn.

The model registry, datasets and online services exist only in AIHC's v2 action API: the
``aihc_default`` connection needs the extra ``api_version: v2`` (the operators refuse a v1
connection before sending anything).  Every step is exactly once: a retry adopts the
dataset version and model version an earlier try registered (found by storage path), and
a roll whose configuration is already live is not sent again.  The online service is
long-lived and created once, outside this DAG (``AIHCDeployServiceOperator`` in a one-off
DAG, or the console); its id is the ``service_id`` param.  The trainer writes the model to
``bos://<model_bucket>/clicks-ranker/<run>``; the service finds it in ``AIHC_MODEL_PATH``.

With the OpenLineage provider on, ``train`` reports the job's datasources as its inputs
(``pfs://pfs-7xWeAt`` ``/datasets/clicks`` is the training-data asset's dataset too) and
``promote`` the model asset as its output, so lineage joins data → training → model.

The sensor reads the final loss itself (``metrics``: the last match of a regex in the
master pod's log, XCom ``metrics``) and pushes the job's ``job_summary`` (time in the queue,
run time, GPU-hours, GPU utilisation); ``queue_timeout`` stops a job that waits too long for
GPUs.  The loss becomes the model version's metrics.  Nothing here reads the log.

Copy this file, point the ``aihc_default`` connection at your AIHC region and pool, and
replace the data update with your own.  A manual run can override any ``params`` value
(image, learning rate, data path, promotion threshold, service).
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta

try:
    from airflow.sdk import DAG, Param, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]
    from airflow.models.param import Param  # type: ignore[no-redef]

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.operators.model_registry import (
    AIHCCreateDatasetVersionOperator,
    AIHCRegisterModelVersionOperator,
)
from airflow_provider_aihc.operators.service import AIHCUpdateServiceOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor
from airflow_provider_aihc.version_compat import Asset, asset_or_time_schedule

#: How often to look at the job. Minutes are plenty for real training; the demo uses less.
POLL_SECONDS = float(os.environ.get("AIHC_EXAMPLE_POLL_SECONDS", "60"))
#: Megatron's per-interval line: ``... | lm loss: 2.104527E+00 | ...``; the last one wins.
METRICS = {"loss": r"lm loss: ([0-9.E+-]+)"}
PFS = "pfs-7xWeAt"
DATA_PATH = "/datasets/clicks"
#: Updated when new training data has landed; retraining is scheduled on it.
TRAINING_DATA = Asset(f"pfs://{PFS}{DATA_PATH}")
#: Updated when a retrained model passed evaluation and was promoted.
MODEL = Asset(f"pfs://{PFS}/models/clicks-ranker")
#: The run's own part of a path: ``run_id`` without the characters paths dislike.
RUN = "{{ run_id | replace(':', '-') | replace('+', '-') }}"

with DAG(
    dag_id="aihc_training_data_update",
    schedule=None,
    start_date=datetime(2025, 1, 1),
    catchup=False,
    tags=["aihc", "example"],
):

    @task(outlets=[TRAINING_DATA])
    def publish_training_data() -> None:
        """Land a new batch of training data (replace with your ETL)."""
        print(f"New training data written to {TRAINING_DATA.uri}")

    publish_training_data()

with DAG(
    dag_id="aihc_scheduled_retraining",
    schedule=asset_or_time_schedule([TRAINING_DATA], "@weekly"),
    start_date=datetime(2025, 1, 1),
    catchup=False,
    params={
        "image": Param(
            "registry.baidubce.com/aihc-aiak/aiak-megatron:ubuntu20.04-cu11.8-torch1.14.0-py38_v1.2.7.12_release",
            type="string",
        ),
        "learning_rate": Param(3e-4, type="number", minimum=0),
        "data_path": Param(DATA_PATH, type="string"),
        "promote_below_loss": Param(11.0, type="number"),
        "model_bucket": Param("clicks-models", type="string"),
        "service_id": Param("s-r7d45dcffa0a", type="string"),
    },
    tags=["aihc", "example"],
):
    # The data this run trains on, as a version of the "clicks" dataset (created on the
    # first run); a retry adopts the version, not registers it twice.
    data_version = AIHCCreateDatasetVersionOperator(
        task_id="register_data",
        dataset_name="clicks",
        storage_path="{{ params.data_path }}",
        mount_path="/mnt/data",
        description="clicks for " + RUN,
        create_dataset={"storage_type": "PFS", "storage_instance": PFS, "import_format": "FOLDER"},
    )

    train = AIHCCreateJobOperator(
        task_id="train",
        # No name: "train-<hash of the task instance>", unique per run and try series, and
        # no `ds`: runs without a logical date (manual, API, asset-triggered) have none.
        image="{{ params.image }}",
        command=(
            "python -m trainer --data /mnt/data --lr {{ params.learning_rate }}"
            f" --output /mnt/checkpoints/{RUN}"
            f" --export bos://{{{{ params.model_bucket }}}}/clicks-ranker/{RUN}"
        ),
        job_resources={"baidu.com/a800_80g_cgpu": 8},
        envs={"CUDA_DEVICE_MAX_CONNECTIONS": "1"},
        datasources=[
            {
                "type": "pfs",
                "name": PFS,
                "sourcePath": "{{ params.data_path }}",
                "mountPath": "/mnt/data",
                "options": {"readOnly": True},
            },
            {
                "type": "pfs",
                "name": PFS,
                "sourcePath": "/checkpoints",
                "mountPath": "/mnt/checkpoints",
            },
        ],
        labels={"pipeline": "data-aware-retraining"},
        retries=2,
    )

    wait = AIHCJobSensor(
        task_id="wait_for_training",
        job_id=train.output,
        deferrable=True,
        poke_interval=POLL_SECONDS,
        timeout=timedelta(hours=48).total_seconds(),
        metrics=METRICS,
        queue_timeout=timedelta(hours=6).total_seconds(),  # no GPUs for 6 h: stop, fail
    )

    @task.short_circuit
    def good_enough(metrics: dict[str, float], params=None) -> bool:
        """Promote only a model whose final training loss is below the threshold."""
        print(f"Final loss {metrics['loss']}; promoting below {params['promote_below_loss']}")
        return metrics["loss"] < params["promote_below_loss"]

    # The trained model as a new version of "clicks-ranker" (created on the first run), its
    # final loss and the dataset version it was trained on as the version's metrics.
    model_version = AIHCRegisterModelVersionOperator(
        task_id="register_model",
        model_name="clicks-ranker",
        model_format="HuggingFace",
        storage_bucket="{{ params.model_bucket }}",
        storage_path=f"/clicks-ranker/{RUN}",
        model_metrics=wait.output["metrics"],
        dataset_version_id=data_version.output["dataset_version_id"],
    )

    # Roll the service onto the new version as a canary: new instances come up before old
    # ones go (maxSurge 25 %, maxUnavailable 0); a rollout that gets stuck (an image that
    # does not pull, a server that crashes) fails early and the previous configuration is
    # put back.
    roll = AIHCUpdateServiceOperator(
        task_id="roll_service",
        service_id="{{ params.service_id }}",
        model_version=model_version.output,
        max_surge=25,
        max_unavailable=0,
        description="clicks-ranker " + RUN,
        on_failure="revert",
        deferrable=True,
        poll_interval=POLL_SECONDS,
        timeout=timedelta(hours=2).total_seconds(),
    )

    @task(outlets=[MODEL])
    def promote(job_id: str, version: dict[str, str]) -> None:
        """Mark ``MODEL`` updated: the version now serves."""
        print(
            f"Promoting the model trained by AIHC job {job_id}: version {version['version_id']}"
            f" of model {version['model_id']} serves on {MODEL.uri}"
        )

    data_version >> train
    good_enough(wait.output["metrics"]) >> model_version >> roll
    roll >> promote(train.output, model_version.output)
