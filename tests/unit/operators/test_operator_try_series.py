"""Adoption within a try series, a new job after a clear, and names that another task's
job holds, through ``execute`` against the emulator over HTTP.

The task instance carries real try numbers: ``max_tries`` starts at ``retries`` and a
clear sets it to ``try_number + retries`` (Airflow's ``clear_task_instances``); the DAG-run
versions of these paths are in tests/e2e/test_try_series.py.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from aihc_jobs import job_body
from operator_helpers import RunStub, TaskInstanceStub, context_of

from airflow_provider_aihc.emulator import DEFAULT_SECRET_ACCESS_KEY as SK
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCError, AIHCRefusedError
from airflow_provider_aihc.operators._identity import (
    SERIES_LABEL,
    TI_LABEL,
    TRY_LABEL,
    TaskIdentity,
    first_try_number,
)
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.version_compat import AirflowFailException

POOL = "cce-emulator0"


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real pauses between the hook's attempts."""
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    monkeypatch.setattr(AIHCHook, "sleep", staticmethod(lambda seconds: None))


def _operator(**kwargs: object) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(task_id="train", image="busybox", command="true", **kwargs)


def _statuses(server: EmulatorServer) -> list[tuple[str, str]]:
    return sorted((job["name"], job["status"]) for job in server.backend.jobs())


@pytest.mark.parametrize(
    ("try_number", "max_tries", "retries", "first"),
    [
        (1, 2, 2, 1),  # first try, never cleared
        (3, 2, 2, 1),  # the last retry of the first series
        (2, 3, 2, 2),  # cleared after try 1: max_tries = 1 + 2
        (5, 6, 2, 5),  # cleared after try 4
        (7, 6, 2, 5),  # a running task cleared (RESTARTING): its retry stays in the series
        (2, 3, 5, 1),  # retries raised since the clear: never before try 1
        (1, -1, 0, 1),  # no max_tries known
    ],
)
def test_first_try_of_the_series_is_max_tries_minus_retries_plus_one(
    try_number: int, max_tries: int, retries: int, first: int
) -> None:
    ti = TaskInstanceStub(retries=retries, try_number=try_number, max_tries=max_tries)
    assert first_try_number(ti, retries) == first


def test_a_cleared_succeeded_task_trains_again_under_a_new_name(
    aihc_emulator: EmulatorServer,
) -> None:
    """A clear starts a new series that trains again: the job the previous series
    succeeded with is not adopted (it once was)."""
    ti = TaskInstanceStub()
    first = _operator().execute(context_of(ti))
    aihc_emulator.backend.set_status(first, "Succeeded")

    second = _operator().execute(context_of(ti.clear()))

    assert second != first
    assert aihc_emulator.backend.count("CreateJob", 200) == 2
    names = {job["jobId"]: job["name"] for job in aihc_emulator.backend.jobs()}
    assert names[second] == f"{names[first]}-s2"
    labels = next(j["labels"] for j in aihc_emulator.backend.jobs() if j["jobId"] == second)
    assert (labels[TRY_LABEL], labels[SERIES_LABEL]) == ("2", "2")


