"""Literal mistakes are refused when the operator is made (DAG parse), with the words the
run would use; templated values wait for the run; ``validate()`` is the dry run of CI."""

from __future__ import annotations

import textwrap
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

try:
    from airflow.sdk import DAG, Param
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.models.param import Param  # type: ignore[no-redef]

JOB = {"image": "img", "command": "python train.py"}

#: One literal mistake each (the trial's parse-time script, and a few more).
MISTAKES: list[tuple[str, dict[str, Any]]] = [
    ("missing image", {"image": None}),
    ("missing command", {"command": None}),
    ("blank image", {"image": "  "}),
    ("negative replicas", {"replicas": -2}),
    ("zero replicas", {"replicas": 0}),
    ("bad priority", {"priority": "urgent"}),
    ("bad framework", {"job_framework": "pytorch"}),
    ("bad name", {"name": "My_Job"}),
    ("long name", {"name": "x" * 51}),
    ("bad retention", {"retention_period": "forever"}),
    ("bad max running time", {"max_running_time": "12x"}),
    ("negative queue_timeout", {"wait_for_completion": True, "queue_timeout": -5}),
    ("zero poll_interval", {"wait_for_completion": True, "poll_interval": 0}),
    ("negative timeout", {"wait_for_completion": True, "timeout": -1}),
    ("managed pool no queue", {"resource_pool_id": "aihc-serverless"}),
]


@pytest.mark.parametrize(("case", "mistake"), MISTAKES, ids=[case for case, _ in MISTAKES])
def test_a_literal_mistake_is_refused_when_made_in_the_words_of_the_run(
    aihc_emulator: EmulatorServer, case: str, mistake: dict[str, Any]
) -> None:
    with pytest.raises(AIHCValidationError) as at_parse:
        AIHCCreateJobOperator(task_id="train", **{**JOB, **mistake})
    assert "of task 'train'" in str(at_parse.value)
    assert at_parse.value.errors, case

    # The same value reaching the run (made valid, then set as a rendered template would):
    run_time = _made_then_set(mistake)
    with pytest.raises(AIHCValidationError) as at_run:
        run_time.build_request(default_name="train-1")
    assert set(at_parse.value.errors) <= set(at_run.value.errors), case
    assert aihc_emulator.backend.requests == []


def _made_then_set(mistake: dict[str, Any]) -> AIHCCreateJobOperator:
    waiting = {k: mistake[k] for k in ("wait_for_completion",) if k in mistake}
    operator = AIHCCreateJobOperator(task_id="train", **JOB, **waiting)
    for name, value in mistake.items():
        setattr(operator, name, value)
    return operator


def test_every_mistake_is_named_at_once() -> None:
    with pytest.raises(AIHCValidationError) as refused:
        AIHCCreateJobOperator(
            task_id="train",
            image="img",
            command="c",
            replicas=-2,
            priority="urgent",
            metrics={"loss": "no group"},
        )
    assert [field for field, _ in refused.value.errors] == [
        "jobSpec.replicas (replicas)",
        "priority (priority)",
        "metrics['loss']",
    ]


@pytest.mark.parametrize(
    "templated",
    [
        {"replicas": "{{ params.replicas }}"},
        {"priority": "{{ params.priority }}"},
        {"name": "train-{{ ds_nodash }}"},
        {"image": "{{ var.value.image }}"},
        {"resource_pool_id": "{{ params.pool }}"},
        {"body": "job.json"},  # the body may give the image, the command and the queue
    ],
)
def test_templated_values_are_left_to_the_run(templated: dict[str, Any]) -> None:
    AIHCCreateJobOperator(task_id="train", **{**JOB, **templated})


def test_an_upstream_xcom_is_left_to_the_run() -> None:
    with DAG("xcom", start_date=datetime(2025, 1, 1), schedule=None):
        first = AIHCCreateJobOperator(task_id="first", **JOB)
        AIHCCreateJobOperator(task_id="second", image=first.output, command="c")


def test_a_dag_file_with_literal_mistakes_fails_to_import_naming_each(tmp_path: Path) -> None:
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 2.11, 3.0
        from airflow.models.dagbag import DagBag  # type: ignore[no-redef]
    (tmp_path / "nightly.py").write_text(
        textwrap.dedent(
            """
            from datetime import datetime
            from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
            try:
                from airflow.sdk import DAG
            except ImportError:
                from airflow import DAG
            with DAG("nightly", start_date=datetime(2025, 1, 1), schedule="0 2 * * *"):
                AIHCCreateJobOperator(
                    task_id="finetune", command="python train.py", replicas=-2,
                    priority="urgent", name="My_Job", resource_pool_id="aihc-serverless",
                    wait_for_completion=True, queue_timeout=-5,
                )
            """
        )
    )
    bag = DagBag(str(tmp_path))
    (error,) = bag.import_errors.values()
    assert "nightly" not in bag.dag_ids
    for named in (
        "of task 'finetune'",
        "jobSpec.image: required",
        "jobSpec.replicas (replicas): must be >= 1, got -2",
        "priority (priority): must be one of high, normal, low; got 'urgent'",
        "name (name): must be 1-50 lowercase letters",
        "queue_timeout: must be seconds > 0",
        "queue (job_queue): resource pool 'aihc-serverless' is managed",
    ):
        assert named in error, named


def test_validate_renders_and_checks_without_sending(aihc_emulator: EmulatorServer) -> None:
    with DAG(
        "ci",
        start_date=datetime(2025, 1, 1),
        schedule=None,
        params={"lr": Param(0.01, type="number"), "replicas": 2},
    ):
        task = AIHCCreateJobOperator(
            task_id="train",
            image="img",
            command="python train.py --lr {{ params.lr }} --day {{ ds }}",
            replicas="{{ params.replicas }}",
        )

    body = task.validate()
    assert body["jobSpec"]["replicas"] == 2
    assert body["jobSpec"]["command"].startswith("python train.py --lr 0.01 --day 20")
    assert task.validate({"params": {"lr": 0.5, "replicas": 1}})["jobSpec"]["replicas"] == 1
    with pytest.raises(AIHCValidationError) as refused:
        task.validate({"params": {"lr": 0.5, "replicas": 0}})
    assert refused.value.errors == (("jobSpec.replicas (replicas)", "must be >= 1, got '0'"),)
    assert task.replicas == "{{ params.replicas }}"  # the task itself is left as it was
    assert aihc_emulator.backend.requests == []


def test_validate_names_a_template_that_does_not_render(aihc_emulator: EmulatorServer) -> None:
    task = AIHCCreateJobOperator(task_id="train", image="img", command="{{ params.missing.x }}")
    with pytest.raises(AIHCValidationError, match="command: template does not render"):
        task.validate()


def test_a_malformed_connection_uri_is_named_not_called_undefined(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Airflow skips an env connection it cannot parse; it read as "not defined" (trial F9)."""
    monkeypatch.setenv(
        "AIRFLOW_CONN_AIHC_TRIAL",
        "aihc://aihc-emulator-ak:aihc-emulator-sk@http://127.0.0.1:18080?resource_pool_id=x",
    )
    task = AIHCCreateJobOperator(task_id="train", aihc_conn_id="aihc_trial", **JOB)
    with pytest.raises(AIHCValidationError) as refused:
        task.build_request(default_name="train-1")
    ((field, problem),) = refused.value.errors
    assert field == "aihc_conn_id"
    assert "is set in AIRFLOW_CONN_AIHC_TRIAL but does not parse" in problem
    assert "http%3A%2F%2F" in problem
    assert "not defined" not in problem
