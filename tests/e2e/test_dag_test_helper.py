"""The shipped test helper (``airflow_provider_aihc.emulator.dag_test``) runs a user's DAG
to its end in the test's process, on Airflow 2.11 and 3.x: the copyable test of
docs/testing.md, run as written there.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from airflow_provider_aihc.emulator.dag_test import run_dag
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios

pytestmark = pytest.mark.dagrun

#: A user's DAG: train waits for its job and reads a metric, a TaskFlow step reads them.
DAG = """
from datetime import datetime

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

try:
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.11
    from airflow import DAG
    from airflow.decorators import task

with DAG(
    "nightly_finetune",
    schedule=None,
    start_date=datetime(2025, 1, 1),
    params={"lr": 0.01},
    default_args={"retries": 0},  # in tests: a failed job fails the run at once
):
    finetune = AIHCCreateJobOperator(
        task_id="finetune",
        image="registry.baidubce.com/aihc/pytorch:2.1",
        command="python train.py --lr {{ params.lr }}",
        wait_for_completion=True,
        poll_interval=0.1,
        metrics={"loss": r"lm loss value: ([0-9.E+-]+)"},
    )

    @task
    def decide(metrics: dict) -> str:
        return "promote" if metrics["loss"] < 100 else "keep"

    decide(finetune.output["metrics"])
"""


@pytest.fixture
def dag_folder(tmp_path: Path) -> Path:
    (tmp_path / "nightly.py").write_text(textwrap.dedent(DAG))
    return tmp_path


def test_a_dag_runs_to_its_end_and_its_xcoms_and_requests_are_read(
    aihc_emulator: EmulatorServer, dag_folder: Path
) -> None:
    run = run_dag(dag_folder, "nightly_finetune", conf={"lr": 0.001})

    assert run.state == "success", run.task_states
    assert run.task_states == {"finetune": "success", "decide": "success"}
    assert run.xcom("decide") == "promote"
    assert isinstance(run.xcom("finetune", "metrics")["loss"], float)
    assert run.xcom("finetune", "job_summary")["status"] == "Succeeded"
    job = aihc_emulator.backend.job(run.xcom("finetune"))  # the return value: the job id
    assert job["body"]["jobSpec"]["command"] == "python train.py --lr 0.001"
    assert aihc_emulator.backend.count("CreateJob") == 1


def test_a_scripted_job_failure_fails_the_run_without_a_retry(
    aihc_emulator: EmulatorServer, dag_folder: Path
) -> None:
    aihc_emulator.backend.add_script(scenarios.FailJob(match="finetune", reason="CUDA OOM"))

    run = run_dag(dag_folder, "nightly_finetune")

    assert run.state == "failed"
    assert run.task_states["finetune"] == "failed"
    assert run.task_states["decide"] == "upstream_failed"
    assert aihc_emulator.backend.count("CreateJob") == 1  # retries=0: one job, no retry
