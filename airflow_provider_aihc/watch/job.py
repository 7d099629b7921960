"""One watch of one job: status changes, live logs, transient errors, the deadline."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from airflow_provider_aihc.exceptions import (
    AIHCError,
    AIHCJobTimeoutError,
    AIHCThrottledError,
)
from airflow_provider_aihc.hooks._wire import is_retryable
from airflow_provider_aihc.models.status import is_failed, is_started, parse_status
from airflow_provider_aihc.watch.event import JobEvent, final_event
from airflow_provider_aihc.watch.flow import Flow, GetJobBrief, Log, Sleep, StopJob, drive
from airflow_provider_aihc.watch.logs import DEFAULT_LOG_LINES_PER_POLL, LogStreamer
from airflow_provider_aihc.watch.queue import NO_QUEUE_TIMEOUT, QueueClock

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobBrief

#: The longest wait between polls while AIHC keeps failing (unless the poll interval is longer).
MAX_ERROR_BACKOFF_SECONDS = 120.0
#: Doublings counted at most: the exponent is capped before ``2.0 **`` is computed, which
#: overflows past 1,024 (security review F6: ~34 h of errors failed every deferred task).
MAX_BACKOFF_DOUBLINGS = 30


class StatusTracker:
    """Logs a job's status when it changes, and an unknown status once."""

    __slots__ = ("_unknown", "clock", "job_id", "log", "since", "status")

    def __init__(self, job_id: str, log: Log, clock: Callable[[], float]) -> None:
        self.job_id = job_id
        self.log = log
        self.clock = clock
        self.status: str | None = None
        self.since = 0.0
        self._unknown: set[str] | None = None  # made on the first unknown status

    def observe(self, status: str) -> None:
        """Note the status of one poll."""
        now = self.clock()
        if self.status is None:
            self.log.info("AIHC job %s is %s", self.job_id, status or "<empty>")
        elif status != self.status:
            self.log.info(
                "AIHC job %s: %s → %s after %.0f s",
                self.job_id,
                self.status or "<empty>",
                status or "<empty>",
                now - self.since,
            )
        else:
            return
        self.status, self.since = status, now
        if parse_status(status) is None and status not in (self._unknown or ()):
            self._unknown = self._unknown or set()
            self._unknown.add(status)
            self.log.warning(
                "AIHC job %s reports status %r, which this provider does not know; "
                "waiting on it as if the job were still active",
                self.job_id,
                status,
            )


