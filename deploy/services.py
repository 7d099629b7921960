"""The processes of the deployment: each started by PID, with its own log file, and stopped.

A :class:`Service` is one process group (started with ``start_new_session``), so stopping
or killing it reaches every process it forked (Celery's pool, the task supervisors, the
triggerer's runner).  :class:`Services` remembers each one it started and stops them all,
in reverse order, whatever happened before.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

APT_PACKAGES = {"postgresql": "/usr/lib/postgresql", "redis-server": None, "chromium": None}
STOP_GRACE_SECONDS = 20.0
#: In the environment of every process a run starts, with the run's build folder as value:
#: a process that has it, and that the running check did not start, is left over from an
#: earlier run in the same folder (one killed before it could stop what it started).
RUN_MARKER = "AIHC_DEPLOY_BUILD"
#: In the build folder: ``<pid> <start time>`` of each process group a run started.
PID_FILE = "pids"
#: Ports are picked from here up to the kernel's ephemeral range, which they stay below:
#: an outgoing connection never takes one between its pick and its server's bind.
PORT_FLOOR = 20000
_handed_out: set[int] = set()


def ensure_debian_packages(skip: frozenset[str] = frozenset()) -> list[str]:
    """Install from Debian what is missing (quietly, non-interactive); the names installed.

    :param skip: packages not needed (e.g. ``postgresql`` when an existing one is used).
    :raises RuntimeError: when apt-get fails.
    """
    missing = [
        name
        for name, path in APT_PACKAGES.items()
        if name not in skip and not (Path(path).exists() if path else shutil.which(name))
    ]
    if not missing:
        return []
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (["update", "-qq"], ["install", "-y", "-qq", "--no-install-recommends", *missing]):
        done = subprocess.run(["apt-get", *args], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"apt-get {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return missing


def free_port() -> int:
    """A TCP port on the loopback that nothing uses right now, never the same twice a run.

    Picked at random below the kernel's ephemeral range (from :data:`PORT_FLOOR`), where
    neither another program's ``bind(0)`` nor an outgoing connection takes it before the
    server it is for binds it; the kernel's choice only when that range is too small.
    """
    ephemeral = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    candidates = list(range(PORT_FLOOR, int(ephemeral[0])))
    random.shuffle(candidates)
    for port in candidates[:500]:
        if port not in _handed_out and _bindable(port):
            _handed_out.add(port)
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    _handed_out.add(port)
    return port


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def leftovers(build: Path) -> set[int]:
    """Live processes of a run in ``build``, this process and its ancestors aside.

    Found two ways, as either alone misses some: by the process groups in ``build``'s
    :data:`PID_FILE` (Redis, PostgreSQL, Celery and Airflow rewrite their process titles,
    which can overwrite their environment), and by :data:`RUN_MARKER` (a process that left
    its group, the browser).

    :param build: the run's build folder (absolute).
    """
    wanted = f"{RUN_MARKER}={build}".encode()
    groups = _recorded_groups(build)
    parents = _parents()
    mine: set[int] = set()  # this process and its ancestors (make, a shell)
    pid = os.getpid()
    while pid > 1 and pid not in mine:
        mine.add(pid)
        pid = parents.get(pid, 0)
    found = set()
    for pid in set(parents) - mine:
        try:
            ours = os.getpgid(pid) in groups
            ours = ours or wanted in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if ours:
            found.add(pid)
    return found


def _recorded_groups(build: Path) -> set[int]:
    """The process groups in ``build``'s :data:`PID_FILE` that can still be the run's: its
    leader is gone (other members may live on) or is the very process recorded."""
    try:
        records = (build / PID_FILE).read_text().split("\n")
    except OSError:
        return set()
    groups = set()
    for record in records:
        pid, _, started = record.partition(" ")
        if pid.isdigit() and _start_time(int(pid)) in (None, int(started or -1)):
            groups.add(int(pid))
    return groups


def _start_time(pid: int) -> int | None:
    """When the process started (clock ticks after boot); ``None``: no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def kill_leftovers(build: Path) -> list[int]:
    """SIGKILL :func:`leftovers`, wait (up to 10 s) until they are gone, and forget the
    recorded groups; the PIDs killed."""
    found = leftovers(build)
    for pid in found:
        _signal(pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        wait_for(lambda: not leftovers(build), 10, "leftovers gone", interval=0.2)
    if not leftovers(build):
        (build / PID_FILE).unlink(missing_ok=True)
    return sorted(found)


class Fatal(Exception):
    """A wait that cannot succeed any more (a process died): stop waiting at once."""


def wait_for(check: Callable[[], bool], timeout: float, what: str, interval: float = 1.0) -> None:
    """Call ``check`` until it is true.

    :param check: returns whether the wait is over (exceptions count as "not yet").
    :param timeout: seconds before giving up.
    :param what: named in the error.
    :param interval: seconds between checks.
    :raises TimeoutError: naming ``what``.
    :raises Fatal: as soon as ``check`` raises it.
    """
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Fatal:
            raise
        except Exception as exc:
            last = exc
        time.sleep(interval)
    raise TimeoutError(f"{what}: not ready after {timeout:.0f} s (last error: {last})")


@dataclass
class Service:
    """One started process group and its log file.

    :param name: short name, used for the log file and the report.
    :param process: the process.
    :param log_path: where its stdout and stderr go.
    :param argv: its command, and ``extra_env`` its own variables: what a restart runs.
    """

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    argv: Sequence[str] = ()
    extra_env: Mapping[str, str] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        """The process id (also its process group id)."""
        return self.process.pid

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process.poll() is None

    def pids(self) -> set[int]:
        """Every live process of its group or below it (by ``/proc`` parent links)."""
        return descendants(self.pid) | _group_members(self.pid)

    def signal(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the whole group (e.g. ``SIGINT``: PostgreSQL's fast shutdown)."""
        _signal_group(self.pid, sig)

    def kill(self) -> None:
        """SIGKILL the whole group and anything below it, as a crash of its host would."""
        for pid in self.pids():
            _signal(pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM the group; SIGKILL what is left after the grace period."""
        if self.alive():
            _signal_group(self.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_GRACE_SECONDS)
        for pid in self.pids():
            _signal(pid, signal.SIGKILL)
        if self.alive():
            self.process.wait(timeout=10)

    def log_text(self) -> str:
        """Its whole log file."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, chars: int = 1500) -> str:
        """The end of its log file."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


@dataclass
class Services:
    """Every process the run started, stopped in reverse order at the end.

    :param log_dir: where each one's log goes.
    :param env: the environment they share.
    :param build: the run's build folder, named in each one's :data:`RUN_MARKER`.
    """

    log_dir: Path
    env: Mapping[str, str]
    build: Path
    started: list[Service] = field(default_factory=list)

    def start(
        self, name: str, argv: Sequence[str], extra_env: Mapping[str, str] | None = None
    ) -> Service:
        """Start ``argv`` as its own process group, output to ``<log_dir>/<name>.log``.

        :param name: the service's name (unique).
        :param argv: the command.
        :param extra_env: variables on top of the shared environment.
        """
        log_path = self.log_dir / f"{name}.log"
        service = Service(name, self._spawn(argv, extra_env, log_path, "wb"), log_path)
        service.argv, service.extra_env = list(argv), dict(extra_env or {})
        self.started.append(service)
        return service

    def restart(self, service: Service) -> None:
        """Start a stopped service again, as a process supervisor would: the same command
        and environment, its output appended to the same log.

        :param service: one of :attr:`started`, no longer alive.
        """
        service.process = self._spawn(service.argv, service.extra_env, service.log_path, "ab")

    def _spawn(
        self, argv: Sequence[str], extra_env: Mapping[str, str] | None, log_path: Path, mode: str
    ) -> subprocess.Popen[bytes]:
        with log_path.open(mode) as log:
            process = subprocess.Popen(
                list(argv),
                env={**self.env, **(extra_env or {}), RUN_MARKER: str(self.build)},
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        started = _start_time(process.pid)
        if started is not None:  # else it is gone already, and its group with it
            with (self.build / PID_FILE).open("a") as pids:
                pids.write(f"{process.pid} {started}\n")
        return process

    def get(self, name: str) -> Service:
        """The service of that name."""
        return next(s for s in self.started if s.name == name)

    def stop_all(self) -> list[str]:
        """Stop everything started; what was still alive afterwards (nothing).

        SIGTERM goes to every group at once (they share one grace period), then each is
        waited for and SIGKILLed if it still runs.  A process of the run that left its
        group (it has the run's :data:`RUN_MARKER`) is SIGKILLed and named too.
        """
        for service in reversed(self.started):
            if service.alive():
                _signal_group(service.pid, signal.SIGTERM)
        for service in reversed(self.started):
            try:
                service.stop()
            except Exception as exc:
                print(f"deploy: stopping {service.name} (pid {service.pid}): {exc}")
        with contextlib.suppress(TimeoutError):  # what was SIGKILLed just now may be exiting
            wait_for(lambda: not self._running(), 5, "the run's processes gone", interval=0.2)
        left = [f"{s.name} (pid {s.pid})" for s in self.started if s.pids() or s.alive()]
        return left + [f"pid {pid} (outside its group)" for pid in kill_leftovers(self.build)]

    def _running(self) -> bool:
        return any(s.alive() or s.pids() for s in self.started) or bool(leftovers(self.build))


def descendants(root: int) -> set[int]:
    """Every live process below ``root`` (not ``root`` itself)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def is_below(pid: int, root: int) -> bool:
    """Whether ``pid`` is ``root`` or one of its descendants."""
    return pid == root or pid in descendants(root)


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields_after = stat.rsplit(")", 1)[1].split()
        if fields_after[0] != "Z":
            parents[int(entry.name)] = int(fields_after[1])
    return parents


def _group_members(pgid: int) -> set[int]:
    members = set()
    for pid in _parents():
        try:
            if os.getpgid(pid) == pgid:
                members.add(pid)
        except OSError:
            continue
    return members


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)
