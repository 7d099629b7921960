"""Which local processes an executed job left, by a ``/proc`` scan (no psutil), and a
wait with a deadline: for the tests of the emulator's ``--execute``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airflow_provider_aihc.emulator.state.execute import JOB_MARKER_ENV

WAIT_SECONDS = 60.0


def wait_for(what: str, check: Callable[[], Any], timeout: float = WAIT_SECONDS) -> Any:
    """``check()``'s first truthy value, polled until ``timeout`` (then the test fails)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _processes() -> list[tuple[int, str, int]]:
    """``(pid, state, process group)`` of every process that can be read."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        found.append((int(name), fields[0], int(fields[2])))
    return found


def job_processes(job_id: str) -> list[int]:
    """Live (not zombie) processes whose environment carries the job's marker."""
    needle = f"{JOB_MARKER_ENV}={job_id}".encode()
    found = []
    for pid, state, _group in _processes():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if state != "Z" and needle in environ:
            found.append(pid)
    return found


def group_members(groups: list[int]) -> list[int]:
    """Live processes in any of the process groups."""
    return [pid for pid, state, group in _processes() if state != "Z" and group in groups]
