"""Under an ``execution_timeout`` the wait ends first, so Airflow's alarm (a ``SIGALRM``
raised wherever the main thread is) is a backstop, not the way the task ends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCJobTimeoutError
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator, ahead_of_execution_timeout


@pytest.mark.parametrize(
    ("execution_timeout", "wait"),
    [
        (3.0, 1.5),  # never more than half away
        (6.0, 4.0),  # at least 2 s before
        (120.0, 108.0),  # a tenth
        (7200.0, 7170.0),  # at most 30 s
    ],
)
def test_the_wait_ends_a_margin_before_the_execution_timeout(
    execution_timeout: float, wait: float
) -> None:
    assert ahead_of_execution_timeout(execution_timeout) == pytest.approx(wait)


@pytest.mark.parametrize("cancel_on_kill", [True, False])
def test_a_sync_wait_ends_before_the_execution_timeout_with_the_jobs_timeout(
    aihc_emulator: EmulatorServer, cancel_on_kill: bool
) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(match="held"))
    operator = AIHCCreateJobOperator(
        task_id="train",
        name="held",
        image="i",
        command="c",
        wait_for_completion=True,
        poll_interval=0.2,
        execution_timeout=timedelta(seconds=4),
        cancel_on_kill=cancel_on_kill,
    )
    ti = TaskInstanceStub()

    with pytest.raises(AIHCJobTimeoutError) as timeout:
        operator.execute(context_of(ti))  # no alarm here: only the wait can end it

    assert timeout.value.waited_seconds < 4.0
    assert timeout.value.stopped is cancel_on_kill
    assert aihc_emulator.backend.count("StopJob") == int(cancel_on_kill)
    [job] = aihc_emulator.backend.jobs()
    assert job["status"] == ("ManualTermination" if cancel_on_kill else "Running")