class JobWatch:
    """One watch of one job: status changes, live logs, errors to wait through.

    Use :meth:`check` for one poll (a sensor's poke) and :meth:`wait` for the loop.

    :param job_id: the job.
    :param resource_pool_id: its pool; ``None`` = the connection's.
    :param log: the task's or trigger's logger.
    :param queue_id: its queue as AIHC addresses it (the queue id on a managed pool, the
        queue name on a v2 self-managed pool), sent with every call; ``None``: unknown.
    :param stream_logs: copy new log lines into ``log`` at every poll.
    :param log_state: the :attr:`log_state` of an earlier watch of this job.
    :param max_log_lines: log lines copied per poll.
    :param queue_timeout: seconds the job may wait for resources (``Created`` or
        ``Scheduled``, counted from its ``createdAt``) before it is stopped and the wait
        ends with a ``timeout`` event (``queued``); ``None``: no limit.  A job that has
        started running is never stopped for it.
    :param clock: epoch seconds (a seam for tests).

    A triggerer holds one per deferred job, so it holds no more than it needs (issue #37:
    every object a trigger keeps is one more for each full collection to walk): slots, the
    :class:`~.logs.LogStreamer` made only when the log is read (:attr:`logs`), and one
    shared idle :class:`~.queue.QueueClock` for every watch without a ``queue_timeout``.
    """

    __slots__ = ("_failure_seen", "_last_error", "_log_state", "_logs", "_max_log_lines",
                 "clock", "errors", "job_id", "log", "pod_names", "pool", "queue", "queue_id",
                 "stream_logs", "tracker")  # fmt: skip

    def __init__(
        self,
        job_id: str,
        resource_pool_id: str | None,
        log: Log,
        *,
        stream_logs: bool = True,
        log_state: Mapping[str, str] | None = None,
        max_log_lines: int = DEFAULT_LOG_LINES_PER_POLL,
        queue_timeout: float | None = None,
        clock: Callable[[], float] = time.time,
        queue_id: str | None = None,
    ) -> None:
        self.job_id = job_id
        self.pool = resource_pool_id
        self.queue_id = queue_id
        self.log = log
        self.clock = clock
        self.tracker = StatusTracker(job_id, log, clock)
        self._logs: LogStreamer | None = None
        self._log_state = log_state
        self._max_log_lines = max_log_lines
        self.stream_logs = stream_logs
        self.pod_names: Sequence[str] = ()
        self.errors = 0
        self._last_error: AIHCError | None = None
        self._failure_seen = False
        self.queue = (
            NO_QUEUE_TIMEOUT
            if queue_timeout is None
            else QueueClock(job_id, resource_pool_id, queue_timeout, clock, queue_id)
        )

    @property
    def logs(self) -> LogStreamer:
        """The job's log copy, made on first use."""
        if self._logs is None:
            self._logs = LogStreamer(
                self.job_id,
                self.pool,
                self.log,
                max_lines=self._max_log_lines,
                state=self._log_state,
                queue_id=self.queue_id,
            )
        return self._logs

    @property
    def log_state(self) -> dict[str, str]:
        """Where each pod's log was read up to."""
        return self._logs.state if self._logs is not None else dict(self._log_state or {})

    def check(self) -> Flow[JobEvent | None]:
        """One poll: the status (logged when it changes), new log lines, and the event
        once the job has ended; ``None`` while it runs or while AIHC fails transiently."""
        job = yield GetJobBrief(self.job_id, self.pool, queue_id=self.queue_id)
        return (yield from self.read(job))

    def read(self, job: JobBrief | AIHCError) -> Flow[JobEvent | None]:
        """Act on one reading of the job (a GetJob answer, a ListJobs item, or the error
        that came instead): :meth:`check` without the request.  A reading without pods
        (a list item) keeps the pod names read before."""
        if isinstance(job, AIHCError):
            return self._check_failed(job)
        self.errors = 0
        self.pod_names = job.pod_names or self.pod_names
        self.tracker.observe(job.status)
        self.queue.observe(job)
        yield from self.read_logs()
        if self.queue.expired:
            return (yield from self.queue.expire(self.log))
        if not job.is_terminal:
            self._failure_seen = False  # a fault-tolerant job came back: confirm anew
            return None
        if self._unconfirmed_failure(job):
            return None
        return (yield from final_event(self.job_id, job, self.pool, self.queue_id))

    def read_logs(self) -> Flow[None]:
        """New log lines of the pods, when streaming and the job has started."""
        if self.stream_logs and is_started(self.tracker.status or ""):
            # A queued job has no logs; not asking saves a request per pod per poll,
            # for as long as a busy queue holds the job.
            yield from self.logs.flow(self.pod_names)

    @property
    def awaiting_confirmation(self) -> bool:
        """A fault-tolerant job read ``Failed`` once: the next reading must be a new one."""
        return self._failure_seen

    def wait(
        self,
        *,
        poll_interval: float,
        deadline: float | None,
        stop_on_timeout: bool,
    ) -> Flow[JobEvent]:
        """Poll until the job ends or ``deadline`` (epoch seconds) passes.

        Transient errors (no answer, 5xx, 429, an unreadable answer) are logged and waited
        through with a growing pause; only ``poll_interval`` and ``deadline`` bound the wait.
        At the deadline the job is stopped when ``stop_on_timeout``.
        """
        if poll_interval <= 0:
            raise AIHCError(f"poll_interval must be positive, got {poll_interval!r}")
        started = self.clock()
        delay = 0.0
        while True:
            if delay > 0:
                yield Sleep(self._until_deadline(delay, deadline))
            event = yield from self.check()
            if event is not None:
                return event
            if deadline is not None and self.clock() >= deadline:
                waited = self.clock() - started
                return (yield from self.expire(waited, stop_on_timeout))
            delay = self.next_delay(poll_interval)
            queue_left = self.queue.seconds_left()
            if queue_left is not None:  # the check after it reads the job and ends the wait
                delay = max(0.0, min(delay, queue_left))

    def next_delay(self, poll_interval: float) -> float:
        """The pause before the next poll: ``poll_interval``, longer while AIHC fails."""
        return error_backoff(poll_interval, self.errors, self._last_error)

    def _check_failed(self, error: AIHCError) -> JobEvent | None:
        if not is_retryable(error):  # no answer, 5xx, 429, a garbled answer: poll again
            return JobEvent(
                "error",
                self.job_id,
                self.tracker.status,
                f"Could not watch AIHC job {self.job_id}: {error}",
                retryable=False,
            )
        self.errors += 1
        self._last_error = error
        self.log.warning(
            "AIHC job %s: status check failed (%s); trying again (failure %d in a row)",
            self.job_id,
            error,
            self.errors,
        )
        return None

    def _unconfirmed_failure(self, job: JobBrief) -> bool:
        """A fault-tolerant job may leave ``Failed`` again: believe it on the second read."""
        if not (job.enable_fault_tolerance and is_failed(job.status)) or self._failure_seen:
            return False
        self._failure_seen = True
        self.log.info(
            "AIHC job %s is fault-tolerant and reads %s; confirming on the next poll",
            self.job_id,
            job.status,
        )
        return True

    def _until_deadline(self, delay: float, deadline: float | None) -> float:
        if deadline is None:
            return delay
        return max(0.0, min(delay, deadline - self.clock()))

    def expire(self, waited: float, stop: bool) -> Flow[JobEvent]:
        """The ``timeout`` event after ``waited`` seconds; the job is stopped first when
        ``stop``."""
        stopped = False
        if stop:
            answer = yield StopJob(self.job_id, self.pool, queue_id=self.queue_id)
            if isinstance(answer, AIHCError):
                self.log.error(
                    "Could not stop AIHC job %s at its deadline (%s); stop it by hand",
                    self.job_id,
                    answer,
                )
            else:
                stopped = True
                self.log.info("Stopped AIHC job %s: its deadline passed", self.job_id)
        error = AIHCJobTimeoutError(self.job_id, waited, stopped)
        return JobEvent(
            "timeout",
            self.job_id,
            self.tracker.status,
            str(error),
            waited_seconds=waited,
            stopped=stopped,
        )


