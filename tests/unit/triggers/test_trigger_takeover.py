"""After a triggerer takeover the new trigger does not copy the job's log
into the task log again from the deferral; it says it took over and resumes near where
the stopped triggerer was."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from watch_helpers import POOL, log_lines

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.watch import JobEvent
from airflow_provider_aihc.watch.logs import takeover_resume_point

TAKEOVER = 30.0  # Airflow's default triggerer_health_check_threshold
HOUR = 3600.0


@pytest.mark.parametrize(
    ("waited", "resumes_at"),
    [
        (0.0, None),  # the first start, right after the deferral
        (35.0, None),  # a slow first start: within the threshold and a poll
        (36.0, 1000.0),  # a takeover soon after: never before the deferral
        (100.0, 1000.0 + 100 - 30 - 2 * 5),  # a takeover
        (HOUR, 1000.0 + HOUR - 40),  # a takeover an hour in
    ],
)
def test_a_start_long_after_the_deferral_resumes_near_the_takeover(
    waited: float, resumes_at: float | None
) -> None:
    assert takeover_resume_point(1000.0, 1000.0 + waited, 5.0, TAKEOVER) == resumes_at


def test_no_deferral_time_is_never_a_takeover() -> None:
    assert takeover_resume_point(None, 10_000.0, 5.0, TAKEOVER) is None


async def _run(trigger: AIHCJobTrigger) -> JobEvent:
    [payload] = [event.payload async for event in trigger.run()]
    return JobEvent.from_payload(payload)


def _old_lines(server: EmulatorServer, job_id: str, pod: str) -> list[str]:
    """Let the job write log lines an hour ago (the emulator's clock), then return them."""
    backend = server.backend
    backend.clock = lambda: time.time() - HOUR
    for _ in range(3):
        backend.poll(POOL, job_id)
    backend.clock = time.time
    return log_lines(server, job_id, pod)


async def test_a_takeover_does_not_copy_the_log_again_from_the_deferral(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Regression: the new trigger streamed the job's log again from its first line."""
    aihc_emulator.backend.progression = Progression.per_poll(1, running=4)
    job_id = create("taken-over")
    old = _old_lines(aihc_emulator, job_id, "taken-over-master-0")
    assert old
    caplog.set_level("INFO")

    trigger = AIHCJobTrigger(job_id, POOL, poll_interval=0.05, deferred_at=time.time() - HOUR)
    event = await _run(trigger)

    assert event.status == "success"
    text = caplog.text if caplog.records else capsys.readouterr().out
    assert text.count("this trigger took over") == 1
    assert not [line for line in old if line in text]
    new = log_lines(aihc_emulator, job_id, "taken-over-master-0")[len(old) :]
    assert new
    assert all(text.count(line) == 1 for line in new)


async def test_a_first_start_copies_the_log_from_the_deferral(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(1, running=4)
    job_id = create("first-start")
    old = _old_lines(aihc_emulator, job_id, "first-start-master-0")
    caplog.set_level("INFO")

    await _run(AIHCJobTrigger(job_id, POOL, poll_interval=0.05, deferred_at=time.time()))

    text = caplog.text if caplog.records else capsys.readouterr().out
    assert "took over" not in text
    assert all(text.count(line) == 1 for line in old)
