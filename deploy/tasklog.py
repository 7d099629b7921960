"""What a task log shows of its job's training log, and what a triggerer takeover did to it.

The emulator writes a job's lines one a second while it runs, each with its own UTC time
first (``2026-12-01T15:29:11.560Z …``) and each different, so a line shown twice in the
task log was copied twice.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

#: A line of a job's training log, as the emulator writes it: its own UTC timestamp first.
TRAINING_LINE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z .*")
#: The line a trigger logs when it took over from a triggerer that stopped (the product's
#: ``AIHCJobTrigger``): how long after the deferral, and how far back the log resumes.
TOOK_OVER = re.compile(r"took over (\d+) s after its task deferred.* from (\d+) s ago")
#: The same line when the trigger before it saved no position: the copy starts again where
#: the worker left it, and any line before may be shown twice.
TOOK_OVER_AGAIN = re.compile(r"took over (\d+) s after its task deferred.* copied again from")
#: Lines older than the takeover window that must be in the log for the check to mean
#: something (a resume from the first line would show them twice).
MIN_EARLY_LINES = 10


def training_lines(log: str) -> list[str]:
    """The job's training log lines shown in a task log, in order."""
    return [m.group(0).strip() for m in TRAINING_LINE.finditer(log)]


def written_at(line: str) -> float:
    """When the emulator wrote a training line (epoch seconds)."""
    return datetime.fromisoformat(line[:23]).replace(tzinfo=UTC).timestamp()


def span(lines: list[str]) -> float:
    """Seconds between the first and the last training line written."""
    return written_at(lines[-1]) - written_at(lines[0]) if lines else 0.0


@dataclass
class Takeover:
    """The task log of a wait whose triggerer was SIGKILLed and taken over.

    :param log: the whole task log.
    :param killed_at: when the first triggerer was killed (epoch seconds).
    :param window: the product's takeover window: the health-check threshold plus two polls;
        the new trigger resumes the log at most that long before the kill.
    :param written: lines the job wrote (the emulator's count).
    """

    log: str
    killed_at: float
    window: float
    written: int

    def problems(self) -> list[str]:
        """What breaks the promise: a marker line, no re-streaming from the first line
        (no line written before the window shown twice), and no line lost."""
        counts = Counter(training_lines(self.log))
        early = self._early(counts)
        problems = []
        if not TOOK_OVER.search(self.log):
            problems.append("no 'took over' line in the task log")
        if len(early) < MIN_EARLY_LINES:
            problems.append(f"only {len(early)} lines older than the window (proves nothing)")
        twice = [line for line in early if counts[line] > 1]
        if twice:
            problems.append(f"{len(twice)} lines older than the window shown twice: {twice[0]}")
        if len(counts) < self.written:
            problems.append(f"{len(counts)} of the {self.written} lines the job wrote shown")
        return problems

    def summary(self) -> str:
        """What was measured, in one sentence."""
        lines = training_lines(self.log)
        counts = Counter(lines)
        repeated = sorted((line for line, n in counts.items() if n > 1), key=written_at)
        said = TOOK_OVER.search(self.log)
        marker = (
            f"'took over {said[1]} s after the deferral, resumes {said[2]} s back'"
            if said
            else "no marker"
        )
        where = (
            f"written {self.killed_at - written_at(repeated[-1]):.0f}"
            f"-{self.killed_at - written_at(repeated[0]):.0f} s before the kill"
            if repeated
            else "none"
        )
        early = self._early(counts)
        return (
            f"log: {marker}; {len(lines)} lines, {len(counts)} distinct of {self.written}; "
            f"{len(lines) - len(counts)} shown twice ({where}; window {self.window:.0f} s); "
            f"{sum(counts[line] > 1 for line in early)} of the {len(early)} lines older than "
            "the window shown twice"
        )

    def _early(self, counts: Counter[str]) -> list[str]:
        # The new trigger asks for lines from whole seconds: one more second of slack.
        floor = self.killed_at - self.window - 1
        return [line for line in counts if written_at(line) < floor]
