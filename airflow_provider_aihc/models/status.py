"""AIHC training-job statuses and the predicates every waiter uses.

Stdlib only (no pydantic): the trigger, the sensor and the operator import this module
cheaply.  This is the one place that knows which statuses end a job; everything else calls
:func:`is_terminal` and :func:`is_successful`.

Status strings: docs/fidelity.md ("Not verified").  Only ``Created``, ``Scheduled``, ``Running``,
``Succeeded`` and ``ManualTermination`` appear verbatim in official material; the rest come
from a third-party list.  A status AIHC adds later, or an empty one, is treated as
non-terminal, so callers must bound every wait with a timeout.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "FAILURE_STATUSES",
    "NOT_STARTED_STATUSES",
    "SUCCESS_STATUSES",
    "TERMINAL_STATUSES",
    "JobStatus",
    "is_failed",
    "is_started",
    "is_successful",
    "is_terminal",
    "parse_status",
]


class JobStatus(StrEnum):
    """A training job's ``status``, as the v1 API spells it."""

    CREATED = "Created"
    """Queued; the priority can still be changed."""
    SCHEDULED = "Scheduled"
    """Pods are placed and pulling images."""
    RUNNING = "Running"
    """Pods are running."""
    STARTING = "Starting"
    """Pods are starting (third-party list)."""
    RESTARTING = "Restarting"
    """Pods are being restarted, e.g. by fault tolerance (third-party list)."""
    ABNORMAL = "Abnormal"
    """At least one instance failed; the job is still active (third-party list)."""
    STOPPING = "Stopping"
    """A stop was requested and is in progress (third-party list)."""
    SUCCEEDED = "Succeeded"
    """Finished successfully (terminal)."""
    FAILED = "Failed"
    """Finished with an error (terminal)."""
    STOPPED = "Stopped"
    """Stopped (terminal; third-party list)."""
    MANUAL_TERMINATION = "ManualTermination"
    """Stopped by a user (terminal)."""


TERMINAL_STATUSES: frozenset[JobStatus] = frozenset(
    {
        JobStatus.SUCCEEDED,
        JobStatus.FAILED,
        JobStatus.STOPPED,
        JobStatus.MANUAL_TERMINATION,
    }
)
"""Statuses after which a job never changes again."""

SUCCESS_STATUSES: frozenset[JobStatus] = frozenset({JobStatus.SUCCEEDED})
"""Terminal statuses that count as success."""

FAILURE_STATUSES: frozenset[JobStatus] = TERMINAL_STATUSES - SUCCESS_STATUSES
"""Terminal statuses that count as failure (including a user's stop)."""

NOT_STARTED_STATUSES: frozenset[JobStatus] = frozenset({JobStatus.CREATED, JobStatus.SCHEDULED})
"""Queued or pulling images: no container has started, so there are no logs yet."""

_BY_LOWER: dict[str, JobStatus] = {status.value.lower(): status for status in JobStatus}


def parse_status(status: str | None) -> JobStatus | None:
    """Return the :class:`JobStatus` for a raw status string, or ``None`` when unknown.

    Matching ignores case and surrounding blanks, so ``"succeeded"`` is ``SUCCEEDED``.

    :param status: the ``status`` field of a job, as AIHC sent it; may be ``None`` or empty.
    """
    if not isinstance(status, str):
        return None
    return _BY_LOWER.get(status.strip().lower())


def is_terminal(status: str | None) -> bool:
    """Whether a job in this status has ended (succeeded, failed or was stopped).

    Unknown or empty statuses are not terminal.

    :param status: a raw status string or a :class:`JobStatus`.
    """
    return parse_status(status) in TERMINAL_STATUSES


def is_successful(status: str | None) -> bool:
    """Whether a job in this status ended successfully.

    :param status: a raw status string or a :class:`JobStatus`.
    """
    return parse_status(status) in SUCCESS_STATUSES


def is_failed(status: str | None) -> bool:
    """Whether a job in this status ended without succeeding (failed or stopped).

    :param status: a raw status string or a :class:`JobStatus`.
    """
    return parse_status(status) in FAILURE_STATUSES


def is_started(status: str | None) -> bool:
    """Whether the job's containers may have started (and written logs).

    Unknown statuses count as started, so nothing a new status brings is missed.

    :param status: a raw status string or a :class:`JobStatus`.
    """
    return parse_status(status) not in NOT_STARTED_STATUSES
