"""OpenLineage events of real DAG runs against the emulator, read from a file transport.

The OpenLineage provider (a test dependency) emits START and COMPLETE (or FAIL) for each
task of ``airflow dags test``; these tests read what it wrote and check the inputs, the
``aihcJob`` run facet, the outputs, and that no secret got into any event.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_paths import EXAMPLES_DIR
from example_service import retraining_conf

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID, DEFAULT_SECRET_ACCESS_KEY
from airflow_provider_aihc.emulator.pytest_plugin import CONN_ENV
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

sys.path.insert(0, str(Path(__file__).parent / "dags"))
from lineage_cases import REGISTRY_PASSWORD, SECRETS

pytestmark = pytest.mark.dagrun

POOL = DEFAULT_RESOURCE_POOL_ID
EXAMPLE_ENV = {"AIHC_EXAMPLE_POLL_SECONDS": "0.2"}
SEED_IMAGE = (
    "registry.baidubce.com/aihc-aiak/aiak-megatron:"
    "ubuntu20.04-cu11.8-torch1.14.0-py38_v1.2.7.12_release"
)
GPUS = [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}]
DATA_URI = "pfs://pfs-7xWeAt/datasets/clicks"
MODEL_URI = "pfs://pfs-7xWeAt/models/clicks-ranker"


class Events:
    """The events one file transport received."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def text(self) -> str:
        return self.path.read_text() if self.path.exists() else ""

    def all(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.splitlines() if line.strip()]

    def leaks(self) -> list[str]:
        """The secrets of the test DAGs and of the connection found in any event."""
        text = self.text
        secrets = [*SECRETS.values(), REGISTRY_PASSWORD, DEFAULT_SECRET_ACCESS_KEY]
        return [secret for secret in secrets if secret in text]

    def end(self, dag_id: str, task_id: str) -> dict[str, Any]:
        """The task's one COMPLETE or FAIL event."""
        [event] = [
            e
            for e in self.all()
            if e["job"]["name"] == f"{dag_id}.{task_id}" and e["eventType"] in {"COMPLETE", "FAIL"}
        ]
        return event


@pytest.fixture
def events(tmp_path: Path) -> Events:
    return Events(tmp_path / "openlineage.jsonl")


