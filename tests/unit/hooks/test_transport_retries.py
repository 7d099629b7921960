"""Retries, counted by the emulator: what is retried, how long it waits, when it gives up,
that every attempt is signed afresh, and that a create is never sent twice."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hook_helpers import POOL, Sent, StepClock, Waits, job_body

from airflow_provider_aihc.auth.signer import format_timestamp
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import (
    AIHCServerError,
    AIHCThrottledError,
    AIHCTransportError,
)
from airflow_provider_aihc.hooks._connection import DEFAULT_MAX_RETRIES
from airflow_provider_aihc.hooks._wire import BACKOFF_BASE_SECONDS
from airflow_provider_aihc.hooks.aihc import AIHCHook

Spy = Callable[[AIHCHook], list[Sent]]


@pytest.fixture
def job_id(aihc_emulator: EmulatorServer) -> str:
    """A job made in the backend directly: no request is counted."""
    return str(aihc_emulator.backend.create_job(POOL, job_body("retried")))


def test_two_503s_then_success_is_three_requests(
    hook: AIHCHook, aihc_emulator: EmulatorServer, job_id: str, waits: Waits
) -> None:
    aihc_emulator.backend.add_fault(scenarios.error(503, operation="GetJob", times=2))
    assert hook.get_job(job_id).job_id == job_id
    assert aihc_emulator.backend.count("GetJob") == 3
    assert aihc_emulator.backend.count("GetJob", 503) == 2
    assert len(waits.sync) == 2
    first, second = waits.sync
    assert BACKOFF_BASE_SECONDS / 2 <= first <= BACKOFF_BASE_SECONDS
    assert BACKOFF_BASE_SECONDS <= second <= 2 * BACKOFF_BASE_SECONDS


def test_a_dropped_read_is_retried(
    hook: AIHCHook, aihc_emulator: EmulatorServer, job_id: str
) -> None:
    aihc_emulator.backend.add_fault(scenarios.drop_before(operation="GetJob"))
    aihc_emulator.backend.add_fault(scenarios.drop_after(operation="GetJob"))
    assert hook.get_job(job_id).job_id == job_id
    assert aihc_emulator.backend.count("GetJob") == 3
    assert aihc_emulator.backend.count("GetJob", 0) == 2


def test_retry_after_is_honoured(
    hook: AIHCHook, aihc_emulator: EmulatorServer, waits: Waits
) -> None:
    aihc_emulator.backend.add_fault(scenarios.throttle(retry_after=1, times=3))
    assert hook.list_jobs() == []
    assert waits.sync == [1.0, 1.0, 1.0]
    assert aihc_emulator.backend.count("ListJobs", 429) == 3
    assert aihc_emulator.backend.count("ListJobs", 200) == 1


def test_retry_after_is_really_waited(
    hook: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default seam is a real sleep: one short Retry-After is really waited, once.
    (No upper bound on the time: a loaded machine may take longer; the seam's record says
    that nothing else was waited.)"""
    asked: list[float] = []

    def real_sleep(seconds: float) -> None:
        asked.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr(AIHCHook, "sleep", staticmethod(real_sleep))
    aihc_emulator.backend.add_fault(scenarios.throttle(retry_after=0.3))
    started = time.monotonic()
    hook.list_jobs()
    assert time.monotonic() - started >= 0.3
    assert asked == [0.3]


def test_gives_up_after_max_retries_with_the_last_error(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer, waits: Waits
) -> None:
    set_conn(extra={"max_retries": 2})
    aihc_emulator.backend.add_fault(
        scenarios.error(503, operation="ListJobs"),
        scenarios.error(502, operation="ListJobs"),
        scenarios.throttle(retry_after=4, operation="ListJobs"),
        scenarios.error(500, operation="ListJobs"),
    )
    with pytest.raises(AIHCThrottledError) as raised:
        AIHCHook().list_jobs()
    assert (raised.value.status, raised.value.retry_after) == (429, 4.0)
    assert aihc_emulator.backend.count("ListJobs") == 3
    assert aihc_emulator.backend.faults.pending() == 1
    assert len(waits.sync) == 2


def test_gives_up_on_drops_with_a_transport_error(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"max_retries": 1})
    aihc_emulator.backend.add_fault(scenarios.drop_before(times=5))
    with pytest.raises(AIHCTransportError):
        AIHCHook().list_resource_pools()
    assert aihc_emulator.backend.count("ListResourcePools", 0) == 2


