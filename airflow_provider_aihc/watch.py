"""Watching an AIHC job until it ends: the one event shape, one poll loop, live logs.

AIHC actions used: GetJob (status and pods), GetPodLogs (new lines, from a marker),
GetJobEvents (a failed job's reason when its pods give none) and StopJob (at a deadline).

The watch is written once, as generators that *yield* each call they need (:class:`GetJob`,
:class:`GetPodLogs`, ..., :class:`Sleep`) and are sent back its answer, or the
:class:`~airflow_provider_aihc.exceptions.AIHCError` it raised.  :func:`drive` runs such a
flow with the hook's sync methods (operator, sensor), :func:`adrive` with its async ones
(trigger), so every decision (what a status means, which errors to wait through, which log
lines are new) exists once and only the send is twinned, like httpx's ``auth_flow``.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast, get_args

from airflow_provider_aihc.exceptions import (
    AIHCError,
    AIHCJobFailedError,
    AIHCJobTimeoutError,
    AIHCResponseError,
    AIHCThrottledError,
)
from airflow_provider_aihc.hooks._base import is_retryable
from airflow_provider_aihc.models.status import is_failed, is_started, parse_status

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobEvents, JobInfo, PodLogs

__all__ = [
    "DEFAULT_LOG_LINES_PER_POLL",
    "JobEvent",
    "JobWatch",
    "LogStreamer",
    "adrive",
    "complete",
    "drive",
    "first_poll_delay",
    "wait_for_job",
]

T = TypeVar("T")
EventStatus = Literal["success", "failed", "timeout", "error"]
EVENT_STATUSES: tuple[str, ...] = get_args(EventStatus)
#: Log lines copied into the task log per poll, over all pods of a job.
DEFAULT_LOG_LINES_PER_POLL = 500
#: Lines asked for per pod and poll, as a multiple of the copy cap (bounds one answer).
FETCH_FACTOR = 10
#: The longest wait between polls while AIHC keeps failing (unless the poll interval is longer).
MAX_ERROR_BACKOFF_SECONDS = 120.0
#: A pod whose server sent no log marker: the value is how many lines were already copied.
COUNTED = "#lines="
#: A pod whose server stopped sending markers: its log is no longer copied.
GIVEN_UP = "#off"


class Log(Protocol):
    """What the watch logs to: a ``logging.Logger`` or Airflow 3's structlog logger."""

    def debug(self, msg: Any, /, *args: Any) -> Any: ...
    def info(self, msg: Any, /, *args: Any) -> Any: ...
    def warning(self, msg: Any, /, *args: Any) -> Any: ...
    def error(self, msg: Any, /, *args: Any) -> Any: ...


# -- the event ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JobEvent:
    """How a watch ended; the trigger's event payload and what :func:`complete` acts on.

    :param status: ``success``, ``failed`` (the job ended otherwise), ``timeout`` (the
        deadline passed) or ``error`` (the job could not be watched, e.g. it was deleted).
    :param job_id: the job.
    :param job_status: its last known AIHC status, if any.
    :param message: one line for the task log and the exception.
    :param reason: the job's own failure reason, when AIHC gave one.
    :param waited_seconds: for ``timeout``, how long the wait lasted.
    :param stopped: for ``timeout``, whether the job was stopped.
    """

    status: EventStatus
    job_id: str
    job_status: str | None
    message: str
    reason: str | None = None
    waited_seconds: float | None = None
    stopped: bool = False

    def to_payload(self) -> dict[str, Any]:
        """Plain JSON values, for ``TriggerEvent``."""
        return asdict(self)

    @classmethod
    def from_payload(cls, payload: object) -> JobEvent:
        """Validate a trigger event's payload; unknown keys are ignored (newer triggers).

        :raises AIHCError: naming every field that is missing or of the wrong type.
        """
        if not isinstance(payload, Mapping):
            raise AIHCError(f"Malformed AIHC job event: expected a mapping, got {payload!r}")
        problems = [
            f"{key} must be {what}, got {payload.get(key, '<missing>')!r}"
            for key, what, valid in _PAYLOAD_RULES
            if not valid(payload.get(key, _DEFAULTS.get(key)))
        ]
        if problems:
            raise AIHCError(f"Malformed AIHC job event ({'; '.join(problems)}): {dict(payload)!r}")
        value = {key: payload.get(key, _DEFAULTS.get(key)) for key, _, _ in _PAYLOAD_RULES}
        waited = value["waited_seconds"]
        return cls(
            status=cast(EventStatus, value["status"]),
            job_id=cast(str, value["job_id"]),
            job_status=cast("str | None", value["job_status"]),
            message=cast(str, value["message"]),
            reason=cast("str | None", value["reason"]),
            waited_seconds=None if waited is None else float(cast(float, waited)),
            stopped=cast(bool, value["stopped"]),
        )

    @classmethod
    def from_job(cls, hook: AIHCHook, job: JobInfo) -> JobEvent:
        """The event of a job that has already ended (looks up a failure's reason).

        :raises AIHCError: the job has not ended.
        """
        return drive(final_event(job.job_id, job, job.resource_pool_id or None), hook)

    @classmethod
    async def afrom_job(cls, hook: AIHCHook, job: JobInfo) -> JobEvent:
        """Async :meth:`from_job`."""
        return await adrive(final_event(job.job_id, job, job.resource_pool_id or None), hook)


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_optional_text(value: object) -> bool:
    return value is None or isinstance(value, str)


