"""Watching an AIHC job until it ends: the one event shape, one poll loop, live logs.

AIHC actions used: GetJob (status and pods), GetPodLogs (new lines, from a marker),
GetJobEvents (a failed job's reason when its pods give none) and StopJob (at a deadline).

The watch is written once, as generators that *yield* each call they need (:class:`GetJobBrief`,
:class:`GetPodLogs`, ..., :class:`Sleep`) and are sent back its answer, or the
:class:`~airflow_provider_aihc.exceptions.AIHCError` it raised.  :func:`drive` runs such a
flow with the hook's sync methods (operator, sensor), :func:`adrive` with its async ones
(trigger), so every decision (what a status means, which errors to wait through, which log
lines are new) exists once and only the send is twinned, like httpx's ``auth_flow``.
"""

from airflow_provider_aihc.watch.event import (
    EVENT_STATUSES,
    EventStatus,
    JobEvent,
    complete,
    final_event,
    latest_warning,
)
from airflow_provider_aihc.watch.flow import (
    Call,
    Flow,
    GetJobBrief,
    GetJobEvents,
    GetPodLogs,
    Log,
    Sleep,
    StopJob,
    adrive,
    drive,
)
from airflow_provider_aihc.watch.job import (
    MAX_ERROR_BACKOFF_SECONDS,
    JobWatch,
    StatusTracker,
    first_poll_delay,
    wait_for_job,
)
from airflow_provider_aihc.watch.logs import DEFAULT_LOG_LINES_PER_POLL, LogStreamer, split_lines

__all__ = [
    "DEFAULT_LOG_LINES_PER_POLL",
    "EVENT_STATUSES",
    "MAX_ERROR_BACKOFF_SECONDS",
    "Call",
    "EventStatus",
    "Flow",
    "GetJobBrief",
    "GetJobEvents",
    "GetPodLogs",
    "JobEvent",
    "JobWatch",
    "Log",
    "LogStreamer",
    "Sleep",
    "StatusTracker",
    "StopJob",
    "adrive",
    "complete",
    "drive",
    "final_event",
    "first_poll_delay",
    "latest_warning",
    "split_lines",
    "wait_for_job",
]
