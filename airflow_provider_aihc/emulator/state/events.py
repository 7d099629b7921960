"""A job's and a pod's events, derived from the job's status changes (no wire shape).

A job event is written for every status change; a failure is a ``Warning`` whose message
carries the reason.  A pod's events are Kubernetes-style (``Scheduled``, ``Pulling``,
``Pulled``, ``Created``, ``Started``, ``Failed``, ``Killing``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .jobs import (
    CREATED,
    FAILED,
    MANUAL_TERMINATION,
    RUNNING,
    SCHEDULED,
    STOPPED,
    SUCCEEDED,
    Job,
)
from .pods import NAMESPACE, PodRef, node_name


@dataclass(frozen=True)
class Event:
    """One event: ``kind`` is ``Normal`` or ``Warning``; ``at`` epoch seconds."""

    reason: str
    message: str
    kind: str
    at: float


def job_events(job: Job, start: float | None = None, end: float | None = None) -> list[Event]:
    """One event per status change in ``[start, end]`` (epoch seconds), oldest first."""
    kind = job.request.framework
    events = []
    for status, at, reason in job.history:
        if not _in_window(at, start, end):
            continue
        etype, message = _job_event_text(kind, job.name, status, reason)
        events.append(Event(status, message, etype, at))
    return events


def pod_events(
    job: Job, pod: PodRef, start: float | None = None, end: float | None = None
) -> list[Event]:
    """Kubernetes-style events of one pod, derived from the job's status changes."""
    image = job.request.image
    events: list[Event] = []
    for status, at, reason in job.history:
        if not _in_window(at, start, end):
            continue
        for etype, ereason, message in _pod_event_texts(job, pod, status, reason, image):
            events.append(Event(ereason, message, etype, at))
    return events


def _in_window(ts: float, start: float | None, end: float | None) -> bool:
    return (start is None or ts >= start) and (end is None or ts <= end)


def _job_event_text(kind: str, name: str, status: str, reason: str) -> tuple[str, str]:
    texts = {
        CREATED: f"{kind} {name} is created.",
        SCHEDULED: f"{kind} {name} is scheduled: all pods are bound to nodes.",
        RUNNING: f"{kind} {name} is running.",
        SUCCEEDED: f"{kind} {name} is successfully completed.",
        MANUAL_TERMINATION: f"{kind} {name} is stopped by user.",
    }
    if status == FAILED:
        return "Warning", f"{kind} {name} is failed: {reason or 'training process failed'}"
    if status in texts:
        return "Normal", texts[status]
    return "Warning", reason or f"{kind} {name} status changed to {status}."


def _pod_event_texts(
    job: Job, pod: PodRef, status: str, reason: str, image: str
) -> list[tuple[str, str, str]]:
    if status == SCHEDULED:
        return [
            (
                "Normal",
                "Scheduled",
                f"Successfully assigned {NAMESPACE}/{pod.name} to {node_name(job, pod)}",
            ),
            ("Normal", "Pulling", f'Pulling image "{image}"'),
        ]
    if status == RUNNING:
        return [
            ("Normal", "Pulled", f'Successfully pulled image "{image}"'),
            ("Normal", "Created", "Created container pytorch"),
            ("Normal", "Started", "Started container pytorch"),
        ]
    if status == FAILED:
        return [("Warning", "Failed", f"Error: {reason or 'container exited with code 1'}")]
    if status in (MANUAL_TERMINATION, STOPPED):
        return [("Normal", "Killing", "Stopping container pytorch")]
    return []
