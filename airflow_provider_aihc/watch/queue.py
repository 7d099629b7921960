"""``queue_timeout``: how long a job may wait for resources before the wait stops it.

Counted from the job's ``createdAt`` (so a rescheduled sensor, a deferred wait and a
trigger that took over all count the same wait), while AIHC reports it ``Created`` or
``Scheduled``; once it has been seen in any other status it is never stopped for it.
Separate from ``timeout`` and ``execution_timeout``, which bound the whole wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.exceptions import AIHCError, AIHCQueueTimeoutError
from airflow_provider_aihc.models.status import NOT_STARTED_STATUSES, parse_status
from airflow_provider_aihc.watch.event import JobEvent
from airflow_provider_aihc.watch.flow import Flow, GetJobEvents, Log, StopJob

if TYPE_CHECKING:
    from airflow_provider_aihc.models.job import JobBrief, JobEvents

#: Events named in the message of a job stopped for its time in the queue.
LATEST_EVENTS = 3


class QueueClock:
    """The time one job has waited for resources, against its ``queue_timeout``.

    :param job_id: the job.
    :param pool: its pool.
    :param queue_timeout: seconds it may wait; ``None``: no limit (the clock is idle).
    :param clock: epoch seconds.
    """

    __slots__ = ("clock", "framework", "job_id", "pool", "pool_name", "queue", "queue_id",
                 "since", "started", "status", "timeout")  # fmt: skip

    def __init__(
        self,
        job_id: str,
        pool: str | None,
        queue_timeout: float | None,
        clock: Callable[[], float],
        queue_id: str | None = None,
    ) -> None:
        self.job_id = job_id
        self.pool = pool
        self.queue_id = queue_id
        self.timeout = None if queue_timeout is None else float(queue_timeout)
        self.clock = clock
        self.since: float | None = None
        self.status = ""
        self.queue = ""
        self.pool_name = pool or ""
        self.framework = "PyTorchJob"
        self.started = False

    def observe(self, job: JobBrief) -> None:
        """Note one reading of the job."""
        if self.timeout is None:
            return
        self.status = job.status
        self.queue = job.queue or self.queue
        self.pool_name = job.resource_pool_id or self.pool_name
        self.framework = job.job_framework or self.framework
        if parse_status(job.status) not in NOT_STARTED_STATUSES:
            self.started = self.started or bool(job.status)
        if job.created_at is not None:
            self.since = job.created_at.timestamp()
        elif self.since is None:
            self.since = self.clock()

    @property
    def waiting(self) -> bool:
        """Whether the job is (as last read) waiting for resources and has never run."""
        return (
            self.timeout is not None
            and self.since is not None
            and not self.started
            and parse_status(self.status) in NOT_STARTED_STATUSES
        )

    @property
    def expired(self) -> bool:
        """Whether it has waited longer than ``queue_timeout``."""
        left = self.seconds_left()
        return left is not None and left <= 0

    def seconds_left(self) -> float | None:
        """Seconds until ``queue_timeout`` (never below 0); ``None`` when not waiting."""
        if not self.waiting or self.timeout is None or self.since is None:
            return None
        return max(0.0, self.since + self.timeout - self.clock())

    def expire(self, log: Log) -> Flow[JobEvent]:
        """Stop the job, read its latest events, and end the wait with the ``timeout``
        event whose message names the pool, queue, wait, last status and events."""
        waited = self.clock() - (self.since or self.clock())
        events = yield GetJobEvents(
            self.job_id, self.pool, self.framework, queue_id=self.queue_id
        )  # before the stop's
        latest = "none" if isinstance(events, AIHCError) else latest_events(events)
        answer = yield StopJob(self.job_id, self.pool, queue_id=self.queue_id)
        stopped = not isinstance(answer, AIHCError)
        if stopped:
            log.info("Stopped AIHC job %s: it waited %.0f s for resources", self.job_id, waited)
        else:
            log.error("Could not stop AIHC job %s (%s); stop it by hand", self.job_id, answer)
        action = "it was stopped" if stopped else "it could not be stopped and may still start"
        message = (
            f"AIHC job {self.job_id} waited {waited:.0f} s for resources in pool "
            f"{self.pool_name or '<connection default>'}, queue {self.queue or '<unknown>'}, "
            f"longer than queue_timeout={self.timeout:.0f} s; last status "
            f"{self.status or '<empty>'}; latest events: {latest}; {action}"
        )
        error = AIHCQueueTimeoutError(self.job_id, waited, stopped, message)
        return JobEvent(
            "timeout",
            self.job_id,
            self.status,
            str(error),
            waited_seconds=waited,
            stopped=stopped,
            queued=True,
        )


def latest_events(events: JobEvents, count: int = LATEST_EVENTS) -> str:
    """The newest ``count`` events as ``type reason: message``, newest last."""

    def when(item: tuple[int, Any]) -> tuple[float, int]:
        moment = item[1].last_timestamp or item[1].first_timestamp
        return (moment.timestamp() if moment else float("-inf"), item[0])

    dated = sorted(enumerate(events.events), key=when)
    picked = [event for _, event in dated][-count:]
    if not picked:
        return "none"
    return "; ".join(f"{e.type} {e.reason}: {e.message.strip()}" for e in picked)


#: The clock of every watch without a ``queue_timeout``: idle (it notes nothing, never
#: expires), so one serves them all instead of one per deferred job.
NO_QUEUE_TIMEOUT = QueueClock("", None, None, time.time)
