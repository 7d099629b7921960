"""How far a deferred wait has copied its job's log, kept in the task instance's XCom.

A trigger carries the log position of the moment its task deferred.  When its triggerer
stops, another one starts the trigger anew from those arguments, so without a record of
how far the log was copied it could only guess.  The guess (the health-check threshold
back, :func:`~airflow_provider_aihc.watch.logs.takeover_resume_point`) assumed that the
trigger before ran until the threshold ago; after two takeovers in a row the second start
may have copied nothing before it too was stopped, and the lines in between were never
shown (found by ``make test-chaos``: 2-5 of 102 waits, up to 17 lines each).

So a trigger that runs in a triggerer keeps its position in its task instance's XCom
:data:`XCOM_LOG_POSITION`, every :func:`save_every` seconds, and a trigger that starts
again resumes from it.  What it saves is the position of one period before: the lines
after that may still be on their way to the task log when a triggerer is SIGKILLed, so a
takeover shows them again rather than lose them.  Lines shown twice after a takeover are
thus at most two periods old, inside the threshold.  The value names its job and try, so
a position of another try, or of a job an earlier try created, is never used.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_provider_aihc.watch.flow import Log
    from airflow_provider_aihc.watch.logs import LogStreamer

#: The XCom key of a deferred wait's log position (a JSON object: job id, try number,
#: each pod's marker, when it was copied that far).
XCOM_LOG_POSITION = "log_position"
#: The shortest period between two saves of one trigger (one XCom write each).
SAVE_MIN_SECONDS = 5.0


def save_every(poll_interval: float, takeover_seconds: float) -> float:
    """Seconds between two saves: a poll (at least :data:`SAVE_MIN_SECONDS`), at most half
    the health-check threshold, so that what a takeover shows twice stays inside it.

    :param poll_interval: the trigger's seconds between log reads.
    :param takeover_seconds: ``[triggerer] triggerer_health_check_threshold``.
    """
    return max(0.1, min(max(poll_interval, SAVE_MIN_SECONDS), takeover_seconds / 2))


@dataclass(frozen=True)
class LogPosition:
    """Where each pod's log copy had got to (:attr:`LogStreamer.state`), and when."""

    markers: Mapping[str, str]
    copied_at: float


class LogPositionStore:
    """The log position of one job in one try of a task instance, read and written
    through Airflow's XCom off the event loop (2.x: the database; 3.x: the triggerer's
    supervisor and the execution API), each call in a thread of its own: a slow write
    (the API server restarting) holds up no other trigger's calls.

    :param task_instance: the trigger's ``task_instance`` (its ids and try number).
    :param job_id: the job whose log is copied.
    :param xcom: Airflow's XCom class (``None``: the running Airflow's).
    """

    def __init__(self, task_instance: Any, job_id: str, xcom: Any = None) -> None:
        self.dag_id: str = task_instance.dag_id
        self.task_id: str = task_instance.task_id
        self.run_id: str = task_instance.run_id
        self.map_index: int = task_instance.map_index
        self.try_number: int = task_instance.try_number
        self.job_id = job_id
        self._xcom = xcom

    async def load(self) -> LogPosition | None:
        """The position a trigger of this try saved for this job; ``None``: none saved."""
        from asgiref.sync import sync_to_async

        value = await sync_to_async(self._get, thread_sensitive=False)()
        if not isinstance(value, Mapping):
            return None
        markers = value.get("markers")
        copied_at = value.get("copied_at")
        if (
            value.get("job_id") != self.job_id
            or value.get("try_number") != self.try_number
            or not isinstance(markers, Mapping)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in markers.items())
            or not isinstance(copied_at, int | float)
        ):
            return None
        return LogPosition(dict(markers), float(copied_at))

    async def save(self, position: LogPosition) -> None:
        """Replace the saved position."""
        from asgiref.sync import sync_to_async

        value = {
            "job_id": self.job_id,
            "try_number": self.try_number,
            "markers": dict(position.markers),
            "copied_at": position.copied_at,
        }
        await sync_to_async(self._set, thread_sensitive=False)(value)

    def _ids(self) -> dict[str, Any]:
        return {
            "dag_id": self.dag_id,
            "task_id": self.task_id,
            "run_id": self.run_id,
            "map_index": self.map_index,
        }

    def _get(self) -> Any:
        return self._xcom_class().get_one(key=XCOM_LOG_POSITION, **self._ids())

    def _set(self, value: dict[str, Any]) -> None:
        self._xcom_class().set(XCOM_LOG_POSITION, value, **self._ids())

    def _xcom_class(self) -> Any:
        if self._xcom is None:
            from airflow.providers.common.compat.sdk import XCom

            self._xcom = XCom
        return self._xcom


async def keep_log_position(
    logs: LogStreamer,
    store: LogPositionStore,
    every: float,
    log: Log,
    *,
    clock: Callable[[], float] = time.time,
) -> None:
    """Save, every ``every`` seconds until cancelled, the position ``logs`` had one period
    before, when it changed.  A failed save is logged once and tried again next period:
    a stale position shows more lines twice after a takeover, never fewer.

    :param logs: the trigger's log copy.
    :param store: where the position goes.
    :param every: :func:`save_every`.
    :param log: the trigger's log.
    :param clock: the time now (epoch seconds).
    """
    saved = logs.state
    previous = LogPosition(logs.state, clock())
    failing = False
    while True:
        await asyncio.sleep(every)
        if previous.markers != saved:
            try:
                await store.save(previous)
            except Exception as err:  # any XCom backend's error: the copy goes on
                if not failing:
                    log.warning(
                        "Could not save how far the log of AIHC job %s was copied (%s); a "
                        "triggerer takeover may show more of it twice",
                        store.job_id,
                        err,
                    )
                failing = True
            else:
                saved, failing = dict(previous.markers), False
        previous = LogPosition(logs.state, clock())
