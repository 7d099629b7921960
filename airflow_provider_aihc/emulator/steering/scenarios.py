"""Faults (what the network and the server do to a request) and scripts (what happens to
a job), as small objects queued and consumed in order.

Faults, each optionally limited to one ``operation`` (``CreateJob``, ``GetJob``, …) and
firing ``times`` times:

* :func:`error`: a 5xx (or any status) with a BCE error body, nothing done;
* :func:`throttle`: ``429`` with ``Retry-After`` and a BCE error body, nothing done;
* :func:`drop_before`: the connection is closed without an answer, nothing done;
* :func:`drop_after`: the request is carried out (a create really creates the job), then
  the connection is closed without an answer;
* :func:`delay`: the request is carried out at once, the answer is sent ``seconds`` later;
* :func:`malformed`: ``200`` with an HTML body, nothing done;
* :func:`passthrough`: nothing happens (a slot in a :func:`random_schedule`);
* :func:`error_after`: the request is carried out (a ``CreateService`` really creates the
  service), then answered with a 5xx: a lost answer the client sees as a failure.

A lost create or modify answer is one of these limited to the operation: ``drop_after`` or
``error_after`` on ``CreateService``, ``CreateModel``, ``CreateModelVersion``,
``CreateDatasetVersion`` or ``ModifyService`` (v2 actions are their own operation names).

Scripts bind to a job when it is created (matched by a substring of its name, or the
next job created when ``match`` is ``None``): :class:`FailJob`, :class:`HoldJob`,
:class:`ForceStatus`, :class:`QueueFor` (waits in the queue), :class:`Output` (what a
successful run prints last: metric lines, a result, filler).

Service scripts bind to a service's next rollout (its create, or a ``ModifyService`` that
changes the pod template), matched by a substring of the service's name:
:class:`StuckRollout` (the new instances never become ready, showing a Kubernetes reason)
and :class:`SilentRevert` (the configuration goes back to the previous one once the
rollout is done, with no changelog record).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal, TypeVar

from airflow_provider_aihc.emulator.state.errors import invalid_param
from airflow_provider_aihc.emulator.state.jobs import FAILED, RUNNING, Job, force
from airflow_provider_aihc.emulator.state.services import Service

FaultKind = Literal[
    "error",
    "throttle",
    "drop_before",
    "drop_after",
    "delay",
    "malformed",
    "passthrough",
    "error_after",
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]
#: Faults that answer (or drop) instead of carrying the request out.
PRE_FAULTS = frozenset({"error", "throttle", "drop_before", "malformed"})
THROTTLE_CODE = "TooManyRequests"
_CODES = {500: "InternalError", 502: "BadGateway", 503: "ServiceUnavailable", 504: "Timeout"}


@dataclass(frozen=True, kw_only=True)
class Fault:
    """One queued fault (build them with the functions below).

    :param kind: what happens (module docstring).
    :param operation: only requests of this operation; ``None`` = any.
    :param times: how many requests it hits.
    :param status: the HTTP status (``error``).
    :param code: the BCE error code (``error``, ``throttle``).
    :param message: the error message.
    :param retry_after: seconds for ``Retry-After`` (``throttle``).
    :param seconds: how long the answer waits (``delay``).
    """

    kind: FaultKind
    operation: str | None = None
    times: int = 1
    status: int = 500
    code: str = "InternalError"
    message: str = "emulated fault"
    retry_after: float = 1.0
    seconds: float = 0.0

    def matches(self, operation: str) -> bool:
        """Whether the fault applies to a request of ``operation``."""
        return self.operation is None or self.operation == operation


def error(
    status: int = 500,
    code: str | None = None,
    *,
    operation: str | None = None,
    times: int = 1,
    message: str = "We encountered an internal error. Please try again.",
) -> Fault:
    """An error answer; the code defaults from the status (500 ``InternalError``, …)."""
    return Fault(
        kind="error",
        status=status,
        code=code or _CODES.get(status, "InternalError"),
        operation=operation,
        times=times,
        message=message,
    )


def throttle(retry_after: float = 1.0, *, operation: str | None = None, times: int = 1) -> Fault:
    """``429 TooManyRequests`` with ``Retry-After: retry_after`` (code inferred)."""
    return Fault(
        kind="throttle",
        status=429,
        code=THROTTLE_CODE,
        message="Request rate exceeded, please retry later.",
        retry_after=retry_after,
        operation=operation,
        times=times,
    )


def drop_before(*, operation: str | None = None, times: int = 1) -> Fault:
    """Close the connection without acting or answering."""
    return Fault(kind="drop_before", operation=operation, times=times)


def drop_after(*, operation: str | None = None, times: int = 1) -> Fault:
    """Act (e.g. really create the job), then close without answering."""
    return Fault(kind="drop_after", operation=operation, times=times)


def delay(seconds: float, *, operation: str | None = None, times: int = 1) -> Fault:
    """Act at once, answer ``seconds`` later."""
    return Fault(kind="delay", seconds=seconds, operation=operation, times=times)


def malformed(*, operation: str | None = None, times: int = 1) -> Fault:
    """``200`` with an HTML body, without acting."""
    return Fault(kind="malformed", status=200, operation=operation, times=times)


def error_after(
    status: int = 500, code: str | None = None, *, operation: str | None = None, times: int = 1
) -> Fault:
    """Act (e.g. really create the service), then answer an error as :func:`error` does."""
    return Fault(
        kind="error_after",
        status=status,
        code=code or _CODES.get(status, "InternalError"),
        operation=operation,
        times=times,
        message="We encountered an internal error. Please try again.",
    )


def passthrough(*, operation: str | None = None, times: int = 1) -> Fault:
    """Nothing happens; a placeholder that keeps a schedule's positions."""
    return Fault(kind="passthrough", operation=operation, times=times)


