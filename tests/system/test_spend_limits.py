"""Exported credentials alone never make the tests spend money, and the spend limit holds
across processes (security review S4-13).

* The real region is the target only with ``AIHC_SYSTEM_TEST_CONFIRM=spend``; ``make test``
  drops every ``AIHC_SYSTEM_TEST_*`` variable.
* ``AIHC_SYSTEM_TEST_MAX_JOBS`` counts the jobs of every system-test process running at once
  (another real process holds a share of the ledger here), and no DAG starts past it.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import emulator_target
from spend_ledger import LEDGER_NAME
from system_runner import (
    CONN_ID,
    ENV,
    SYSTEM_DIR,
    JobRecord,
    SystemRun,
    SystemTestConfigError,
    Target,
)

from airflow_provider_aihc.emulator.server import EmulatorServer

ROOT = SYSTEM_DIR.parents[1]
EXAMPLE = SYSTEM_DIR / "aihc" / "example_aihc_job.py"
EXPORTED = {
    f"{ENV}ACCESS_KEY_ID": "ak",
    f"{ENV}SECRET_ACCESS_KEY": "sk",
    f"{ENV}REGION": "cn-beijing",
    f"{ENV}POOL": "cce-xxxxxxxx",
    f"{ENV}IMAGE": "registry.baidubce.com/ns/image",
}


def test_exported_credentials_alone_never_target_the_real_region() -> None:
    assert Target.from_env(EXPORTED) is None
    confirmed = Target.from_env({**EXPORTED, f"{ENV}CONFIRM": "spend"})
    assert confirmed is not None
    assert confirmed.real
    with pytest.raises(SystemTestConfigError, match="CONFIRM must be 'spend'"):
        Target.from_env({**EXPORTED, f"{ENV}CONFIRM": "yes"})


def test_make_test_drops_every_system_test_variable() -> None:
    env = {**os.environ, **EXPORTED, f"{ENV}CONFIRM": "spend"}
    shown = subprocess.run(
        ["make", "-n", "test"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=True,
    ).stdout  # fmt: skip
    [line] = [line for line in shown.splitlines() if "test-lanes" in line or "env -u" in line][:1]
    for name in (*EXPORTED, f"{ENV}CONFIRM"):
        assert f"-u {name}" in line


@pytest.fixture
def other_process(tmp_path: Path) -> Iterator[Callable[[int], None]]:
    """Another system-test process, alive, that created ``n`` jobs in the shared ledger."""
    started: list[subprocess.Popen[str]] = []

    def start(n: int) -> None:
        code = (
            "import sys; from pathlib import Path; from spend_ledger import SpendLedger; "
            f"ledger = SpendLedger(Path({str(tmp_path / LEDGER_NAME)!r})); ledger.join(); "
            f"ledger.record([f'other-{{i}}' for i in range({n})]); print('ready', flush=True); "
            "sys.stdin.read()"
        )
        process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env={**os.environ, "PYTHONPATH": str(SYSTEM_DIR)},
        )  # fmt: skip
        started.append(process)
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"

    yield start
    for process in started:
        process.kill()
        process.wait(timeout=30)


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    monkeypatch.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", "")  # restored after the test
    with EmulatorServer() as server:
        yield server


def test_the_jobs_of_every_process_count_toward_the_limit(
    emulator: EmulatorServer, other_process: Callable[[int], None], tmp_path: Path
) -> None:
    other_process(3)
    with SystemRun(emulator_target(emulator.url), tmp_path) as run:  # MAX_JOBS 4
        run.jobs = {job: JobRecord(job, job, "") for job in ("mine-1", "mine-2")}
        with pytest.raises(RuntimeError, match="created 5 jobs, more than"):
            run._enforce_limits()


def test_no_dag_starts_once_the_processes_running_now_reached_the_limit(
    emulator: EmulatorServer, other_process: Callable[[int], None], tmp_path: Path
) -> None:
    other_process(3)
    target = dataclasses.replace(emulator_target(emulator.url), max_jobs=3)
    with SystemRun(target, tmp_path) as run, pytest.raises(RuntimeError, match="is not started"):
        run.run_dag("example_aihc_job", str(EXAMPLE))
    assert emulator.backend.count("CreateJob") == 0