def error_backoff(poll_interval: float, errors: int, last_error: AIHCError | None) -> float:
    """The pause before the next poll after ``errors`` failed polls in a row: doubling from
    ``poll_interval`` up to :data:`MAX_ERROR_BACKOFF_SECONDS` (or ``poll_interval`` when
    longer), and never shorter than a 429's ``Retry-After`` (within that ceiling)."""
    if not errors:
        return poll_interval
    ceiling = max(poll_interval, MAX_ERROR_BACKOFF_SECONDS)
    delay = min(poll_interval * 2.0 ** min(errors - 1, MAX_BACKOFF_DOUBLINGS), ceiling)
    if isinstance(last_error, AIHCThrottledError) and last_error.retry_after is not None:
        delay = max(delay, min(last_error.retry_after, ceiling))
    return delay


def first_poll_delay(job_id: str, poll_interval: float) -> float:
    """A delay in ``[0, poll_interval)`` fixed by the job id, so that many triggers that
    start together (a triggerer restart, a wide sweep) do not all poll at once."""
    return poll_interval * (zlib.crc32(job_id.encode()) / 2**32)


def wait_for_job(
    hook: AIHCHook,
    job_id: str,
    resource_pool_id: str | None,
    *,
    poll_interval: float,
    deadline: float | None,
    stop_on_timeout: bool,
    stream_logs: bool,
    log: Log,
    queue_timeout: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    queue_id: str | None = None,
) -> JobEvent:
    """Poll a job in this process until it ends or ``deadline`` passes (see
    :meth:`JobWatch.wait`); status changes and, with ``stream_logs``, new log lines go to
    ``log``."""
    watch = JobWatch(
        job_id,
        resource_pool_id,
        log,
        stream_logs=stream_logs,
        queue_timeout=queue_timeout,
        clock=clock,
        queue_id=queue_id,
    )
    flow = watch.wait(
        poll_interval=poll_interval, deadline=deadline, stop_on_timeout=stop_on_timeout
    )
    return drive(flow, hook, sleep)
