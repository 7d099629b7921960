"""The triggerer's side of a wait: a :class:`~.job.JobWatch` fed by its pool's watcher.

The status readings come from :mod:`.watcher` (one ListJobs round per interval for every
trigger of the pool); what a reading means (status log, live logs, the event, the
fault-tolerance confirmation, the deadline) is :class:`~.job.JobWatch`'s, shared with the
worker-side poll.  The trigger itself sends only what the list cannot give: a GetJob for
the pods (pod names for live logs, a failed job's reasons), its log reads, and the
events or stop at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from airflow_provider_aihc.exceptions import AIHCError
from airflow_provider_aihc.models.status import is_started
from airflow_provider_aihc.watch.event import JobEvent
from airflow_provider_aihc.watch.flow import adrive
from airflow_provider_aihc.watch.watcher import subscribe

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobBrief
    from airflow_provider_aihc.watch.job import JobWatch
    from airflow_provider_aihc.watch.watcher import Reading

#: Triggers that start together (a triggerer start) join their watcher spread over this
#: many seconds at most (a delay fixed by the job id), not all in one turn of the loop.
JOIN_SPREAD_SECONDS = 1.0


async def follow_job(
    hook: AIHCHook,
    watch: JobWatch,
    *,
    poll_interval: float,
    deadline: float | None,
    stop_on_timeout: bool,
    clock: Callable[[], float] = time.time,
) -> JobEvent:
    """Wait for the job of ``watch`` through its pool's watcher until it ends or
    ``deadline`` (epoch seconds) passes; the same events as :meth:`.JobWatch.wait`.

    With live logs, new lines are read every ``poll_interval`` while the job runs, and on
    every status change; status changes never wait for that interval.
    """
    if poll_interval <= 0:
        raise AIHCError(f"poll_interval must be positive, got {poll_interval!r}")
    started = clock()
    try:
        pool = await hook.aresource_pool(watch.pool)
    except AIHCError as err:  # no pool anywhere: the same event a failed GetJob gives
        return await _event_of(watch, err, hook)
    subscription = subscribe(hook, pool, watch.job_id, poll_interval, watch.queue_id)
    try:
        while True:
            # Awaited here, not in a helper coroutine: a trigger at rest holds this
            # coroutine and the subscription's wait, nothing more (issue #37).
            reading = await subscription.next(
                fresh=watch.awaiting_confirmation,
                at_most=_wait_bound(watch, poll_interval, deadline, clock),
            )
            event = await _act_on(reading, watch, hook)
            if event is not None:
                return event
            if deadline is not None and clock() >= deadline:
                return await adrive(watch.expire(clock() - started, stop_on_timeout), hook)
    finally:
        subscription.close()


def _wait_bound(
    watch: JobWatch, poll_interval: float, deadline: float | None, clock: Callable[[], float]
) -> float | None:
    """How long the next wait for a reading may last: until the next log read, the
    deadline or the end of the queue's patience; ``None``: until the next reading."""
    streaming = watch.stream_logs and is_started(watch.tracker.status or "")
    timeout = poll_interval if streaming else None
    queue_left = watch.queue.seconds_left()
    if queue_left is not None and watch.errors:  # its fresh read failed: back off first
        queue_left = max(queue_left, watch.next_delay(poll_interval))
    for left in (None if deadline is None else deadline - clock(), queue_left):
        if left is not None:
            timeout = max(0.0, left) if timeout is None else min(timeout, max(0.0, left))
    return timeout


async def _act_on(reading: Reading | None, watch: JobWatch, hook: AIHCHook) -> JobEvent | None:
    """Act on what the wait gave: a reading, or ``None`` (the log interval, the deadline
    or the queue's patience came first)."""
    if reading is None:  # nothing new: the log interval, the deadline or the queue's
        if watch.queue.expired:  # waiting for resources, as last read: read it afresh
            try:
                fresh: JobBrief | AIHCError = await hook.aget_job_brief(
                    watch.job_id, watch.pool, queue_id=watch.queue_id
                )
            except AIHCError as err:
                fresh = err
            return await adrive(watch.read(fresh), hook)
        await adrive(watch.read_logs(), hook)
        return None
    return await adrive(watch.read(await _with_pods(reading, watch, hook)), hook)


async def _with_pods(reading: Reading, watch: JobWatch, hook: AIHCHook) -> JobBrief | AIHCError:
    """A list item carries no pods: read them (one GetJob) when the watch needs them, for
    a failed job's reasons or the pod names of live logs."""
    if isinstance(reading, AIHCError) or reading.pod_list is not None:
        return reading
    failed = reading.is_terminal and not reading.is_successful
    logs_wanted = watch.stream_logs and is_started(reading.status) and not watch.pod_names
    if not (failed or logs_wanted):
        return reading
    try:
        return await hook.aget_job_brief(watch.job_id, watch.pool, queue_id=watch.queue_id)
    except AIHCError:  # the list's reading stands; the pods are read on the next change
        return reading


async def _event_of(watch: JobWatch, error: AIHCError, hook: AIHCHook) -> JobEvent:
    event = await adrive(watch.read(error), hook)
    return event or JobEvent("error", watch.job_id, None, f"{error}")
