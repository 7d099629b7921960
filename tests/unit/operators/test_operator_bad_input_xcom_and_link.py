"""Templates that cannot render, input that fails fast without retries, ``do_xcom_push``,
``deferrable`` without a wait, and the link of a task that created no job."""

from __future__ import annotations

import warnings

import jinja2
import pytest
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.links.aihc import AIHCJobLink
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.version_compat import AirflowFailException


def _operator(**kwargs: object) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(
        task_id="train", **{"image": "busybox", "command": "true", **kwargs}
    )


def test_validation_errors_fail_without_retries() -> None:
    """A bad priority fails once, not retries + 1 times (it once did)."""
    assert issubclass(AIHCValidationError, AirflowFailException)
    with pytest.raises(AirflowFailException, match="priority"):
        _operator(priority="urgent").execute(context_of(TaskInstanceStub()))


def test_an_undefined_connection_fails_without_retries_naming_it(
    aihc_emulator: EmulatorServer,
) -> None:
    with pytest.raises(AIHCValidationError, match="'aihc_nowhere' is not defined") as refused:
        _operator(aihc_conn_id="aihc_nowhere").execute(context_of(TaskInstanceStub()))
    assert [field for field, _ in refused.value.errors] == ["aihc_conn_id"]
    assert aihc_emulator.backend.requests == []


def test_a_template_naming_a_missing_variable_fails_at_render_naming_the_field() -> None:
    """``retrain-{{ ds_nodash }}`` in a run without a logical date fails at render, naming
    the field, without retries (jinja's UndefinedError, which Airflow retried, once leaked)."""
    operator = _operator(name="retrain-{{ ds_nodash }}", command="train --day {{ ds }}")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)

    with pytest.raises(AIHCValidationError) as refused:
        operator.render_template_fields({"run_id": "manual__x"}, env)

    fields = dict(refused.value.errors)
    assert set(fields) == {"name", "command"}
    assert "'ds_nodash' is undefined" in fields["name"]
    assert "runs without a logical date" in fields["name"]
    assert isinstance(refused.value, AirflowFailException)


def test_a_missing_body_file_fails_at_render_naming_body() -> None:
    operator = _operator(body="no/such/job.json")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader("."))
    with pytest.raises(AIHCValidationError, match=r"body: template file 'no/such/job\.json'"):
        operator.render_template_fields({}, env)


def test_do_xcom_push_false_pushes_nothing_but_the_link(aihc_emulator: EmulatorServer) -> None:
    """``do_xcom_push=False`` keeps job_id, job_name and resource_pool_id out of XCom (they
    once were always pushed)."""
    ti = TaskInstanceStub()
    _operator(do_xcom_push=False).execute(context_of(ti))
    assert list(ti.xcom) == [AIHCJobLink.XCOM_KEY]


def test_do_xcom_push_true_pushes_the_job_keys(aihc_emulator: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    job_id = _operator().execute(context_of(ti))
    assert ti.xcom["job_id"] == job_id
    keys = {"job_id", "job_name", "resource_pool_id", "job_queue", AIHCJobLink.XCOM_KEY}
    assert set(ti.xcom) == keys
    assert ti.xcom["job_queue"] == "default"  # the job's queue, which every later call names


def test_deferrable_without_wait_for_completion_warns_at_construction() -> None:
    """``deferrable`` without ``wait_for_completion`` warns (it once silently did nothing)."""
    with pytest.warns(UserWarning, match="deferrable=True does nothing without"):
        _operator(deferrable=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _operator(deferrable=True, wait_for_completion=True)
        _operator(deferrable=False)
        _operator()


class _RuntimeTI:
    """Airflow 3's running task instance as the link sees it as the task ends."""

    def __init__(self, task: object) -> None:
        self.task = task


def test_no_job_means_no_link_and_no_xcom_read() -> None:
    """A task that created no job has an empty link, read without an XCom (it once logged
    ``ERROR XCom not found key=_link_AIHCJobLink``: the link read an XCom never written)."""
    operator = _operator()
    assert AIHCJobLink().get_link(operator, ti_key=_RuntimeTI(operator)) == ""


def test_execute_complete_records_the_job_for_the_link(aihc_emulator: EmulatorServer) -> None:
    operator = _operator(wait_for_completion=True, deferrable=True)
    event = {"status": "success", "job_id": "job-1", "job_status": "Succeeded", "message": "ok"}
    assert operator.execute_complete({}, event) == "job-1"
    assert operator.job_id == "job-1"


def test_only_the_fields_whose_template_fails_are_named() -> None:
    """A field that rendered to text holding ``{{`` is not blamed for another's error."""
    operator = _operator(command="echo {{ braces }}", labels={"team": "{{ missing }}"})
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)

    with pytest.raises(AIHCValidationError) as refused:
        operator.render_template_fields({"braces": "{{ not a template }}"}, env)

    assert [field for field, _ in refused.value.errors] == ["labels"]
