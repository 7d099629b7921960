"""The ``aihc_emulator`` pytest fixture (registered through the ``pytest11`` entry point).

It starts an in-process :class:`~.server.EmulatorServer` (jobs move
per poll), points the ``aihc_default`` connection at it through
``AIRFLOW_CONN_AIHC_DEFAULT``, puts its control token in ``AIHC_EMULATOR_CONTROL_TOKEN``
(for the processes a test starts: ``control.control_headers()`` reads it) and yields the
server::

    def test_job(aihc_emulator):
        ...  # run the hook or the operator
        assert aihc_emulator.backend.count("CreateJob") == 1

``aihc_emulator_execute`` is the same with ``--execute``: every job's replicas run as
local processes (``state/execute.py``), under a secret made for the test, and no process of a
job outlives the fixture.

Importing this module costs nothing: no Airflow, and the emulator loads in the fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .server import EmulatorServer

from .connection import CONN_ENV

__all__ = ["CONN_ENV", "aihc_emulator", "aihc_emulator_execute"]


@pytest.fixture
def aihc_emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """A running emulator, with ``aihc_default`` pointing at it."""
    from .server import EmulatorServer

    server = EmulatorServer().start()
    _point_default_connection(monkeypatch, server)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def aihc_emulator_execute(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """A running emulator that really runs jobs, with ``aihc_default`` pointing at it."""
    import secrets

    from .server import EmulatorServer
    from .state.execute import ExecuteSettings

    secret = secrets.token_urlsafe(24)
    settings = ExecuteSettings(grace=2.0)
    server = EmulatorServer(secret_access_key=secret, execute=settings).start()
    _point_default_connection(monkeypatch, server)
    try:
        yield server
    finally:
        server.stop()


def _point_default_connection(monkeypatch: pytest.MonkeyPatch, server: EmulatorServer) -> None:
    """``aihc_default`` (an environment variable) pointing at ``server``."""
    from .http.control import TOKEN_ENV

    monkeypatch.setenv(CONN_ENV, server.connection().json)
    monkeypatch.setenv(TOKEN_ENV, server.control_token)
