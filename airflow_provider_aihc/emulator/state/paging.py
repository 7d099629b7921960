"""Paging of the emulator's listings: one page, its limits and its order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from .errors import invalid_param
from .jobs import Job

MAX_PAGE_SIZE = 100
T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing: the items rendered, and how many there are in all."""

    total: int
    items: list[T]


@dataclass(frozen=True)
class LogPage:
    """A page of a pod's log: its lines and the offset after the last one."""

    job_id: str
    lines: list[str]
    offset: int


def check_page(page_no: int, page_size: int) -> None:
    """A 1-based page number and a size of 1 to ``MAX_PAGE_SIZE``, else ``400``."""
    if page_no < 1:
        raise invalid_param("pageNo must be at least 1")
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise invalid_param(f"pageSize must be between 1 and {MAX_PAGE_SIZE}")


def sort_key(job: Job, order_by: str) -> tuple[float, int]:
    """A job's place in a listing ordered by ``createdAt`` or ``finishedAt``."""
    if order_by == "finishedAt":
        return (job.finished_at if job.finished_at is not None else -1.0, job.seq)
    return (job.created_at, job.seq)
