"""The emulator's state, with no HTTP: jobs, pools, queued faults and scripts, the request log.

Every public method takes the one lock, so tests may read it from another thread while
the server thread serves.  Domain errors are :class:`EmulatorError`; the codes marked
*inferred* are the emulator's choice where no official source says what AIHC answers:

* unknown job, pod, pool, queue: ``404 JobNotFound``, ``PodNotFound``,
  ``ResourcePoolNotFound``, ``QueueNotFound`` (inferred codes);
* a job call without ``resourcePoolId``: ``400 InvalidParam``;
* a managed pool (``aihc-serverless``) without ``queueID``: ``400 InvalidParam "queueID
  must be set in serverless pool"`` (third-party); a ``queueID`` other than the job's
  queue: ``403 AccessDenied "no permission to get job"`` (third-party);
* a job in a queue the pool lacks: ``400 InvalidParam`` (inferred);
* a create whose name equals a job that still exists (not deleted, whatever its status)
  in the same pool: ``409 JobAlreadyExists`` (inferred: the name becomes a Kubernetes
  object name, which cannot exist twice);
* stop of a job that has already ended: ``200`` with ``{jobId, jobName}``, and nothing
  changes (inferred: stop is treated as idempotent; the status stays what it was);
* update (``PUT``) accepts only ``{"priority": "high"|"normal"|"low"}``, in any status.

Both dialects (``v1.py``, ``v2.py``) call the same methods: a job created through one is
read, stopped and deleted through the other; ``view`` arguments pick the wire shape.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from . import jobs as jobmod
from . import views
from .errors import EmulatorError, invalid_param, not_found
from .execute import ExecuteSettings, Executor, JobRun
from .jobs import Clock, Job, JobFilter, Progression
from .pools import Pool, default_pools, pool_info, queue_info
from .requestlog import RequestLog, RequestRecord
from .scenarios import Fault, Queue, Script
from .trainlog import chunked, encode_marker, render, select
from .validation import PRIORITIES, parse_create

__all__ = ["Backend", "EmulatorError", "RequestRecord"]

MAX_PAGE_SIZE = 100
IdStyle = Literal["v1", "v2"]
#: The wire shape of one job: ``(job, with_pods) -> dict`` (v1 JobInfo, v2 JobItem).
JobView = Callable[[Job, bool], dict[str, Any]]


class Backend:
    """All of the emulator's state.

    :param pools: the resource pools; :func:`~.pools.default_pools` when omitted.
    :param progression: how jobs move; :class:`Progression` ``()`` (per poll) by default.
    :param clock: epoch seconds, injectable so time-based moves need no sleeping.
    :param execute: run each job's replicas as local processes (``execute.py``) instead of
        simulating them; off (``None``) by default.
    """

    def __init__(
        self,
        *,
        pools: Sequence[Pool] | None = None,
        progression: Progression | None = None,
        clock: Clock | None = None,
        execute: ExecuteSettings | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self.executor = Executor(execute) if execute is not None else None
        self._pools = {p.pool_id: p for p in (pools or default_pools())}
        self.progression = progression or Progression()
        self.clock: Clock = clock or time.time
        self.faults = Queue()
        self.scripts = Queue()
        self._jobs: dict[str, Job] = {}
        self._names: dict[tuple[str, str], str] = {}
        self._seq = 0
        self.request_log = RequestLog()

    # ---- jobs (the v1 API) ---------------------------------------------------------------

    def create_job(
        self, pool_id: str, body: object, *, queue_id: str | None = None, creator: str = "emulator"
    ) -> dict[str, Any]:
        """``POST /api/v1/aijobs``: validate a v1 body, then :meth:`submit`."""
        return self.submit(pool_id, parse_create(body), queue_id=queue_id, creator=creator)

    def submit(
        self,
        pool_id: str,
        request: jobmod.JobRequest,
        *,
        queue_id: str | None = None,
        creator: str = "emulator",
        id_style: IdStyle = "v1",
    ) -> dict[str, Any]:
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
            if (pool_id, request.name) in self._names:
                raise EmulatorError(
                    409,
                    "JobAlreadyExists",
                    f"job name {request.name!r} already exists in resource pool {pool_id!r}",
                )
            job = self._new_job(pool_id, request, creator, id_style)
        return {"jobId": job.job_id, "jobName": job.name}

    def list_jobs(
        self,
        pool_id: str,
        *,
        queue: str | None = None,
        order_by: str = "createdAt",
        order: str = "desc",
        page_no: int = 1,
        page_size: int = 10,
        queue_id: str | None = None,
        where: JobFilter | None = None,
        view: JobView = views.job_info,
    ) -> dict[str, Any]:
        """``GET /api/v1/aijobs``: one page; never counts as a poll.

        :param where: v2's filters (status, name or queue keyword).
        :param view: the wire shape of one job (v1 JobInfo by default).
        """
        if order_by not in ("createdAt", "finishedAt"):
            raise invalid_param("orderBy must be createdAt or finishedAt")
        if order not in ("asc", "desc"):
            raise invalid_param("order must be asc or desc")
        _check_page(page_no, page_size)
        with self._lock:
            self._job_pool(pool_id, queue_id)
            found = [j for j in self._jobs.values() if j.pool_id == pool_id]
            if queue and queue != "all":
                found = [j for j in found if j.request.queue == queue]
            for job in found:
                jobmod.settle(job, self.progression, self.clock())
            if where is not None:
                found = [j for j in found if where.admits(j)]
            found.sort(key=lambda j: _sort_key(j, order_by), reverse=order == "desc")
            start = (page_no - 1) * page_size
            page = [view(j, False) for j in found[start : start + page_size]]
        return {
            "total": len(found),
            "jobs": page,
            "orderBy": order_by,
            "order": order,
            "pageNo": page_no,
            "pageSize": page_size,
        }

    def get_job(
        self,
        pool_id: str,
        job_id: str,
        *,
        queue_id: str | None = None,
        view: JobView = views.job_info,
        with_pods: bool = True,
    ) -> dict[str, Any]:
        """``GET /api/v1/aijobs/{id}``: a poll (the job may move on), then JobInfo + pods
        (or ``view``'s shape)."""
        with self._lock:
            job = self._job(pool_id, job_id, queue_id)
            jobmod.poll(job, self.progression, self.clock())
            return view(job, with_pods)

    def delete_job(
        self, pool_id: str, job_id: str, *, queue_id: str | None = None
    ) -> dict[str, Any]:
        """``DELETE /api/v1/aijobs/{id}``: gone for good (then 404)."""
        with self._lock:
            job = self._job(pool_id, job_id, queue_id)
            del self._jobs[job.job_id]
            self._names.pop((job.pool_id, job.name), None)
        _stop_run(job, remove=True)
        return {"jobId": job.job_id, "jobName": job.name}

    def stop_job(self, pool_id: str, job_id: str, *, queue_id: str | None = None) -> dict[str, Any]:
        """``POST /api/v1/aijobs/{id}/stop``: ``ManualTermination``; a no-op once ended."""
        with self._lock:
            job = self._job(pool_id, job_id, queue_id)
            now = self.clock()
            jobmod.settle(job, self.progression, now)
            jobmod.stop(job, now)
        _stop_run(job)
        return {"jobId": job.job_id, "jobName": job.name}

    def update_priority(
        self, pool_id: str, job_id: str, priority: object, *, queue_id: str | None = None
    ) -> dict[str, Any]:
        """``PUT /api/v1/aijobs/{id}``: only the priority can change."""
        if priority not in PRIORITIES:
            raise invalid_param("priority must be one of high, normal, low")
        with self._lock:
            job = self._job(pool_id, job_id, queue_id)
            job.priority = str(priority)
        return {"jobId": job.job_id}

    def job_events(
        self,
        pool_id: str,
        job_id: str,
        *,
        start_time: float | None = None,
        end_time: float | None = None,
        queue_id: str | None = None,
    ) -> dict[str, Any]:
        """``GET …/events``: one event per status change (unwrapped ``{events, total}``)."""
        with self._lock:
            job = self._settled(pool_id, job_id, queue_id)
            events = views.job_events(job, start_time, end_time)
        return {"events": events, "total": len(events)}

    def pod_events(
        self,
        pool_id: str,
        job_id: str,
        pod_name: str,
        *,
        start_time: float | None = None,
        end_time: float | None = None,
        queue_id: str | None = None,
    ) -> dict[str, Any]:
        """``GET …/pods/{pod}/events`` (unwrapped ``{events, total}``)."""
        with self._lock:
            job = self._settled(pool_id, job_id, queue_id)
            events = views.pod_events(job, self._pod(job, pod_name), start_time, end_time)
        return {"events": events, "total": len(events)}

    def pod_logs(
        self,
        pool_id: str,
        job_id: str,
        pod_name: str,
        *,
        start_time: float | None = None,
        end_time: float | None = None,
        max_lines: int | None = None,
        chunk: int = 0,
        marker: str | None = None,
        queue_id: str | None = None,
        keywords: str | None = None,
    ) -> dict[str, Any]:
        """``GET …/pods/{pod}/logs``: a page of the pod's log (``trainlog`` docstring);
        ``keywords`` (v2) keeps only the lines of the page that contain it."""
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
                context = views.pod_context(job, pod)
                picked, offset = select(job.log.entries, **window)
                lines = [render(entry, context, job.log.iterations, job.log) for entry in picked]
        if keywords:
            lines = [line for line in lines if keywords in line]
        return {
            "jobId": job.job_id,
            "podName": pod_name,
            "logs": chunked(lines, chunk),
            "nextMarker": encode_marker(offset),
        }

    def job_nodes(
        self, pool_id: str, job_id: str, *, queue_id: str | None = None
    ) -> dict[str, Any]:
        """``GET …/nodes``: the nodes the job's pods run on (once placed)."""
        with self._lock:
            job = self._settled(pool_id, job_id, queue_id)
            placed = job.scheduled_at is not None
            nodes = [views.node_name(job, pod) for pod in views.pods_of(job)] if placed else []
        return {"jobId": job.job_id, "nodeName": sorted(set(nodes))}

    # ---- pools and queues ----------------------------------------------------------------

    def list_pools(
        self, *, page_no: int = 1, page_size: int = 10, where: Callable[[Pool], bool] | None = None
    ) -> dict[str, Any]:
        """``GET /api/v1/resourcepools``: ``total`` (read by the aihc CLI) and ``totalCount``
        (in the doc table) are both given; ``where`` keeps some pools (v2's filters)."""
        _check_page(page_no, page_size)
        with self._lock:
            pools = sorted(self._pools.values(), key=lambda p: p.pool_id)
            pools = [p for p in pools if where is None or where(p)]
            start = (page_no - 1) * page_size
            items = [pool_info(p, self._jobs.values()) for p in pools[start : start + page_size]]
        return {
            "resourcePools": items,
            "total": len(pools),
            "totalCount": len(pools),
            "pageNo": page_no,
            "pageSize": page_size,
        }

    def get_pool(self, pool_id: str) -> dict[str, Any]:
        """``GET /api/v1/resourcepools/{id}``."""
        with self._lock:
            return {"resourcePool": pool_info(self._pool(pool_id), self._jobs.values())}

    def list_queues(self, pool_id: str, *, page_no: int = 1, page_size: int = 10) -> dict[str, Any]:
        """``GET /api/v1/resourcepools/{id}/queue``."""
        _check_page(page_no, page_size)
        with self._lock:
            pool = self._pool(pool_id)
            start = (page_no - 1) * page_size
            page = pool.queues[start : start + page_size]
            items = [queue_info(pool, q, self._jobs.values()) for q in page]
        return {"queues": items, "total": len(pool.queues)}

    def get_queue(self, pool_id: str, queue_name: str) -> dict[str, Any]:
        """``GET /api/v1/resourcepools/{id}/queue/{name}`` (name, or id in a managed pool)."""
        with self._lock:
            pool = self._pool(pool_id)
            queue = pool.queue(queue_name)
            if queue is None:
                raise not_found("QueueNotFound", f"queue {queue_name!r} not found in {pool_id!r}")
            return {"queue": queue_info(pool, queue, self._jobs.values())}

    def find_queue(self, queue_id: str) -> dict[str, Any]:
        """v2 ``DescribeQueue``: a queue by id (or, lacking one, by name) in any pool."""
        with self._lock:
            pairs = [(p, q) for p in self._pools.values() for q in p.queues]
            found = next((pq for pq in pairs if pq[1].queue_id == queue_id), None)
            found = found or next((pq for pq in pairs if pq[1].name == queue_id), None)
            if found is None:
                raise not_found("QueueNotFound", f"queue {queue_id!r} not found")
            pool_id = found[0].pool_id
            return {"queue": queue_info(*found, self._jobs.values()), "resourcePoolId": pool_id}

    def is_managed(self, pool_id: str) -> bool:
        """Whether the pool is a managed one (its job calls need the queue id)."""
        with self._lock:
            return self._pool(pool_id).serverless

    # ---- steering and inspection (tests, control API) ------------------------------------

    def add_fault(self, *faults: Fault) -> None:
        """Queue faults, consumed in order by the requests they match."""
        for fault in faults:
            self.faults.add(fault)

    def add_script(self, *scripts: Script) -> None:
        """Queue scripts, bound to the next matching jobs created."""
        for script in scripts:
            self.scripts.add(script)

    def set_status(self, job_id: str, status: str, reason: str = "", hold: bool = False) -> None:
        """Put a job into any status now (``hold`` keeps it there)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                raise not_found("JobNotFound", f"job {job_id!r} not found")
            jobmod.force(job, status, self.clock(), reason, hold)
        if job.is_terminal:
            _stop_run(job)

    def reset(self, progression: Progression | None = None) -> None:
        """Forget jobs, faults, scripts and the request log; optionally change the pace."""
        with self._lock:
            for job in self._jobs.values():
                _stop_run(job, remove=True)
            self._jobs.clear()
            self._names.clear()
            if progression is not None:
                self.progression = progression
        self.faults.clear()
        self.scripts.clear()
        self.request_log.clear()

    def close(self) -> None:
        """Stop every executed job and wait until its processes are gone (shutdown)."""
        if self.executor is not None:
            self.executor.shutdown()

    def record(self, record: RequestRecord) -> None:
        """Log one request (the app calls this for every API request)."""
        self.request_log.add(record)

    def count(self, operation: str, status: int | None = None) -> int:
        """How many requests of ``operation`` (optionally answered ``status``) came in."""
        return self.request_log.count(operation, status)

    def counts(self) -> dict[str, int]:
        """Requests per operation."""
        return self.request_log.counts()

    @property
    def requests(self) -> list[RequestRecord]:
        """The most recent requests, oldest first."""
        return self.request_log.records()

    def jobs(self) -> list[dict[str, Any]]:
        """Every job's state (``views.job_state``), oldest first; never a poll."""
        with self._lock:
            now = self.clock()
            for job in self._jobs.values():
                jobmod.settle(job, self.progression, now)
            return [views.job_state(j) for j in sorted(self._jobs.values(), key=lambda j: j.seq)]

    def job(self, job_id: str) -> dict[str, Any]:
        """One job's state; ``KeyError`` when it does not exist."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                raise KeyError(job_id)
            jobmod.settle(job, self.progression, self.clock())
            return views.job_state(job)

    def jobs_with_labels(self, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        """The jobs whose labels include every given key and value."""
        wanted = dict(labels).items()
        return [s for s in self.jobs() if wanted <= s["labels"].items()]

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
        script = self.scripts.take_script(request.name)
        if script is not None:
            script.apply(job, now)
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
        return job

    def _settled(self, pool_id: str, job_id: str, queue_id: str | None) -> Job:
        job = self._job(pool_id, job_id, queue_id)
        jobmod.settle(job, self.progression, self.clock())
        return job

    def _pod(self, job: Job, pod_name: str) -> views.PodRef:
        pod = views.find_pod(job, pod_name)
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


def _check_page(page_no: int, page_size: int) -> None:
    if page_no < 1:
        raise invalid_param("pageNo must be at least 1")
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise invalid_param(f"pageSize must be between 1 and {MAX_PAGE_SIZE}")


def _sort_key(job: Job, order_by: str) -> tuple[float, int]:
    if order_by == "finishedAt":
        return (job.finished_at if job.finished_at is not None else -1.0, job.seq)
    return (job.created_at, job.seq)
