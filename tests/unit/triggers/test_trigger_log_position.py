"""A trigger in a triggerer keeps how far it copied its job's log in the task instance's
XCom, and a trigger that starts again resumes there: no line lost after takeovers in a row,
and only the last periods' lines shown twice.

The triggers run against the emulator over real HTTP; Airflow's XCom is a dict here
(:class:`MemoryXCom`, the calls Airflow's own ``XCom.get_one``/``XCom.set`` take), since on
Airflow 3 a real one needs a triggerer's supervisor: ``tests/e2e/test_log_position_xcom.py``
runs it on Airflow 2's database, ``make test-deployment`` (scenario 2) on a real triggerer.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from watch_helpers import POOL, Recorder, log_lines

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.triggers.log_position import (
    XCOM_LOG_POSITION,
    LogPosition,
    LogPositionStore,
    keep_log_position,
    save_every,
)
from airflow_provider_aihc.watch.logs import LogStreamer

#: A short health-check threshold, so that a save period is a fraction of a second.
THRESHOLD = 0.4
POLL = 0.05
TI = SimpleNamespace(dag_id="d", task_id="t", run_id="r", map_index=-1, try_number=1)


class MemoryXCom:
    """Airflow's XCom as the store calls it, kept in a dict."""

    values: ClassVar[dict[tuple[Any, ...], Any]] = {}
    fail: ClassVar[bool] = False

    @classmethod
    def get_one(cls, *, key: str, dag_id: str, task_id: str, run_id: str, map_index: int) -> Any:
        return cls.values.get((key, dag_id, task_id, run_id, map_index))

    @classmethod
    def set(
        cls, key: str, value: Any, *, dag_id: str, task_id: str, run_id: str, map_index: int
    ) -> None:
        if cls.fail:
            raise RuntimeError("the XCom backend is down")
        cls.values[(key, dag_id, task_id, run_id, map_index)] = value


@pytest.fixture(autouse=True)
def memory_xcom(monkeypatch: pytest.MonkeyPatch) -> type[MemoryXCom]:
    MemoryXCom.values, MemoryXCom.fail = {}, False
    monkeypatch.setattr(LogPositionStore, "_xcom_class", lambda self: MemoryXCom)
    monkeypatch.setenv("AIRFLOW__TRIGGERER__TRIGGERER_HEALTH_CHECK_THRESHOLD", str(THRESHOLD))
    return MemoryXCom


def _saved() -> Any:
    return MemoryXCom.values.get((XCOM_LOG_POSITION, "d", "t", "r", -1))


def _trigger(job_id: str, deferred_at: float, log: Recorder) -> AIHCJobTrigger:
    trigger = AIHCJobTrigger(job_id, POOL, poll_interval=POLL, deferred_at=deferred_at)
    trigger.task_instance = TI
    trigger._log = log  # LoggingMixin.log returns it: this trigger's lines, recorded
    return trigger


async def _run_for(trigger: AIHCJobTrigger, seconds: float) -> None:
    """Run the trigger, then cancel it as a stopped triggerer's end does."""
    task = asyncio.ensure_future(trigger.run().__anext__())
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def _training(log: Recorder) -> list[str]:
    """The job's lines the trigger copied (the emulator's start with their UTC time)."""
    return [line for line in log.messages("info") if line[:4].isdigit()]


def test_the_save_period_stays_inside_the_threshold() -> None:
    assert save_every(30.0, 30.0) == 15.0  # the defaults: half the threshold
    assert save_every(2.0, 30.0) == 5.0  # never more than one write per 5 s
    assert save_every(10.0, 60.0) == 10.0  # a poll
    assert save_every(0.05, 0.4) == pytest.approx(0.2)


