"""Wire forms both dialects share: times, events, pages.

Times: jobs use ISO UTC (``2024-07-16T08:33:43Z``, ``finishedAt`` ``""`` until the end);
events use ``2024-07-15 16:52:50 +0000 UTC`` and are answered ``{events, total}`` by v1's
``…/events`` and v2's ``DescribeJobEvents``/``DescribePodEvents`` alike (bce-sdk-go
``api/v1/aiJob.go``; bce-openapi-meta ``schema/aihc/DescribeJobEvents.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from airflow_provider_aihc.emulator.state.errors import invalid_param
from airflow_provider_aihc.emulator.state.events import Event
from airflow_provider_aihc.emulator.state.paging import LogPage
from airflow_provider_aihc.emulator.state.trainlog import chunked, encode_marker

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
EVENT_TIME_FORMAT = "%Y-%m-%d %H:%M:%S +0000 UTC"
#: The largest page a listing answers.
MAX_PAGE_SIZE = 100


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


def log_page(page: LogPage, pod_name: str, chunk: int) -> dict[str, Any]:
    """A page of a pod's log, ``chunk`` lines to a string (0: one string), and the marker
    of the next page (both dialects answer so)."""
    return {
        "jobId": page.job_id,
        "podName": pod_name,
        "logs": chunked(page.lines, chunk),
        "nextMarker": encode_marker(page.offset),
    }


def check_page(page_no: int, page_size: int) -> None:
    """A 1-based page number and a size of 1 to ``MAX_PAGE_SIZE``, else ``400``."""
    if page_no < 1:
        raise invalid_param("pageNo must be at least 1")
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise invalid_param(f"pageSize must be between 1 and {MAX_PAGE_SIZE}")


def check_job_listing(order_by: str, order: str, page_no: int, page_size: int) -> None:
    """A job listing's order (``createdAt``/``finishedAt``, ``asc``/``desc``) and page, as
    both dialects spell them, else ``400``."""
    if order_by not in ("createdAt", "finishedAt"):
        raise invalid_param("orderBy must be createdAt or finishedAt")
    if order not in ("asc", "desc"):
        raise invalid_param("order must be asc or desc")
    check_page(page_no, page_size)
