"""The request log: every API request the emulator answered (or dropped), for tests.

Headers are never kept: they carry the signature (and, under STS, a token).
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass

#: Records kept (counts are kept for every request).
REQUEST_LOG_SIZE = 10000


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the emulator saw it (no headers: they carry the signature).

    :param operation: e.g. ``CreateJob``; ``Unknown`` when no route matched.
    :param method: the HTTP method.
    :param path: the path as sent, without the query.
    :param status: the HTTP status answered; 0 when the connection was dropped.
    :param fault: the kind of fault injected, if any.
    :param action: the v2 action (``DescribeJob``, …); ``None`` for a v1 request.
    """

    operation: str
    method: str
    path: str
    status: int
    fault: str | None = None
    action: str | None = None


class RequestLog:
    """Thread-safe counters per (operation, status), plus the latest records."""

    def __init__(self, size: int = REQUEST_LOG_SIZE) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, int]] = Counter()
        self._records: deque[RequestRecord] = deque(maxlen=size)

    def add(self, record: RequestRecord) -> None:
        """Log one request."""
        with self._lock:
            self._records.append(record)
            self._counts[(record.operation, record.status)] += 1

    def count(self, operation: str, status: int | None = None) -> int:
        """Requests of ``operation``, optionally only those answered ``status``."""
        with self._lock:
            return sum(
                n
                for (op, st), n in self._counts.items()
                if op == operation and (status is None or st == status)
            )

    def counts(self) -> dict[str, int]:
        """Requests per operation."""
        totals: Counter[str] = Counter()
        with self._lock:
            for (op, _), n in self._counts.items():
                totals[op] += n
        return dict(totals)

    def records(self) -> list[RequestRecord]:
        """The latest records, oldest first."""
        with self._lock:
            return list(self._records)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._counts.clear()
            self._records.clear()
