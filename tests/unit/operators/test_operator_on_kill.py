"""``on_kill`` runs inside Airflow's SIGTERM handler, on whatever the main thread was doing:
it must stop the job without the locks that thread may hold (the task's log, the hook's
HTTP session)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from aihc_jobs import job_body

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

POOL = "cce-emulator0"


class BlockedLog:
    """A task log whose lock the interrupted main thread holds: every call waits."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.calls: list[str] = []

    def __getattr__(self, level: str) -> Any:
        def call(msg: str, *args: Any, **kwargs: Any) -> None:
            self.released.wait(60)
            self.calls.append(level)

        return call


def test_on_kill_stops_the_job_while_the_log_is_held(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_id = str(aihc_emulator.backend.create_job(POOL, job_body("killed")))
    aihc_emulator.backend.set_status(job_id, "Running", hold=True)
    operator = AIHCCreateJobOperator(task_id="train", name="killed", image="i", command="c")
    operator.job_id, operator._job_pool = job_id, POOL
    operator.hook.get_job(job_id)  # the hook and its session in use, as in a sync wait
    log = BlockedLog()
    monkeypatch.setattr(AIHCCreateJobOperator, "log", property(lambda self: log))

    operator.on_kill()  # as the SIGTERM handler would, while the log is held

    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"
    # It did not wait for the log: a log call returns only once released (or after 60 s).
    assert log.calls == []  # the stop was logged from its own thread, which still waits
    log.released.set()
    deadline = time.monotonic() + 30
    while not log.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    assert log.calls == ["info"]


def test_on_kill_keeps_the_job_without_cancel_on_kill(aihc_emulator: EmulatorServer) -> None:
    job_id = str(aihc_emulator.backend.create_job(POOL, job_body("kept")))
    aihc_emulator.backend.set_status(job_id, "Running", hold=True)
    operator = AIHCCreateJobOperator(
        task_id="train", name="kept", image="i", command="c", cancel_on_kill=False
    )
    operator.job_id, operator._job_pool = job_id, POOL
    operator.on_kill()
    assert aihc_emulator.backend.job(job_id)["status"] == "Running"
    assert aihc_emulator.backend.count("StopJob") == 0
