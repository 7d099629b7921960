"""One status watcher per (connection, pool, queue) and event loop, for the triggers of a
triggerer: a few ListJobs pages per interval instead of a GetJob per deferred job.

A :class:`PoolWatcher` reads, once per interval (the shortest ``poll_interval`` among its
triggers), the pool's jobs newest first, page by page, and stops as soon as every watched
job has been seen.  A watched job not found in the pages read (older than them, deleted,
in another queue) gets one GetJob; one older than the pages reach, in the next rounds too.
With a single job watched, the GetJob is the whole round: one request either way, and it
carries the pods.

Each trigger holds a :class:`Subscription` and awaits its job's next reading: a future
that the watcher resolves when the job's status changes (or, when asked, at the next
round); a trigger costs nothing between changes, and is woken as soon as the page (or
GetJob) holding its job's new reading arrives, not at the end of the round.  A failing
page (no answer, 5xx, 429, a garbled answer) fails the round: the watcher backs off
(:func:`~.job.error_backoff`), its triggers keep waiting and only their own deadlines end
them.  A job that cannot be read at all (a 404 after it was deleted, a 403) gets that
error as its reading.

The queue of the key is the one every call of the watcher names (the queue id on a
managed pool, which a list and a GetJob there cannot do without; the queue name on a
self-managed pool): the jobs of two queues of one pool have two watchers.

Nothing is kept outside the process: a (re)started triggerer builds its watchers from the
triggers it is given, the first subscription starts a watcher, the last one ends it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from airflow_provider_aihc.exceptions import AIHCError
from airflow_provider_aihc.hooks._wire import is_retryable
from airflow_provider_aihc.watch.flow import WAKE_GRID_SECONDS, grid_sleep
from airflow_provider_aihc.watch.job import error_backoff

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobStatusItem

    Reading = JobStatusItem | AIHCError

log = logging.getLogger(__name__)

#: Pages read per round beyond those the watched jobs fill, to find jobs not seen yet
#: (newer jobs of other tasks come first); a job not found within them gets a GetJob.
EXTRA_PAGES = 3
#: Triggers woken per turn of the event loop, so that a round that changes thousands of
#: jobs (the first one after a triggerer start) does not stall the loop.
WAKE_BATCH = 200

#: (connection id, pool, queue as AIHC addresses it); ``None`` = every queue of the pool
#: (a self-managed pool's jobs whose queue the trigger does not know).
WatcherKey = tuple[str, str, str | None]


class _Job:
    """What a watcher knows of one watched job."""

    __slots__ = ("created_at", "missed_at", "reading", "reads", "rounds", "subs", "version")

    def __init__(self) -> None:
        self.subs: list[Subscription] = []
        self.reading: Reading | None = None
        self.version = 0  # bumped when the reading changes: a new status, or an error
        self.reads = 0  # readings received (an answer, or a definite error)
        self.rounds = 0  # rounds that tried to read it, answered or not
        self.created_at: datetime | None = None
        self.missed_at = 0  # pages read by the round that found it older than them


class Subscription:
    """One trigger's place in a watcher; :meth:`next` awaits its job's next reading.

    :param watcher: the watcher of the job's pool.
    :param job_id: the job.
    :param interval: the trigger's ``poll_interval``.
    """

    __slots__ = ("_reads_wanted", "_rounds_wanted", "_taken", "_waiter", "interval", "job_id",
                 "watcher")  # fmt: skip

    def __init__(self, watcher: PoolWatcher, job_id: str, interval: float) -> None:
        self.watcher = watcher
        self.job_id = job_id
        self.interval = interval
        self._taken = 0
        self._waiter: asyncio.Future[None] | None = None
        self._reads_wanted = -1
        self._rounds_wanted = -1

    async def next(self, *, fresh: bool = False, at_most: float | None = None) -> Reading | None:
        """The job's next reading: one this subscription has not had (the status changed,
        or the job could not be read), or with ``fresh`` the next one received, even if
        unchanged.  ``None`` when ``at_most`` seconds pass first, or when the first round
        that tried the job could not read it.  The first call waits for that first round
        whatever ``at_most`` says.

        :raises AIHCError: the watcher stopped on an unexpected error (a bug).
        """
        self.watcher.check_alive()
        job = self.watcher.job(self.job_id)
        if not fresh and job.version > self._taken:
            return self._take(job)
        first = job.rounds == 0 and self._taken == 0
        self._reads_wanted = job.reads if fresh else -1
        self._rounds_wanted = job.rounds if first else -1
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        timer = None
        if at_most is not None and not first:
            wake = math.ceil((loop.time() + at_most) / WAKE_GRID_SECONDS) * WAKE_GRID_SECONDS
            timer = loop.call_at(wake, _resolve, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()
        self.watcher.check_alive()
        if job.version > self._taken or 0 <= self._reads_wanted < job.reads:
            return self._take(job)
        return None

    def close(self) -> None:
        """Leave the watcher (idempotent); the last subscription to leave ends it."""
        self.watcher.leave(self)

    def wake_if_due(self, job: _Job) -> bool:
        """Resolve the pending :meth:`next` if the job's state answers it."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            return False
        due = (
            job.version > self._taken
            or 0 <= self._reads_wanted < job.reads
            or 0 <= self._rounds_wanted < job.rounds
            or self.watcher.failure is not None
        )
        if due:
            waiter.set_result(None)
        return due

    def _take(self, job: _Job) -> Reading | None:
        self._taken = job.version
        return job.reading


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class PoolWatcher:
    """Reads the status of every watched job of one pool (and queue) once per interval.

    Build it through :func:`subscribe`.

    :param hook: the loop's shared async hook of the connection.
    :param key: (connection id, pool, queue).
    :param registry: the loop's watchers, which it leaves when its last trigger leaves.
    """

    def __init__(
        self, hook: AIHCHook, key: WatcherKey, registry: dict[WatcherKey, PoolWatcher]
    ) -> None:
        self.hook = hook
        self.key = key
        self.pool, self.queue = key[1], key[2]
        self.rounds = 0
        self.errors = 0
        self.failure: BaseException | None = None
        self._last_error: AIHCError | None = None
        self._unlisted_after: datetime | None = None
        self._budget = 0
        self._interval: float | None = None
        self._jobs: dict[str, _Job] = {}
        #: The jobs no longer watched since this round began, in the order they left: a
        #: page drops these from its pending jobs, rather than go over all of them.
        self._departed: list[str] = []
        self._registry = registry
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def job_ids(self) -> list[str]:
        """The jobs watched now."""
        return list(self._jobs)

    @property
    def interval(self) -> float:
        """The shortest ``poll_interval`` of the triggers watching (worked out again only
        after the trigger that had it left)."""
        if self._interval is None:
            subs = (s.interval for job in self._jobs.values() for s in job.subs)
            self._interval = min(subs, default=None)
        return 1.0 if self._interval is None else self._interval

    def job(self, job_id: str) -> _Job:
        """The state of a watched job."""
        return self._jobs[job_id]

    def subscribe(self, job_id: str, interval: float) -> Subscription:
        """Watch ``job_id`` for a trigger polling every ``interval`` seconds."""
        self.check_alive()
        shorter = bool(self._jobs) and interval < self.interval
        if not self._jobs or shorter:
            self._interval = interval
        job = self._jobs.get(job_id)
        if job is None:
            job = self._jobs[job_id] = _Job()
        subscription = Subscription(self, job_id, interval)
        job.subs.append(subscription)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        elif shorter:
            self._wake.set()  # the pause under way was for a longer interval
        return subscription

    def leave(self, subscription: Subscription) -> None:
        """Forget a subscription; end the watcher when it was the last."""
        job = self._jobs.get(subscription.job_id)
        if job is None or subscription not in job.subs:
            return
        job.subs.remove(subscription)
        if self._interval is not None and subscription.interval <= self._interval:
            self._interval = None  # it may have been the shortest: work it out when needed
        if not job.subs:
            del self._jobs[subscription.job_id]
            self._departed.append(subscription.job_id)
        if not self._jobs:
            self._end()

    def check_alive(self) -> None:
        """:raises AIHCError: the watcher stopped on an unexpected error."""
        if self.failure is not None:
            raise AIHCError(f"the status watcher of pool {self.pool} failed: {self.failure!r}")

    def _end(self) -> None:
        if self._registry.get(self.key) is self:
            del self._registry[self.key]
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()

    async def _run(self) -> None:
        try:
            await grid_sleep(0)  # the triggers that start in this turn join the first round
            while self._jobs:
                started = asyncio.get_running_loop().time()
                await self.read_round()
                await self._pause(started)
        except Exception as err:  # a bug: fail the triggers rather than leave them hanging
            log.exception("The AIHC status watcher of pool %s failed", self.pool)
            self.failure = err
            self._end()
            await self._notify(list(self._jobs))

    async def _pause(self, started: float) -> None:
        loop = asyncio.get_running_loop()
        while self._jobs:
            delay = error_backoff(self.interval, self.errors, self._last_error)
            wake = math.ceil((started + delay) / WAKE_GRID_SECONDS) * WAKE_GRID_SECONDS
            if wake <= loop.time():
                return
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), wake - loop.time())
            except TimeoutError:
                return

    async def read_round(self) -> None:
        """One round: every watched job's status, then the triggers whose job changed."""
        ids = list(self._jobs)
        if not ids:
            return
        self.rounds += 1
        self._departed.clear()
        try:
            await self._read_each(await self._unlisted(ids))
        except AIHCError as err:  # retryable: the server or the network is unwell
            self.errors += 1
            self._last_error = err
            log.warning(
                "AIHC job statuses of pool %s could not be read (%s); trying again "
                "(failure %d in a row)",
                self.pool,
                err,
                self.errors,
            )
        else:
            self.errors, self._last_error = 0, None
        first_tried = []
        for job_id in ids:
            job = self._jobs.get(job_id)
            if job is not None:
                job.rounds += 1
                if job.rounds == 1:
                    first_tried.append(job_id)
        # Only the first round that tried a job can answer a wait its readings did not: a
        # subscription's first ``next`` waits for that round, read or not.  Every other
        # wait is answered by a reading, and woken as it arrives (``_wake_now``): going
        # over every job again here was a tenth of a round's CPU at 10,000 (issue #37).
        await self._notify(first_tried)

    async def _unlisted(self, ids: list[str]) -> list[str]:
        """Read the pages; the jobs they did not hold, which get a GetJob each.  A round
        reads at most :data:`EXTRA_PAGES` pages more than its jobs fill.  A job older than
        the pages reached is not looked for in them again until that budget grows (more
        triggers joined); one missed because a deletion shifted the pages, or deleted, is.
        A lone job is not listed at all: a GetJob is one request too, and carries the pods.

        :raises AIHCError: a page failed and may be asked again.
        """
        if len(ids) == 1:
            return ids
        self._budget = math.ceil(len(ids) / self.hook.list_page_size) + EXTRA_PAGES
        wanted = {job_id for job_id in ids if self._jobs[job_id].missed_at < self._budget}
        missing, oldest_read = await self._read_pages(wanted) if wanted else ([], None)
        self._unlisted_after = oldest_read
        return [job_id for job_id in ids if job_id not in wanted] + missing

    async def _read_pages(self, wanted: set[str]) -> tuple[list[str], datetime | None]:
        """Read pages until every wanted job is seen, or, past the round's budget, until
        reading on would cost more requests than a GetJob per job not seen; the ones not
        seen, and the creation time of the oldest job read.

        :raises AIHCError: a retryable failure.
        """
        pending = set(wanted)
        received = 0
        oldest: datetime | None = None
        for page_no in range(1, self.hook.list_max_pages + 1):
            departed = len(self._departed)
            try:
                count, total, last = await self._read_page(page_no, pending)
            except AIHCError as err:
                if is_retryable(err):
                    raise
                log.warning("ListJobs of pool %s refused (%s); GetJob per job", self.pool, err)
                break
            # A job whose triggers all left while the page was on its way (they had their
            # reading: the job ended) is looked for no more, in the pages or by a GetJob.
            # Only the ones that left are looked at: intersecting with all the watched jobs
            # on every page was a third of a round's CPU at 10,000 jobs, and going over all
            # the pending ones whenever one left a tenth while jobs end (issue #37).
            for job_id in self._departed[departed:]:
                if job_id not in self._jobs:  # (not watched again since)
                    pending.discard(job_id)
            received += count
            oldest = last if count else oldest
            if not pending or not count or received >= total:
                break
            if self._all_older(oldest, pending):
                break
            pages_left = math.ceil((total - received) / self.hook.list_page_size)
            if page_no >= self._budget and len(pending) <= pages_left:
                break  # a GetJob each costs no more than the pages that may hold them
        return list(pending), oldest

    async def _read_page(self, page_no: int, pending: set[str]) -> tuple[int, int, datetime | None]:
        """Read one page and record the pending jobs it holds (taken out of ``pending``):
        how many jobs it held, the list's total, and the creation time of its last job.

        The page is let go before the next one is asked for: held through that request
        and its decoding (a thousand containers, a few young-generation collections), a
        page's hundred readings were promoted to the oldest generation every time, and at
        10,000 jobs set off a full collection of the heap every round or two (issue #37).

        :raises AIHCError: the page failed.
        """
        page = await self.hook.alist_job_page(self.pool, page_no=page_no, queue=self.queue)
        for item in page.jobs:
            if item.job_id in pending:
                pending.discard(item.job_id)
                self._record(item.job_id, item)
        last = page.jobs[-1].created_at if page.jobs else None
        return len(page.jobs), page.total, last

    def _all_older(self, oldest_read: datetime | None, pending: Iterable[str]) -> bool:
        """Whether every pending job was created after ``oldest_read``, so that the pages
        still to come (older jobs) cannot hold it."""
        if oldest_read is None:
            return False
        for job_id in pending:
            job = self._jobs[job_id]  # pending holds only watched jobs
            if job.created_at is None or job.created_at <= oldest_read:
                return False
        return True

    async def _read_each(self, job_ids: list[str]) -> None:
        """One GetJob per job still watched.

        :raises AIHCError: the first retryable failure, once every answer is in.
        """
        watched = [job_id for job_id in job_ids if job_id in self._jobs]
        answers = await asyncio.gather(*(self._read_one(job_id) for job_id in watched))
        failed = next((error for error in answers if error is not None), None)
        if failed is not None:
            raise failed

    async def _read_one(self, job_id: str) -> AIHCError | None:
        try:
            job = await self.hook.aget_job_status_item(job_id, self.pool, queue_id=self.queue)
        except AIHCError as err:
            if is_retryable(err):
                return err
            self._record(job_id, err)
            return None
        self._record(job_id, job)
        after = self._unlisted_after
        if after is not None and job.created_at is not None and job.created_at < after:
            self._jobs[job_id].missed_at = self._budget  # out of reach until the budget grows
        return None

    def _record(self, job_id: str, reading: Reading) -> None:
        job = self._jobs.get(job_id)
        if job is None:  # its triggers left while the page was on its way
            return
        before = job.reading
        job.reads += 1
        if isinstance(reading, AIHCError):
            job.reading = reading
            job.version += 1
            self._wake_now(job)
            return
        job.created_at = reading.created_at or job.created_at
        if before is None or isinstance(before, AIHCError) or before.status != reading.status:
            job.reading = reading
            job.version += 1
        elif before.__dict__ != reading.__dict__:
            job.reading = reading
        # An equal reading keeps the one held: a new one each round for every job lived
        # a round, long enough to be promoted, and set off full collections of the heap.
        self._wake_now(job)

    @staticmethod
    def _wake_now(job: _Job) -> None:
        """Wake the job's triggers its new reading answers, as soon as it arrives: a job
        on the first of a hundred pages is not held until the last one is read (at
        10,000 jobs that held the p99 event delay a second and a half past the poll)."""
        for subscription in job.subs:
            subscription.wake_if_due(job)

    async def _notify(self, job_ids: list[str]) -> None:
        """Wake the triggers whose reading is due, :data:`WAKE_BATCH` per loop turn."""
        woken = 0
        for job_id in job_ids:
            job = self._jobs.get(job_id)
            if job is None:
                continue
            for subscription in tuple(job.subs):
                if subscription.wake_if_due(job) and (woken := woken + 1) % WAKE_BATCH == 0:
                    await asyncio.sleep(0)  # the woken triggers run before the next batch


_WATCHERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[WatcherKey, PoolWatcher]] = (
    weakref.WeakKeyDictionary()
)


def subscribe(
    hook: AIHCHook, pool: str, job_id: str, interval: float, queue: str | None = None
) -> Subscription:
    """Watch a job through its pool's watcher on the running loop (started if needed).

    :param hook: the loop's shared async hook
        (:func:`~airflow_provider_aihc.hooks.aihc.shared_async_hook`); its connection id is
        part of the watcher's key.
    :param pool: the job's resource pool (resolved: never ``None``).
    :param job_id: the job.
    :param interval: the trigger's ``poll_interval``.
    :param queue: the job's queue as AIHC addresses it (the queue id on a managed pool,
        the name on a self-managed one), if known; ``None`` lists every queue of the pool.
    """
    watchers = _WATCHERS.setdefault(asyncio.get_running_loop(), {})
    key: WatcherKey = (hook.aihc_conn_id, pool, queue)
    watcher = watchers.get(key)
    if watcher is None:
        watcher = watchers[key] = PoolWatcher(hook, key, watchers)
    return watcher.subscribe(job_id, interval)


def running_watchers() -> dict[WatcherKey, PoolWatcher]:
    """The watchers of the running loop (a copy)."""
    return dict(_WATCHERS.get(asyncio.get_running_loop(), {}))
