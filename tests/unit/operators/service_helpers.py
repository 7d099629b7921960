"""The emulator on ``api_version`` v2 for the model, dataset and service operators, and a
probe that skips a test while the emulator does not serve an action it needs (the
emulator's families are built on another branch: the skip ends when they are merged)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from airflow_provider_aihc.emulator.pytest_plugin import CONN_ENV
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCApiError
from airflow_provider_aihc.hooks.aihc import AIHCHook


def use_api_version(monkeypatch: pytest.MonkeyPatch, api_version: str) -> None:
    """Switch the emulator's ``aihc_default`` connection to ``api_version``."""
    conn = json.loads(os.environ[CONN_ENV])
    conn["extra"]["api_version"] = api_version
    monkeypatch.setenv(CONN_ENV, json.dumps(conn))


def require_actions(server: EmulatorServer, *probes: str) -> None:
    """Skip unless the emulator serves each probe (``models``, ``datasets``, ``services``):
    one harmless read each; an ``unknown action`` answer means it does not."""
    hook = AIHCHook()
    reads = {
        "models": lambda: hook.list_models("probe"),
        "datasets": lambda: hook.list_datasets("probe"),
        "services": lambda: hook.list_services(),
    }
    for probe in probes:
        try:
            reads[probe]()
        except AIHCApiError as err:
            if "unknown action" in str(err):
                pytest.skip(f"the emulator does not serve the {probe} actions yet")
            raise
    server.backend.request_log.clear()


def sent(server: EmulatorServer, operation: str) -> int:
    """How many requests of ``operation`` the emulator saw."""
    return int(server.backend.counts().get(operation, 0))


def total(server: EmulatorServer) -> int:
    return sum(server.backend.counts().values())


def xcom_of(ti: Any) -> dict[str, Any]:
    return dict(ti.xcom)
