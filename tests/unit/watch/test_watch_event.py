"""JobEvent: the one event shape; its payload round trip, validation, and what it means."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from watch_helpers import Recorder

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import (
    AIHCError,
    AIHCJobFailedError,
    AIHCJobTimeoutError,
    AIHCWatchRefusedError,
)
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.watch import EVENT_STATUSES, JobEvent, complete

texts = st.text(max_size=40)
events = st.builds(
    JobEvent,
    status=st.sampled_from(EVENT_STATUSES),
    job_id=st.text(min_size=1, max_size=40),
    job_status=st.none() | texts,
    message=texts,
    reason=st.none() | texts,
    waited_seconds=st.none() | st.floats(min_value=0, max_value=1e9),
    stopped=st.booleans(),
    retryable=st.booleans(),
    job_queue=st.none() | texts,
)


@given(events)
def test_payload_round_trips_through_json(event: JobEvent) -> None:
    payload = event.to_payload()
    assert JobEvent.from_payload(json.loads(json.dumps(payload))) == event


def test_payload_is_plain_json() -> None:
    event = JobEvent("timeout", "job-1", "Running", "late", waited_seconds=3.5, stopped=True)
    assert event.to_payload() == {
        "status": "timeout",
        "job_id": "job-1",
        "job_status": "Running",
        "message": "late",
        "reason": None,
        "waited_seconds": 3.5,
        "stopped": True,
        "retryable": True,
        "queued": False,
        "job_queue": None,
    }


def test_older_payloads_without_optional_fields_and_newer_keys_are_read() -> None:
    payload = {"status": "success", "job_id": "j", "job_status": "Succeeded", "message": "ok"}
    assert JobEvent.from_payload({**payload, "added_later": 1}) == JobEvent(
        "success", "j", "Succeeded", "ok"
    )


GOOD = {"status": "failed", "job_id": "j", "job_status": "Failed", "message": "m"}


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        (None, "expected a mapping"),
        ("success", "expected a mapping"),
        ({**GOOD, "status": "done"}, "status must be one of success, failed, timeout, error"),
        ({k: v for k, v in GOOD.items() if k != "status"}, "status must be"),
        ({**GOOD, "job_id": ""}, "job_id must be a non-empty string"),
        ({**GOOD, "job_id": 7}, "job_id must be a non-empty string"),
        (
            {k: v for k, v in GOOD.items() if k != "message"},
            "message must be a string, got '<missing>'",
        ),
        ({**GOOD, "job_status": 3}, "job_status must be a string or null"),
        ({**GOOD, "reason": ["x"]}, "reason must be a string or null"),
        ({**GOOD, "waited_seconds": "10"}, "waited_seconds must be a number or null"),
        ({**GOOD, "waited_seconds": True}, "waited_seconds must be a number or null"),
        ({**GOOD, "stopped": "yes"}, "stopped must be true or false"),
        ({**GOOD, "retryable": "no"}, "retryable must be true or false"),
    ],
)
def test_malformed_payloads_are_refused_naming_the_problem(payload: Any, named: str) -> None:
    with pytest.raises(AIHCError, match="Malformed AIHC job event") as caught:
        JobEvent.from_payload(payload)
    assert named in str(caught.value)


def test_every_problem_is_named_at_once() -> None:
    with pytest.raises(AIHCError) as caught:
        JobEvent.from_payload({"status": "x", "job_id": None, "message": 1})
    text = str(caught.value)
    assert "status must" in text
    assert "job_id must" in text
    assert "message must" in text


def test_complete_returns_the_job_id_on_success(log: Recorder) -> None:
    event = JobEvent("success", "job-1", "Succeeded", "AIHC job job-1 succeeded")
    assert complete(event, log) == "job-1"
    assert log.messages("info") == ["AIHC job job-1 succeeded"]


def test_complete_raises_with_the_jobs_own_reason(log: Recorder) -> None:
    event = JobEvent("failed", "job-1", "Failed", "m", reason="NCCL timeout on rank 3")
    with pytest.raises(AIHCJobFailedError, match="job-1 ended Failed: NCCL timeout on rank 3") as e:
        complete(event, log)
    assert (e.value.status, e.value.reason) == ("Failed", "NCCL timeout on rank 3")


def test_complete_raises_timeout_and_error(log: Recorder) -> None:
    late = JobEvent("timeout", "job-1", "Running", "m", waited_seconds=60.0, stopped=True)
    with pytest.raises(AIHCJobTimeoutError, match="within 60 s; the job was stopped") as e:
        complete(late, log)
    assert e.value.stopped
    with pytest.raises(AIHCError, match="job-1 was deleted"):
        complete(JobEvent("error", "job-1", None, "job-1 was deleted"), log)


def test_an_error_no_retry_changes_fails_without_retries(log: Recorder) -> None:
    from airflow_provider_aihc.version_compat import AirflowFailException

    refused = JobEvent("error", "job-1", None, "404 JobNotFound", retryable=False)
    with pytest.raises(AIHCWatchRefusedError, match=r"404 JobNotFound \(not retried") as e:
        complete(JobEvent.from_payload(refused.to_payload()), log)
    assert isinstance(e.value, AirflowFailException)
    assert e.value.job_id == "job-1"


def test_an_older_error_event_keeps_its_retries(log: Recorder) -> None:
    """An event serialized before ``retryable`` existed is read as every error was."""
    from airflow_provider_aihc.version_compat import AirflowFailException

    old = {"status": "error", "job_id": "j", "job_status": None, "message": "m"}
    old.update(reason=None, waited_seconds=None, stopped=False)
    event = JobEvent.from_payload(old)
    assert event.retryable
    with pytest.raises(AIHCError) as e:
        complete(event, log)
    assert not isinstance(e.value, AirflowFailException)


def test_from_job_success_and_pod_reason(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str]
) -> None:
    ok = create("ok")
    aihc_emulator.backend.set_status(ok, "Succeeded")
    assert JobEvent.from_job(hook, hook.get_job(ok)).status == "success"
    bad = create("bad")
    aihc_emulator.backend.set_status(bad, "Failed", reason="ImagePullBackOff: no such tag")
    event = JobEvent.from_job(hook, hook.get_job(bad))
    assert (event.status, event.job_status) == ("failed", "Failed")
    assert event.reason == "ImagePullBackOff: no such tag"
    assert "ended Failed: ImagePullBackOff: no such tag" in event.message


def test_from_job_falls_back_to_the_latest_warning_event(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str]
) -> None:
    """A ``Stopped`` job's pods carry no reason; its Warning event does."""
    job_id = create("stopped")
    aihc_emulator.backend.set_status(job_id, "Stopped", reason="preempted by a high-priority job")
    job = hook.get_job(job_id)
    assert job.failure_reason is None
    event = JobEvent.from_job(hook, job)
    assert (event.status, event.reason) == ("failed", "preempted by a high-priority job")
    assert aihc_emulator.backend.count("GetJobEvents") == 1


async def test_afrom_job_matches_from_job(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str]
) -> None:
    job_id = create("stopped")
    aihc_emulator.backend.set_status(job_id, "Stopped", reason="preempted")
    job = hook.get_job(job_id)
    assert await JobEvent.afrom_job(hook, job) == JobEvent.from_job(hook, job)


def test_from_job_refuses_a_job_that_runs(hook: AIHCHook, create: Callable[..., str]) -> None:
    job = hook.get_job(create("running"))
    with pytest.raises(AIHCError, match="has not ended"):
        JobEvent.from_job(hook, job)
