"""Wire forms both dialects share: times, events, pages.

Times: jobs use ISO UTC (``2024-07-16T08:33:43Z``, ``finishedAt`` ``""`` until the end);
events use ``2024-07-15 16:52:50 +0000 UTC`` and are answered ``{events, total}`` by v1's
``…/events`` and v2's ``DescribeJobEvents``/``DescribePodEvents`` alike (aihc-api §3.5, §10).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from airflow_provider_aihc.emulator.state.events import Event

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
EVENT_TIME_FORMAT = "%Y-%m-%d %H:%M:%S +0000 UTC"


@lru_cache(maxsize=4096)
def iso(ts: float | None) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` of epoch seconds, ``""`` for ``None``."""
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts, tz=UTC).strftime(ISO_FORMAT)


@lru_cache(maxsize=4096)
def event_time(ts: float) -> str:
    """``YYYY-MM-DD HH:MM:SS +0000 UTC`` of epoch seconds."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime(EVENT_TIME_FORMAT)


def event(item: Event) -> dict[str, Any]:
    """One event as both dialects answer it."""
    stamp = event_time(item.at)
    return {
        "reason": item.reason,
        "message": item.message,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": item.kind,
    }


def events_answer(items: Sequence[Event]) -> dict[str, Any]:
    """``{events, total}``."""
    return {"events": [event(item) for item in items], "total": len(items)}
