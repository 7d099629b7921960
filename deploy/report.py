"""The pass/fail table and the time each phase took."""

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
    """One check or phase: whether it passed, what was seen, how long it took."""

    name: str
    ok: bool
    detail: str
    seconds: float


@dataclass
class Table:
    """Rows in the order they happened (thread-safe: scenarios may run side by side)."""

    rows: list[Row] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, ok: bool, detail: str, seconds: float) -> None:
        """Record one row."""
        with self.lock:
            self.rows.append(Row(name, ok, detail, seconds))
        print(f"deploy: {'PASS' if ok else 'FAIL'} {name} ({seconds:.0f} s): {detail}", flush=True)

    def check(self, name: str, body: Callable[[], str]) -> None:
        """Run one check: a row that passes with what ``body`` returns, or fails with its error."""
        started = time.monotonic()
        try:
            detail = body()
        except Exception as exc:
            self.add(name, False, f"{type(exc).__name__}: {exc}", time.monotonic() - started)
        else:
            self.add(name, True, detail, time.monotonic() - started)

    @contextmanager
    def phase(self, name: str) -> Iterator[threading.Event]:
        """Time a phase; it passes when its body sets the event it is given.

        An exception fails the phase (its message is the detail) and is not raised further;
        ``BaseException`` (an interruption) is recorded and raised.
        """
        ok = threading.Event()
        started = time.monotonic()
        print(f"deploy: -- {name}", flush=True)
        try:
            yield ok
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
            self.add(name, False, detail, time.monotonic() - started)
            return
        except BaseException:
            self.add(name, False, "interrupted", time.monotonic() - started)
            raise
        self.add(
            name,
            ok.is_set(),
            "done" if ok.is_set() else "did not finish",
            time.monotonic() - started,
        )

    def print(self, build: Path) -> int:
        """Print the table (and write it to ``<build>/report.txt``); the exit status."""
        width = max((len(r.name) for r in self.rows), default=10)
        lines = [f"{'check / phase':<{width}}  result  seconds  detail"]
        for row in self.rows:
            result = "PASS" if row.ok else "FAIL"
            detail = " ".join(row.detail.split())[:300]
            lines.append(f"{row.name:<{width}}  {result:<6}  {row.seconds:7.1f}  {detail}")
        failed = sum(not r.ok for r in self.rows)
        lines += ["=" * 100, f"{len(self.rows) - failed} passed, {failed} failed"]
        text = "\n".join(lines)
        print("\n" + "=" * 100 + "\n" + text, flush=True)
        (build / "report.txt").write_text(text + "\n")
        return 1 if failed or not self.rows else 0
