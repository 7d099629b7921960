"""A system-test run interrupted mid-job stops and deletes its job and says so in its report.

The runner runs as a user runs it (``system_runner.py`` with the ``AIHC_SYSTEM_TEST_*``
variables), pointed at an emulator whose job never finishes; the signal comes once that
job is running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from system_runner import ENV, SAW_LINE, SYSTEM_DIR

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_RESOURCE_POOL_ID,
    DEFAULT_SECRET_ACCESS_KEY,
)
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering.scenarios import HoldJob

EXAMPLE = SYSTEM_DIR / "aihc" / "example_aihc_job.py"
DEADLINE_SECONDS = 300


def _wait_for(condition, what: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        if proc.poll() is not None:
            pytest.fail(f"the runner exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {DEADLINE_SECONDS} s")
        time.sleep(0.2)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_stops_and_deletes_its_job(airflow_db, tmp_path: Path, signum):
    pace = Progression(polls_per_status=None, seconds_per_status=0.3, running_seconds=3)
    server = EmulatorServer(progression=pace).start()
    server.backend.add_script(HoldJob(status="Running"))
    env = {
        **os.environ,
        f"{ENV}ENDPOINT": server.url,
        f"{ENV}ACCESS_KEY_ID": DEFAULT_ACCESS_KEY_ID,
        f"{ENV}SECRET_ACCESS_KEY": DEFAULT_SECRET_ACCESS_KEY,
        f"{ENV}POOL": DEFAULT_RESOURCE_POOL_ID,
        f"{ENV}IMAGE": "registry.baidubce.com/aihc/busybox:latest",
        f"{ENV}POLL_SECONDS": "0.5",
        f"{ENV}REPORT_DIR": str(tmp_path),
        f"{ENV}CONFIRM": "spend",  # the emulator stands in for the real region here
    }
    runner = [sys.executable, str(SYSTEM_DIR / "system_runner.py"), str(EXAMPLE)]
    proc = subprocess.Popen(
        runner, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        running = lambda: any(j["status"] == "Running" for j in server.backend.jobs())  # noqa: E731
        _wait_for(running, "running job", proc)
        # The runner reads the job every 0.5 s: signalled as soon as the emulator says
        # Running, its last reading could still be Scheduled. It prints what it saw.
        seen = lambda: any(SAW_LINE in line and ": Running (" in line for line in lines)  # noqa: E731
        _wait_for(seen, "the runner seeing the job run", proc)
        report = tmp_path / "report.json"
        proc.send_signal(signum)
        proc.wait(timeout=DEADLINE_SECONDS)
        reader.join(timeout=30)
        output = "".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        server.stop()

    assert proc.returncode == 130, output[-4000:]
    assert server.backend.jobs() == [], "the held job was not deleted"
    assert server.backend.count("StopJob") >= 1
    assert server.backend.count("DeleteJob") >= 1
    data = json.loads(report.read_text())
    assert data["interrupted"] == signum.name
    [dag] = data["dags"]
    assert dag["outcome"] == f"interrupted ({signum.name})"
    [job] = dag["jobs"]
    assert job["statuses"][-1]["status"] == "Running"
    # deleted by the runner, or by the DAG's own teardown once the runner stopped the run
    assert job["cleanup"][-1] in ("deleted", "already deleted (by the DAG's teardown)")
    assert DEFAULT_SECRET_ACCESS_KEY not in report.read_text() + output
