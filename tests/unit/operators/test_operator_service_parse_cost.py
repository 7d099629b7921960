"""Importing the model, dataset and service operators, sensor and trigger (what a DAG file
does) loads no HTTP client, no pydantic model module, no hook and no ``airflow.models``
beyond what Airflow itself already loaded: those load in ``execute``."""

from __future__ import annotations

import subprocess
import sys

MODULES = (
    "airflow_provider_aihc.operators.model_registry",
    "airflow_provider_aihc.operators.service",
    "airflow_provider_aihc.sensors.service",
    "airflow_provider_aihc.triggers.service",
)
HEAVY = (
    "airflow_provider_aihc.hooks",
    "airflow_provider_aihc.models",
    "airflow_provider_aihc.watch",
    "requests",
    "aiohttp",
    "pydantic",
)


def test_a_dag_file_that_imports_them_loads_nothing_heavy() -> None:
    code = (
        "import sys\n"
        # Airflow's own cost, not ours (its BaseTrigger loads a pydantic module).
        "import airflow_provider_aihc.version_compat, airflow.triggers.base\n"
        f"before = set(sys.modules)\n"
        f"for name in {MODULES!r}: __import__(name)\n"
        f"heavy = sorted(m for m in set(sys.modules) - before if m.startswith({HEAVY!r}))\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
