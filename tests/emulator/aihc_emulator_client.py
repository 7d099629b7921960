"""Test helpers: the package's signed client with v1 shortcuts, a fake clock, bodies."""

from __future__ import annotations

from typing import Any

import aihc_jobs

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.client import EmulatorClient

POOL = DEFAULT_RESOURCE_POOL_ID


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, start: float = 1_720_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Client(EmulatorClient):
    """:class:`EmulatorClient` (signs like the provider) with the v1 calls tests repeat."""

    def create(self, name: str, pool: str = POOL, **fields: Any) -> dict[str, Any]:
        body = job_body(name, **fields)
        return self.ok("POST", "/api/v1/aijobs", {"resourcePoolId": pool}, body)["result"]

    def get(self, job_id: str, pool: str = POOL) -> dict[str, Any]:
        return self.ok("GET", f"/api/v1/aijobs/{job_id}", {"resourcePoolId": pool})["result"]

    def status(self, job_id: str, pool: str = POOL) -> str:
        return str(self.get(job_id, pool)["status"])


def job_body(name: str, **fields: Any) -> dict[str, Any]:
    """A valid v1 create body, with an environment variable and RDMA on."""
    defaults = {"envs": [{"name": "CUDA_DEVICE_MAX_CONNECTIONS", "value": "1"}], "enableRDMA": True}
    return aihc_jobs.job_body(name, **{**defaults, **fields})
