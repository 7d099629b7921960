"""The system tests' spend limit across processes: ``AIHC_SYSTEM_TEST_MAX_JOBS`` counts the
jobs created by every system-test process running at once (pytest's xdist workers, a second
``make test-system`` in another terminal), not by each alone.

One JSON file, locked (``flock``) for every read and write, holds the pids of the processes
that share it and the ids of the jobs they created. A process joins when its session starts
and leaves when it ends; the first to join when no pid in the file is alive starts a fresh
ledger, so the count is that of the processes running together.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

#: The ledger's file name, in the report directory every process of a run shares.
LEDGER_NAME = "spend-ledger.json"


class SpendLedger:
    """The jobs the processes sharing ``path`` have created.

    :param path: the ledger file (created with its directory when missing).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def join(self) -> None:
        """Count this process in; a ledger whose every process has ended starts afresh."""
        with self._locked() as data:
            alive = [pid for pid in data.get("pids", []) if _alive(pid) and pid != os.getpid()]
            if not alive:
                data["jobs"] = []
            data["pids"] = [*alive, os.getpid()]

    def leave(self) -> None:
        """Count this process out (its jobs stay counted while others run)."""
        with self._locked() as data:
            data["pids"] = [pid for pid in data.get("pids", []) if pid != os.getpid()]

    def record(self, job_ids: Iterable[str]) -> int:
        """Add the jobs this process created; the jobs of every process so far."""
        with self._locked() as data:
            jobs = data.setdefault("jobs", [])
            jobs.extend(job for job in job_ids if job not in jobs)
            return len(jobs)

    def count(self) -> int:
        """The jobs every process sharing the ledger has created so far."""
        with self._locked() as data:
            return len(data.get("jobs", []))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            text = handle.read()
            data = json.loads(text) if text.strip() else {}
            yield data
            handle.seek(0)
            handle.truncate()
            json.dump(data, handle)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
