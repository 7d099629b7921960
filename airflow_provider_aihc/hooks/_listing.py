"""What a job list keeps: the filters of :meth:`AIHCHook.list_jobs` and
:meth:`AIHCHook.list_job_summaries`, applied by the server where the dialect can send
them and by the hook on every page it reads (so the answer is the same on both).

The pages themselves are ListJobs calls (``hooks/calls.py``) read by the hook's lower
layer (``hooks/_calling.py``); nothing here sends anything.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.models.status import JobStatus

__all__ = ["Where", "job_statuses"]


@dataclass(frozen=True, slots=True)
class Where:
    """What a job list keeps; the server applies what its dialect can, the hook the rest."""

    created_after: datetime | None = None
    name_keyword: str | None = None
    statuses: frozenset[str] | None = None

    @classmethod
    def of(
        cls,
        created_after: datetime | None,
        name_keyword: str | None,
        statuses: Collection[str] | None,
    ) -> Where:
        """The filters of a list call, checked (:func:`job_statuses`)."""
        return cls(created_after, name_keyword or None, job_statuses(statuses))

    @property
    def keyword(self) -> str | None:
        """The ``keyword`` filter to send (a dialect that cannot filter drops it)."""
        return self.name_keyword

    @property
    def status(self) -> str | None:
        """The ``status`` filter to send: only one status can be asked of the server."""
        statuses = self.statuses
        return next(iter(statuses)) if statuses and len(statuses) == 1 else None

    def is_older(self, created_at: datetime | None) -> bool:
        """Created before ``created_after``: paging (newest first) can stop."""
        return bool(self.created_after and created_at and created_at < self.created_after)

    def keeps(self, name: str, status: str) -> bool:
        """Whether a job's name and status pass the filters."""
        if self.name_keyword and self.name_keyword not in name:
            return False
        return self.statuses is None or status in self.statuses


def job_statuses(statuses: Collection[str] | None) -> frozenset[str] | None:
    """The statuses to keep (a single string is one status).

    :raises AIHCConfigError: naming ``statuses`` and the allowed values.
    """
    if statuses is None:
        return None
    wanted = frozenset([statuses] if isinstance(statuses, str) else statuses)
    allowed = [status.value for status in JobStatus]
    if not wanted or not wanted <= set(allowed):
        raise AIHCConfigError(
            f"statuses must name one or more of {', '.join(allowed)}; got {statuses!r}"
        )
    return wanted
