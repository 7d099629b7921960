"""The first process of every executed replica: it keeps the replica's whole process tree
under itself, so that nothing the job starts outlives the job (``execute.py``).

Run by path, standard library only (``python -I reaper.py GRACE COMMAND...``), it makes
itself a *child subreaper* (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): a process the job
orphans, even one that called ``setsid`` and cleared its environment (so neither the
replica's process group nor the job's marker variable finds it), is re-parented to it
instead of to init, and so stays in its tree, which ``/proc`` shows by parent links.  It then
runs ``COMMAND`` and:

* on SIGTERM or SIGINT, passes the signal to every process of its tree and keeps waiting;
* once ``COMMAND`` has ended, sends SIGTERM to what is left of its tree, SIGKILL after
  ``GRACE`` seconds, reaps them, and exits as ``COMMAND`` did (the same code, or killed by
  the same signal).

The emulator also kills the tree itself (:func:`descendants`) when it stops a job, in case
this process is killed first.  Where there is no ``prctl`` (not Linux), it only runs the
command.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType

#: ``PR_SET_CHILD_SUBREAPER`` of ``<linux/prctl.h>``.
PR_SET_CHILD_SUBREAPER = 36
POLL_SECONDS = 0.05
#: Rounds of SIGKILL (each :data:`POLL_SECONDS` apart) before the reaper gives up and exits.
KILL_ROUNDS = 100


def descendants(*roots: int) -> list[int]:
    """Every live (not zombie) process below any of ``roots``, by a scan of ``/proc``'s
    parent links; empty where there is no ``/proc``."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [pid for root in roots for pid in children.get(root, [])]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _reap() -> None:
    """Collect every ended child (re-parented orphans included) without blocking."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _sweep(me: int, grace: float) -> None:
    """SIGTERM what is left below ``me``, SIGKILL it after ``grace`` seconds."""
    _signal_all(descendants(me), signal.SIGTERM)
    deadline = time.monotonic() + grace
    while descendants(me) and time.monotonic() < deadline:
        _reap()
        time.sleep(POLL_SECONDS)
    for _ in range(KILL_ROUNDS):  # bounded: a process stuck in the kernel may never end
        left = descendants(me)
        if not left:
            break
        _signal_all(left, signal.SIGKILL)
        _reap()
        time.sleep(POLL_SECONDS)
    _reap()


def main(argv: list[str]) -> int:
    """Run ``argv[1:]`` with ``argv[0]`` seconds of grace; the command's exit status."""
    grace, command = float(argv[0]), argv[1:]
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    me = os.getpid()

    def forward(signum: int, frame: FrameType | None) -> None:
        del frame
        _signal_all(descendants(me), signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    child = os.fork()
    if child == 0:  # the command: default signal handling, then exec
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as err:
            print(f"cannot run {command[0]}: {err.strerror}", file=sys.stderr, flush=True)
        os._exit(127)
    status = 0
    while True:
        try:
            pid, found = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            status = found
            break
    _sweep(me, grace)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: end the same way, so the emulator reports it
        signal.signal(-code, signal.SIG_DFL)
        os.kill(me, -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