def test_default_max_retries(hook: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    aihc_emulator.backend.add_fault(scenarios.error(500, times=DEFAULT_MAX_RETRIES + 3))
    with pytest.raises(AIHCServerError):
        hook.list_jobs()
    assert aihc_emulator.backend.count("ListJobs") == DEFAULT_MAX_RETRIES + 1


def test_each_attempt_is_signed_afresh(
    hook: AIHCHook,
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    wire: Spy,
) -> None:
    clock = StepClock(step=1.0)
    start = clock.now
    monkeypatch.setattr(AIHCHook, "clock", staticmethod(clock))
    sent = wire(hook)
    aihc_emulator.backend.add_fault(scenarios.error(503, times=2))
    hook.list_jobs()
    dates = [s.headers["x-bce-date"] for s in sent]
    assert dates == [format_timestamp(start + i) for i in range(3)]
    for s in sent:
        assert s.headers["Authorization"].split("/")[2] == s.headers["x-bce-date"]
    assert len({s.headers["Authorization"] for s in sent}) == 3
    assert clock.reads == 3


def test_stop_and_delete_are_retried(
    hook: AIHCHook, aihc_emulator: EmulatorServer, job_id: str
) -> None:
    aihc_emulator.backend.add_fault(scenarios.error(503, operation="StopJob"))
    hook.stop_job(job_id)
    assert aihc_emulator.backend.count("StopJob") == 2
    aihc_emulator.backend.add_fault(scenarios.drop_before(operation="DeleteJob"))
    hook.delete_job(job_id)
    assert aihc_emulator.backend.count("DeleteJob") == 2
    assert aihc_emulator.backend.jobs() == []


def test_reads_survive_a_seeded_fault_schedule(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"max_retries": 20})
    hook = AIHCHook()
    job = hook.create_job(job_body("chaos"))
    kinds = ("error", "throttle", "drop_before", "drop_after")
    schedule = scenarios.random_schedule(7, 120, rate=0.4, kinds=kinds, operation="GetJob")
    aihc_emulator.backend.add_fault(*schedule)
    for _ in range(40):
        assert hook.get_job(job.job_id).job_id == job.job_id
    answered = aihc_emulator.backend.count("GetJob", 200)
    assert answered >= 40  # drop_after answers 200 server-side, then drops
    assert aihc_emulator.backend.count("GetJob") > 40


# ---- create is sent exactly once -----------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (scenarios.error(503, operation="CreateJob"), AIHCServerError),
        (scenarios.error(500, operation="CreateJob"), AIHCServerError),
        (scenarios.throttle(retry_after=0, operation="CreateJob"), AIHCThrottledError),
        (scenarios.drop_before(operation="CreateJob"), AIHCTransportError),
    ],
)
def test_create_is_not_resent_and_nothing_was_created(
    hook: AIHCHook,
    aihc_emulator: EmulatorServer,
    waits: Waits,
    fault: scenarios.Fault,
    error: type[Exception],
) -> None:
    aihc_emulator.backend.add_fault(fault)
    with pytest.raises(error):
        hook.create_job(job_body("once"))
    assert aihc_emulator.backend.count("CreateJob") == 1
    assert aihc_emulator.backend.jobs() == []
    assert waits.sync == []


def test_create_whose_answer_is_lost_created_the_job(
    hook: AIHCHook, aihc_emulator: EmulatorServer, waits: Waits
) -> None:
    aihc_emulator.backend.add_fault(scenarios.drop_after(operation="CreateJob"))
    with pytest.raises(AIHCTransportError) as raised:
        hook.create_job(job_body("lost-answer"))
    assert raised.value.operation == "CreateJob"
    assert aihc_emulator.backend.count("CreateJob") == 1
    assert waits.sync == []
    # The job exists; resolving it (by listing) is the caller's job, not the hook's.
    assert [j["name"] for j in aihc_emulator.backend.jobs()] == ["lost-answer"]
    assert [j.name for j in hook.list_jobs()] == ["lost-answer"]


def test_create_that_times_out_is_not_resent(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"timeout": 0.2})
    aihc_emulator.backend.add_fault(scenarios.delay(1.0, operation="CreateJob"))
    with pytest.raises(AIHCTransportError, match="Timeout"):
        AIHCHook().create_job(job_body("slow-create"))
    assert aihc_emulator.backend.count("CreateJob") == 1
    assert [j["name"] for j in aihc_emulator.backend.jobs()] == ["slow-create"]
