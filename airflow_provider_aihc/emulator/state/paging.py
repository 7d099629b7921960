"""Paging of the emulator's listings: one page, its limits and its order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from .jobs import Job

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


def sort_key(job: Job, order_by: str) -> tuple[float, int]:
    """A job's place in a listing ordered by ``createdAt`` or ``finishedAt``."""
    if order_by == "finishedAt":
        return (job.finished_at if job.finished_at is not None else -1.0, job.seq)
    return (job.created_at, job.seq)