def _is_optional_number(value: object) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


_PAYLOAD_RULES: tuple[tuple[str, str, Callable[[object], bool]], ...] = (
    ("status", f"one of {', '.join(EVENT_STATUSES)}", lambda v: v in EVENT_STATUSES),
    ("job_id", "a non-empty string", lambda v: isinstance(v, str) and bool(v)),
    ("job_status", "a string or null", _is_optional_text),
    ("message", "a string", _is_text),
    ("reason", "a string or null", _is_optional_text),
    ("waited_seconds", "a number or null", _is_optional_number),
    ("stopped", "true or false", lambda v: isinstance(v, bool)),
)
#: Fields an older trigger may leave out.
_DEFAULTS: dict[str, object] = {"reason": None, "waited_seconds": None, "stopped": False}


def complete(event: JobEvent, log: Log) -> str:
    """Act on how a watch ended: the job id on success, else the matching exception.

    :raises AIHCJobFailedError: the job failed or was stopped (its reason in the text).
    :raises AIHCJobTimeoutError: the deadline passed.
    :raises AIHCError: the job could not be watched.
    """
    if event.status == "success":
        log.info("%s", event.message)
        return event.job_id
    if event.status == "failed":
        raise AIHCJobFailedError(event.job_id, event.job_status or "unknown", event.reason)
    if event.status == "timeout":
        raise AIHCJobTimeoutError(event.job_id, event.waited_seconds or 0.0, event.stopped)
    raise AIHCError(event.message)


# -- the calls a flow yields, and the two drivers ------------------------------------------


@dataclass(frozen=True, slots=True)
class GetJob:
    """GetJob: status and pods."""

    job_id: str
    pool: str | None

    def send(self, hook: AIHCHook) -> JobInfo:
        return hook.get_job(self.job_id, self.pool)

    async def asend(self, hook: AIHCHook) -> JobInfo:
        return await hook.aget_job(self.job_id, self.pool)


@dataclass(frozen=True, slots=True)
class GetPodLogs:
    """GetPodLogs: ``marker=None`` reads the tail, ``""`` the log from its first line."""

    job_id: str
    pod: str
    pool: str | None
    marker: str | None
    max_lines: int | None

    def send(self, hook: AIHCHook) -> PodLogs:
        return hook.get_pod_logs(
            self.job_id, self.pod, self.pool, marker=self.marker, max_lines=self.max_lines
        )

    async def asend(self, hook: AIHCHook) -> PodLogs:
        return await hook.aget_pod_logs(
            self.job_id, self.pod, self.pool, marker=self.marker, max_lines=self.max_lines
        )


@dataclass(frozen=True, slots=True)
class GetJobEvents:
    """GetJobEvents: where a failed job's reason is when its pods give none."""

    job_id: str
    pool: str | None
    job_framework: str

    def send(self, hook: AIHCHook) -> JobEvents:
        return hook.get_job_events(self.job_id, self.pool, job_framework=self.job_framework)

    async def asend(self, hook: AIHCHook) -> JobEvents:
        return await hook.aget_job_events(self.job_id, self.pool, job_framework=self.job_framework)


@dataclass(frozen=True, slots=True)
class StopJob:
    """StopJob."""

    job_id: str
    pool: str | None

    def send(self, hook: AIHCHook) -> object:
        return hook.stop_job(self.job_id, self.pool)

    async def asend(self, hook: AIHCHook) -> object:
        return await hook.astop_job(self.job_id, self.pool)


