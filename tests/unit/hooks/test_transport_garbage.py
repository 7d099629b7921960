"""A call that succeeds leaves no reference cycle behind (issue #37).

At 10,000 deferred jobs every poll's calls went through a tenacity controller built for
the call, which holds its own bound methods: about 30 objects of cyclic garbage per
request, freed only by the cyclic collector, whose full collections then stalled the
triggerer's loop for hundreds of milliseconds.  The first attempt is now made without the
controller; tenacity takes over only after a failure it may retry
(``test_transport_retries.py`` holds those retries unchanged).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest
from hook_helpers import POOL, Waits, job_body

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.hooks.aihc import AIHCHook, shared_async_hook

CALLS = 20


@pytest.fixture
def job_id(aihc_emulator: EmulatorServer) -> str:
    return str(aihc_emulator.backend.create_job(POOL, job_body("no-cycles")))


@pytest.fixture
def collector_off() -> Iterator[Callable[[], int]]:
    """The cyclic collector off; the callable returns what it finds unreachable."""
    gc.collect()
    gc.disable()
    try:
        yield gc.collect
    finally:
        gc.enable()


def test_sync_calls_that_succeed_leave_no_cyclic_garbage(
    hook: AIHCHook, job_id: str, collector_off: Callable[[], int]
) -> None:
    hook.get_job(job_id)  # the session, the connection, the models: made once
    collector_off()
    for _ in range(CALLS):
        hook.get_job(job_id)
    assert collector_off() == 0


async def test_async_calls_that_succeed_leave_no_cyclic_garbage(
    aihc_emulator: EmulatorServer, job_id: str, collector_off: Callable[[], int]
) -> None:
    hook = shared_async_hook("aihc_default")
    await hook.aget_job(job_id)  # the loop's session, the connection, the models
    collector_off()
    for _ in range(CALLS):
        await hook.aget_job(job_id)
    assert collector_off() == 0


async def test_a_retried_call_still_goes_through_tenacity(
    aihc_emulator: EmulatorServer, job_id: str, waits: Waits
) -> None:
    """The first attempt's failure counts as tenacity's attempt 1: one wait, two requests."""
    aihc_emulator.backend.add_fault(scenarios.error(503, operation="GetJob"))
    hook = shared_async_hook("aihc_default")
    assert (await hook.aget_job(job_id)).job_id == job_id
    assert aihc_emulator.backend.count("GetJob") == 2
    assert len(waits.async_) == 1
