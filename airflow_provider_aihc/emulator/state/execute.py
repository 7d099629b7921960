"""Jobs that really run (``--execute``): each replica's command as a local process.

The simulated progression (``jobs.py``) stays the default.  With an :class:`Executor`
the backend hands every new job to it, and the job's status and pod logs come from its
:class:`JobRun` instead of from the :class:`~.jobs.Progression` and the made-up training
log (the seam: ``Job.runner``, read by ``jobs.settle``/``jobs.poll`` and
``Backend.pod_logs``).  Per replica:

* ``bash -c <command>`` in the job's own working directory, in a process group of its own
  (``start_new_session``), stdin closed, under the replica's reaper (``reaper.py``): a
  child subreaper, so that every process the job starts, even one that left the group and
  cleared its environment, stays in the replica's process tree;
* the environment: ``PATH`` and ``LANG`` of the emulator, ``HOME`` = the working
  directory, ``PYTHONUNBUFFERED=1`` (live logs), the job's ``envs``, then what AIHC injects
  (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR=127.0.0.1``, a free ``MASTER_PORT``,
  ``AIHC_JOB_NAME``) and :data:`JOB_MARKER_ENV`, by which leftover processes are found;
  nothing else of the emulator's environment (its credentials) reaches the job;
* each datasource's ``mountPath`` is a local directory (``--mount NAME=DIR``, else one in
  the working directory); the path is rewritten to it in the command and the ``envs``
  values, and the mapping is logged;
* the image is not used: whatever ``python3`` is on ``PATH`` stands in for it (said once,
  in the first replica's log);
* stdout and stderr, line by line as written, are the pod's log.

The job is ``Running`` from the start; ``Succeeded`` once every replica exited 0 and its
output is read to the end; ``Failed`` when one exits otherwise (the reason names the pod
and its exit code; the others are stopped, as PyTorchJob does) or runs past the execute
timeout.  Stopping sends SIGTERM to every replica's process group (the reaper passes it to
its whole tree), and SIGKILL to what is left after the grace period: the replicas' process
trees, their groups, then every process still carrying the job's marker (a ``/proc``
scan).  A replica's leftovers are stopped by its reaper when its command ends; delete
also removes the working directory; the executor's :meth:`Executor.shutdown` stops
everything and removes its directories.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from .jobs import FAILED, SUCCEEDED, Job
from .reaper import descendants
from .trainlog import LogEntry, select

log = logging.getLogger(__name__)

#: Marks every process of an executed job: the ``/proc`` sweep finds leftovers by it.
JOB_MARKER_ENV = "AIHC_EMULATOR_JOB_ID"
#: Seconds between SIGTERM and SIGKILL when a job is stopped.
STOP_GRACE_SECONDS = 10.0
#: Seconds the log readers get to read what the processes wrote before they ended.
DRAIN_SECONDS = 5.0
#: How often the supervisor looks at the replicas.
POLL_SECONDS = 0.05
#: Lines kept per pod; a longer log keeps its first lines and says what was cut.
MAX_LINES_PER_POD = 200_000
#: A longer line is split.
MAX_LINE_BYTES = 64 * 1024
NOTE = "[AIHC emulator]"
OUTPUT = "out"
#: What the replicas' environment keeps of the emulator's own.
INHERITED_ENV = ("PATH", "LANG", "LC_ALL", "TZ")
#: The first process of every replica (run by path: standard library only).
REAPER = str(Path(__file__).with_name("reaper.py"))


@dataclass(frozen=True)
class ExecuteSettings:
    """How executed jobs run.

    :param mounts: datasource name → local directory (created when missing).
    :param timeout: seconds a job may run before it is stopped and fails; ``None``: no limit.
    :param grace: seconds between SIGTERM and SIGKILL when a job is stopped.
    :param root: where the jobs' working directories go; a temporary directory by default
        (removed at shutdown).
    """

    mounts: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    grace: float = STOP_GRACE_SECONDS
    root: str | None = None


class Executor:
    """Starts and keeps every executed job of one backend.

    :param settings: how jobs run.
    """

    def __init__(self, settings: ExecuteSettings | None = None) -> None:
        self.settings = settings or ExecuteSettings()
        self._runs: list[JobRun] = []
        self._lock = threading.Lock()
        self._root: Path | None = None
        self._own_root = False

    def start(self, job: Job) -> JobRun:
        """Start every replica of ``job`` now and return its run."""
        run = JobRun(job, self._workdir(job), self.settings)
        with self._lock:
            self._runs = [r for r in self._runs if not r.finished] + [run]
        run.start()
        return run

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop every job, wait for their processes to be gone, remove the directories."""
        with self._lock:
            runs, self._runs = self._runs, []
        for run in runs:
            run.stop(remove=True)
        limit = timeout if timeout is not None else self.settings.grace + DRAIN_SECONDS + 5
        deadline = time.monotonic() + limit
        for run in runs:
            run.wait(max(0.0, deadline - time.monotonic()))
        if self._own_root and self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def _workdir(self, job: Job) -> Path:
        if self._root is None:
            if self.settings.root:
                self._root = Path(self.settings.root).resolve()
                self._root.mkdir(parents=True, exist_ok=True)
            else:
                self._root = Path(tempfile.mkdtemp(prefix="aihc-emulator-jobs-"))
                self._own_root = True
        return Path(tempfile.mkdtemp(prefix=f"{job.name}-", dir=self._root))


