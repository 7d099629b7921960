"""AIHC hook: one method per endpoint, sync for workers and async for triggers.

Two layers.  Every endpoint is declared once, in :mod:`airflow_provider_aihc.hooks.calls`
(its operation, v1 path and v2 action, what it needs, its answer model); the lower layer
(:class:`~airflow_provider_aihc.hooks._calling.CallingHook`: the connection, :meth:`send`
and :meth:`asend`) sends any declared call.  The public methods below are each one call
over those.  The connection extra ``api_version`` picks the dialect (``hooks/dialects``):
``v1`` (the default) sends the v1 paths, ``v2`` the matching actions (``POST /?action=…``);
the methods, their arguments and typed results are the same.  The job tools (metrics,
nodes, the web terminal, batch stop, a pool's nodes) are in ``hooks/_tools.py``; the
model registry, datasets and online services (v2 only) in ``hooks/_registry.py``.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Collection, Iterator, Mapping
from datetime import datetime
from typing import Any

from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCError, AIHCValidationError
from airflow_provider_aihc.hooks import calls
from airflow_provider_aihc.hooks._listing import Where
from airflow_provider_aihc.hooks._registry import RegistryHook
from airflow_provider_aihc.hooks.dialects import check_path_id
from airflow_provider_aihc.models.build import build_create_request
from airflow_provider_aihc.models.job import (
    CreateJobResult,
    DeleteJobResult,
    JobBrief,
    JobEvents,
    JobInfo,
    JobStatusItem,
    JobStatusPage,
    JobSummary,
    PodLogs,
    StopJobResult,
)
from airflow_provider_aihc.models.pool import Queue, ResourcePool
from airflow_provider_aihc.models.request import CreateJobRequest

__all__ = ["AIHCHook", "check_path_id", "shared_async_hook"]

PRIORITIES = ("high", "normal", "low")


class AIHCHook(RegistryHook):
    """Talk to Baidu AIHC's job API with ``bce-auth-v1`` signed requests.

    :param aihc_conn_id: the ``aihc`` connection: login = Access Key ID, password = Secret
        Access Key, host = endpoint (bare host or URL), extras ``region``,
        ``resource_pool_id``, ``security_token``, ``timeout``, ``max_retries``.
    """

    conn_name_attr = "aihc_conn_id"
    default_conn_name = "aihc_default"
    conn_type = "aihc"
    hook_name = "Baidu AIHC"

    def __init__(self, aihc_conn_id: str = default_conn_name) -> None:
        super().__init__(aihc_conn_id)

    # -- jobs -------------------------------------------------------------------------

    def create_job(
        self,
        request: CreateJobRequest | Mapping[str, Any],
        resource_pool_id: str | None = None,
        *,
        client_token: str | None = None,
    ) -> CreateJobResult:
        """Create a training job; sent exactly once (a lost answer is the caller's to resolve).

        :param request: a :class:`CreateJobRequest` or a mapping in wire (camelCase) form.
        :param resource_pool_id: the pool; defaults to the connection's.
        :param client_token: sent as ``clientToken`` (undocumented for jobs; harmless).
        :raises AIHCValidationError: ``request`` is invalid (every bad field; nothing sent).
        """
        model = request if isinstance(request, CreateJobRequest) else build_create_request(request)
        body = model.model_dump(mode="json", exclude_none=True)
        problems = self.dialect.create_problems(body)
        if problems:
            raise AIHCValidationError(problems)
        return self.send(calls.CreateJob(body, resource_pool_id, model.queue, client_token))

    def get_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobInfo:
        """The job's details, with its pods."""
        return self.send(calls.GetJob(job_id, resource_pool_id, queue_id=queue_id))

    async def aget_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobInfo:
        """Async :meth:`get_job`."""
        return await self.asend(calls.GetJob(job_id, resource_pool_id, queue_id=queue_id))

    def get_job_brief(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobBrief:
        """The job's status, pod names and failure reasons, as a poll needs them: the
        same call as :meth:`get_job`, with a tenth of its parsing."""
        return self.send(calls.GetJobBrief(job_id, resource_pool_id, queue_id=queue_id))

    async def aget_job_brief(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobBrief:
        """Async :meth:`get_job_brief`."""
        return await self.asend(calls.GetJobBrief(job_id, resource_pool_id, queue_id=queue_id))

    async def aget_job_status_item(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobStatusItem:
        """GetJob read as a :class:`JobStatusItem`: :meth:`aget_job_brief` (status, pods,
        reasons) plus the creation time, as the status watcher reads list items."""
        return await self.asend(calls.GetJobStatusItem(job_id, resource_pool_id, queue_id=queue_id))

    def stop_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> StopJobResult:
        """Stop a running job (AIHC has no suspend; a stopped job ends)."""
        return self.send(calls.StopJob(job_id, resource_pool_id, queue_id=queue_id))

    async def astop_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> StopJobResult:
        """Async :meth:`stop_job`."""
        return await self.asend(calls.StopJob(job_id, resource_pool_id, queue_id=queue_id))

    def delete_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> DeleteJobResult:
        """Delete a job's record (for cleanup; stop it first to end it)."""
        return self.send(calls.DeleteJob(job_id, resource_pool_id, queue_id=queue_id))

    def update_job_priority(
        self,
        job_id: str,
        priority: str,
        resource_pool_id: str | None = None,
        *,
        queue_id: str | None = None,
    ) -> StopJobResult:
        """Change a queued job's priority: ``high``, ``normal`` or ``low``."""
        if priority not in PRIORITIES:
            raise AIHCConfigError(f"priority must be one of high, normal, low; got {priority!r}")
        return self.send(
            calls.UpdateJob(job_id, resource_pool_id, priority=priority, queue_id=queue_id)
        )

    def get_job_events(
        self,
        job_id: str,
        resource_pool_id: str | None = None,
        *,
        job_framework: str = "PyTorchJob",
        start_time: str | None = None,
        end_time: str | None = None,
        queue_id: str | None = None,
    ) -> JobEvents:
        """The job's Kubernetes-style events (reason, message, type)."""
        return self.send(
            calls.GetJobEvents(
                job_id, resource_pool_id, job_framework, start_time, end_time, queue_id=queue_id
            )
        )

    async def aget_job_events(
        self,
        job_id: str,
        resource_pool_id: str | None = None,
        *,
        job_framework: str = "PyTorchJob",
        start_time: str | None = None,
        end_time: str | None = None,
        queue_id: str | None = None,
    ) -> JobEvents:
        """Async :meth:`get_job_events`."""
        return await self.asend(
            calls.GetJobEvents(
                job_id, resource_pool_id, job_framework, start_time, end_time, queue_id=queue_id
            )
        )

    def get_pod_logs(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        start_time: int | None = None,
        max_lines: int | None = None,
        marker: str | None = None,
        end_time: int | None = None,
        queue_id: str | None = None,
    ) -> PodLogs:
        """Log lines of one pod; pass the last ``next_marker`` to read on from there
        (:class:`~airflow_provider_aihc.hooks.calls.GetPodLogs` says what each takes)."""
        return self.send(
            calls.GetPodLogs(job_id, pod_name, resource_pool_id, marker, max_lines,
                             start_time, end_time, queue_id=queue_id)
        )  # fmt: skip

    async def aget_pod_logs(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        start_time: int | None = None,
        max_lines: int | None = None,
        marker: str | None = None,
        end_time: int | None = None,
        queue_id: str | None = None,
    ) -> PodLogs:
        """Async :meth:`get_pod_logs`."""
        return await self.asend(
            calls.GetPodLogs(job_id, pod_name, resource_pool_id, marker, max_lines,
                             start_time, end_time, queue_id=queue_id)
        )  # fmt: skip

    def get_pod_events(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        job_framework: str = "PyTorchJob",
        queue_id: str | None = None,
    ) -> JobEvents:
        """Events of one pod."""
        return self.send(
            calls.GetPodEvents(job_id, pod_name, resource_pool_id, job_framework, queue_id=queue_id)
        )

    def iter_pod_log_lines(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        page_lines: int = 1000,
        queue_id: str | None = None,
    ) -> Iterator[str]:
        """Every log line of a pod from its first, page by page (``marker`` paging); at
        most :attr:`list_max_pages` pages, and never a marker twice (a server cycling
        markers would loop forever)."""
        marker, seen = "", {""}
        for _ in range(self.list_max_pages):
            page = self.get_pod_logs(
                job_id,
                pod_name,
                resource_pool_id,
                max_lines=page_lines,
                marker=marker,
                queue_id=queue_id,
            )
            lines = [line for record in page.logs for line in record.splitlines()]
            yield from lines
            if not lines or not page.next_marker or page.next_marker in seen:
                return
            marker = page.next_marker
            seen.add(marker)

    # -- lists ------------------------------------------------------------------------

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

        :param page_no: the page, from 1; :attr:`list_page_size` jobs a page.
        :param queue: only jobs of this queue (``None``: every queue).
        :param queue_id: the queue's id, which a managed pool's list needs.
        """
        return await self.asend(
            calls.ListJobStatuses(
                resource_pool_id,
                page_no,
                self.list_page_size,
                queue=queue,
                order_by="createdAt",
                order="desc",
                queue_id=queue_id,
            )
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
        :param queue_id: the queue's id (``queueID``), which a managed pool's list needs
            (the queue's name on a v2 self-managed pool).
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
        where = Where.of(created_after, name_keyword, statuses)
        return self._list_all(
            calls.ListJobs, resource_pool_id, queue, order_by, order, queue_id, where
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
        where = Where.of(created_after, name_keyword, statuses)
        kind = calls.ListJobSummaries
        return self._list_all(kind, resource_pool_id, queue, None, None, queue_id, where)

    # -- pools and queues -------------------------------------------------------------

    def list_resource_pools(self) -> list[ResourcePool]:
        """Every resource pool the credentials can see (all pages)."""
        pools: list[ResourcePool] = []
        for page_no in range(1, self.list_max_pages + 1):
            page = self.send(calls.ListResourcePools(page_no, self.list_page_size))
            pools.extend(page.resource_pools)
            if not page.resource_pools or len(pools) >= page.total_count:
                break
        return pools

    def get_resource_pool(self, resource_pool_id: str | None = None) -> ResourcePool:
        """One resource pool."""
        return self.send(calls.GetResourcePool(self.resource_pool(resource_pool_id)))

    def list_queues(self, resource_pool_id: str | None = None) -> list[Queue]:
        """The queues of a pool (the first page, :attr:`list_page_size` of them)."""
        pool_id = self.resource_pool(resource_pool_id)
        return self.send(calls.ListQueues(pool_id, 1, self.list_page_size)).queues

    def get_queue(self, queue_name: str, resource_pool_id: str | None = None) -> Queue:
        """One queue of a pool."""
        return self.send(calls.GetQueue(self.resource_pool(resource_pool_id), queue_name))

    def test_connection(self) -> tuple[bool, str]:
        """One cheap signed call (list one page of resource pools)."""
        try:
            self.send(calls.ListResourcePools(1, 1))
        except AIHCError as err:
            return False, str(err)
        return True, f"Connected to AIHC at {self.config.base_url}"

    # -- UI (Airflow < 3.2 reads these; newer versions read get_provider_info) ---------

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Relabel the standard connection form for AIHC."""
        from airflow_provider_aihc.get_provider_info import UI_FIELD_BEHAVIOUR

        return UI_FIELD_BEHAVIOUR

    @classmethod
    def get_connection_form_widgets(cls) -> dict[str, Any]:
        """The extra fields of the connection form, built from ``CONN_FIELDS``."""
        from airflow_provider_aihc.get_provider_info import CONN_FIELDS

        return {name: cls._form_field(spec) for name, spec in CONN_FIELDS.items()}

    @staticmethod
    def _form_field(spec: dict[str, Any]) -> Any:
        """Airflow 2's form field for one ``CONN_FIELDS`` entry (``hooks/_form.py``)."""
        from airflow_provider_aihc.hooks._form import form_field

        return form_field(spec)


_ASYNC_HOOKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AIHCHook]] = (
    weakref.WeakKeyDictionary()
)


def shared_async_hook(aihc_conn_id: str) -> AIHCHook:
    """One hook per connection id and running event loop, for the triggers of a triggerer:
    a thousand watched jobs read their connection once (per TTL), not once each, and hold
    no settings of their own."""
    hooks = _ASYNC_HOOKS.setdefault(asyncio.get_running_loop(), {})
    hook = hooks.get(aihc_conn_id)
    if hook is None:
        hook = hooks[aihc_conn_id] = AIHCHook(aihc_conn_id)
    return hook
