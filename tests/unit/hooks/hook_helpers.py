"""Helpers of the hook tests (imported by the tests and by ``conftest``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import aihc_jobs

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_RESOURCE_POOL_ID,
    DEFAULT_SECRET_ACCESS_KEY,
)
from airflow_provider_aihc.emulator.server import EmulatorServer

AK = DEFAULT_ACCESS_KEY_ID
SK = DEFAULT_SECRET_ACCESS_KEY
POOL = DEFAULT_RESOURCE_POOL_ID
TOKEN = "sts-token/with+odd=chars"


def job_body(name: str, **fields: Any) -> dict[str, Any]:
    """A valid v1 create body with two replicas (a master and a worker pod)."""
    return aihc_jobs.job_body(name, **{"replicas": 2, **fields})


def total_requests(server: EmulatorServer) -> int:
    """Every API request the emulator saw, whatever the operation."""
    return sum(server.backend.counts().values())


@dataclass
class Sent:
    """One request as the hook put it on the wire (recorded client-side)."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None


class StepClock:
    """A clock that moves ``step`` seconds every time it is read, starting now."""

    def __init__(self, step: float = 1.0, start: float | None = None) -> None:
        self.now = time.time() if start is None else start
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        value = self.now
        self.now += self.step
        self.reads += 1
        return value


@dataclass
class Waits:
    """What the fake sleeps were asked for, sync and async."""

    sync: list[float] = field(default_factory=list)
    async_: list[float] = field(default_factory=list)