@dataclass(frozen=True, slots=True)
class Sleep:
    """A pause between polls."""

    seconds: float


Call = GetJob | GetPodLogs | GetJobEvents | StopJob
#: A watch step: yields calls and pauses, is sent each call's answer (or its AIHCError).
Flow = Generator[Call | Sleep, Any, T]


def drive(flow: Flow[T], hook: AIHCHook, sleep: Callable[[float], None] = time.sleep) -> T:
    """Run a flow with the hook's sync methods."""
    answer: Any = None
    while True:
        try:
            step = flow.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result
        if isinstance(step, Sleep):
            sleep(step.seconds)
            answer = None
            continue
        try:
            answer = step.send(hook)
        except AIHCError as err:
            answer = err


async def adrive(
    flow: Flow[T],
    hook: AIHCHook,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Run a flow with the hook's async methods."""
    answer: Any = None
    while True:
        try:
            step = flow.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result
        if isinstance(step, Sleep):
            await sleep(step.seconds)
            answer = None
            continue
        try:
            answer = await step.asend(hook)
        except AIHCError as err:
            answer = err


# -- status ---------------------------------------------------------------------------------


class StatusTracker:
    """Logs a job's status when it changes, and an unknown status once."""

    def __init__(self, job_id: str, log: Log, clock: Callable[[], float]) -> None:
        self.job_id = job_id
        self.log = log
        self.clock = clock
        self.status: str | None = None
        self.since = 0.0
        self._unknown: set[str] = set()

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
        if parse_status(status) is None and status not in self._unknown:
            self._unknown.add(status)
            self.log.warning(
                "AIHC job %s reports status %r, which this provider does not know; "
                "waiting on it as if the job were still active",
                self.job_id,
                status,
            )


# -- logs -----------------------------------------------------------------------------------


class LogStreamer:
    """Copies a job's new log lines into the task log, each line once.

    Keeps, per pod, AIHC's ``nextMarker`` (:attr:`state`, plain strings, so a trigger can
    carry on where the worker stopped).  Per poll at most ``max_lines`` lines are copied
    over all pods; a pod with more new lines shows its newest ones after a "… N more lines
    not shown" line, and the next poll continues after them.  A server that sends no marker
    is read whole and the lines already copied are skipped.

    :param job_id: the job.
    :param pool: its pool.
    :param log: where the lines go (``info``, one call per line).
    :param max_lines: lines copied per poll, over all pods.
    :param state: the :attr:`state` of an earlier streamer of this job.
    """

    def __init__(
        self,
        job_id: str,
        pool: str | None,
        log: Log,
        *,
        max_lines: int = DEFAULT_LOG_LINES_PER_POLL,
        state: Mapping[str, str] | None = None,
    ) -> None:
        self.job_id = job_id
        self.pool = pool
        self.log = log
        self.max_lines = max(1, max_lines)
        self.markers: dict[str, str] = dict(state or {})
        self._failing: set[str] = set()

    @property
    def state(self) -> dict[str, str]:
        """Pod name → where its next read starts."""
        return dict(self.markers)

    def poll(self, hook: AIHCHook, pod_names: Sequence[str]) -> None:
        """Copy the new lines of every pod (sync)."""
        drive(self.flow(pod_names), hook)

    async def apoll(self, hook: AIHCHook, pod_names: Sequence[str]) -> None:
        """Copy the new lines of every pod (async)."""
        await adrive(self.flow(pod_names), hook)

    def flow(self, pod_names: Sequence[str]) -> Flow[None]:
        """Read each pod on from its marker and copy what is new."""
        share = _share(self.max_lines, pod_names)
        for pod in pod_names:
            marker = self.markers.get(pod, "")
            if marker == GIVEN_UP:
                continue
            counted = marker.startswith(COUNTED)
            page = yield GetPodLogs(
                self.job_id,
                pod,
                self.pool,
                marker=None if counted else marker,
                max_lines=None if counted else self.max_lines * FETCH_FACTOR,
            )
            if isinstance(page, AIHCError):
                self._failed(pod, page)
                continue
            self._failing.discard(pod)
            lines = split_lines(page.logs)
            if counted:
                seen = int(marker[len(COUNTED) :])
                lines, self.markers[pod] = lines[seen:], f"{COUNTED}{max(seen, len(lines))}"
            elif page.next_marker:
                self.markers[pod] = page.next_marker
            elif not marker:
                self.markers[pod] = f"{COUNTED}{len(lines)}"
            else:  # a marker before, none now: cannot tell new lines from old any more
                self.log.warning("AIHC sent no log marker for pod %s; not copying its log", pod)
                self.markers[pod] = GIVEN_UP
            self._emit(pod, lines, share, many=len(pod_names) > 1)

    def tail_flow(self, pod_names: Sequence[str]) -> Flow[None]:
        """Copy the newest lines of every pod once (for a watch that keeps no state)."""
        share = _share(self.max_lines, pod_names)
        for pod in pod_names:
            page = yield GetPodLogs(self.job_id, pod, self.pool, marker=None, max_lines=share)
            if isinstance(page, AIHCError):
                self._failed(pod, page)
                continue
            lines = split_lines(page.logs)
            if len(lines) >= share:
                self.log.info("AIHC job %s, pod %s: the last %d lines", self.job_id, pod, share)
            self._emit(pod, lines, share, many=len(pod_names) > 1)

    def _emit(self, pod: str, lines: list[str], share: int, *, many: bool) -> None:
        if len(lines) > share:
            self.log.info(
                "AIHC job %s, pod %s: … %d more lines not shown (at most %d per poll); "
                "the newest follow",
                self.job_id,
                pod,
                len(lines) - share,
                self.max_lines,
            )
            lines = lines[-share:]
        for line in lines:
            if many:
                self.log.info("[%s] %s", pod, line)
            else:
                self.log.info("%s", line)

    def _failed(self, pod: str, error: AIHCError) -> None:
        if pod not in self._failing:
            self._failing.add(pod)
            self.log.warning("Could not read the log of AIHC pod %s (%s)", pod, error)


def split_lines(records: Iterable[str]) -> list[str]:
    """The lines of AIHC log records, each of which may hold several (``chunk``)."""
    lines: list[str] = []
    for record in records:
        parts = record.split("\n")
        if parts and parts[-1] == "":
            parts.pop()
        lines.extend(part.removesuffix("\r") for part in parts)
    return lines


def _share(max_lines: int, pod_names: Sequence[str]) -> int:
    return max(1, -(-max_lines // max(1, len(pod_names))))


# -- the watch -------------------------------------------------------------------------------


class JobWatch:
    """One watch of one job: status changes, live logs, errors to wait through.

    Use :meth:`check` for one poll (a sensor's poke) and :meth:`wait` for the loop.

    :param job_id: the job.
    :param resource_pool_id: its pool; ``None`` = the connection's.
    :param log: the task's or trigger's logger.
    :param stream_logs: copy new log lines into ``log`` at every poll.
    :param log_state: the :attr:`log_state` of an earlier watch of this job.
    :param max_log_lines: log lines copied per poll.
    :param clock: epoch seconds (a seam for tests).
    """

    def __init__(
        self,
        job_id: str,
        resource_pool_id: str | None,
        log: Log,
        *,
        stream_logs: bool = True,
        log_state: Mapping[str, str] | None = None,
        max_log_lines: int = DEFAULT_LOG_LINES_PER_POLL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.job_id = job_id
        self.pool = resource_pool_id
        self.log = log
        self.clock = clock
        self.tracker = StatusTracker(job_id, log, clock)
        self.logs = LogStreamer(
            job_id, resource_pool_id, log, max_lines=max_log_lines, state=log_state
        )
        self.stream_logs = stream_logs
        self.pod_names: list[str] = []
        self.errors = 0
        self._last_error: AIHCError | None = None
        self._failure_seen = False

    @property
    def log_state(self) -> dict[str, str]:
        """Where each pod's log was read up to."""
        return self.logs.state

    def check(self) -> Flow[JobEvent | None]:
        """One poll: the status (logged when it changes), new log lines, and the event
        once the job has ended; ``None`` while it runs or while AIHC fails transiently."""
        job = yield GetJob(self.job_id, self.pool)
        if isinstance(job, AIHCError):
            return self._check_failed(job)
        self.errors = 0
        self.pod_names = job.pod_names
        self.tracker.observe(job.status)
        if self.stream_logs and is_started(job.status):
            # A queued job has no logs; not asking saves a request per pod per poll,
            # for as long as a busy queue holds the job.
            yield from self.logs.flow(self.pod_names)
        if not job.is_terminal:
            self._failure_seen = False  # a fault-tolerant job came back: confirm anew
            return None
        if self._unconfirmed_failure(job):
            return None
        return (yield from final_event(self.job_id, job, self.pool))

    def wait(
        self,
        *,
        poll_interval: float,
        deadline: float | None,
        stop_on_timeout: bool,
        first_delay: float = 0.0,
    ) -> Flow[JobEvent]:
        """Poll until the job ends or ``deadline`` (epoch seconds) passes.

        Transient errors (no answer, 5xx, 429, an unreadable answer) are logged and waited
        through with a growing pause; only ``poll_interval`` and ``deadline`` bound the wait.
        At the deadline the job is stopped when ``stop_on_timeout``.
        """
        if poll_interval <= 0:
            raise AIHCError(f"poll_interval must be positive, got {poll_interval!r}")
        started = self.clock()
        delay = first_delay
        while True:
            if delay > 0:
                yield Sleep(self._until_deadline(delay, deadline))
            event = yield from self.check()
            if event is not None:
                return event
            if deadline is not None and self.clock() >= deadline:
                waited = self.clock() - started
                return (yield from self._timeout(waited, stop_on_timeout))
            delay = self.next_delay(poll_interval)

    def next_delay(self, poll_interval: float) -> float:
        """The pause before the next poll: ``poll_interval``, longer while AIHC fails."""
        if not self.errors:
            return poll_interval
        ceiling = max(poll_interval, MAX_ERROR_BACKOFF_SECONDS)
        delay = min(poll_interval * 2.0 ** (self.errors - 1), ceiling)
        error = self._last_error
        if isinstance(error, AIHCThrottledError) and error.retry_after is not None:
            delay = max(delay, min(error.retry_after, ceiling))
        return delay

    def _check_failed(self, error: AIHCError) -> JobEvent | None:
        if not _is_transient(error):
            return JobEvent(
                "error",
                self.job_id,
                self.tracker.status,
                f"Could not watch AIHC job {self.job_id}: {error}",
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

    def _unconfirmed_failure(self, job: JobInfo) -> bool:
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

    def _timeout(self, waited: float, stop: bool) -> Flow[JobEvent]:
        stopped = False
        if stop:
            answer = yield StopJob(self.job_id, self.pool)
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


def final_event(job_id: str, job: JobInfo, pool: str | None) -> Flow[JobEvent]:
    """The event of an ended job; a failure's reason is the pods', else the latest Warning
    event's message."""
    if not job.is_terminal:
        raise AIHCError(f"AIHC job {job_id} has not ended; it is {job.status or '<empty>'}")
    if job.is_successful:
        return JobEvent("success", job_id, job.status, f"AIHC job {job_id} succeeded")
    reason = job.failure_reason
    if reason is None:
        events = yield GetJobEvents(job_id, pool, job.job_framework or "PyTorchJob")
        if not isinstance(events, AIHCError):
            reason = latest_warning(events)
    message = str(AIHCJobFailedError(job_id, job.status, reason))
    return JobEvent("failed", job_id, job.status, message, reason)


def latest_warning(events: JobEvents) -> str | None:
    """The message of the most recent ``Warning`` event, if any."""
    warnings = [
        (event.last_timestamp or event.first_timestamp, index, event.message.strip())
        for index, event in enumerate(events.events)
        if event.type.lower() == "warning" and event.message.strip()
    ]
    if not warnings:
        return None
    dated = [w for w in warnings if w[0] is not None]
    latest = max(dated, key=lambda w: (w[0], w[1])) if dated else warnings[-1]
    return latest[2]


def _is_transient(error: AIHCError) -> bool:
    """No answer, 5xx, 429, or a garbled answer to a read: worth polling again."""
    return is_retryable(error) or isinstance(error, AIHCResponseError)


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
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> JobEvent:
    """Poll a job in this process until it ends or ``deadline`` passes (see
    :meth:`JobWatch.wait`); status changes and, with ``stream_logs``, new log lines go to
    ``log``."""
    watch = JobWatch(job_id, resource_pool_id, log, stream_logs=stream_logs, clock=clock)
    flow = watch.wait(
        poll_interval=poll_interval, deadline=deadline, stop_on_timeout=stop_on_timeout
    )
    return drive(flow, hook, sleep)
