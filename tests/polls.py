"""Waiting for a trigger's polls by counting them at the emulator, never by sleeping a
fixed time: on a loaded machine a poll takes what it takes; the deadline only ends a hang."""

from __future__ import annotations

import asyncio
import time

from airflow_provider_aihc.emulator.server import EmulatorServer

#: How long a wait for polls may take before the test fails (a hang, not slowness).
DEADLINE_SECONDS = 60.0


def reads(server: EmulatorServer) -> int:
    """The job reads the emulator has answered so far (GetJob and ListJobs)."""
    return server.backend.count("GetJob") + server.backend.count("ListJobs")


async def until_polled(server: EmulatorServer, at_least: int) -> None:
    """Wait until the emulator has answered ``at_least`` job reads in all."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while reads(server) < at_least:
        assert time.monotonic() < deadline, f"fewer than {at_least} job reads in time"
        await asyncio.sleep(0.01)
