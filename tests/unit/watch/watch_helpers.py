"""Helpers and fixtures of the watch, trigger and sensor tests: the emulator over real
HTTP, a hook, a recording logger.  Their conftests put this folder on ``sys.path`` and
import the fixtures from here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aihc_jobs import job_body

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.hooks.aihc import AIHCHook

POOL = DEFAULT_RESOURCE_POOL_ID


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


def log_lines(server: EmulatorServer, job_id: str, pod: str) -> list[str]:
    """Every line of a pod's log, as the emulator holds it."""
    page = server.backend.pod_logs(POOL, job_id, pod, marker="")
    return [line for record in page["logs"] for line in record.split("\n")]


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
def no_hook_retries(aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """``aihc_default`` with ``max_retries=0``: every fault reaches the watch loop."""
    conn = {
        "conn_type": "aihc",
        "login": "aihc-emulator-ak",
        "password": "aihc-emulator-sk",
        "host": aihc_emulator.url,
        "extra": {"resource_pool_id": POOL, "max_retries": 0},
    }
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", json.dumps(conn))
