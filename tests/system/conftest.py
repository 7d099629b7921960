"""System tests (``make test-system``; ``make test`` runs them too, on the emulator).

``example_*.py`` files are collected as test modules (Airflow's AIP-47 layout), each
holding a DAG and ``test_run = get_test_run(dag)``. The ``aihc_system`` fixture is the
session's :class:`system_runner.SystemRun`: against the region the ``AIHC_SYSTEM_TEST_*``
variables name when ``AIHC_SYSTEM_TEST_CONFIRM=spend`` is set too, else against an
emulator started here.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from system_runner import AIRFLOW, CONFIRM, ENV, SystemRun, Target

REPORT_DIR = Path(__file__).resolve().parents[2] / "build" / "system-tests"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "system: a system test (tests/system): a DAG run against AIHC or the emulator"
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    # A file named on the command line is collected as a module already.
    explicit = parent.session.isinitpath(file_path)
    if file_path.name.startswith("example_") and file_path.suffix == ".py" and not explicit:
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/system/" in str(item.path):
            item.add_marker(pytest.mark.system)


def emulator_target(url: str) -> Target:
    """The emulator as a system-test target: fast polls, the job settings' defaults."""
    from airflow_provider_aihc.emulator import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY

    return Target(
        endpoint=url, access_key_id=DEFAULT_ACCESS_KEY_ID,
        secret_access_key=DEFAULT_SECRET_ACCESS_KEY, real=False,
        env={f"{ENV}POLL_SECONDS": "0.5", f"{ENV}COMMAND": "python -m trainer --epochs 1"},
    )  # fmt: skip


@pytest.fixture(scope="session")
def airflow_db() -> None:
    """The session's Airflow metadata DB, migrated once for every DAG run here."""
    subprocess.run([AIRFLOW, "db", "migrate"], check=True, capture_output=True, timeout=600)


@pytest.fixture(scope="session")
def aihc_system(airflow_db: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SystemRun]:
    report_dir = Path(os.environ.get(f"{ENV}REPORT_DIR", REPORT_DIR))
    target = Target.from_env()
    if target is not None:
        with SystemRun(target, report_dir) as run:
            yield run
        print(f"\nAIHC system test report: {report_dir / 'report.md'}")
        return
    if any(key.startswith(ENV) for key in os.environ):
        print(f"\nAIHC system tests: {ENV}* is set without {ENV}CONFIRM={CONFIRM}: "
              "running against the emulator, no real job is created")  # fmt: skip
    from airflow_provider_aihc.emulator.server import EmulatorServer
    from airflow_provider_aihc.emulator.state.jobs import Progression

    pace = Progression(polls_per_status=None, seconds_per_status=0.5, running_seconds=3)
    server = EmulatorServer(progression=pace).start()
    try:
        with SystemRun(emulator_target(server.url), tmp_path_factory.mktemp("report")) as run:
            yield run
    finally:
        server.stop()