def test_a_given_name_gets_the_series_suffix_after_a_clear(aihc_emulator: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    _operator(name="nightly").execute(context_of(ti))
    _operator(name="nightly").execute(context_of(ti.clear()))
    assert [name for name, _ in _statuses(aihc_emulator)] == ["nightly", "nightly-s2"]


@pytest.mark.parametrize("cancel_on_kill", [True, False])
def test_a_cleared_task_stops_the_job_its_earlier_series_left_running(
    aihc_emulator: EmulatorServer, cancel_on_kill: bool
) -> None:
    """A clear that nothing carried to the running job (its triggerer was down, or died
    while stopping it; found by ``make test-chaos``): the new series stops that job
    before it trains again, unless ``cancel_on_kill=False``."""
    ti = TaskInstanceStub()
    first = _operator(cancel_on_kill=cancel_on_kill).execute(context_of(ti))
    aihc_emulator.backend.set_status(first, "Running", hold=True)

    second = _operator(cancel_on_kill=cancel_on_kill).execute(context_of(ti.clear()))

    statuses = {job["jobId"]: job["status"] for job in aihc_emulator.backend.jobs()}
    assert second != first
    assert statuses[first] == ("ManualTermination" if cancel_on_kill else "Running")
    assert aihc_emulator.backend.count("StopJob", 200) == (1 if cancel_on_kill else 0)


def test_a_failed_stop_of_the_earlier_series_is_logged_and_the_task_trains_again(
    aihc_emulator: EmulatorServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ti = TaskInstanceStub()
    first = _operator().execute(context_of(ti))
    aihc_emulator.backend.set_status(first, "Running", hold=True)
    aihc_emulator.backend.add_fault(scenarios.error(400, operation="StopJob"))

    second = _operator().execute(context_of(ti.clear()))

    assert second != first
    logged = caplog.text + capsys.readouterr().out  # Airflow 2's logging, Airflow 3's
    assert f"Could not stop AIHC job {first}" in logged
    statuses = {job["jobId"]: job["status"] for job in aihc_emulator.backend.jobs()}
    assert statuses[first] == "Running"


def test_a_retry_in_the_series_adopts_the_running_job(aihc_emulator: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    first = _operator().execute(context_of(ti))
    aihc_emulator.backend.set_status(first, "Running", hold=True)

    assert _operator().execute(context_of(ti.retry())) == first
    assert aihc_emulator.backend.count("CreateJob") == 1


def test_a_retry_after_a_clear_adopts_its_own_series_job_not_the_older_one(
    aihc_emulator: EmulatorServer,
) -> None:
    ti = TaskInstanceStub(retries=3)
    old = _operator().execute(context_of(ti))
    aihc_emulator.backend.set_status(old, "Succeeded")
    new = _operator().execute(context_of(ti.clear()))
    aihc_emulator.backend.set_status(new, "Running", hold=True)

    assert _operator().execute(context_of(ti.retry())) == new
    assert aihc_emulator.backend.count("CreateJob") == 2


def test_a_failed_job_of_the_series_is_replaced_by_the_next_generation(
    aihc_emulator: EmulatorServer,
) -> None:
    ti = TaskInstanceStub()
    _operator().execute(context_of(ti))
    series_two = _operator().execute(context_of(ti.clear()))
    aihc_emulator.backend.set_status(series_two, "Failed", reason="OOM")

    third = _operator().execute(context_of(ti.retry()))

    name = next(job["name"] for job in aihc_emulator.backend.jobs() if job["jobId"] == third)
    assert name.endswith("-s2-r2")
    assert aihc_emulator.backend.count("CreateJob", 200) == 3


def test_a_lost_create_answer_after_a_clear_is_found_in_the_new_series(
    aihc_emulator: EmulatorServer,
) -> None:
    """The lost-answer scan keeps working in a later series, and skips the older job."""
    ti = TaskInstanceStub()
    old = _operator().execute(context_of(ti))
    aihc_emulator.backend.set_status(old, "Running", hold=True)
    aihc_emulator.backend.add_fault(scenarios.drop_after(operation="CreateJob"))

    new = _operator().execute(context_of(ti.clear()))

    assert new != old
    assert aihc_emulator.backend.count("CreateJob") == 1 + 1
    assert len(aihc_emulator.backend.jobs()) == 2


def test_a_name_another_task_instance_holds_fails_without_retries(
    aihc_emulator: EmulatorServer,
) -> None:
    """A ``409`` for a name another task instance's job holds is final: no retry can
    succeed (it once was retried)."""
    other = TaskInstanceStub(run_id="manual__other")
    _operator(name="retrain-20260101").execute(context_of(other))

    with pytest.raises(AIHCRefusedError) as refused:
        _operator(name="retrain-20260101").execute(context_of(TaskInstanceStub()))

    assert isinstance(refused.value, AirflowFailException)
    message = str(refused.value)
    assert "JobAlreadyExists" in message
    assert "another task instance (series/manual__other/train)" in message
    assert "run_id" in message
    assert aihc_emulator.backend.count("CreateJob") == 2


def test_a_name_a_job_outside_airflow_holds_gets_a_fresh_name_once(
    aihc_emulator: EmulatorServer,
) -> None:
    """Security review F5: a squatted name no longer fails the task without retries."""
    squatter = aihc_emulator.backend.create_job(POOL, job_body("by-hand"))
    ti = TaskInstanceStub()
    created = _operator(name="by-hand").execute(context_of(ti))
    assert created != squatter
    names = {job["jobId"]: job["name"] for job in aihc_emulator.backend.jobs()}
    assert re.fullmatch(r"by-hand-x[0-9a-f]{6}", names[created])

    aihc_emulator.backend.set_status(created, "Running", hold=True)
    assert _operator(name="by-hand").execute(context_of(ti.retry())) == created
    assert aihc_emulator.backend.count("CreateJob", 200) == 1  # ours; the retry adopted it
    assert len(aihc_emulator.backend.jobs()) == 2


def test_a_409_for_the_series_own_job_is_adopted(aihc_emulator: EmulatorServer) -> None:
    """The name guard: a job this series created holds the name, but the scan before the
    create did not see it (here: the run's start is ahead of AIHC's clock by 7 hours)."""
    ti = TaskInstanceStub()
    context = {**context_of(ti), "dag_run": RunStub(datetime.now(UTC) + timedelta(hours=7))}
    identity = TaskIdentity.from_context(context)
    labels = identity.tagged(SK, "mine")
    body = job_body("mine", labels=[{"key": k, "value": v} for k, v in labels.items()])
    job_id = aihc_emulator.backend.create_job(POOL, body)

    assert _operator(name="mine").execute(context) == job_id
    assert aihc_emulator.backend.count("CreateJob") == 1


@pytest.mark.parametrize(("status", "code"), [(400, "InvalidParam"), (403, "AccessDenied")])
def test_400_and_403_fail_without_retries(
    aihc_emulator: EmulatorServer, status: int, code: str
) -> None:
    aihc_emulator.backend.add_fault(scenarios.error(status, code, operation="CreateJob"))
    with pytest.raises(AIHCRefusedError, match=code) as refused:
        _operator().execute(context_of(TaskInstanceStub()))
    assert isinstance(refused.value, AirflowFailException)
    assert str(status) in str(refused.value)


@pytest.mark.parametrize("status", [503, 429])
def test_5xx_and_429_keep_their_retries(aihc_emulator: EmulatorServer, status: int) -> None:
    fault = (
        scenarios.throttle(0.0, operation="ListJobs", times=50)
        if status == 429
        else scenarios.error(status, operation="ListJobs", times=50)
    )
    aihc_emulator.backend.add_fault(fault)
    with pytest.raises(AIHCError) as raised:
        _operator().execute(context_of(TaskInstanceStub()))
    assert not isinstance(raised.value, AirflowFailException)
    assert f"HTTP {status}" in str(raised.value)
    assert aihc_emulator.backend.count("CreateJob") == 0


def test_identity_labels_say_which_try_and_series_created_the_job(
    aihc_emulator: EmulatorServer,
) -> None:
    _operator().execute(context_of(TaskInstanceStub(try_number=4, max_tries=5, retries=2)))
    [job] = aihc_emulator.backend.jobs()
    assert job["labels"][TRY_LABEL] == "4"
    assert job["labels"][SERIES_LABEL] == "4"
    assert len(job["labels"][TI_LABEL]) == 20


def test_a_deferrable_retry_that_adopts_an_ended_job_copies_its_log(
    aihc_emulator: EmulatorServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Regression (``make test-chaos``): the try that created the job was killed before it
    deferred, the job ended, and the retry adopted it and succeeded without deferring, so
    no trigger copied the job's log and the task's log held none of its lines."""
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    ti = TaskInstanceStub()
    job_id = _operator().execute(context_of(ti))  # no wait: as a try killed after it
    hook = AIHCHook()
    for _ in range(20):  # each read moves the job on (per-poll progression)
        if (job := hook.get_job(job_id, POOL)).is_terminal:
            break
    assert job.status == "Succeeded"
    [pod] = job.pod_names
    page = aihc_emulator.backend.pod_logs(POOL, job_id, pod, marker="", queue_id=None)
    written = [line for line in page.lines if line]
    assert len(written) >= 3

    retry = _operator(wait_for_completion=True, deferrable=True)
    assert retry.execute(context_of(ti.retry())) == job_id

    logged = caplog.text + capsys.readouterr().out  # Airflow 2's logging, Airflow 3's
    assert f"Adopting AIHC job {job_id}" in logged
    assert [line for line in written if line not in logged] == []
    assert aihc_emulator.backend.count("CreateJob") == 1
