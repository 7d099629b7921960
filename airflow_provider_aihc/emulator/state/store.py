"""The emulator's state, with no HTTP and no wire shapes: jobs, pools and queues, time.

Every public method takes the one lock, so tests may read it from another thread while
the server thread serves.  Methods return domain objects (:class:`~.jobs.Job`,
:class:`~.events.Event`, …) or, where the answer must be built while the lock is held,
hand them to the caller's ``render`` function: each dialect renders them into its own
wire shape (``dialects/v1``, ``dialects/v2``).  Domain errors are :class:`~.errors.EmulatorError`;
the codes marked *inferred* are the emulator's choice where no official source says what
AIHC answers:

* unknown job, pod, pool, queue: ``404 JobNotFound``, ``PodNotFound``,
  ``ResourcePoolNotFound``, ``QueueNotFound`` (inferred codes);
* a job call without ``resourcePoolId``: ``400 InvalidParam``;
* a managed pool (``aihc-serverless``) without ``queueID``: ``400 InvalidParam "queueID
  must be set in serverless pool"`` (third-party); a ``queueID`` other than the job's
  queue: ``403 AccessDenied "no permission to get job"`` (third-party); on a self-managed
  pool, a ``queueID`` that names another queue than the job's: ``404 JobNotFound``
  (inferred);
* a job in a queue the pool lacks: ``400 InvalidParam`` (inferred);
* a job asking for a resource name the pool's nodes do not offer (a misspelled GPU such as
  ``baidu.com/a800_80g_gpu``): ``400 InvalidParam`` naming it and the pool's names
  (inferred: the real platform may also accept such a job and leave it queued for ever;
  refusing it teaches the mistake at once);
* a create whose name equals a job that still exists (not deleted, whatever its status)
  in the same pool: ``409 JobAlreadyExists`` (inferred: the name becomes a Kubernetes
  object name, which cannot exist twice);
* stop of a job that has already ended: nothing changes (inferred: stop is treated as
  idempotent; the status stays what it was);
* update accepts only the priority (``high``, ``normal``, ``low``), in any status.

Both dialects call the same methods: a job created through one is read, stopped and
deleted through the other.  Test steering (faults, scripts, the request log) lives beside
the state (``steering/``); a script reaches a new job through ``on_create``.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from . import jobs as jobmod
from .catalog import Catalog
from .choices import Choices
from .errors import EmulatorError, invalid_param, not_found
from .events import Event, job_events, pod_events
from .execute import ExecuteSettings, Executor, JobRun
from .jobs import PRIORITIES, Clock, Job, JobFilter, Progression
from .paging import LogPage, Page, sort_key
from .pods import PodRef, find_pod, is_placed, node_name, pod_context, pods_of
from .pools import Pool, PoolUsage, Queue, allocated, default_pools, usage
from .services import OnRollout, Services
from .trainlog import render, select

__all__ = ["EmulatorError", "LogPage", "Page", "State"]

IdStyle = Literal["v1", "v2"]
T = TypeVar("T")
#: A pool handed to a renderer with what its jobs hold.
PoolRender = Callable[[Pool, PoolUsage], T]
#: A queue handed to a renderer with its pool and what its jobs hold, by resource.
QueueRender = Callable[[Pool, Queue, dict[str, int]], T]


class State:
    """All of the emulator's jobs, pools and queues, and its clock.

    :param pools: the resource pools; :func:`~.pools.default_pools` when omitted.
    :param progression: how jobs move; :class:`~.state.jobs.Progression` ``()`` (per poll)
        by default.
    :param clock: epoch seconds, injectable so time-based moves need no sleeping.
    :param execute: run each job's replicas as local processes (``execute.py``) instead of
        simulating them; off (``None``) by default.
    :param on_create: called with each new job and the time, before anyone can read it
        (the steering's scripts bind themselves to jobs this way).
    :param on_rollout: called when a service's create or modify starts a rollout (the
        steering's service scripts bind themselves this way).
    """

    def __init__(
        self,
        *,
        pools: Sequence[Pool] | None = None,
        progression: Progression | None = None,
        clock: Clock | None = None,
        execute: ExecuteSettings | None = None,
        on_create: Callable[[Job, float], None] | None = None,
        on_rollout: OnRollout | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self.executor = Executor(execute) if execute is not None else None
        self._pools = {p.pool_id: p for p in (pools or default_pools())}
        self.progression = progression or Progression()
        self.clock: Clock = clock or time.time
        self._on_create = on_create
        self._jobs: dict[str, Job] = {}
        self._names: dict[tuple[str, str], str] = {}
        self._seq = 0
        # Models, datasets and services (catalog.py, services.py), each with its own lock.
        self.choices = Choices()
        self.models = Catalog("Model", "am-", "amv-", self._now, self.choices)
        self.datasets = Catalog("Dataset", "ds-", "dsv-", self._now, self.choices)
        self.services = Services(self._now, self.choices, on_rollout=on_rollout)

    def _now(self) -> float:
        return self.clock()

    # ---- jobs ----------------------------------------------------------------------------

    def submit(
        self,
        pool_id: str,
        request: jobmod.JobRequest,
        *,
        queue_id: str | None = None,
        creator: str = "emulator",
        id_style: IdStyle = "v1",
    ) -> Job:
        """Create a validated job (either dialect): check pool, queue and name; ``Created``.

        :param id_style: ``v1`` ids look like ``pytorchjob-<uuid>``, ``v2`` ids like
            ``job-<12 characters>`` (both from the docs' examples).
        """
        with self._lock:
            pool = self._job_pool(pool_id, queue_id)
            queue = pool.queue(request.queue)
            if queue is None or (pool.serverless and queue.queue_id != request.queue):
                raise invalid_param(
                    f"queue {request.queue!r} does not exist in resource pool {pool_id!r}"
                )
            lacking = pool.lacks(request.resources)
            if lacking:
                raise invalid_param(
                    f"jobSpec.resources[].name {', '.join(map(repr, lacking))} is not offered "
                    f"by the nodes of resource pool {pool_id!r}; they offer "
                    f"{', '.join(pool.resources)}"
                )
            if (pool_id, request.name) in self._names:
                raise EmulatorError(
                    409,
                    "JobAlreadyExists",
                    f"job name {request.name!r} already exists in resource pool {pool_id!r}",
                )
            return self._new_job(pool_id, request, creator, id_style)

    def list_jobs(
        self,
        pool_id: str,
        render: Callable[[Job], T],
        *,
        queue: str | None = None,
        order_by: str = "createdAt",
        order: str = "desc",
        page_no: int = 1,
        page_size: int = 10,
        queue_id: str | None = None,
        where: JobFilter | None = None,
    ) -> Page[T]:
        """One page of the pool's jobs, each ``render``-ed; never counts as a poll.

        :param where: v2's filters (status, name or queue keyword).
        """
        with self._lock:
            self._job_pool(pool_id, queue_id)
            found = [j for j in self._jobs.values() if j.pool_id == pool_id]
            if queue and queue != "all":
                found = [j for j in found if j.request.queue == queue]
            for job in found:
                jobmod.settle(job, self.progression, self.clock())
            if where is not None:
                found = [j for j in found if where.admits(j)]
            found.sort(key=lambda j: sort_key(j, order_by), reverse=order == "desc")
            start = (page_no - 1) * page_size
            return Page(len(found), [render(j) for j in found[start : start + page_size]])

    def get_job(
        self, pool_id: str, job_id: str, render: Callable[[Job], T], *, queue_id: str | None = None
    ) -> T:
        """A poll (the job may move on), then the job ``render``-ed."""
        with self._lock:
            job = self._job(pool_id, job_id, queue_id)
            jobmod.poll(job, self.progression, self.clock())
            return render(job)

    def delete_job(self, pool_id: str, job_id: str, *, queue_id: str | None = None) -> Job:
        """The job is gone for good (then 404)."""
        with self._lock:
            job = self._job(pool_id, job_id, queue_id)
            del self._jobs[job.job_id]
            self._names.pop((job.pool_id, job.name), None)
        _stop_run(job, remove=True)
        return job

    def stop_job(self, pool_id: str, job_id: str, *, queue_id: str | None = None) -> Job:
        """``ManualTermination``; a no-op once ended."""
        with self._lock:
            job = self._job(pool_id, job_id, queue_id)
            now = self.clock()
            jobmod.settle(job, self.progression, now)
            jobmod.stop(job, now)
        _stop_run(job)
        return job

    def update_priority(
        self, pool_id: str, job_id: str, priority: object, *, queue_id: str | None = None
    ) -> Job:
        """Only the priority can change."""
        if priority not in PRIORITIES:
            raise invalid_param("priority must be one of high, normal, low")
        with self._lock:
            job = self._job(pool_id, job_id, queue_id)
            job.priority = str(priority)
        return job

    def job_events(
        self,
        pool_id: str,
        job_id: str,
        *,
        start_time: float | None = None,
        end_time: float | None = None,
        queue_id: str | None = None,
    ) -> list[Event]:
        """One event per status change."""
        with self._lock:
            job = self._settled(pool_id, job_id, queue_id)
            return job_events(job, start_time, end_time)

    def pod_events(
        self,
        pool_id: str,
        job_id: str,
        pod_name: str,
        *,
        start_time: float | None = None,
        end_time: float | None = None,
        queue_id: str | None = None,
    ) -> list[Event]:
        """One pod's events."""
        with self._lock:
            job = self._settled(pool_id, job_id, queue_id)
            return pod_events(job, self._pod(job, pod_name), start_time, end_time)

    def pod_logs(
        self,
        pool_id: str,
        job_id: str,
        pod_name: str,
        *,
        start_time: float | None = None,
        end_time: float | None = None,
        max_lines: int | None = None,
        marker: str | None = None,
        queue_id: str | None = None,
    ) -> LogPage:
        """A page of the pod's log (``trainlog`` docstring): what its processes wrote when
        executed, else the simulated training log."""
        with self._lock:
            job = self._settled(pool_id, job_id, queue_id)
            pod = self._pod(job, pod_name)
            window: dict[str, Any] = {
                "start_time": start_time,
                "end_time": end_time,
                "max_lines": max_lines,
                "marker": marker,
            }
            if isinstance(job.runner, JobRun):  # executed: what its processes wrote
                lines, offset = job.runner.page(pod.rank, **window)
            else:
                context = pod_context(job, pod)
                picked, offset = select(job.log.entries, **window)
                lines = [render(entry, context, job.log.iterations, job.log) for entry in picked]
        return LogPage(job.job_id, lines, offset)

    def job_nodes(self, pool_id: str, job_id: str, *, queue_id: str | None = None) -> list[str]:
        """The nodes the job's pods run on (once placed), sorted."""
        with self._lock:
            job = self._settled(pool_id, job_id, queue_id)
            nodes = [node_name(job, pod) for pod in pods_of(job)] if is_placed(job) else []
        return sorted(set(nodes))

    # ---- pools and queues ----------------------------------------------------------------

    def list_pools(
        self,
        render: PoolRender[T],
        *,
        page_no: int = 1,
        page_size: int = 10,
        where: Callable[[Pool], bool] | None = None,
    ) -> Page[T]:
        """One page of the pools (by id), each ``render``-ed; ``where`` keeps some pools."""
        with self._lock:
            pools = sorted(self._pools.values(), key=lambda p: p.pool_id)
            pools = [p for p in pools if where is None or where(p)]
            start = (page_no - 1) * page_size
            page = pools[start : start + page_size]
            return Page(len(pools), [render(p, usage(p, self._jobs.values())) for p in page])

    def get_pool(self, pool_id: str, render: PoolRender[T]) -> T:
        """One pool, ``render``-ed."""
        with self._lock:
            pool = self._pool(pool_id)
            return render(pool, usage(pool, self._jobs.values()))

    def list_queues(
        self, pool_id: str, render: QueueRender[T], *, page_no: int = 1, page_size: int = 10
    ) -> Page[T]:
        """One page of a pool's queues, each ``render``-ed."""
        with self._lock:
            pool = self._pool(pool_id)
            start = (page_no - 1) * page_size
            page = pool.queues[start : start + page_size]
            jobs = self._jobs.values()
            return Page(len(pool.queues), [render(pool, q, allocated(pool, q, jobs)) for q in page])

    def get_queue(self, pool_id: str, queue_name: str, render: QueueRender[T]) -> T:
        """A pool's queue by name (or id in a managed pool), ``render``-ed."""
        with self._lock:
            pool = self._pool(pool_id)
            queue = pool.queue(queue_name)
            if queue is None:
                raise not_found("QueueNotFound", f"queue {queue_name!r} not found in {pool_id!r}")
            return render(pool, queue, allocated(pool, queue, self._jobs.values()))

    def find_queue(self, queue_id: str, render: QueueRender[T]) -> T:
        """A queue by id (or, lacking one, by name) in any pool, ``render``-ed."""
        with self._lock:
            pairs = [(p, q) for p in self._pools.values() for q in p.queues]
            found = next((pq for pq in pairs if pq[1].queue_id == queue_id), None)
            found = found or next((pq for pq in pairs if pq[1].name == queue_id), None)
            if found is None:
                raise not_found("QueueNotFound", f"queue {queue_id!r} not found")
            pool, queue = found
            return render(pool, queue, allocated(pool, queue, self._jobs.values()))

    def is_managed(self, pool_id: str) -> bool:
        """Whether the pool is a managed one (its job calls need the queue id)."""
        with self._lock:
            return self._pool(pool_id).serverless

    # ---- steering and inspection (tests, control API) ------------------------------------

    def set_status(self, job_id: str, status: str, reason: str = "", hold: bool = False) -> None:
        """Put a job into any status now (``hold`` keeps it there)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                raise not_found("JobNotFound", f"job {job_id!r} not found")
            jobmod.force(job, status, self.clock(), reason, hold)
        if job.is_terminal:
            _stop_run(job)

    def snapshot(self, render: Callable[[Job], T]) -> list[T]:
        """Every job, settled and ``render``-ed, oldest first; never a poll."""
        with self._lock:
            now = self.clock()
            for job in self._jobs.values():
                jobmod.settle(job, self.progression, now)
            return [render(j) for j in sorted(self._jobs.values(), key=lambda j: j.seq)]

    def inspect(self, job_id: str, render: Callable[[Job], T]) -> T:
        """One job, settled and ``render``-ed; ``KeyError`` when it does not exist."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                raise KeyError(job_id)
            jobmod.settle(job, self.progression, self.clock())
            return render(job)

    def find(self, job_id: str) -> Job | None:
        """The job itself, if it exists (tests reach an executed job's processes so)."""
        with self._lock:
            return self._jobs.get(job_id)

    def reset(self, progression: Progression | None = None) -> None:
        """Forget every job; optionally change the pace."""
        with self._lock:
            for job in self._jobs.values():
                _stop_run(job, remove=True)
            self._jobs.clear()
            self._names.clear()
            self.models.clear()
            self.datasets.clear()
            self.services.clear()
            defaults = Choices()
            self.choices.unique_names = defaults.unique_names
            self.choices.token_mismatch = defaults.token_mismatch
            if progression is not None:
                self.progression = progression

    def close(self) -> None:
        """Stop every executed job and wait until its processes are gone (shutdown)."""
        if self.executor is not None:
            self.executor.shutdown()

    # ---- internals -----------------------------------------------------------------------

    def _new_job(
        self, pool_id: str, request: jobmod.JobRequest, creator: str, id_style: IdStyle
    ) -> Job:
        self._seq += 1
        now = self.clock()
        job = Job(
            job_id=_new_job_id(request.framework, id_style),
            pool_id=pool_id,
            request=request,
            created_at=now,
            seq=self._seq,
            creator=creator,
            k8s_uid=str(uuid.uuid4()),
        )
        if self._on_create is not None:
            self._on_create(job, now)
        if self.executor is not None:
            job.runner = self.executor.start(job)
        self._jobs[job.job_id] = job
        self._names[(pool_id, request.name)] = job.job_id
        return job

    def _pool(self, pool_id: str) -> Pool:
        if not pool_id:
            raise invalid_param("resourcePoolId is required")
        pool = self._pools.get(pool_id)
        if pool is None:
            raise not_found("ResourcePoolNotFound", f"resource pool {pool_id!r} not found")
        return pool

    def _job_pool(self, pool_id: str, queue_id: str | None) -> Pool:
        """The pool of a job call; a managed pool's calls name a queue by its **id**
        ("托管资源池须填入队列Id": bce-openapi-meta ``i18n/zh-CN/aihc/StopJob.json:4``;
        bce-sdk-go ``services/aihc/resource/client.go:175-177``), never by its name."""
        pool = self._pool(pool_id)
        if pool.serverless and not queue_id:
            raise invalid_param("queueID must be set in serverless pool")
        if pool.serverless and any(q.name == queue_id != q.queue_id for q in pool.queues):
            raise invalid_param(
                f"queueID must be the id of a queue of managed pool {pool_id!r} "
                f"(aihcq-...), got {queue_id!r}"
            )
        return pool

    def _job(self, pool_id: str, job_id: str, queue_id: str | None) -> Job:
        pool = self._job_pool(pool_id, queue_id)
        job = self._jobs.get(job_id)
        if job is None or job.pool_id != pool_id:
            raise not_found("JobNotFound", f"job {job_id!r} not found in {pool_id!r}")
        queue = pool.queue(job.request.queue)
        if pool.serverless and queue is not None and queue.queue_id != queue_id:
            raise EmulatorError(403, "AccessDenied", "no permission to get job")
        if not pool.serverless and queue_id and queue is not None and queue.name != queue_id:
            # A self-managed pool's job is addressed by its queue's name ("自运维资源池须填入
            # 队列名称": bce-openapi-meta i18n/zh-CN/aihc/DeleteJob.json:4); the answer to
            # another queue's name is inferred: the job is not in that queue.
            raise not_found("JobNotFound", f"job {job_id!r} not found in queue {queue_id!r}")
        return job

    def _settled(self, pool_id: str, job_id: str, queue_id: str | None) -> Job:
        job = self._job(pool_id, job_id, queue_id)
        jobmod.settle(job, self.progression, self.clock())
        return job

    def _pod(self, job: Job, pod_name: str) -> PodRef:
        pod = find_pod(job, pod_name)
        if pod is None:
            raise not_found("PodNotFound", f"pod {pod_name!r} not found in job {job.job_id!r}")
        return pod


def _stop_run(job: Job, *, remove: bool = False) -> None:
    """An executed job's processes are stopped (and, ``remove``, its directory)."""
    if isinstance(job.runner, JobRun):
        job.runner.stop(remove=remove)


def _new_job_id(framework: str, id_style: IdStyle) -> str:
    if id_style == "v2":
        return "job-" + uuid.uuid4().hex[:12]
    prefix = "mpijob" if framework == "MPIJob" else "pytorchjob"
    return f"{prefix}-{uuid.uuid4()}"
