"""The ``aihc_emulator`` pytest fixture (registered through the ``pytest11`` entry point).

It starts an in-process :class:`~airflow_provider_aihc.emulator.server.EmulatorServer` (jobs move
per poll), points the ``aihc_default`` connection at it through
``AIRFLOW_CONN_AIHC_DEFAULT`` and yields the server::

    def test_job(aihc_emulator):
        ...  # run the hook or the operator
        assert aihc_emulator.backend.count("CreateJob") == 1

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
    from . import DEFAULT_ACCESS_KEY_ID, DEFAULT_RESOURCE_POOL_ID, DEFAULT_SECRET_ACCESS_KEY
    from .server import EmulatorServer

    server = EmulatorServer().start()
    connection = {
        "conn_type": "aihc",
        "login": DEFAULT_ACCESS_KEY_ID,
        "password": DEFAULT_SECRET_ACCESS_KEY,
        "host": server.url,
        "extra": {"resource_pool_id": DEFAULT_RESOURCE_POOL_ID},
    }
    monkeypatch.setenv(CONN_ENV, json.dumps(connection))
    try:
        yield server
    finally:
        server.stop()