async def test_lines_are_not_lost_after_two_takeovers_in_a_row(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    """Regression (``make test-chaos``): the first trigger copied until its triggerer was
    killed; a second start was killed before it copied anything; the third resumed by the
    threshold rule, after the lines in between, which were never shown."""
    aihc_emulator.backend.progression = Progression(
        polls_per_status=None, seconds_per_status=0.05, running_seconds=3.0,
        log_lines_per_second=20.0,
    )  # fmt: skip
    job_id = create("chained")
    deferred_at = time.time()
    first, second, third = Recorder(), Recorder(), Recorder()

    await _run_for(_trigger(job_id, deferred_at, first), 1.2)
    assert _saved() is not None, "the first trigger saved its position"
    await _run_for(_trigger(job_id, deferred_at, second), 0.02)  # killed before a copy
    assert not _training(second)
    await asyncio.sleep(1.0)  # the lines the dead triggers never copied
    [payload] = [e.payload async for e in _trigger(job_id, deferred_at, third).run()]

    assert payload["status"] == "success"
    written = log_lines(aihc_emulator, job_id, "chained-master-0")
    shown = _training(first) + _training(third)
    assert set(written) <= set(shown), f"{len(set(written) - set(shown))} lines lost"
    assert any("this trigger took over" in m for m in third.messages("info"))
    twice = [line for line, n in Counter(shown).items() if n > 1]
    assert len(twice) <= 2 * save_every(POLL, THRESHOLD) * 20 + 2  # two periods of lines


async def test_a_position_of_another_try_or_job_is_not_used() -> None:
    store = LogPositionStore(TI, "job-a")
    await store.save(LogPosition({"pod": "m1"}, 100.0))
    assert await store.load() == LogPosition({"pod": "m1"}, 100.0)
    assert await LogPositionStore(TI, "job-b").load() is None
    retried = SimpleNamespace(**{**vars(TI), "try_number": 2})
    assert await LogPositionStore(retried, "job-a").load() is None


async def test_it_saves_the_position_of_one_period_before_and_only_when_it_moved() -> None:
    logs = LogStreamer("job-a", POOL, Recorder(), state={"pod": "m0"})
    store, log = LogPositionStore(TI, "job-a"), Recorder()
    clock = iter(range(100)).__next__
    keeper = asyncio.ensure_future(keep_log_position(logs, store, 0.05, log, clock=clock))
    await asyncio.sleep(0.08)  # one period: the deferral's position, nothing to save
    assert _saved() is None
    logs.markers["pod"] = "m1"
    await asyncio.sleep(0.05)  # the next: still the position before m1
    assert _saved() is None
    await asyncio.sleep(0.05)
    assert _saved()["markers"] == {"pod": "m1"}
    keeper.cancel()


async def test_a_failed_save_is_logged_once_and_tried_again() -> None:
    logs = LogStreamer("job-a", POOL, Recorder(), state={"pod": "m0"})
    store, log = LogPositionStore(TI, "job-a"), Recorder()
    MemoryXCom.fail = True
    keeper = asyncio.ensure_future(keep_log_position(logs, store, 0.03, log))
    await asyncio.sleep(0)  # it starts from the deferral's position
    logs.markers["pod"] = "m1"
    await asyncio.sleep(0.2)
    assert len(log.messages("warning")) == 1
    assert "Could not save how far the log of AIHC job job-a was copied" in log.messages()[0]
    MemoryXCom.fail = False
    await asyncio.sleep(0.1)
    assert _saved()["markers"] == {"pod": "m1"}
    keeper.cancel()


async def test_a_task_instance_without_a_try_number_falls_back_to_the_threshold_rule(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    """Regression (the matrix lane hung 600 s in every cell): a ``task_instance`` the store
    cannot key (here no ``try_number``) failed the trigger's ``run`` before its first poll;
    it is a position that cannot be read, so the wait goes on as before the XCom existed."""
    aihc_emulator.backend.progression = Progression(
        polls_per_status=None, seconds_per_status=0.05, running_seconds=0.3,
        log_lines_per_second=20.0,
    )  # fmt: skip
    job_id = create("keyless")
    log = Recorder()
    trigger = _trigger(job_id, time.time(), log)
    trigger.task_instance = SimpleNamespace(dag_id="d", task_id="t", run_id="r", map_index=-1)

    [payload] = [e.payload async for e in trigger.run()]

    assert payload["status"] == "success"
    [warning] = log.messages("warning")
    assert f"Could not read how far the log of AIHC job {job_id} was copied" in warning
    assert _training(log), "the job's lines were still copied"
    assert _saved() is None
