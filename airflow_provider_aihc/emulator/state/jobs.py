"""Jobs and how they move: ``Created → Scheduled → Running → Succeeded``, lazily.

Like moto's ``ManagedState``, nothing runs in the background: a job's status is worked
out when the job is read, from a :class:`Progression` and the injected clock.

* **Per poll.** Each ``GET`` of the job is a poll.  A status is *seen* by
  ``polls_per_status`` GETs (``running_polls`` for ``Running``), and the next GET moves it
  on, so with the default 1 four GETs read ``Created``, ``Scheduled``, ``Running``,
  ``Succeeded``.  0 moves the job one status on every GET.
* **By time.** A job leaves a status ``seconds_per_status`` (``running_seconds`` for
  ``Running``) after entering it.  Time-based moves are applied on every read, list
  included, and are back-dated to when they were due, so several can happen at once.
* Listing never counts as a poll (adoption lookups must not move jobs).
* ``None`` disables a mechanism; both ``None`` is manual (only scripts and the control
  API move jobs).

While ``Running`` the log grows by ``log_lines_per_poll`` lines per poll (per-poll
progression) or ``log_lines_per_second`` (time progression).  A job's :class:`Plan`
(from a script) can make it fail instead of succeeding, or hold it in a status.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .trainlog import DONE, FAIL, MAX_ITERATION_LINES, STOP, TrainLog

CREATED = "Created"
SCHEDULED = "Scheduled"
RUNNING = "Running"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
STOPPED = "Stopped"
MANUAL_TERMINATION = "ManualTermination"
#: The normal life of a job.
CHAIN = (CREATED, SCHEDULED, RUNNING, SUCCEEDED)
TERMINAL = frozenset({SUCCEEDED, FAILED, STOPPED, MANUAL_TERMINATION})
#: Statuses in which a job holds its GPUs (pool and queue usage).
ACTIVE = frozenset({SCHEDULED, RUNNING})
STOP_REASON = "stopped by user"
#: The priorities a job may have (create and update).
PRIORITIES = ("high", "normal", "low")

Clock = Callable[[], float]


class Runner(Protocol):
    """A job that really runs (``execute.JobRun``): its status comes from its processes."""

    started_at: float

    def outcome(self) -> tuple[str, float, str] | None:
        """``(status, at, reason)`` once the job ended on its own, else ``None``."""

    def line_count(self) -> int:
        """Log lines written so far, over every pod."""


@dataclass(frozen=True)
class Progression:
    """How fast jobs move (module docstring).

    :param polls_per_status: GETs that see each status before the next GET moves it on.
    :param seconds_per_status: seconds spent in each status.
    :param running_polls: GETs that see ``Running``; ``None`` = ``polls_per_status``.
    :param running_seconds: seconds spent ``Running``; ``None`` = ``seconds_per_status``.
    :param log_lines_per_poll: iteration lines written per poll while running.
    :param log_lines_per_second: iteration lines written per second while running
        (time progression only).
    """

    polls_per_status: int | None = 1
    seconds_per_status: float | None = None
    running_polls: int | None = None
    running_seconds: float | None = None
    log_lines_per_poll: int = 3
    log_lines_per_second: float = 1.0

    @classmethod
    def per_poll(cls, polls: int = 1, running: int | None = None) -> Progression:
        """Move on polls only (tests): deterministic, independent of time."""
        return cls(polls_per_status=polls, running_polls=running)

    @classmethod
    def by_time(cls, seconds: float = 3.0, running: float | None = None) -> Progression:
        """Move with the clock only (the standalone server)."""
        return cls(polls_per_status=None, seconds_per_status=seconds, running_seconds=running)

    @classmethod
    def manual(cls) -> Progression:
        """Never move on their own; only scripts and the control API move jobs."""
        return cls(polls_per_status=None)

    @property
    def uses_polls(self) -> bool:
        """Whether polls move jobs (and grow logs)."""
        return self.polls_per_status is not None or self.running_polls is not None

    @property
    def uses_time(self) -> bool:
        """Whether time moves jobs (and grows logs)."""
        return self.seconds_per_status is not None or self.running_seconds is not None

    def polls_for(self, status: str) -> int | None:
        """GETs that see ``status`` before it moves on."""
        if status == RUNNING and self.running_polls is not None:
            return self.running_polls
        return self.polls_per_status

    def seconds_for(self, status: str) -> float | None:
        """Seconds spent in ``status``."""
        if status == RUNNING and self.running_seconds is not None:
            return self.running_seconds
        return self.seconds_per_status


@dataclass
class Plan:
    """What scripts decided for one job.

    :param fail_reason: fail with this reason instead of moving on from ``fail_from``.
    :param fail_from: the status the job fails from (default ``Running``).
    :param fail_after_polls: GETs that see ``fail_from`` before it fails (overrides the
        progression).
    :param hold_status: the job stays in this status once it gets there.
    :param queue_until: the job stays ``Created``/``Scheduled`` until this time (epoch
        seconds): it waits in the queue for resources.
    """

    fail_reason: str | None = None
    fail_from: str = RUNNING
    fail_after_polls: int | None = None
    hold_status: str | None = None
    queue_until: float | None = None


@dataclass(frozen=True)
class JobRequest:
    """A validated create body: what the emulator acts on and what its answers echo, each as
    a field (``None``: not sent), so neither the state nor a renderer reads the wire body."""

    name: str
    queue: str
    framework: str
    priority: str
    image: str
    command: str
    replicas: int
    resources: list[dict[str, Any]]
    envs: list[dict[str, Any]]
    labels: list[dict[str, str]]
    #: The whole body as sent, shown by the control API's state view only.
    body: dict[str, Any]
    #: ``datasources`` as sent (mounts under ``--execute``).
    datasources: list[dict[str, Any]] | None = None
    enable_bccl: bool = False
    fault_tolerance: bool = False
    fault_tolerance_args: str | None = None
    #: ``faultToleranceConfig.customFaultTolerancePattern``.
    fault_tolerance_patterns: list[Any] = field(default_factory=list)
    #: ``jobSpec``'s ``enableRDMA``, ``hostNetwork``, ``privileged``, ``imageConfig`` as sent.
    enable_rdma: Any = None
    host_network: Any = None
    privileged: Any = None
    image_config: dict[str, Any] | None = None
    #: A TFJob's or RayJob's role map (``jobSpec``: role → spec), as sent.
    roles: dict[str, Any] | None = None

    @property
    def gpus(self) -> int:
        """GPUs the whole job holds: GPU resources per replica times replicas."""
        per_replica = sum(
            _number(r.get("quantity")) for r in self.resources if "gpu" in str(r.get("name"))
        )
        return int(per_replica) * self.replicas


@dataclass(eq=False)
class Job:
    """One training job and everything that happened to it."""

    job_id: str
    pool_id: str
    request: JobRequest
    created_at: float
    seq: int
    creator: str = "emulator"
    k8s_uid: str = ""
    priority: str = "normal"
    status: str = CREATED
    status_since: float = 0.0
    reason: str = ""
    scheduled_at: float | None = None
    running_at: float | None = None
    finished_at: float | None = None
    polls: int = 0
    gets: int = 0
    time_lines: int = 0
    history: list[tuple[str, float, str]] = field(default_factory=list)
    log: TrainLog = field(default_factory=TrainLog)
    plan: Plan = field(default_factory=Plan)
    #: Set when the emulator executes the job: then its processes move it, not progression.
    runner: Runner | None = None

    def __post_init__(self) -> None:
        self.priority = self.request.priority
        self.status_since = self.created_at
        self.history.append((CREATED, self.created_at, ""))

    @property
    def name(self) -> str:
        """The job name (also its Kubernetes object name)."""
        return self.request.name

    @property
    def is_terminal(self) -> bool:
        """Whether the job has ended."""
        return self.status in TERMINAL


def next_status(job: Job, now: float | None = None) -> str | None:
    """Where the job goes next on its own (by ``now``), or ``None`` when it stays."""
    status = job.status
    if status == job.plan.hold_status or status in TERMINAL or status not in CHAIN:
        return None
    until = job.plan.queue_until
    if status == SCHEDULED and until is not None and (now is None or now < until):
        return None  # waiting in the queue for resources
    if job.plan.fail_reason is not None and status == job.plan.fail_from:
        return FAILED
    return CHAIN[CHAIN.index(status) + 1]


def enter(job: Job, status: str, at: float, reason: str = "") -> None:
    """Move the job into ``status`` at time ``at``: timestamps, history and log lines."""
    if status == RUNNING:
        job.running_at = at
        job.time_lines = 0
        job.log.start(at)
    elif status == SCHEDULED:
        job.scheduled_at = at
    if status in TERMINAL and job.running_at is not None and job.status == RUNNING:
        job.log.end(at, _END_KIND.get(status, STOP), job.running_at)
    job.status = status
    job.status_since = at
    job.polls = 0
    job.reason = reason
    job.finished_at = at if status in TERMINAL else None
    job.history.append((status, at, reason))


_END_KIND = {SUCCEEDED: DONE, FAILED: FAIL}


def settle(job: Job, progression: Progression, now: float) -> None:
    """Apply every time-based move that is due by ``now`` (back-dated), and grow the log."""
    if job.runner is not None:
        _follow(job, job.runner)
        return
    while True:
        seconds = progression.seconds_for(job.status)
        target = next_status(job, now)
        if target is None or seconds is None or now - job.status_since < seconds:
            break
        at = job.status_since + seconds
        if job.status == SCHEDULED and job.plan.queue_until is not None:
            at = max(at, job.plan.queue_until)
        _grow_by_time(job, progression, at)
        enter(job, target, at, _reason_for(job, target))
    _grow_by_time(job, progression, now)


def poll(job: Job, progression: Progression, now: float) -> None:
    """One ``GET`` of the job: settle, maybe move on, grow the log, count the poll."""
    settle(job, progression, now)
    if job.runner is not None:
        job.polls += 1
        job.gets += 1
        return
    target = next_status(job, now)
    needed = _polls_needed(job, progression)
    if target is not None and needed is not None and job.polls >= needed:
        enter(job, target, now, _reason_for(job, target))
    if job.status == RUNNING and progression.uses_polls:
        job.log.step(now, progression.log_lines_per_poll)
    job.polls += 1
    job.gets += 1


def stop(job: Job, now: float) -> bool:
    """Stop a live job (``ManualTermination``); returns False when it had already ended."""
    if job.is_terminal:
        return False
    enter(job, MANUAL_TERMINATION, now, STOP_REASON)
    return True


def force(job: Job, status: str, now: float, reason: str = "", hold: bool = False) -> None:
    """Put the job into any status (control API); ``hold`` keeps it there."""
    enter(job, status, now, reason)
    job.plan.hold_status = status if hold else None


def _follow(job: Job, runner: Runner) -> None:
    """An executed job: ``Running`` since its processes started, then how they ended."""
    if job.status in (CREATED, SCHEDULED):
        if job.status == CREATED:
            enter(job, SCHEDULED, runner.started_at)
        enter(job, RUNNING, runner.started_at)
    ended = runner.outcome()
    if ended is not None and not job.is_terminal and job.status != job.plan.hold_status:
        status, at, reason = ended
        enter(job, status, at, reason)


def _polls_needed(job: Job, progression: Progression) -> int | None:
    plan = job.plan
    failing = plan.fail_reason is not None and job.status == plan.fail_from
    if failing and plan.fail_after_polls is not None:
        return plan.fail_after_polls
    return progression.polls_for(job.status)


def _reason_for(job: Job, target: str) -> str:
    return (job.plan.fail_reason or "") if target == FAILED else ""


def _grow_by_time(job: Job, progression: Progression, until: float) -> None:
    rate = progression.log_lines_per_second
    if job.status != RUNNING or job.running_at is None or not progression.uses_time:
        return
    if rate <= 0:
        return
    room = MAX_ITERATION_LINES - job.log.iterations
    due = min(math.floor((until - job.running_at) * rate), job.time_lines + room)
    for k in range(job.time_lines, max(due, job.time_lines)):
        job.log.step(job.running_at + (k + 1) / rate, 1)
    job.time_lines = max(due, job.time_lines)


def _number(value: object) -> float:
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return 0.0


@dataclass(frozen=True)
class JobFilter:
    """v2 ``DescribeJobs`` filters: exact ``status``; ``keyword`` in the name or queue.

    :param status: keep jobs in this status.
    :param keyword: keep jobs whose name (or queue) contains it (inferred: a substring).
    :param keyword_type: ``name`` or ``queueName``.
    """

    status: str | None = None
    keyword: str | None = None
    keyword_type: str = "name"

    def admits(self, job: Job) -> bool:
        """Whether the job passes every filter."""
        if self.status and job.status != self.status:
            return False
        if not self.keyword:
            return True
        target = job.request.queue if self.keyword_type == "queueName" else job.name
        return self.keyword in target
