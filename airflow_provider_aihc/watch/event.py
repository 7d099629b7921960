"""The one event shape of a watch, and what a task does with it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from airflow_provider_aihc.exceptions import (
    AIHCError,
    AIHCJobFailedError,
    AIHCJobTimeoutError,
    AIHCQueueTimeoutError,
    AIHCWatchRefusedError,
)
from airflow_provider_aihc.watch.flow import Flow, GetJobEvents, Log, adrive, drive

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobBrief, JobEvents, JobInfo

EventStatus = Literal["success", "failed", "timeout", "error"]
EVENT_STATUSES: tuple[str, ...] = get_args(EventStatus)


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
    :param retryable: for ``error``, whether a retry of the task may do better; ``False``
        when AIHC refused for a reason no retry changes (a 400, 401/403, or a 404: the job
        does not exist or was deleted).  An event without it (an older trigger's) is
        retryable, as every ``error`` was.
    :param queued: for ``timeout``, the job waited for resources past ``queue_timeout``
        (``message`` names the pool, queue, wait, last status and latest events).
    :param job_queue: the queue the job was watched in (the trigger's ``job_queue``), so
        that the resumed task addresses the job there too; ``None``: not known (an older
        trigger's event, or a job whose queue was not given).
    """

    status: EventStatus
    job_id: str
    job_status: str | None
    message: str
    reason: str | None = None
    waited_seconds: float | None = None
    stopped: bool = False
    retryable: bool = True
    queued: bool = False
    job_queue: str | None = None

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
            retryable=cast(bool, value["retryable"]),
            queued=cast(bool, value["queued"]),
            job_queue=cast("str | None", value["job_queue"]),
        )

    @classmethod
    def from_job(cls, hook: AIHCHook, job: JobInfo) -> JobEvent:
        """The event of a job that has already ended (looks up a failure's reason).

        :raises AIHCError: the job has not ended.
        """
        pool, queue = job.resource_pool_id or None, job.queue or None
        return drive(final_event(job.job_id, job, pool, queue), hook)

    @classmethod
    async def afrom_job(cls, hook: AIHCHook, job: JobInfo) -> JobEvent:
        """Async :meth:`from_job`."""
        pool, queue = job.resource_pool_id or None, job.queue or None
        return await adrive(final_event(job.job_id, job, pool, queue), hook)


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
    ("retryable", "true or false", lambda v: isinstance(v, bool)),
    ("queued", "true or false", lambda v: isinstance(v, bool)),
    ("job_queue", "a string or null", _is_optional_text),
)
#: Fields an older trigger may leave out.
_DEFAULTS: dict[str, object] = {
    "reason": None,
    "waited_seconds": None,
    "stopped": False,
    "retryable": True,
    "queued": False,
    "job_queue": None,
}


def complete(event: JobEvent, log: Log) -> str:
    """Act on how a watch ended: the job id on success, else the matching exception.

    :raises AIHCJobFailedError: the job failed or was stopped (its reason in the text).
    :raises AIHCJobTimeoutError: the deadline passed.
    :raises AIHCQueueTimeoutError: the job waited for resources past ``queue_timeout``.
    :raises AIHCWatchRefusedError: the job could not be watched for a reason no retry
        changes (the task fails without its retries).
    :raises AIHCError: the job could not be watched.
    """
    if event.status == "success":
        log.info("%s", event.message)
        return event.job_id
    if event.status == "failed":
        raise AIHCJobFailedError(event.job_id, event.job_status or "unknown", event.reason)
    if event.status == "timeout" and event.queued:
        waited = event.waited_seconds or 0.0
        raise AIHCQueueTimeoutError(event.job_id, waited, event.stopped, event.message)
    if event.status == "timeout":
        raise AIHCJobTimeoutError(event.job_id, event.waited_seconds or 0.0, event.stopped)
    if not event.retryable:
        raise AIHCWatchRefusedError(event.job_id, event.message)
    raise AIHCError(event.message)


def final_event(
    job_id: str, job: JobInfo | JobBrief, pool: str | None, queue_id: str | None = None
) -> Flow[JobEvent]:
    """The event of an ended job; a failure's reason is the pods', else the latest Warning
    event's message (read in the job's queue, ``queue_id``)."""
    if not job.is_terminal:
        raise AIHCError(f"AIHC job {job_id} has not ended; it is {job.status or '<empty>'}")
    if job.is_successful:
        return JobEvent("success", job_id, job.status, f"AIHC job {job_id} succeeded")
    reason = job.failure_reason
    if reason is None:
        framework = job.job_framework or "PyTorchJob"
        events = yield GetJobEvents(job_id, pool, framework, queue_id=queue_id)
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
