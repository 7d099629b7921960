"""Helpers and fixtures of the watch, trigger and sensor tests: the emulator over real
HTTP, a hook, a recording logger.  Their conftests put this folder on ``sys.path`` and
import the fixtures from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aihc_jobs import job_body

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.hooks.aihc import AIHCHook

POOL = DEFAULT_RESOURCE_POOL_ID
#: The emulator's managed pool and its queue's id (``emulator/pools.py``): every call after
#: the create must carry the id there, or the emulator refuses it as AIHC does.
MANAGED_POOL = "aihc-serverless"
MANAGED_QUEUE = "aihcq-emulator0"


class Recorder:
    """A logger that keeps ``(level, message)``; satisfies ``watch.Log``."""

    def __init__(self) -> None:
        self.records: list[tuple[str, str]] = []

    def _add(self, level: str, msg: Any, *args: Any) -> None:
        self.records.append((level, str(msg) % args if args else str(msg)))

    def debug(self, msg: Any, *args: Any) -> None:
        self._add("debug", msg, *args)

    def info(self, msg: Any, *args: Any) -> None:
        self._add("info", msg, *args)

    def warning(self, msg: Any, *args: Any) -> None:
        self._add("warning", msg, *args)

    def error(self, msg: Any, *args: Any) -> None:
        self._add("error", msg, *args)

    def messages(self, level: str | None = None) -> list[str]:
        return [text for lvl, text in self.records if level is None or lvl == level]


def log_lines(
    server: EmulatorServer, job_id: str, pod: str, pool: str = POOL, queue: str | None = None
) -> list[str]:
    """Every line of a pod's log, as the emulator holds it."""
    page = server.backend.pod_logs(pool, job_id, pod, marker="", queue_id=queue)
    return list(page.lines)


@pytest.fixture
def log() -> Recorder:
    return Recorder()


@pytest.fixture
def hook(aihc_emulator: EmulatorServer) -> AIHCHook:
    return AIHCHook()


@pytest.fixture
def create(hook: AIHCHook) -> Callable[..., str]:
    """Create a job; returns its id."""

    def create_(name: str, **extra: Any) -> str:
        return hook.create_job(job_body(name, **extra)).job_id

    return create_


@pytest.fixture
def create_managed(hook: AIHCHook) -> Callable[..., str]:
    """Create a job in the managed pool's queue; returns its id."""

    def create_(name: str, **extra: Any) -> str:
        body = job_body(name, queue=MANAGED_QUEUE, **extra)
        return hook.create_job(body, MANAGED_POOL).job_id

    return create_


def refused(server: EmulatorServer) -> list[str]:
    """The requests the emulator refused (4xx), as ``operation status``."""
    return [f"{r.operation} {r.status}" for r in server.backend.requests if 400 <= r.status < 500]


@pytest.fixture
def no_hook_retries(aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """``aihc_default`` with ``max_retries=0``: every fault reaches the watch loop."""
    conn = aihc_emulator.connection(resource_pool_id=POOL, max_retries=0)
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", conn.json)