@dataclass
class _Replica:
    pod: str
    rank: int
    process: subprocess.Popen[bytes] | None = None
    code: int | None = None
    reader: threading.Thread | None = None


class JobRun:
    """One executed job: its processes, their output and how it ended.

    :param job: the emulator's job (read once, at start).
    :param workdir: the job's own working directory.
    :param settings: how jobs run.
    """

    def __init__(self, job: Job, workdir: Path, settings: ExecuteSettings) -> None:
        from .pods import pods_of

        self.job_id = job.job_id
        self.workdir = workdir
        self.settings = settings
        self.started_at = time.time()
        self.finished = False
        request = job.request
        self._image = request.image
        self._replicas = [_Replica(p.name, p.rank) for p in pods_of(job)]
        self._mounts = _mounts(request.datasources, settings.mounts, workdir)
        self._command = _rewrite(request.command, self._mounts)
        self._envs = {
            str(e.get("name")): _rewrite(str(e.get("value", "")), self._mounts)
            for e in request.envs
            if e.get("name")
        }
        self._job_name = job.name
        self._reaper = [sys.executable, "-I", REAPER, str(settings.grace)]
        self._lock = threading.Lock()
        self._entries: dict[int, list[LogEntry]] = {r.rank: [] for r in self._replicas}
        self._texts: dict[int, list[str]] = {r.rank: [] for r in self._replicas}
        self._outcome: tuple[str, float, str] | None = None
        self._stop = threading.Event()
        self._remove = False
        self._done = threading.Event()
        self._supervisor = threading.Thread(
            target=self._supervise, name=f"aihc-run-{job.name}", daemon=True
        )

    # ---- what the backend reads ----------------------------------------------------------

    def outcome(self) -> tuple[str, float, str] | None:
        """``(status, at, reason)`` once the job ended on its own, else ``None``."""
        with self._lock:
            return self._outcome

    def page(
        self,
        rank: int,
        *,
        start_time: float | None,
        end_time: float | None,
        max_lines: int | None,
        marker: str | None,
    ) -> tuple[list[str], int]:
        """One page of a pod's log (``trainlog.select``'s paging), lines stamped."""
        with self._lock:
            entries = list(self._entries.get(rank, []))
            texts = self._texts.get(rank, [])
            picked, offset = select(
                entries,
                start_time=start_time,
                end_time=end_time,
                max_lines=max_lines,
                marker=marker,
            )
            return [f"{_stamp(e.ts)} {texts[e.n]}" for e in picked], offset

    def line_count(self) -> int:
        """Lines written so far, over every pod."""
        with self._lock:
            return sum(len(lines) for lines in self._texts.values())

    def pids(self) -> list[int]:
        """The replicas' process ids (each leads its process group)."""
        return [r.process.pid for r in self._replicas if r.process is not None]

    # ---- control -------------------------------------------------------------------------

    def start(self) -> None:
        """Spawn every replica and the thread that watches them."""
        port = _free_port()
        first = self._replicas[0].rank
        self._note(
            first,
            f"running locally: image {self._image!r} is not used; "
            f"the local python3 ({shutil.which('python3') or 'not found'}) stands in",
        )
        self._note(first, f"working directory {self.workdir}")
        for mount_path, local in self._mounts:
            self._note(first, f"datasource mount {mount_path} -> {local}")
            log.info("job %s: %s mapped to %s", self._job_name, mount_path, local)
        for replica in self._replicas:
            try:
                replica.process = subprocess.Popen(
                    [*self._reaper, "bash", "-c", self._command],
                    cwd=self.workdir,
                    env=self._environment(replica.rank, port),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as err:
                self._note(replica.rank, f"could not start {replica.pod}: {err}")
                self._stop.set()
                with self._lock:
                    self._outcome = (FAILED, time.time(), f"{replica.pod} did not start: {err}")
                break
            stream = replica.process.stdout
            assert stream is not None
            replica.reader = threading.Thread(
                target=self._read, args=(replica.rank, stream), daemon=True
            )
            replica.reader.start()
        self._supervisor.start()

    def stop(self, *, remove: bool = False) -> None:
        """Stop the processes (SIGTERM, then SIGKILL after the grace period), in the
        background; ``remove`` also removes the working directory once they are gone."""
        with self._lock:
            self._remove = self._remove or remove
            done = self._done.is_set()
        self._stop.set()
        if done and remove:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every process is gone; whether they are."""
        return self._done.wait(timeout)

    # ---- internals -----------------------------------------------------------------------

    def _environment(self, rank: int, port: int) -> dict[str, str]:
        env = {name: os.environ[name] for name in INHERITED_ENV if name in os.environ}
        env.update(HOME=str(self.workdir), PYTHONUNBUFFERED="1")
        env.update(self._envs)
        env.update(
            RANK=str(rank),
            WORLD_SIZE=str(len(self._replicas)),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            AIHC_JOB_NAME=self._job_name,
        )
        env[JOB_MARKER_ENV] = self.job_id
        return env

    def _read(self, rank: int, stream: BinaryIO) -> None:
        with stream:
            for raw in iter(lambda: stream.readline(MAX_LINE_BYTES), b""):
                self._append(rank, raw.decode("utf-8", "replace").rstrip("\r\n"))

    def _append(self, rank: int, text: str) -> None:
        with self._lock:
            texts = self._texts[rank]
            if len(texts) > MAX_LINES_PER_POD:
                return
            if len(texts) == MAX_LINES_PER_POD:
                text = f"{NOTE} the log is longer than {MAX_LINES_PER_POD} lines; the rest is cut"
            self._entries[rank].append(LogEntry(time.time(), OUTPUT, len(texts)))
            texts.append(text)

    def _note(self, rank: int, text: str) -> None:
        self._append(rank, f"{NOTE} {text}")

    def _supervise(self) -> None:
        failed: _Replica | None = None
        timeout = self.settings.timeout
        expired = False
        while not self._stop.is_set():
            for replica in self._replicas:
                process = replica.process
                if process is not None and replica.code is None:
                    replica.code = process.poll()
                    if replica.code not in (None, 0) and failed is None:
                        failed = replica
            if failed or all(r.code is not None for r in self._replicas):
                break
            if timeout is not None and time.time() - self.started_at > timeout:
                expired = True
                break
            self._stop.wait(POLL_SECONDS)
        outcome: tuple[str, str] | None = None
        if expired:
            reason = f"ran longer than the emulator's execute timeout ({timeout:g} s)"
            self._note(self._replicas[0].rank, f"{reason}: stopping the job")
            outcome = (FAILED, reason)
        elif failed is not None:
            outcome = (FAILED, f"{failed.pod} {_exit_text(failed.code)}")
            self._note(failed.rank, outcome[1])
        elif not self._stop.is_set():
            outcome = (SUCCEEDED, "")
        self._terminate()
        for replica in self._replicas:
            if replica.reader is not None:
                replica.reader.join(DRAIN_SECONDS)
        with self._lock:
            if outcome is not None and self._outcome is None:
                self._outcome = (outcome[0], time.time(), outcome[1])
            self.finished = True
            remove = self._remove
        if remove:
            shutil.rmtree(self.workdir, ignore_errors=True)
        self._done.set()

    def _terminate(self) -> None:
        """SIGTERM every replica's group, SIGKILL what is left after the grace period: the
        replicas' trees first (a reaper killed first would let its orphans go to init)."""
        groups = self.pids()
        _signal_groups(groups, signal.SIGTERM)
        deadline = time.monotonic() + self.settings.grace
        while live_processes(groups, self.job_id) and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        for pid in descendants(*groups):
            _kill(pid)
        _signal_groups(groups, signal.SIGKILL)
        for pid in live_processes(groups, self.job_id):
            _kill(pid)
        for replica in self._replicas:
            if replica.process is not None:
                replica.process.wait()


def live_processes(groups: Sequence[int], marker: str) -> list[int]:
    """Processes (not zombies) in one of ``groups``, below one of the groups' leaders (the
    replicas' reapers) or carrying the job's marker, by a scan of ``/proc``; empty where
    there is no ``/proc``."""
    below = set(descendants(*groups))
    wanted = set(groups)
    needle = f"{JOB_MARKER_ENV}={marker}".encode()
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
            if state == "Z":
                continue
            pid = int(name)
            if pid in below or int(pgrp) in wanted or needle in _environ(pid):
                found.append(pid)
        except (OSError, ValueError):
            continue
    return found


def _environ(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


def _signal_groups(groups: Sequence[int], sig: signal.Signals) -> None:
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, sig)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _mounts(
    datasources: Any, configured: Mapping[str, str], workdir: Path
) -> list[tuple[str, Path]]:
    """``(mountPath, local directory)`` of every datasource, longest path first."""
    mapped = []
    for index, source in enumerate(datasources if isinstance(datasources, list) else []):
        if not isinstance(source, dict) or not source.get("mountPath"):
            continue
        name = str(source.get("name") or f"datasource-{index}")
        given = configured.get(name)
        local = Path(given).resolve() if given else workdir / "mounts" / _safe(name)
        local.mkdir(parents=True, exist_ok=True)
        mapped.append((str(source["mountPath"]).rstrip("/") or "/", local))
    return sorted(mapped, key=lambda pair: len(pair[0]), reverse=True)


def _rewrite(text: str, mounts: Sequence[tuple[str, Path]]) -> str:
    """``text`` with each mount path (as a whole path prefix) replaced by its local dir."""
    for mount_path, local in mounts:
        pattern = rf"(?<![\w./-]){re.escape(mount_path)}(?=/|$|[^\w.-])"
        text = re.sub(pattern, lambda _m, local=local: str(local), text)  # type: ignore[misc]
    return text


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "datasource"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stamp(ts: float) -> str:
    """``2024-07-16T08:33:43.512Z``, as every emulator log line starts."""
    moment = datetime.fromtimestamp(ts, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
