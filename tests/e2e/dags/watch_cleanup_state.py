"""A trigger's ``cleanup`` inside a real task run: on Airflow < 3.3 it reads the state of
the task it waits for the way that triggerer does (3.0-3.2: the Task SDK asks the
supervisor, which asks the execution API; 2.x: the metadata DB) and stops the job when that
task left ``deferred``; >= 3.3 leaves it to ``on_kill`` and does nothing.

``marked`` stands for the deferred task a user marked success (or failed): its row is no
longer ``deferred``. ``remove`` runs the trigger of a held job for two polls, cancels it
and cleans it up, as the triggerer does when the trigger leaves its set.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from _compat import DAG, task

POOL = "cce-emulator0"


async def run_then_remove(trigger: Any, reads: Any) -> None:
    before = reads()
    running = asyncio.ensure_future(trigger.run().__anext__())
    # Polls at the emulator; a trigger that ended (or failed) early ends the wait too, so
    # a broken trigger fails this task with its own error instead of hanging it.
    while reads() < before + 2 and not running.done():  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    if running.done():
        raise RuntimeError(f"the trigger ended before its second poll: {running.result()}")
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    await trigger.cleanup()


with DAG("watch_cleanup_state", start_date=datetime(2024, 1, 1), schedule=None):

    @task
    def marked() -> None:
        """The waited-for task, no longer deferred."""

    @task
    def remove(**context: Any) -> None:
        import json
        import urllib.request

        from airflow_provider_aihc.hooks.aihc import AIHCHook
        from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger

        url = json.loads(os.environ["AIRFLOW_CONN_AIHC_DEFAULT"])["host"]

        def reads() -> int:
            with urllib.request.urlopen(f"{url}/_emulator/state", timeout=30) as answer:
                counts = json.load(answer)["requests"]
            return int(counts.get("GetJob", 0)) + int(counts.get("ListJobs", 0))

        ti = context["ti"]
        body = {"name": "held", "jobSpec": {"image": "i", "command": "c", "replicas": 1}}
        job_id = AIHCHook().create_job(body).job_id
        trigger = AIHCJobTrigger(job_id, POOL, poll_interval=0.05, cancel_on_kill=True)
        trigger.task_instance = SimpleNamespace(
            dag_id=ti.dag_id, task_id="marked", run_id=ti.run_id, map_index=-1
        )
        asyncio.run(run_then_remove(trigger, reads))
        print(f"CLEANUP-DONE {job_id}", flush=True)

    marked() >> remove()
