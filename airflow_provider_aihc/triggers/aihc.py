"""The triggerer's side of a deferred wait: follow an AIHC job until it ends.

AIHC actions used: ListJobs and GetJob (through the pool's watcher, shared by every
trigger of the pool in the triggerer), GetJob for the pods, GetPodLogs, GetJobEvents, and
StopJob (at the deadline, or when the task is killed).  Every call goes through the hook's
async methods; what each status means is :class:`airflow_provider_aihc.watch.job.JobWatch`,
shared with the worker-side wait.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_aihc.version_compat import (
    AIRFLOW_V_3_0_PLUS,
    AIRFLOW_V_3_3_PLUS,
    aget_task_state,
)

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.watch.logs import LogStreamer

CLASSPATH = "airflow_provider_aihc.triggers.aihc.AIHCJobTrigger"
#: ``TaskInstanceState.DEFERRED``: the task still waits on this trigger.
DEFERRED = "deferred"
#: Stops that outlive the trigger's own task
#: (:meth:`AIHCJobTrigger._carry_through_cancellations`),
#: kept here so that the event loop does not drop them half-way.
_STOPPING: set[asyncio.Task[None]] = set()
#: How many times a stop, or the task-state read before it, is made when cancellations cut
#: it off.
STOP_ATTEMPTS_THROUGH_EXIT = 3

T = TypeVar("T")


class AIHCJobTrigger(BaseTrigger):  # type: ignore[misc]
    """Wait for an AIHC job to end; fire one event
    (:class:`~airflow_provider_aihc.watch.event.JobEvent` as a payload) when it does, when
    the deadline passes, or when it cannot be watched.

    The job's status is read by its pool's watcher
    (:mod:`airflow_provider_aihc.watch.watcher`): one round of ListJobs pages per interval
    for every trigger of the pool in this triggerer, and the trigger wakes only when its
    job's status changes (and, with ``stream_logs``, every ``poll_interval`` to copy new log
    lines).  Transient AIHC errors
    (no answer, 5xx, 429) are waited through with a growing pause.

    When the task is killed while deferred (marked failed or cleared), the job is stopped
    if ``cancel_on_kill``: on Airflow >= 3.3 through :meth:`on_kill`; before, through
    :meth:`cleanup`.  Both stop the job only when the task instance has left ``deferred``,
    so that a triggerer restart, shutdown or handover never stops a job.

    :param job_id: the job.
    :param resource_pool_id: its pool; ``None`` = the connection's.
    :param aihc_conn_id: the ``aihc`` connection.
    :param poll_interval: seconds between status reads (the watcher reads at the shortest
        interval of its triggers) and between log reads.
    :param deadline: epoch seconds after which the wait ends with a ``timeout`` event.
    :param stop_on_timeout: stop the job at the deadline.
    :param cancel_on_kill: stop the job when the task is killed while deferred.
    :param stream_logs: copy the job's new log lines into the task's log at every poll.
    :param log_state: where the worker stopped reading each pod's log (pod → marker), so
        that no line is copied twice.
    :param deferred_at: when the task deferred (epoch seconds).  In a triggerer the log
        copy's position is kept in the task instance's XCom ``log_position``
        (:mod:`~airflow_provider_aihc.triggers.log_position`), and a trigger that starts
        again after its triggerer stopped resumes from there and logs one line saying so;
        without a position, the deferral time tells a takeover from a first start
        (:func:`~airflow_provider_aihc.watch.logs.takeover_resume_point`).
    :param queue_timeout: seconds the job may wait for resources (``Created`` or
        ``Scheduled``, from its ``createdAt``) before it is stopped and the event is a
        ``timeout`` with ``queued``; ``None`` (and a trigger serialized before it
        existed): no limit.
    :param job_queue: the job's queue as AIHC addresses it, sent with every call: the
        queue id (``aihcq-…``) on a managed pool, where AIHC refuses a call without it; the
        queue name on a self-managed pool (v2 names the job's queue in every call).
        ``None`` (and a trigger serialized before it existed): unknown, as before (the
        watcher lists every queue of the pool; v2 names the ``default`` queue).
    """

    def __init__(
        self,
        job_id: str,
        resource_pool_id: str | None,
        aihc_conn_id: str = "aihc_default",
        poll_interval: float = 30.0,
        deadline: float | None = None,
        stop_on_timeout: bool = True,
        cancel_on_kill: bool = True,
        stream_logs: bool = True,
        log_state: Mapping[str, str] | None = None,
        deferred_at: float | None = None,
        queue_timeout: float | None = None,
        job_queue: str | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.job_id = job_id
        self.resource_pool_id = resource_pool_id
        self.aihc_conn_id = aihc_conn_id
        self.poll_interval = float(poll_interval)
        self.deadline = None if deadline is None else float(deadline)
        self.stop_on_timeout = stop_on_timeout
        self.cancel_on_kill = cancel_on_kill
        self.stream_logs = stream_logs
        self.log_state = dict(log_state) if log_state else None
        self.deferred_at = None if deferred_at is None else float(deferred_at)
        self.queue_timeout = None if queue_timeout is None else float(queue_timeout)
        self.job_queue = job_queue or None
        self._fired = False

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Every ``__init__`` argument, as plain values."""
        return (
            CLASSPATH,
            {
                "job_id": self.job_id,
                "resource_pool_id": self.resource_pool_id,
                "aihc_conn_id": self.aihc_conn_id,
                "poll_interval": self.poll_interval,
                "deadline": self.deadline,
                "stop_on_timeout": self.stop_on_timeout,
                "cancel_on_kill": self.cancel_on_kill,
                "stream_logs": self.stream_logs,
                "log_state": self.log_state,
                "deferred_at": self.deferred_at,
                "queue_timeout": self.queue_timeout,
                "job_queue": self.job_queue,
            },
        )

    @property
    def hook(self) -> AIHCHook:
        """The AIHC hook of this connection, shared by every trigger on the running loop
        (its async methods only)."""
        from airflow_provider_aihc.hooks.aihc import shared_async_hook

        return shared_async_hook(self.aihc_conn_id)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Wait until the job ends or the deadline passes; yield exactly one event."""
        from airflow_provider_aihc.hooks._sessions import preload_async_stack

        await preload_async_stack()  # the hook, models and aiohttp: imported off the loop
        from airflow_provider_aihc.watch import JobEvent, JobWatch, first_poll_delay
        from airflow_provider_aihc.watch.flow import grid_sleep
        from airflow_provider_aihc.watch.follow import JOIN_SPREAD_SECONDS, follow_job

        # A triggerer (re)start runs every trigger's first step in one turn of its loop:
        # wait first, and build the watch only after, so that the work is spread too.
        delay = first_poll_delay(self.job_id, min(self.poll_interval, JOIN_SPREAD_SECONDS))
        if self.deadline is not None:
            delay = min(delay, max(0.0, self.deadline - time.time()))
        await grid_sleep(delay)
        watch = JobWatch(
            self.job_id,
            self.resource_pool_id,
            self.log,
            stream_logs=self.stream_logs,
            log_state=self.log_state,
            queue_timeout=self.queue_timeout,
            queue_id=self.job_queue,
        )
        keeper = await self._resume_logs(watch.logs) if self.stream_logs else None
        try:
            event = await follow_job(
                self.hook,
                watch,
                poll_interval=self.poll_interval,
                deadline=self.deadline,
                stop_on_timeout=self.stop_on_timeout,
            )
        except Exception as err:  # a bug or a broken connection: fail the task, never hang
            self.log.exception("Watching AIHC job %s failed", self.job_id)
            event = JobEvent("error", self.job_id, watch.tracker.status, f"{err}")
        finally:
            if keeper is not None:
                keeper.cancel()
        if self.stream_logs and AIRFLOW_V_3_0_PLUS and self.task_instance is not None:
            # Run by a triggerer, whose log channel may still hold the last lines.
            from airflow_provider_aihc.watch.logs import log_drain_seconds

            await asyncio.sleep(log_drain_seconds(watch.logs.last_copy, time.time()))
        self._fired = True
        event = replace(event, job_queue=self.job_queue)  # the resumed task's queue
        yield TriggerEvent(event.to_payload())  # type: ignore[no-untyped-call]

    async def _resume_logs(self, logs: LogStreamer) -> asyncio.Task[None] | None:
        """Where the job's log copy resumes, and (in a triggerer) the task that keeps
        that position in the task instance's XCom from now on
        (:mod:`~airflow_provider_aihc.triggers.log_position`).

        A position saved by an earlier start of this trigger wins (one line in the log
        says so); none saved: from the deferral.  Not in a triggerer, or when the
        position cannot be read: the threshold rule
        (:func:`~airflow_provider_aihc.watch.logs.takeover_resume_point`).
        """
        from airflow_provider_aihc.triggers.log_position import (
            LogPositionStore,
            keep_log_position,
            save_every,
        )
        from airflow_provider_aihc.version_compat import conf
        from airflow_provider_aihc.watch.logs import takeover_resume_point

        takeover = conf.getfloat("triggerer", "triggerer_health_check_threshold", fallback=30.0)
        if self.task_instance is None:  # not run by a triggerer: no earlier start to follow
            logs.since = self._log_resume_point(takeover)
            return None
        try:
            store = LogPositionStore(self.task_instance, self.job_id)
            position = await store.load()
        except Exception as err:  # any XCom backend's error, or a task instance without ids
            self.log.warning(
                "Could not read how far the log of AIHC job %s was copied (%s)", self.job_id, err
            )
            logs.since = self._log_resume_point(takeover)
            return None
        else:
            now = time.time()
            if position is not None:
                logs.markers.update(position.markers)
                self._say_took_over(now, position.copied_at)
            elif takeover_resume_point(self.deferred_at, now, self.poll_interval, takeover):
                # No position saved: how far the trigger before got is unknown, so the copy
                # starts where the worker left it (``log_state``), losing nothing.
                self._say_took_over(now, None)
        every = save_every(self.poll_interval, takeover)
        return asyncio.ensure_future(keep_log_position(logs, store, every, self.log))

    def _log_resume_point(self, takeover: float) -> float | None:
        """After a takeover, where the job's log resumes by the threshold rule."""
        from airflow_provider_aihc.watch.logs import takeover_resume_point

        now = time.time()
        since = takeover_resume_point(self.deferred_at, now, self.poll_interval, takeover)
        if since is not None:
            self._say_took_over(now, since)
        return since

    def _say_took_over(self, now: float, resumes_at: float | None) -> None:
        """One line in the task log: a takeover, and which lines may be shown twice.

        :param resumes_at: where the copy resumes (epoch seconds); ``None``: where the
            worker left it, because the trigger before saved no position.
        """
        took = now - (self.deferred_at or now)
        if resumes_at is None:
            self.log.info(
                "AIHC job %s: this trigger took over %.0f s after its task deferred (the "
                "triggerer before it stopped before it saved how far it copied); the job's "
                "log is copied again from where the worker left it, so lines copied since "
                "are shown twice",
                self.job_id,
                took,
            )
            return
        self.log.info(
            "AIHC job %s: this trigger took over %.0f s after its task deferred (the "
            "triggerer before it stopped); the job's log resumes with lines from %.0f s "
            "ago, earlier ones are in the task log already",
            self.job_id,
            took,
            now - resumes_at,
        )

    async def on_kill(self) -> None:
        """Airflow >= 3.3: the triggerer says the task was killed by a user while deferred.

        It says so for a trigger it merely lost, too: Airflow 3.3's triggerer cancels every
        trigger it runs that the database no longer assigns to it with the same "user
        action" message (``TriggerRunnerSupervisor.update_triggers``; apache/airflow PR
        #73454), and a trigger handed over to another triggerer (this one's heartbeat
        lapsed, say under load) is one of them.  Its task is still ``deferred`` and the
        other triggerer watches the job, so the job is stopped only when the task has left
        ``deferred``; a state that cannot be read keeps the job running (the orphan sweep
        stops it if its task has in fact ended).
        """
        if self.cancel_on_kill and not self._fired:
            await self._stop_unless_still_deferred(stop_when_unasked=True)

    async def cleanup(self) -> None:
        """Airflow < 3.3: stop the job if the trigger is removed because its task left
        ``deferred`` (marked failed, cleared), never on a triggerer restart."""
        if AIRFLOW_V_3_3_PLUS or self._fired or not self.cancel_on_kill:
            return
        await self._stop_unless_still_deferred(stop_when_unasked=False)

    async def _stop_unless_still_deferred(self, *, stop_when_unasked: bool) -> None:
        """Stop the job unless its task instance is still ``deferred``, the state read
        included in what a repeated cancellation cannot cut off
        (:meth:`_carry_through_cancellations`): a read cut off left the job running
        (``make test-chaos`` seed 867929: a cleared task's first job ran to its end).

        :param stop_when_unasked: what to do when there is no task instance to ask (the
            trigger run outside a triggerer, as in tests and ``airflow dags test``):
            ``on_kill`` is only ever called for a kill, so it stops; ``cleanup`` runs on
            every removal, so it does not.
        """
        await self._carry_through_cancellations(self._judge_and_stop(stop_when_unasked))

    async def _judge_and_stop(self, stop_when_unasked: bool) -> None:
        ti = self.task_instance
        if ti is None:
            if stop_when_unasked:
                await self._stop_job_through_exit("its task was killed")
            return
        try:
            state = await _again_when_cancelled(
                lambda: aget_task_state(ti.dag_id, ti.task_id, ti.run_id, ti.map_index)
            )
        except Exception:
            self.log.warning(
                "Could not read the state of task %s; AIHC job %s keeps running",
                ti.task_id,
                self.job_id,
                exc_info=True,
            )
            return
        if state == DEFERRED:
            self.log.info(
                "Trigger removed while its task is still deferred (triggerer restart, "
                "shutdown or handover to another triggerer); AIHC job %s keeps running",
                self.job_id,
            )
            return
        await self._stop_job_through_exit(f"its task is now {state or 'cleared'}")

    async def _carry_through_cancellations(self, work: Coroutine[Any, Any, None]) -> None:
        """``work`` (deciding and stopping), carried to its end even when this trigger's
        task is cancelled again meanwhile.

        Airflow 3.3's triggerer cancels a removed trigger's task at every sync with its
        runner (about once a second) until the task ends, so ``on_kill`` has about a
        second: a stop that waits through a slow answer or a 429 was cut off, and the
        job ran on (found by ``make test-chaos``: 3 of 10 jobs marked failed under AIHC
        faults).  The stop runs as a task of its own that a cancellation does not reach,
        and this waits for it through every cancellation (re-raising the last once it is
        done): a triggerer that shuts down (it does when its database restarts) waits for
        its triggers, so the stop lands before the process ends.  The hook's timeouts and
        retries bound how long.  Only a SIGKILL of the triggerer cuts it short.
        """
        stop = asyncio.ensure_future(work)
        _STOPPING.add(stop)
        stop.add_done_callback(_STOPPING.discard)
        cancelled: asyncio.CancelledError | None = None
        while not stop.done():
            try:
                await asyncio.shield(stop)
            except asyncio.CancelledError as err:
                cancelled = err
        if cancelled is not None:
            raise cancelled

    async def _stop_job_through_exit(self, why: str) -> None:
        """:meth:`_stop_job`, sent again when a cancellation cut it off
        (:func:`_again_when_cancelled`)."""

        def cancelled() -> None:
            self.log.warning("Stopping AIHC job %s was cancelled; sending it again", self.job_id)

        await _again_when_cancelled(lambda: self._stop_job(why), cancelled)

    async def _stop_job(self, why: str) -> None:
        from airflow_provider_aihc.exceptions import AIHCError

        try:
            pool, queue = self.resource_pool_id, self.job_queue
            job = await self.hook.aget_job(self.job_id, pool, queue_id=queue)
            if job.is_terminal:
                self.log.info("AIHC job %s already ended %s", self.job_id, job.status)
                return
            await self.hook.astop_job(self.job_id, pool, queue_id=queue)
        except AIHCError as err:
            self.log.error("Could not stop AIHC job %s (%s); stop it by hand", self.job_id, err)
        else:
            self.log.info("Stopped AIHC job %s: %s", self.job_id, why)


async def _again_when_cancelled(
    attempt: Callable[[], Awaitable[T]], cancelled: Callable[[], None] | None = None
) -> T:
    """``attempt()``, made again when a cancellation cut it off, at most
    :data:`STOP_ATTEMPTS_THROUGH_EXIT` times (the last cancellation is raised): a
    triggerer's runner that exits cancels each of its tasks once (``asyncio.run``), then
    waits for them, and its supervisor gives it ten seconds.

    :param attempt: makes a fresh awaitable for each attempt.
    :param cancelled: called after each cancelled attempt that is made again.
    """
    for _ in range(STOP_ATTEMPTS_THROUGH_EXIT - 1):
        try:
            return await attempt()
        except asyncio.CancelledError:
            if cancelled is not None:
                cancelled()
    return await attempt()
