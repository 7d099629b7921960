"""Fixtures for the emulator tests: a running server and a signed client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aihc_emulator_client import Client, FakeClock

from airflow_provider_aihc.emulator import EmulatorServer


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer() as running:
        yield running


@pytest.fixture
def client(server: EmulatorServer) -> Client:
    return Client(server.url)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
