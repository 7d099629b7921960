"""The calls a watch flow yields, and the two drivers that answer them.

A flow is a generator that *yields* each AIHC call it needs (:class:`GetJobBrief`,
:class:`GetPodLogs`, ..., :class:`Sleep`) and is sent back its answer, or the
:class:`~airflow_provider_aihc.exceptions.AIHCError` it raised.  The calls are the hook's
own endpoint declarations (``hooks/calls.py``): :func:`drive` sends them with the hook's
sync sender (operator, sensor), :func:`adrive` with its async one (trigger).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from airflow_provider_aihc.exceptions import AIHCError
from airflow_provider_aihc.hooks.calls import (
    GetJob,
    GetJobBrief,
    GetJobEvents,
    GetJobMetrics,
    GetPodLogs,
    StopJob,
)

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks._endpoint import Call as HookCall
    from airflow_provider_aihc.hooks.aihc import AIHCHook

__all__ = [
    "Call", "Flow", "GetJob", "GetJobBrief", "GetJobEvents", "GetJobMetrics", "GetPodLogs",
    "Log", "Sleep", "StopJob", "adrive", "drive", "grid_sleep",
]  # fmt: skip

T = TypeVar("T")


class Log(Protocol):
    """What the watch logs to: a ``logging.Logger`` or Airflow 3's structlog logger."""

    def debug(self, msg: Any, /, *args: Any) -> Any: ...
    def info(self, msg: Any, /, *args: Any) -> Any: ...
    def warning(self, msg: Any, /, *args: Any) -> Any: ...
    def error(self, msg: Any, /, *args: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class Sleep:
    """A pause between polls."""

    seconds: float


Call = GetJobBrief | GetJob | GetPodLogs | GetJobEvents | StopJob | GetJobMetrics
#: A watch step: yields calls and pauses, is sent each call's answer (or its AIHCError).
Flow = Generator[Call | Sleep, Any, T]


def drive(flow: Flow[T], hook: AIHCHook, sleep: Callable[[float], None] = time.sleep) -> T:
    """Run a flow, sending its calls with the hook's sync sender."""
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
            call: HookCall[Any] = step
            answer = hook.send(call)
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
    """Run a flow, sending its calls with the hook's async sender."""
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
            acall: HookCall[Any] = step
            answer = await hook.asend(acall)
        except AIHCError as err:
            answer = err