def random_schedule(
    seed: int,
    requests: int,
    rate: float = 0.2,
    kinds: Iterable[str] = ("error", "throttle", "drop_before", "drop_after", "malformed"),
    *,
    operation: str | None = None,
) -> list[Fault]:
    """A reproducible schedule: each of the next ``requests`` requests is hit with
    probability ``rate`` by a fault drawn from ``kinds``.

    :param seed: the random seed; the same seed gives the same schedule.
    :param requests: how many requests the schedule covers.
    :param rate: probability of a fault per request.
    :param kinds: fault kinds to draw from (``error`` is a 503, ``throttle`` waits 0 s).
    :param operation: limit the schedule to one operation.
    """
    rng = random.Random(seed)
    pool = list(kinds)
    makers = {
        "error": lambda: error(503, operation=operation),
        "throttle": lambda: throttle(0, operation=operation),
        "drop_before": lambda: drop_before(operation=operation),
        "drop_after": lambda: drop_after(operation=operation),
        "malformed": lambda: malformed(operation=operation),
        "delay": lambda: delay(0.05, operation=operation),
    }
    return [
        makers[rng.choice(pool)]() if rng.random() < rate else passthrough(operation=operation)
        for _ in range(requests)
    ]


@dataclass(kw_only=True)
class Script:
    """Something that happens to a job, bound when the job is created.

    :param match: a substring of the job name; ``None`` = the next job created.
    :param times: how many jobs it binds to.
    """

    match: str | None = None
    times: int = 1

    def matches(self, name: str) -> bool:
        """Whether the script binds to a job of this name."""
        return self.match is None or self.match in name

    def apply(self, job: Job, now: float) -> None:
        """Bind to the job."""
        raise NotImplementedError


@dataclass(kw_only=True)
class FailJob(Script):
    """The job fails (``Failed``) instead of moving on from ``from_status``.

    :param reason: shown in the job's Warning event, the pods' ``reason`` and the log.
    :param after_running_polls: GETs that see ``from_status`` before it fails; ``None``
        keeps the progression's pace.
    :param from_status: ``Created``, ``Scheduled`` or ``Running`` (default).
    """

    reason: str = "training process exited with code 1"
    after_running_polls: int | None = None
    from_status: str = RUNNING

    def apply(self, job: Job, now: float) -> None:
        job.plan.fail_reason = self.reason
        job.plan.fail_from = self.from_status
        job.plan.fail_after_polls = self.after_running_polls


