"""The ``aihc_emulator`` pytest fixture (registered through the ``pytest11`` entry point).

It starts an in-process :class:`~airflow_provider_aihc.emulator.server.EmulatorServer` (jobs move
per poll), points the ``aihc_default`` connection at it through
``AIRFLOW_CONN_AIHC_DEFAULT``, puts its control token in ``AIHC_EMULATOR_CONTROL_TOKEN``
(for the processes a test starts: ``control.control_headers()`` reads it) and yields the
server::

    def test_job(aihc_emulator):
        ...  # run the hook or the operator
        assert aihc_emulator.backend.count("CreateJob") == 1

``aihc_emulator_execute`` is the same with ``--execute``: every job's replicas run as
local processes (``execute.py``), under a secret made for the test, and no process of a
job outlives the fixture.

Importing this module costs nothing: no Airflow, and the emulator loads in the fixture.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .server import EmulatorServer

CONN_ENV = "AIRFLOW_CONN_AIHC_DEFAULT"


@pytest.fixture
def aihc_emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """A running emulator, with ``aihc_default`` pointing at it."""
    from . import DEFAULT_SECRET_ACCESS_KEY
    from .server import EmulatorServer

    server = EmulatorServer().start()
    _point_default_connection(monkeypatch, server, DEFAULT_SECRET_ACCESS_KEY)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def aihc_emulator_execute(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """A running emulator that really runs jobs, with ``aihc_default`` pointing at it."""
    import secrets

    from .execute import ExecuteSettings
    from .server import EmulatorServer

    secret = secrets.token_urlsafe(24)
    settings = ExecuteSettings(grace=2.0)
    server = EmulatorServer(secret_access_key=secret, execute=settings).start()
    _point_default_connection(monkeypatch, server, secret)
    try:
        yield server
    finally:
        server.stop()


def _point_default_connection(
    monkeypatch: pytest.MonkeyPatch, server: EmulatorServer, secret: str
) -> None:
    """``aihc_default`` (an environment variable) pointing at ``server``."""
    from . import DEFAULT_ACCESS_KEY_ID, DEFAULT_RESOURCE_POOL_ID
    from .control import TOKEN_ENV

    connection = {
        "conn_type": "aihc",
        "login": DEFAULT_ACCESS_KEY_ID,
        "password": secret,
        "host": server.url,
        "extra": {"resource_pool_id": DEFAULT_RESOURCE_POOL_ID},
    }
    monkeypatch.setenv(CONN_ENV, json.dumps(connection))
    monkeypatch.setenv(TOKEN_ENV, server.control_token)
