"""AIHCJobSensor against the emulator: poke, reschedule, deferrable, soft_fail."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from watch_helpers import POOL, log_lines

from airflow_provider_aihc.emulator import DEFAULT_SECRET_ACCESS_KEY
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import (
    AIHCError,
    AIHCJobFailedError,
    AIHCValidationError,
    AIHCWatchRefusedError,
)
from airflow_provider_aihc.links.aihc import AIHCJobLink
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.version_compat import (
    AirflowFailException,
    AirflowSensorTimeout,
    AirflowSkipException,
)

try:
    from airflow.sdk.exceptions import TaskDeferred
except ImportError:  # Airflow 2
    from airflow.exceptions import TaskDeferred  # type: ignore[no-redef]


class FakeTaskInstance:
    """Records what the sensor pushes to XCom."""

    def __init__(self) -> None:
        self.pushed: list[tuple[str, Any]] = []

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed.append((key, value))


@pytest.fixture
def context() -> dict[str, Any]:
    return {"ti": FakeTaskInstance()}


def sensor(job_id: str, **kwargs: Any) -> AIHCJobSensor:
    return AIHCJobSensor(task_id="wait", job_id=job_id, poke_interval=0.01, **kwargs)


def output(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> str:
    """What the task logged: Airflow 2 through logging, Airflow 3 through structlog."""
    return caplog.text if caplog.records else capsys.readouterr().out


def test_job_id_and_pool_are_templated_and_the_link_is_attached() -> None:
    assert set(AIHCJobSensor.template_fields) == {"job_id", "resource_pool_id", "job_queue"}
    assert [link.name for link in AIHCJobSensor.operator_extra_links] == ["AIHC Job"]


def test_poke_until_success_returns_the_job_id_and_streams_the_log(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    context: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level("INFO")
    job_id = create("poked")
    watcher = sensor(job_id)
    pokes = 0
    while not (result := watcher.poke(context)):
        pokes += 1
    assert result.is_done
    assert result.xcom_value == job_id
    assert pokes == 3  # Created, Scheduled, Running
    text = output(caplog, capsys)
    assert f"AIHC job {job_id}: Running → Succeeded" in text
    for line in log_lines(aihc_emulator, job_id, "poked-master-0"):
        assert text.count(line) == 1, line
    url = f"{aihc_emulator.url}/_emulator/jobs/{job_id}"
    pushed = context["ti"].pushed
    assert pushed[0] == (AIHCJobLink.XCOM_KEY, url)  # once, on the first poke
    assert [key for key, _ in pushed[1:]] == ["result", "metrics", "job_summary"]


def test_poke_raises_with_the_jobs_own_reason(
    aihc_emulator: EmulatorServer, create: Callable[..., str], context: dict[str, Any]
) -> None:
    aihc_emulator.backend.add_script(scenarios.FailJob(reason="loss became NaN at step 1200"))
    watcher = sensor(create("diverged"))
    for _ in range(3):  # Created, Scheduled, Running
        assert watcher.poke(context) is False
    with pytest.raises(AIHCJobFailedError, match="ended Failed: loss became NaN at step 1200"):
        watcher.poke(context)


@pytest.mark.parametrize("status", ["Stopped", "ManualTermination"])
def test_a_stopped_job_fails_the_sensor(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    context: dict[str, Any],
    status: str,
) -> None:
    job_id = create("halted")
    aihc_emulator.backend.set_status(job_id, status, reason="quota exceeded")
    with pytest.raises(AIHCJobFailedError, match=f"ended {status}"):
        sensor(job_id, stream_logs=False).poke(context)


def test_soft_fail_skips_on_a_failed_job(
    aihc_emulator: EmulatorServer, create: Callable[..., str], context: dict[str, Any]
) -> None:
    job_id = create("soft")
    aihc_emulator.backend.set_status(job_id, "Failed", reason="OOMKilled")
    with pytest.raises(AirflowSkipException, match="OOMKilled"):
        sensor(job_id, soft_fail=True).poke(context)
    with pytest.raises(AirflowSkipException, match="OOMKilled"):  # through the base class too
        sensor(job_id, soft_fail=True).execute(context)


def test_transient_errors_only_delay_the_poke(
    aihc_emulator: EmulatorServer,
    no_hook_retries: None,
    create: Callable[..., str],
    context: dict[str, Any],
) -> None:
    job_id = create("flaky")
    aihc_emulator.backend.set_status(job_id, "Succeeded")
    aihc_emulator.backend.add_fault(scenarios.error(503, operation="GetJob"))
    watcher = sensor(job_id)
    assert watcher.poke(context) is False
    assert watcher.poke(context)


def test_poke_mode_execute_runs_to_the_end(
    aihc_emulator: EmulatorServer, create: Callable[..., str], context: dict[str, Any]
) -> None:
    job_id = create("executed")
    assert sensor(job_id, resource_pool_id=POOL).execute(context) == job_id


def test_reschedule_mode_copies_the_tail_once_at_the_end(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each reschedule is a new sensor: no state, so no live copy; the end copies the tail."""
    caplog.set_level("INFO")
    job_id = create("resched")
    while True:
        done = sensor(job_id, mode="reschedule").poke({"ti": FakeTaskInstance()})
        if done:
            break
        assert aihc_emulator.backend.count("GetPodLogs") == 0
    assert aihc_emulator.backend.count("GetPodLogs") == 2  # the tail, then the result's
    text = output(caplog, capsys)
    for line in log_lines(aihc_emulator, job_id, "resched-master-0"):
        assert text.count(line) == 1, line


