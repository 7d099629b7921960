"""Fixtures of the reliability suite (issue 6): the one driver process, the DB, the figures.

Every DAG-run case (fault matrix, kills, secrets) runs in ONE ``rel_driver.py`` process per
session: Airflow 3 pays ~20 s per process to build its execution API, ~1.5 s per run
after that.  The driver starts in the background as soon as the first test of this folder
runs, so the in-process tests (bad input, trigger restarts) and the crash test's own
Airflow processes overlap with it; the tests that read its results wait for it.

``AIHC_REL_SEEDS`` (count) and ``AIHC_REL_SEED_START`` choose the fault-matrix seeds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rel_plan
from rel_support import DRIVER_TIMEOUT, FIGURES, DriverRun, matrix_seeds

HERE = Path(__file__).resolve().parent
DAGS_DIR = HERE / "dags"
AIRFLOW = str(Path(sys.executable).with_name("airflow"))


class _Driver:
    """The driver process, started once, waited for by whoever needs its results."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.process: subprocess.Popen[bytes] | None = None
        self.run: DriverRun | None = None

    def start(self) -> None:
        if self.process is not None:
            return
        cases = [rel_plan.schedule(seed).case() for seed in matrix_seeds()]
        cases += rel_plan.kill_cases() + rel_plan.secret_cases()
        plan = self.tmp / "plan.json"
        plan.write_text(json.dumps({"cases": cases}))
        self.results = self.tmp / "results.jsonl"
        self.log = (self.tmp / "driver.log").open("wb")
        env = {**os.environ, "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_DIR)}
        env.pop("AIRFLOW_CONN_AIHC_DEFAULT", None)
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "rel_driver.py"), str(plan), str(self.results)],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def wait(self) -> DriverRun:
        if self.run is None:
            self.start()
            assert self.process is not None
            try:
                code = self.process.wait(timeout=DRIVER_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                code = self.process.wait()
            self.log.close()
            results = {}
            if self.results.exists():
                for line in self.results.read_text().splitlines():
                    result = json.loads(line)
                    results[result["id"]] = result
            output = (self.tmp / "driver.log").read_text(errors="replace")
            self.run = DriverRun(code, results, output, Path(os.environ["AIRFLOW_HOME"]))
        return self.run

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="session")
def reliability_db() -> None:
    """Migrate the session's SQLite metadata DB (a no-op when the e2e tests already did)."""
    subprocess.run(
        [AIRFLOW, "db", "migrate"], check=True, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="session")
def _driver(reliability_db: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Driver]:
    driver = _Driver(tmp_path_factory.mktemp("reliability-driver"))
    yield driver
    driver.stop()


@pytest.fixture(scope="session", autouse=True)
def _start_driver_early(request: pytest.FixtureRequest) -> None:
    """Start the driver at this folder's first test if any selected test needs it."""
    if any("driver_run" in getattr(item, "fixturenames", ()) for item in request.session.items):
        request.getfixturevalue("_driver").start()


@pytest.fixture(scope="session")
def driver_run(_driver: _Driver) -> DriverRun:
    """The driver's results (waits for it)."""
    return _driver.wait()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("reliability figures (issue 6)")
        for key in sorted(FIGURES):
            terminalreporter.write_line(f"{key}: {FIGURES[key]}")
