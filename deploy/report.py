"""The pass/fail table of the checks, and the time each phase took."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Row:
    """One check (or a phase that broke): whether it passed, what was seen, its seconds."""

    name: str
    ok: bool
    detail: str
    seconds: float


@dataclass
class Table:
    """Checks and phases in the order they happened (thread-safe: checks run side by side)."""

    rows: list[Row] = field(default_factory=list)
    phases: list[tuple[str, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, ok: bool, detail: str, seconds: float) -> None:
        """Record one check."""
        with self.lock:
            self.rows.append(Row(name, ok, detail, seconds))
        print(f"deploy: {'PASS' if ok else 'FAIL'} {name} ({seconds:.0f} s): {detail}", flush=True)

    def check(self, name: str, body: Callable[[], str]) -> None:
        """Run one check: it passes with what ``body`` returns, or fails with its error."""
        started = time.monotonic()
        try:
            detail = body()
        except Exception as exc:  # one row per check
            self.add(name, False, f"{type(exc).__name__}: {exc}", time.monotonic() - started)
        else:
            self.add(name, True, detail, time.monotonic() - started)

    @contextmanager
    def phase(self, name: str) -> Iterator[threading.Event]:
        """Time a phase; it is complete when its body sets the event it is given.

        An exception, or a body that does not set the event, is a failed row named after
        the phase (the exception is not raised further); ``BaseException`` (an
        interruption) is recorded and raised.
        """
        done = threading.Event()
        started = time.monotonic()
        print(f"deploy: -- {name}", flush=True)
        try:
            yield done
        except Exception as exc:  # a broken phase is a row, not a crash
            traceback.print_exc()
            self.add(name, False, f"{type(exc).__name__}: {exc}", time.monotonic() - started)
        except BaseException:
            self.add(name, False, "interrupted", time.monotonic() - started)
            raise
        else:
            if not done.is_set():
                self.add(name, False, "did not finish", time.monotonic() - started)
        finally:
            with self.lock:
                self.phases.append((name, time.monotonic() - started))

    def print(self, build: Path) -> int:
        """Print the tables (and write them to ``<build>/report.txt``); the exit status.

        The last line is ``N passed, N failed``.
        """
        width = max((len(r.name) for r in self.rows), default=10)
        lines = ["=" * 100, f"{'check':<{width}}  result  seconds  detail"]
        for row in self.rows:
            result = "PASS" if row.ok else "FAIL"
            detail = " ".join(row.detail.split())[:400]
            lines.append(f"{row.name:<{width}}  {result:<6}  {row.seconds:7.1f}  {detail}")
        lines += ["", f"{'phase':<40}  seconds"]
        lines += [f"{name:<40}  {seconds:7.1f}" for name, seconds in self.phases]
        failed = sum(not r.ok for r in self.rows)
        lines += ["=" * 100, f"{len(self.rows) - failed} passed, {failed} failed"]
        text = "\n".join(lines)
        print("\n" + text, flush=True)
        (build / "report.txt").write_text(text + "\n")
        return 1 if failed or not self.rows else 0