def _transport(events: Events, **extra: str) -> dict[str, str]:
    transport = {"type": "file", "log_file_path": str(events.path), "append": True}
    return {"AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport), **extra}


def _datasets(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(item["namespace"], item["name"]) for item in items]


def _job_facet(event: dict[str, Any], job: dict[str, Any], url: str) -> dict[str, Any]:
    """The ``aihcJob`` facet, checked against the emulator's record of ``job``."""
    facet = event["run"]["facets"]["aihcJob"]
    assert facet["jobId"] == job["jobId"]
    assert facet["jobName"] == job["name"]
    assert facet["resourcePoolId"] == POOL
    assert facet["consoleUrl"] == f"{url}/_emulator/jobs/{job['jobId']}"
    external = event["run"]["facets"]["externalQuery"]
    assert (external["externalQueryId"], external["source"]) == (job["jobId"], "aihc")
    return facet


def test_seed_job_reports_its_pfs_input_and_the_finished_job(aihc_emulator, run_dag, events):
    run = run_dag(
        "aihc_llama2_seed_job", dags_folder=EXAMPLES_DIR, env=_transport(events, **EXAMPLE_ENV)
    )

    assert run.succeeded, run.output[-4000:]
    [job] = aihc_emulator.backend.jobs()
    event = events.end("aihc_llama2_seed_job", "pretrain_llama2_7b")
    assert event["eventType"] == "COMPLETE"
    assert _datasets(event["inputs"]) == [("pfs://pfs-7xWeAt", "/")]
    assert event["outputs"] == []
    facet = _job_facet(event, job, aihc_emulator.url)
    # The deferred wait resumed on a new operator object, which knew the job all the same.
    assert {k: facet[k] for k in ("queue", "image", "replicas", "resources", "status")} == {
        "queue": "default",
        "image": SEED_IMAGE,
        "replicas": 1,
        "resources": GPUS,
        "status": "Succeeded",
    }
    assert (facet["jobFramework"], facet["priority"]) == ("PyTorchJob", "normal")
    assert "reason" not in facet
    summary = facet["summary"]  # the job_summary the wait pushed
    assert (summary["job_id"], summary["status"]) == (job["jobId"], "Succeeded")
    assert summary["accelerators_per_replica"] == {"baidu.com/a800_80g_cgpu": 8}
    assert summary["accelerator_seconds"] is not None
    assert events.leaks() == []


def test_every_datasource_kind_is_an_input_outlets_are_outputs_and_no_secret_leaks(
    aihc_emulator, run_dag, events
):
    run = run_dag("lineage_kinds", env=_transport(events))

    assert run.succeeded, run.output[-4000:]
    [job] = aihc_emulator.backend.jobs()
    assert job["body"]["jobSpec"]["imageConfig"]["password"] == REGISTRY_PASSWORD  # was sent
    event = events.end("lineage_kinds", "train")
    assert _datasets(event["inputs"]) == [
        ("pfs://pfs-7xWeAt", "/datasets/clicks"),
        ("bos://corpus", "web/2025"),
        ("cfs://cfs-a1", "/"),
        (f"hostpath://{POOL}", "/mnt/ssd/cache"),
        ("aihc-dataset://ds-42", "/v3"),
    ]
    assert _datasets(event["outputs"]) == [
        ("bos://models", "clicks/v3"),
        ("file", "/tmp/aihc-lineage/report.json"),
    ]
    assert _job_facet(event, job, aihc_emulator.url)["status"] == "Succeeded"
    assert events.text.count('"eventType": "START"') >= 1  # the whole run's events are there
    assert events.leaks() == []
    assert [s for s in SECRETS.values() if s in run.output] == []


def test_a_failed_job_reports_its_status_and_reason(aihc_emulator, run_dag, events):
    reason = "NCCL watchdog timeout on worker-1"
    aihc_emulator.backend.add_script(scenarios.FailJob(match="lineage-fails", reason=reason))

    run = run_dag("lineage_failure", env=_transport(events))

    assert not run.succeeded
    [job] = aihc_emulator.backend.jobs()
    event = events.end("lineage_failure", "train")
    assert event["eventType"] == "FAIL"
    facet = _job_facet(event, job, aihc_emulator.url)
    assert (facet["status"], facet["reason"]) == ("Failed", reason)
    assert len(event["inputs"]) == 5
    assert events.leaks() == []


def test_retraining_is_scheduled_on_the_data_the_producer_updates_or_weekly():
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 2.11
        from airflow.models.dagbag import DagBag  # type: ignore[no-redef]
    bag = DagBag(str(EXAMPLES_DIR / "aihc_scheduled_retraining.py"))
    producer = bag.dags["aihc_training_data_update"]
    retraining = bag.dags["aihc_scheduled_retraining"]

    schedule = retraining.timetable
    assets = schedule.asset_condition if AIRFLOW_V_3_0_PLUS else schedule.dataset_condition
    assert type(schedule).__name__ in {"AssetOrTimeSchedule", "DatasetOrTimeSchedule"}
    assert [a.uri for a in assets.objects] == [DATA_URI]
    cron = schedule.timetable  # 3.x keeps the expression as given, 2.11 expands it
    assert (getattr(cron, "expression", None) or cron._expression) in {"@weekly", "0 0 * * 0"}
    assert [a.uri for a in producer.get_task("publish_training_data").outlets] == [DATA_URI]
    assert [a.uri for a in retraining.get_task("promote").outlets] == [MODEL_URI]


def _run_without_logical_date(
    dag_id: str, env: dict[str, str], conf: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    """``dag.test(logical_date=None)``: how an asset-triggered run looks on Airflow 3."""
    script = (
        "from airflow.dag_processing.dagbag import DagBag\n"
        f"dag = DagBag({str(EXAMPLES_DIR)!r}).get_dag({dag_id!r})\n"
        f"run = dag.test(logical_date=None, run_conf={conf!r})\n"
        "print(f'RUN state={run.state} logical_date={run.logical_date}')\n"
    )
    environ = {**os.environ, "AIRFLOW__CORE__DAGS_FOLDER": str(EXAMPLES_DIR), **env}
    return subprocess.run(
        [sys.executable, "-c", script], env=environ, capture_output=True, text=True, timeout=300
    )


def test_data_update_then_retraining_joins_data_training_and_model(
    aihc_emulator, run_dag, events, monkeypatch
):
    # The retraining is v2 only and rolls a service that exists before it runs.
    monkeypatch.setenv(CONN_ENV, aihc_emulator.connection(api_version="v2").json)
    conf = retraining_conf()
    env = _transport(events, **EXAMPLE_ENV)
    producer = run_dag("aihc_training_data_update", dags_folder=EXAMPLES_DIR, env=env)
    assert producer.succeeded, producer.output[-4000:]
    if AIRFLOW_V_3_0_PLUS:  # asset-triggered runs have no logical date, so no `ds`
        done = _run_without_logical_date("aihc_scheduled_retraining", env, conf)
        output = done.stdout + done.stderr
        assert "RUN state=success logical_date=None" in output, output[-4000:]
    else:  # 2.11: a dataset-triggered run has a logical date like any other
        retrain = run_dag(
            "aihc_scheduled_retraining", dags_folder=EXAMPLES_DIR, env=env, conf=json.dumps(conf)
        )
        assert retrain.succeeded, retrain.output[-4000:]

    [job] = aihc_emulator.backend.jobs()
    data = ("pfs://pfs-7xWeAt", "/datasets/clicks")
    landed = events.end("aihc_training_data_update", "publish_training_data")
    assert _datasets(landed["outputs"]) == [data]
    train = events.end("aihc_scheduled_retraining", "train")
    assert _datasets(train["inputs"]) == [data, ("pfs://pfs-7xWeAt", "/checkpoints")]
    assert _job_facet(train, job, aihc_emulator.url)["status"] != "Succeeded"  # did not wait
    wait = events.end("aihc_scheduled_retraining", "wait_for_training")
    assert wait["inputs"] == []
    assert _job_facet(wait, job, aihc_emulator.url)["status"] == "Succeeded"
    promote = events.end("aihc_scheduled_retraining", "promote")
    assert _datasets(promote["outputs"]) == [("pfs://pfs-7xWeAt", "/models/clicks-ranker")]
    # ... by way of a model version, onto which the service rolled
    for task_id in ("register_data", "register_model", "roll_service"):
        assert events.end("aihc_scheduled_retraining", task_id)["eventType"] == "COMPLETE"
    assert aihc_emulator.backend.count("ModifyService") == 1
    assert events.leaks() == []


def test_full_task_info_carries_no_secret(aihc_emulator, run_dag, events):
    """Regression: with ``include_full_task_info``, Airflow's ``airflow`` run facet listed
    every operator attribute, and the START and COMPLETE events carried the secret envs and
    the registry password (the provider's redaction does not see what a task renders)."""
    env = _transport(events, AIRFLOW__OPENLINEAGE__INCLUDE_FULL_TASK_INFO="True")

    run = run_dag("lineage_kinds", env=env)

    assert run.succeeded, run.output[-4000:]
    [job] = aihc_emulator.backend.jobs()
    assert job["body"]["jobSpec"]["imageConfig"]["password"] == REGISTRY_PASSWORD  # was sent
    [start, end] = [e for e in events.all() if e["job"]["name"] == "lineage_kinds.train"]
    assert (start["eventType"], end["eventType"]) == ("START", "COMPLETE")
    for event in (start, end):
        task = event["run"]["facets"]["airflow"]["task"]
        # The full task info, not the short one: attributes no short list names are there.
        assert (task["poll_interval"], task["name"], task["aihc_conn_id"]) == (
            0.2,
            "lineage-kinds",
            "aihc_default",
        )
        assert not {"envs", "image_config", "body"} & set(task)
    assert events.leaks() == []
