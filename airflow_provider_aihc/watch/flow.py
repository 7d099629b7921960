"""The calls a watch flow yields, and the two drivers that answer them.

A flow is a generator that *yields* each AIHC call it needs (:class:`GetJob`,
:class:`GetPodLogs`, ..., :class:`Sleep`) and is sent back its answer, or the
:class:`~airflow_provider_aihc.exceptions.AIHCError` it raised.  :func:`drive` answers with
the hook's sync methods (operator, sensor), :func:`adrive` with its async ones (trigger).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from airflow_provider_aihc.exceptions import AIHCError

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobBrief, JobEvents, JobInfo, PodLogs

T = TypeVar("T")


class Log(Protocol):
    """What the watch logs to: a ``logging.Logger`` or Airflow 3's structlog logger."""

    def debug(self, msg: Any, /, *args: Any) -> Any: ...
    def info(self, msg: Any, /, *args: Any) -> Any: ...
    def warning(self, msg: Any, /, *args: Any) -> Any: ...
    def error(self, msg: Any, /, *args: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class GetJob:
    """GetJob: status and pods, read as a :class:`~airflow_provider_aihc.models.job.JobBrief`."""

    job_id: str
    pool: str | None

    def send(self, hook: AIHCHook) -> JobBrief:
        return hook.get_job_brief(self.job_id, self.pool)

    async def asend(self, hook: AIHCHook) -> JobBrief:
        return await hook.aget_job_brief(self.job_id, self.pool)


@dataclass(frozen=True, slots=True)
class GetJobInfo:
    """GetJob read whole (:class:`~airflow_provider_aihc.models.job.JobInfo`): times,
    replicas, resources and the pods' restart counts, for the job summary."""

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
    #: Only lines written at or after this (epoch seconds); ``None``: all.
    start_time: int | None = None
    #: Only lines written at or before this (epoch seconds); ``None``: up to now.
    end_time: int | None = None

    def send(self, hook: AIHCHook) -> PodLogs:
        return hook.get_pod_logs(
            self.job_id,
            self.pod,
            self.pool,
            marker=self.marker,
            max_lines=self.max_lines,
            start_time=self.start_time,
            end_time=self.end_time,
        )

    async def asend(self, hook: AIHCHook) -> PodLogs:
        return await hook.aget_pod_logs(
            self.job_id,
            self.pod,
            self.pool,
            marker=self.marker,
            max_lines=self.max_lines,
            start_time=self.start_time,
            end_time=self.end_time,
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


Call = GetJob | GetJobInfo | GetPodLogs | GetJobEvents | StopJob
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
        answer = None  # the flow has it; holding it through a sleep only costs memory
        if isinstance(step, Sleep):
            sleep(step.seconds)
            continue
        try:
            answer = step.send(hook)
        except AIHCError as err:
            answer = err


#: Async waits end on this grid of the loop's clock (seconds), so that the polls that fall
#: due within the same tenth of a second run in one turn of the event loop, not in a
#: wake-up each: a triggerer with a thousand jobs wakes ten times a second, not a hundred.
WAKE_GRID_SECONDS = 0.1


async def grid_sleep(seconds: float) -> None:
    """``asyncio.sleep`` to the first point of :data:`WAKE_GRID_SECONDS` at or after
    ``seconds`` from now."""
    now = asyncio.get_running_loop().time()
    wake = math.ceil((now + seconds) / WAKE_GRID_SECONDS) * WAKE_GRID_SECONDS
    await asyncio.sleep(wake - now)


async def adrive(
    flow: Flow[T],
    hook: AIHCHook,
    sleep: Callable[[float], Awaitable[None]] = grid_sleep,
) -> T:
    """Run a flow with the hook's async methods."""
    answer: Any = None
    while True:
        try:
            step = flow.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result
        answer = None  # the flow has it; holding it through a sleep only costs memory
        if isinstance(step, Sleep):
            await sleep(step.seconds)
            continue
        try:
            answer = await step.asend(hook)
        except AIHCError as err:
            answer = err
