"""The listing side of :class:`~airflow_provider_aihc.hooks.aihc.AIHCHook`: ListJobs read
page by page, and the filters a list keeps.

:class:`JobListing` holds the hook's list methods; the hook inherits them, so they are
called, documented and type-checked as ``AIHCHook`` methods.  The page size and page bound
(``LIST_PAGE_SIZE``, ``LIST_MAX_PAGES``) stay in :mod:`airflow_provider_aihc.hooks.aihc`,
where callers and tests read and shrink them, and are read from there on every call.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks._base import Endpoint, Params
from airflow_provider_aihc.models.job import (
    JobInfo,
    JobList,
    JobStatusPage,
    JobSummary,
    JobSummaryList,
)
from airflow_provider_aihc.models.status import JobStatus

__all__ = ["LIST_JOBS", "JobListing"]

T = TypeVar("T")
J = TypeVar("J", JobInfo, JobSummary)

LIST_JOBS = Endpoint("ListJobs", "GET", "/api/v1/aijobs")


class _JobPage(Protocol[J]):
    """A page of list-jobs, whatever model reads its items."""

    @property
    def total(self) -> int: ...
    @property
    def jobs(self) -> list[J]: ...


class JobListing:
    """The list methods of :class:`~airflow_provider_aihc.hooks.aihc.AIHCHook` (a mixin:
    it sends through the hook's ``_call`` and ``_acall``)."""

    if TYPE_CHECKING:

        def _call(
            self,
            parse: Callable[[Any], T],
            endpoint: Endpoint,
            resource_pool_id: str | None,
            queue_id: str | None = None,
            *,
            params: Params = (),
            body: Any = None,
            **path_args: str,
        ) -> T: ...

        async def _acall(
            self,
            parse: Callable[[Any], T],
            endpoint: Endpoint,
            resource_pool_id: str | None,
            queue_id: str | None = None,
            *,
            params: Params = (),
            body: Any = None,
            **path_args: str,
        ) -> T: ...

    async def alist_job_page(
        self,
        resource_pool_id: str | None = None,
        *,
        page_no: int = 1,
        queue: str | None = None,
        queue_id: str | None = None,
    ) -> JobStatusPage:
        """One page of ListJobs, newest first (``createdAt`` descending), each job read as
        a :class:`JobStatusItem` (list items carry no pods).

        :param page_no: the page, from 1; :data:`LIST_PAGE_SIZE` jobs a page.
        :param queue: only jobs of this queue (``None``: every queue).
        """
        params = _list_params(
            page_no, filters={"queue": queue, "orderBy": "createdAt", "order": "desc"}
        )
        return await self._acall(
            JobStatusPage.model_validate, LIST_JOBS, resource_pool_id, queue_id, params=params
        )

    def list_jobs(
        self,
        resource_pool_id: str | None = None,
        *,
        queue: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        queue_id: str | None = None,
        created_after: datetime | None = None,
        name_keyword: str | None = None,
        statuses: Collection[str] | None = None,
    ) -> list[JobInfo]:
        """Every job in the pool (all pages), newest first unless ``order`` says otherwise.

        :param queue: only jobs of this queue (empty or ``all``: every queue).
        :param order_by: ``createdAt`` or ``finishedAt``.
        :param order: ``asc`` or ``desc``.
        :param created_after: only jobs created at or after this aware datetime; paging
            (newest first by ``createdAt``) stops at the first older job, so a pool's long
            history is not read page by page.
        :param name_keyword: only jobs whose name contains it.  ``api_version`` v2 asks the
            server (``keyword``), so only those jobs are read; how v2 matches is not
            documented, so pass what every wanted name *starts* with.  v1 cannot filter:
            every page is read and filtered here.
        :param statuses: only jobs in one of these statuses (``JobStatus`` values).  v2
            asks the server when there is one; otherwise they are filtered here.
        """
        where = _Where(created_after, name_keyword or None, _statuses(statuses))
        return self._list_all(
            JobList.model_validate, resource_pool_id, queue, order_by, order, queue_id, where
        )

    def list_job_summaries(
        self,
        resource_pool_id: str | None = None,
        *,
        queue: str | None = None,
        queue_id: str | None = None,
        created_after: datetime | None = None,
        name_keyword: str | None = None,
        statuses: Collection[str] | None = None,
    ) -> list[JobSummary]:
        """:meth:`list_jobs`, newest first, each job read as a :class:`JobSummary` (id,
        name, status, labels, creation time): a pool of hundreds of jobs parses in a
        fraction of the time.  ``name_keyword`` and ``statuses`` filter as there."""
        where = _Where(created_after, name_keyword or None, _statuses(statuses))
        return self._list_all(
            JobSummaryList.model_validate, resource_pool_id, queue, None, None, queue_id, where
        )

    def _list_all(
        self,
        parse_page: Callable[[Any], _JobPage[J]],
        resource_pool_id: str | None,
        queue: str | None,
        order_by: str | None,
        order: str | None,
        queue_id: str | None,
        where: _Where,
    ) -> list[J]:
        from airflow_provider_aihc.hooks import aihc  # its bound, read now: tests shrink it

        if where.created_after is not None:
            order_by, order = "createdAt", "desc"
        filters = {"queue": queue, "orderBy": order_by, "order": order, **where.server_filters()}
        jobs: dict[str, J] = {}
        received = 0
        for page_no in range(1, aihc.LIST_MAX_PAGES + 1):
            params = _list_params(page_no, filters=filters)
            page = self._call(parse_page, LIST_JOBS, resource_pool_id, queue_id, params=params)
            # A job created between two pages shifts the others down one place: the
            # same job then arrives on both pages; keep its first sighting.
            older = False
            for job in page.jobs:
                if where.is_older(job.created_at):
                    older = True
                elif where.keeps(job.name, job.status):
                    jobs.setdefault(job.job_id, job)
            received += len(page.jobs)
            if older or not page.jobs or received >= page.total:
                break
        return list(jobs.values())


@dataclass(frozen=True, slots=True)
class _Where:
    """What a job list keeps; the server applies what its dialect can, the hook the rest."""

    created_after: datetime | None
    name_keyword: str | None
    statuses: frozenset[str] | None

    def server_filters(self) -> dict[str, str | None]:
        """:data:`~airflow_provider_aihc.hooks.dialects.LIST_FILTERS` to send (a dialect
        that cannot filter drops them)."""
        one = next(iter(self.statuses)) if self.statuses and len(self.statuses) == 1 else None
        return {"keyword": self.name_keyword, "status": one}

    def is_older(self, created_at: datetime | None) -> bool:
        """Created before ``created_after``: paging (newest first) can stop."""
        return bool(self.created_after and created_at and created_at < self.created_after)

    def keeps(self, name: str, status: str) -> bool:
        """Whether a job's name and status pass the filters."""
        if self.name_keyword and self.name_keyword not in name:
            return False
        return self.statuses is None or status in self.statuses


def _statuses(statuses: Collection[str] | None) -> frozenset[str] | None:
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


def _list_params(
    page_no: int, page_size: int | None = None, filters: Mapping[str, str | None] | None = None
) -> Params:
    from airflow_provider_aihc.hooks import aihc  # its page size, read now: tests shrink it

    size = aihc.LIST_PAGE_SIZE if page_size is None else page_size
    params = [(k, v) for k, v in (filters or {}).items() if v]
    return [*params, ("pageNo", str(page_no)), ("pageSize", str(size))]
