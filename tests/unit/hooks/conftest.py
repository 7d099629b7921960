"""Fixtures of the hook tests: the emulator over real HTTP, connections as env vars, seams.

Every test talks to an in-process emulator (``aihc_emulator``, which points
``aihc_default`` at it); nothing is stored in the Airflow DB.  Waits between attempts go
through :attr:`AIHCHook.sleep` / :attr:`AIHCHook.asleep`, which :func:`waits` replaces
with recorders, so no test sleeps for real.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hook_helpers import Sent, Waits

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.hooks.aihc import AIHCHook

ConnSetter = Callable[..., None]


@pytest.fixture
def set_conn(monkeypatch: pytest.MonkeyPatch, aihc_emulator: EmulatorServer) -> ConnSetter:
    """Write ``AIRFLOW_CONN_<ID>`` (JSON form) for the emulator; keyword arguments override
    the connection's fields, ``extra`` is merged (a ``None`` value removes the key)."""

    def set_(conn_id: str = "aihc_default", **overrides: Any) -> None:
        conn = aihc_emulator.connection(**overrides.pop("extra", {})).to_dict()
        conn.update(overrides)
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(conn))

    return set_


@pytest.fixture(autouse=True)
def waits(monkeypatch: pytest.MonkeyPatch) -> Waits:
    """Replace the hook's waits between attempts with recorders (no real sleeping)."""
    recorded = Waits()

    async def asleep(seconds: float) -> None:
        recorded.async_.append(seconds)

    monkeypatch.setattr(AIHCHook, "sleep", staticmethod(recorded.sync.append))
    monkeypatch.setattr(AIHCHook, "asleep", staticmethod(asleep))
    return recorded


@pytest.fixture
def wire() -> Callable[[AIHCHook], list[Sent]]:
    """Spy on a hook's ``requests`` session: returns the list its requests are added to."""

    def spy(hook: AIHCHook) -> list[Sent]:
        sent: list[Sent] = []
        real = hook.session.request

        def request(method: str, url: str, **kwargs: Any) -> Any:
            sent.append(Sent(method, url, dict(kwargs.get("headers") or {}), kwargs.get("data")))
            return real(method, url, **kwargs)

        hook.session.request = request  # type: ignore[method-assign]
        return sent

    return spy


@pytest.fixture
def hook(aihc_emulator: EmulatorServer) -> Iterator[AIHCHook]:
    """A hook on ``aihc_default`` (the emulator)."""
    made = AIHCHook()
    yield made
    made.session.close()
