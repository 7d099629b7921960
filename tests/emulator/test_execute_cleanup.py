"""No process of an executed job outlives it, even one that left the replica's process
group (``setsid``) and cleared its environment (``env -i``), so that neither the group nor
the job's marker variable finds it (security review S4-12).

A real emulator process (``python -m airflow_provider_aihc.emulator --execute``), as a user
runs it; the escaping processes are found by their unique command line in ``/proc``, and any
left over by a failing test is killed by its pid.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from aihc_emulator_client import Client
from local_processes import wait_for

from airflow_provider_aihc.emulator.__main__ import SECRET_ENV

SECRET = secrets.token_urlsafe(24)


@pytest.fixture
def emulator() -> Iterator[tuple[subprocess.Popen[str], Client]]:
    env = {**os.environ, SECRET_ENV: SECRET}
    process = subprocess.Popen(
        [sys.executable, "-m", "airflow_provider_aihc.emulator", "--port", "0", "--execute"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split("listening on ")[1].split()[0]
        yield process, Client(url, secret_access_key=SECRET)
    finally:
        process.terminate()
        process.wait(timeout=60)


@pytest.fixture
def escapee() -> Iterator[str]:
    """A ``sleep`` argument no other process has; whatever still runs it is killed after."""
    seconds = f"900.{secrets.randbelow(10**6):06d}"
    yield seconds
    for pid in _running(seconds):
        os.kill(pid, signal.SIGKILL)


def _running(seconds: str) -> list[int]:
    """Live processes whose command line is ``sleep <seconds>``."""
    wanted = b"sleep\0" + seconds.encode() + b"\0"
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{name}/cmdline").read_bytes() != wanted:
                continue
            if Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.append(int(name))
        except (OSError, IndexError):
            continue
    return found


def _escape(seconds: str) -> str:
    """A command part that starts ``sleep`` outside the group, with a cleared environment."""
    return f"(setsid env -i sleep {seconds} </dev/null >/dev/null 2>&1 &)"


def test_what_a_job_left_running_is_stopped_when_it_ends(
    emulator: tuple[subprocess.Popen[str], Client], escapee: str
) -> None:
    _, client = emulator
    job_id = client.create("escape", command=f"{_escape(escapee)}; sleep 1; echo left")["jobId"]
    wait_for("the escaped process", lambda: _running(escapee))
    wait_for("the end", lambda: client.status(job_id) in ("Succeeded", "Failed"))
    assert client.status(job_id) == "Succeeded"
    assert not _running(escapee)


def test_nothing_of_a_running_job_outlives_the_emulator(
    emulator: tuple[subprocess.Popen[str], Client], escapee: str
) -> None:
    process, client = emulator
    client.create("escape", command=f"{_escape(escapee)}; sleep 600")
    wait_for("the escaped process", lambda: _running(escapee))
    process.terminate()
    process.wait(timeout=60)
    assert not _running(escapee)
