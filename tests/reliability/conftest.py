"""Fixtures of the reliability suite: the one driver process, the DB, the figures.

Every DAG-run case (fault matrix, kills, secrets) the selected tests need runs in ONE
``rel_driver.py`` process per test run (under pytest-xdist, in worker ``gw0``, whose
results the other workers read): Airflow 3 pays ~20 s per process to build its execution
API, ~1.5 s per run after that.  The driver starts in the background as soon as the tests
are collected, so all the other tests overlap with it; those that read its results wait.

``AIHC_REL_SEEDS`` (count) and ``AIHC_REL_SEED_START`` choose the fault-matrix seeds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import rel_plan
from rel_support import DRIVER_TIMEOUT, FIGURES, DriverRun, matrix_seeds

HERE = Path(__file__).resolve().parent
DAGS_DIR = HERE / "dags"
AIRFLOW = str(Path(sys.executable).with_name("airflow"))


#: Which module's tests read which cases of the driver's plan.
PLAN_PARTS = {
    "test_fault_matrix.py": lambda: [rel_plan.schedule(seed).case() for seed in matrix_seeds()],
    "test_kills.py": rel_plan.kill_cases,
    "test_secrets.py": rel_plan.secret_cases,
}
#: Under pytest-xdist the driver runs once, in this worker; the others read its results
#: from the run's shared temporary folder.
OWNER = "gw0"


class _Driver:
    """The driver process, started once per test run, waited for by whoever needs its
    results: in the owning process (the only one without pytest-xdist) it runs; other
    xdist workers wait for the ``done.json`` it leaves in the shared folder."""

    def __init__(self, tmp: Path, owner: bool) -> None:
        self.tmp = tmp
        self.owner = owner
        self.parts: set[str] = set()
        self.process: subprocess.Popen[bytes] | None = None
        self.run: DriverRun | None = None

    def start(self) -> None:
        if self.process is not None or not self.owner:
            return
        cases = [case for name in sorted(self.parts) for case in PLAN_PARTS[name]()]
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
        # done.json is written the moment the driver ends, not when the owning worker next
        # asks: under xdist every reliability test may land on another worker while the
        # owner sits idle until the session ends (a deadlock until the timeout).
        self.finisher = threading.Thread(target=self._finish, name="rel-driver", daemon=True)
        self.finisher.start()

    def wait(self) -> DriverRun:
        if self.run is None:
            self.run = self._read_done()
        return self.run

    def _finish(self) -> None:
        assert self.process is not None
        try:
            code = self.process.wait(timeout=DRIVER_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self.log.close()
        done = {"code": code, "airflow_home": os.environ["AIRFLOW_HOME"]}
        written = self.tmp / "done.json.tmp"
        written.write_text(json.dumps(done))
        os.replace(written, self.tmp / "done.json")

    def _read_done(self) -> DriverRun:
        marker = self.tmp / "done.json"
        deadline = time.monotonic() + DRIVER_TIMEOUT + 60
        while not marker.exists():
            assert time.monotonic() < deadline, f"the driver in worker {OWNER} never finished"
            time.sleep(0.5)
        return self._load(json.loads(marker.read_text()))

    def _load(self, done: dict[str, Any]) -> DriverRun:
        results = {}
        results_file = self.tmp / "results.jsonl"
        if results_file.exists():
            for line in results_file.read_text().splitlines():
                result = json.loads(line)
                results[result["id"]] = result
        output = (self.tmp / "driver.log").read_text(errors="replace")
        return DriverRun(done["code"], results, output, Path(done["airflow_home"]))

    def stop(self) -> None:
        """At the end of the owner's session: let the driver finish when other workers may
        still read it (xdist), else kill it."""
        if self.process is not None and self.process.poll() is None:
            if os.environ.get("PYTEST_XDIST_WORKER"):
                self.wait()
            else:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            self.finisher.join(timeout=60)


def _migrate() -> None:
    subprocess.run(
        [AIRFLOW, "db", "migrate"], check=True, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="session")
def reliability_db() -> None:
    """Migrate the session's SQLite metadata DB (a no-op when the e2e tests already did)."""
    _migrate()


_DRIVER: list[_Driver] = []  # the run's one driver, made when collection is done


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that reads the driver's results may wait for the whole driver run: its
    timeout is the driver's (plus a minute to read them), not pyproject's default."""
    for item in items:
        if "driver_run" in getattr(item, "fixturenames", ()) and not item.get_closest_marker(
            "timeout"
        ):
            item.add_marker(pytest.mark.timeout(DRIVER_TIMEOUT + 60))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the driver as soon as the tests are known, if any selected test needs it, so
    that it overlaps with all the others (under xdist: in worker ``gw0`` whatever it runs;
    ``tests/conftest.py`` gives the workers their shared folder)."""
    parts = {
        Path(str(item.fspath)).name
        for item in session.items
        if "driver_run" in getattr(item, "fixturenames", ())
    }
    if not parts:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    shared = os.environ.get("AIHC_TEST_SHARED_DIR")
    if worker is None or shared is None:
        driver = _Driver(Path(tempfile.mkdtemp(prefix="aihc-reliability-driver-")), owner=True)
    else:
        folder = Path(shared) / "reliability-driver"
        folder.mkdir(exist_ok=True)
        driver = _Driver(folder, owner=worker == OWNER)
    driver.parts = parts
    if driver.owner:
        _migrate()
        driver.start()
    _DRIVER.append(driver)


def pytest_sessionfinish(session: pytest.Session) -> None:
    for driver in _DRIVER:
        driver.stop()


@pytest.fixture(scope="session")
def driver_run() -> DriverRun:
    """The driver's results (waits for it)."""
    assert _DRIVER, "no test of this run asked for the driver at collection"
    return _DRIVER[0].wait()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("reliability figures")
        for key in sorted(FIGURES):
            terminalreporter.write_line(f"{key}: {FIGURES[key]}")
