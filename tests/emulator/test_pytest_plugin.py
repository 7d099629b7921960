"""The ``aihc_emulator`` fixture points ``aihc_default`` at a running emulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from aihc_emulator_client import Client

from airflow_provider_aihc.emulator import EmulatorServer


def test_fixture_sets_the_connection(aihc_emulator: EmulatorServer) -> None:
    conn = json.loads(os.environ["AIRFLOW_CONN_AIHC_DEFAULT"])
    assert conn["conn_type"] == "aihc"
    assert conn["host"] == aihc_emulator.url
    assert conn["extra"] == {"resource_pool_id": "cce-emulator0"}
    client = Client(conn["host"], conn["login"], conn["password"])
    pools = client.ok("GET", "/api/v1/resourcepools")["result"]["resourcePools"]
    assert conn["extra"]["resource_pool_id"] in [p["metadata"]["id"] for p in pools]
    assert aihc_emulator.backend.count("ListResourcePools") == 1


def test_importing_the_plugin_and_package_is_light() -> None:
    code = (
        "import sys; import airflow_provider_aihc.emulator.pytest_plugin; "
        "heavy = [m for m in ('airflow', 'asyncio', 'requests', "
        "'airflow_provider_aihc.emulator.server', 'airflow_provider_aihc.emulator.http.app') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() in ("[]", "['asyncio']")  # pytest itself may pull asyncio