def test_deferrable_checks_once_then_defers_carrying_the_log_position(
    aihc_emulator: EmulatorServer, create: Callable[..., str], context: dict[str, Any]
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(1, running=3)
    job_id = create("deferred")
    aihc_emulator.backend.set_status(job_id, "Running")
    aihc_emulator.backend.poll(POOL, job_id)  # one poll: a few log lines
    watcher = sensor(job_id, deferrable=True, timeout=600)
    started = time.time()
    with pytest.raises(TaskDeferred) as deferred:
        watcher.poke(context)
    trigger = deferred.value.trigger
    assert isinstance(trigger, AIHCJobTrigger)
    assert deferred.value.method_name == "execute_complete"
    _, kwargs = trigger.serialize()
    assert kwargs["job_id"] == job_id
    assert kwargs["resource_pool_id"] == POOL
    assert kwargs["poll_interval"] == 0.01
    assert started + 600 <= kwargs["deadline"] <= time.time() + 600
    assert (kwargs["stop_on_timeout"], kwargs["cancel_on_kill"]) == (False, False)
    assert set(kwargs["log_state"]) == {"deferred-master-0"}  # the lines copied so far
    assert kwargs["log_state"]["deferred-master-0"] not in ("", "lm1-0")
    assert aihc_emulator.backend.count("GetJob") == 2  # the status, then the env to mask


def test_deferral_tells_the_trigger_when_so_a_takeover_resumes_the_log(
    aihc_emulator: EmulatorServer, create: Callable[..., str], context: dict[str, Any]
) -> None:
    job_id = create("deferred-at")
    aihc_emulator.backend.set_status(job_id, "Running")
    before = time.time()
    with pytest.raises(TaskDeferred) as deferred:
        sensor(job_id, deferrable=True, timeout=600).poke(context)
    trigger = deferred.value.trigger
    assert isinstance(trigger, AIHCJobTrigger)
    assert trigger.deferred_at is not None
    assert before <= trigger.deferred_at <= time.time()
    # What the takeover rule needs: long after the deferral, the log resumes near the
    # takeover, not from the first line.
    trigger.deferred_at -= 3600
    resumes = trigger._log_resume_point(takeover=30.0)
    assert resumes is not None
    assert resumes > trigger.deferred_at + 3000


def test_deferrable_on_an_ended_job_finishes_without_deferring(
    aihc_emulator: EmulatorServer, create: Callable[..., str], context: dict[str, Any]
) -> None:
    job_id = create("quick")
    aihc_emulator.backend.set_status(job_id, "Succeeded")
    result = sensor(job_id, deferrable=True).poke(context)
    assert result.xcom_value == job_id  # type: ignore[union-attr]


def payload(status: str, **extra: Any) -> dict[str, Any]:
    return {"status": status, "job_id": "j-1", "job_status": None, "message": "m", **extra}


def test_execute_complete_returns_or_raises(
    aihc_emulator: EmulatorServer, context: dict[str, Any]
) -> None:
    watcher = sensor("j-1", deferrable=True)
    assert watcher.execute_complete(context, payload("success", job_status="Succeeded")) == "j-1"
    failed = payload("failed", job_status="Failed", reason="Evicted: node drained")
    with pytest.raises(AIHCJobFailedError, match="ended Failed: Evicted: node drained"):
        watcher.execute_complete(context, failed)
    with pytest.raises(AirflowSensorTimeout, match="late"):
        watcher.execute_complete(context, payload("timeout", message="late", waited_seconds=9.0))
    with pytest.raises(AIHCError, match="job vanished"):
        watcher.execute_complete(context, payload("error", message="job vanished"))
    with pytest.raises(AIHCError, match="Malformed AIHC job event"):
        watcher.execute_complete(context, {"status": "success"})


def test_execute_complete_with_soft_fail_skips(
    aihc_emulator: EmulatorServer, context: dict[str, Any]
) -> None:
    watcher = sensor("j-1", deferrable=True, soft_fail=True)
    with pytest.raises(AirflowSkipException, match="Evicted"):
        watcher.execute_complete(context, payload("failed", job_status="Failed", reason="Evicted"))


def _connection(monkeypatch: pytest.MonkeyPatch, url: str, **fields: Any) -> None:
    """``aihc_other``: the emulator's connection with ``fields`` replaced."""
    conn = {
        "conn_type": "aihc",
        "login": "aihc-emulator-ak",
        "password": DEFAULT_SECRET_ACCESS_KEY,
        "host": url,
        "extra": {"resource_pool_id": POOL},
        **fields,
    }
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_OTHER", json.dumps(conn))


@pytest.mark.parametrize(
    ("setup", "kwargs", "named"),
    [
        (None, {"aihc_conn_id": "aihc_nowhere"}, ["aihc_conn_id"]),
        ({"login": ""}, {"aihc_conn_id": "aihc_other"}, ["aihc_conn_id"]),
        ({"extra": {"timeout": "soon"}}, {"aihc_conn_id": "aihc_other"}, ["aihc_conn_id"]),
        ({"extra": {}}, {"aihc_conn_id": "aihc_other"}, ["resource_pool_id"]),
        (None, {"job_id": "None"}, ["job_id"]),
        (None, {"job_id": "a/../b", "resource_pool_id": ".."}, ["job_id", "resource_pool_id"]),
        (None, {"deferrable": True, "poke_interval": 0}, ["poke_interval"]),
    ],
)
@pytest.mark.parametrize("mode", ["poke", "reschedule"])
def test_input_no_retry_can_fix_fails_the_sensor_without_retries_before_any_request(
    aihc_emulator: EmulatorServer,
    context: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    setup: dict[str, Any] | None,
    kwargs: dict[str, Any],
    named: list[str],
    mode: str,
) -> None:
    """Regression: an undefined or unusable connection raised Airflow's
    AirflowNotFoundException or a plain AIHCConfigError, which the task retried."""
    if setup is not None:
        _connection(monkeypatch, aihc_emulator.url, **setup)
    params = {"job_id": "pytorchjob-1", "poke_interval": 0.01, "mode": mode, **kwargs}
    watcher = AIHCJobSensor(task_id="wait", **params)
    with pytest.raises(AirflowFailException) as refused:
        watcher.poke(context)
    assert isinstance(refused.value, AIHCValidationError)
    assert [field for field, _ in refused.value.errors] == named
    assert DEFAULT_SECRET_ACCESS_KEY not in str(refused.value)
    assert aihc_emulator.backend.requests == []
    assert context["ti"].pushed == []


def test_a_missing_xcom_is_named_as_such(
    aihc_emulator: EmulatorServer, context: dict[str, Any]
) -> None:
    with pytest.raises(
        AIHCValidationError, match="job_id: is 'None': the XCom it pulls is missing"
    ):
        sensor("None").poke(context)


def test_soft_fail_does_not_skip_input_no_retry_can_fix(
    aihc_emulator: EmulatorServer, context: dict[str, Any]
) -> None:
    """Airflow's sensor loop turns an AirflowFailException from ``poke`` into a skip under
    ``soft_fail``: a missing connection is a mistake to fix, not a run to skip."""
    watcher = sensor("pytorchjob-1", aihc_conn_id="aihc_nowhere", soft_fail=True)
    with pytest.raises(AIHCValidationError, match="'aihc_nowhere' is not defined"):
        watcher.execute(context)
    assert aihc_emulator.backend.requests == []


def test_a_job_that_does_not_exist_fails_without_retries_even_with_soft_fail(
    aihc_emulator: EmulatorServer, context: dict[str, Any]
) -> None:
    """Regression: a 404 for a well-formed job id was an AIHCError every try retried; and
    Airflow's sensor loop would turn the fail-fast error into a skip under ``soft_fail``."""
    for soft_fail in (False, True):
        with pytest.raises(AIHCWatchRefusedError, match="JobNotFound, HTTP 404") as caught:
            sensor("pytorchjob-nosuchjob", soft_fail=soft_fail).execute(context)
        assert isinstance(caught.value, AirflowFailException)
        assert "Could not watch AIHC job pytorchjob-nosuchjob" in str(caught.value)


def test_a_refused_event_fails_the_resumed_sensor_even_with_soft_fail(
    context: dict[str, Any],
) -> None:
    watcher = sensor("j-1", deferrable=True, soft_fail=True)
    event = payload("error", message="404 JobNotFound", retryable=False)
    with pytest.raises(AIHCWatchRefusedError, match="404 JobNotFound"):
        watcher.resume_execution("execute_complete", {"event": event}, context)