@dataclass(kw_only=True)
class HoldJob(Script):
    """The job moves as usual until ``status``, then stays there (never finishes)."""

    status: str = RUNNING

    def apply(self, job: Job, now: float) -> None:
        job.plan.hold_status = self.status


@dataclass(kw_only=True)
class ForceStatus(Script):
    """The job is put into ``status`` (any string, e.g. ``Weird``) at once, and held."""

    status: str = "Weird"
    reason: str = ""

    def apply(self, job: Job, now: float) -> None:
        force(job, self.status, now, self.reason or _forced_reason(self.status), hold=True)


@dataclass(kw_only=True)
class QueueFor(Script):
    """The job waits ``seconds`` (from its creation) ``Scheduled`` for resources, then
    moves on as usual."""

    seconds: float = 60.0

    def apply(self, job: Job, now: float) -> None:
        job.plan.queue_until = now + self.seconds


@dataclass(kw_only=True)
class Output(Script):
    """What the job prints at the end of a successful run, before its closing lines.

    :param lines: lines every rank prints (``\\n``-separated), e.g. metric lines;
        ``None`` keeps the validation line.
    :param result: the JSON text rank 0 prints after ``AIHC_RESULT ``; ``None`` keeps the
        default result, ``""`` prints no result line.
    :param filler_lines: lines printed before them, dated evenly across the run (a long
        log for the benchmark).
    """

    lines: str | None = None
    result: str | None = None
    filler_lines: int = 0

    def apply(self, job: Job, now: float) -> None:
        job.log.output = None if self.lines is None else self.lines.split("\n")
        job.log.result = self.result
        job.log.filler = self.filler_lines


#: Which rollouts a service script binds to.
Rollout = Literal["create", "modify", "any"]
ROLLOUTS = ("create", "modify", "any")


@dataclass(kw_only=True)
class ServiceScript(Script):
    """Something that happens to a service's rollout, bound when the rollout starts.

    :param match: a substring of the service name; ``None`` = the next rollout.
    :param rollout: ``create``, ``modify`` (default) or ``any``.
    """

    rollout: str = "modify"

    def binds(self, name: str, rollout: str) -> bool:
        """Whether the script binds to this rollout of a service named ``name``."""
        return self.matches(name) and self.rollout in ("any", rollout)

    def apply(self, job: Job, now: float) -> None:
        raise TypeError("a service script binds to services, not jobs")

    def apply_service(self, service: Service, now: float) -> None:
        """Bind to the service's rollout that starts now."""
        raise NotImplementedError


@dataclass(kw_only=True)
class StuckRollout(ServiceScript):
    """The rollout never becomes ready: its new instances stay unready with ``reason``
    (a Kubernetes reason: ``ImagePullBackOff``, ``ErrImagePull``, ``CrashLoopBackOff``),
    so the old instances stay (``maxUnavailable`` holds them)."""

    reason: str = "ImagePullBackOff"

    def apply_service(self, service: Service, now: float) -> None:
        service.plan.stuck_revision = service.revision
        service.plan.stuck_reason = self.reason


@dataclass(kw_only=True)
class SilentRevert(ServiceScript):
    """The rollout completes, then ``after_polls`` polls later the configuration goes back
    to the one before the modify (and rolls back), with no changelog record and no new
    ``updatedAt``: the silent rollback SageMaker's users met (terraform-provider-aws #39099)."""

    after_polls: int = 1

    def apply_service(self, service: Service, now: float) -> None:
        service.plan.revert_revision = service.revision
        service.plan.revert_after_polls = self.after_polls


def _forced_reason(status: str) -> str:
    return "emulated failure" if status == FAILED else ""


