"""Test session setup: an isolated Airflow home before anything imports Airflow."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

_HOME = Path(tempfile.mkdtemp(prefix="aihc-airflow-home-"))
REPO_ROOT = Path(__file__).resolve().parent.parent

os.environ["AIRFLOW_HOME"] = str(_HOME)
os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = f"sqlite:///{_HOME / 'airflow.db'}"
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(REPO_ROOT / "dags_examples")
os.environ["AIRFLOW__CORE__UNIT_TEST_MODE"] = "False"
os.environ.setdefault("AIRFLOW__LOGGING__LOGGING_LEVEL", "INFO")

import pytest  # noqa: E402  (after the environment above: nothing may import Airflow first)

#: pytest-timeout's bound for a test marked ``dagrun`` (pyproject's ``timeout`` for the
#: rest): a DAG run starts Airflow, migrates a DB and waits on the emulator's jobs, and on a
#: loaded two-core machine that can take minutes.
DAGRUN_TIMEOUT = 900
#: The matrix lane: node-id prefixes (a file, a test, a parametrized case), one a line.
MATRIX_LANE = REPO_ROOT / "tests" / "matrix_lane.txt"


def _matrix_lane() -> tuple[str, ...]:
    lines = (line.split("#")[0].strip() for line in MATRIX_LANE.read_text().splitlines())
    return tuple(line for line in lines if line)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the matrix lane's tests ``matrix``; give DAG runs their longer timeout."""
    lane = _matrix_lane()
    for item in items:
        if item.nodeid.startswith(lane):
            item.add_marker(pytest.mark.matrix)
        if item.get_closest_marker("dagrun") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(DAGRUN_TIMEOUT))


def pytest_configure(config: pytest.Config) -> None:
    """One folder the run's pytest-xdist workers share (they inherit the environment of
    the process that starts them): ``tests/reliability`` leaves its driver's results there."""
    if not os.environ.get("PYTEST_XDIST_WORKER") and "AIHC_TEST_SHARED_DIR" not in os.environ:
        os.environ["AIHC_TEST_SHARED_DIR"] = tempfile.mkdtemp(prefix="aihc-test-run-")