SCRIPT_KINDS: dict[str, type[Script]] = {
    "fail": FailJob,
    "hold": HoldJob,
    "status": ForceStatus,
    "queue": QueueFor,
    "output": Output,
    "rollout_stuck": StuckRollout,
    "silent_revert": SilentRevert,
}

_T = TypeVar("_T")


class SteeringQueue:
    """A thread-safe FIFO of faults or scripts, each consumed ``times`` times (not an AIHC
    queue: those are :class:`~airflow_provider_aihc.emulator.state.pools.Queue`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[Fault | Script, list[int]]] = []

    def add(self, item: Fault | Script) -> None:
        """Append one item."""
        with self._lock:
            self._items.append((item, [item.times]))

    def take_fault(self, operation: str) -> Fault | None:
        """The first fault that applies to ``operation``, consumed once."""
        item = self._take(lambda item: isinstance(item, Fault) and item.matches(operation))
        return item if isinstance(item, Fault) else None

    def take_script(self, name: str) -> Script | None:
        """The first script that binds to a job named ``name``, consumed once."""
        item = self._take(
            lambda item: (
                isinstance(item, Script)
                and not isinstance(item, ServiceScript)
                and item.matches(name)
            )
        )
        return item if isinstance(item, Script) else None

    def take_service_script(self, name: str, rollout: str) -> ServiceScript | None:
        """The first service script that binds to this rollout, consumed once."""
        item = self._take(
            lambda item: isinstance(item, ServiceScript) and item.binds(name, rollout)
        )
        return item if isinstance(item, ServiceScript) else None

    def pending(self) -> int:
        """Uses left, over all items."""
        with self._lock:
            return sum(left[0] for _, left in self._items)

    def clear(self) -> None:
        """Forget everything queued."""
        with self._lock:
            self._items.clear()

    def _take(self, wanted: Callable[[Fault | Script], bool]) -> Fault | Script | None:
        with self._lock:
            for slot in self._items:
                item, left = slot
                if wanted(item):
                    left[0] -= 1
                    if left[0] <= 0:
                        self._items.remove(slot)
                    return item
        return None


def fault_from_json(data: Mapping[str, Any]) -> Fault:
    """A fault from a control-API payload, e.g. ``{"kind": "throttle", "retry_after": 2}``."""
    kind = data.get("kind")
    if kind not in FAULT_KINDS:
        raise invalid_param(f"fault kind must be one of {', '.join(FAULT_KINDS)}")
    if kind == "throttle":
        data = {"status": 429, "code": THROTTLE_CODE, **data}
    elif kind in ("error", "error_after") and "code" not in data:
        data = {**data, "code": _CODES.get(int(data.get("status", 500)), "InternalError")}
    return _build(Fault, data)


def script_from_json(data: Mapping[str, Any]) -> Script:
    """A script from a control-API payload, e.g. ``{"kind": "fail", "reason": "OOM"}``."""
    kind = data.get("kind")
    if kind not in SCRIPT_KINDS:
        raise invalid_param(f"script kind must be one of {', '.join(SCRIPT_KINDS)}")
    if data.get("rollout", "modify") not in ROLLOUTS:
        raise invalid_param(f"rollout must be one of {', '.join(ROLLOUTS)}")
    return _build(SCRIPT_KINDS[kind], {k: v for k, v in data.items() if k != "kind"})


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "str | None": (str, type(None)),
    "int | None": (int, type(None)),
}


def _build(cls: type[_T], data: Mapping[str, Any]) -> _T:
    declared = {f.name: str(f.type) for f in fields(cls)}  # type: ignore[arg-type]
    unknown = set(data) - set(declared)
    if unknown:
        raise invalid_param(f"unknown fields: {', '.join(sorted(unknown))}")
    for name, value in data.items():
        allowed = _JSON_TYPES.get(declared[name])
        if allowed and (isinstance(value, bool) or not isinstance(value, allowed)):
            raise invalid_param(f"{name} must be {declared[name]}, got {value!r}")
    if int(data.get("times", 1)) < 1:
        raise invalid_param("times must be at least 1")
    return cls(**data)
