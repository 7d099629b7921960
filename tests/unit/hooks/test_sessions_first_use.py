"""A triggerer's first AIHC trigger must not stall its event loop: the hook,
its models, aiohttp and the CA bundle are loaded in a thread.  Checked in a fresh
interpreter (nothing of ours loaded yet, as in a new triggerer) by recording what the
event-loop thread imports and where the SSL context is built, not by timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from hook_helpers import POOL, job_body

from airflow_provider_aihc.emulator.server import EmulatorServer

CHILD = textwrap.dedent(
    """
    import asyncio, json, ssl, sys, threading

    import airflow.triggers.base  # what a triggerer has loaded before any trigger runs
    from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger

    on_loop, contexts = [], []
    loop_thread = threading.main_thread()

    class Recorder:
        def find_spec(self, name, path=None, target=None):
            if threading.current_thread() is loop_thread and running[0]:
                on_loop.append(name)
            return None

    real_context = ssl.create_default_context

    def create_default_context(*args, **kwargs):
        contexts.append(threading.current_thread() is loop_thread)
        return real_context(*args, **kwargs)

    ssl.create_default_context = create_default_context
    running = [False]
    sys.meta_path.insert(0, Recorder())

    async def first_event():
        running[0] = True
        trigger = AIHCJobTrigger(sys.argv[1], sys.argv[2], poll_interval=0.1, stream_logs=False)
        async for event in trigger.run():
            return event.payload["status"]

    status = asyncio.run(first_event())
    print(json.dumps({"status": status, "on_loop": on_loop, "contexts": contexts}))
    """
)
HEAVY = ("aiohttp", "yarl", "pydantic", "tenacity", "certifi", "airflow_provider_aihc.hooks")
#: Stdlib-only and cheap: where the loading off the loop starts from.
LIGHT = {"airflow_provider_aihc.hooks", "airflow_provider_aihc.hooks._sessions"}


def test_the_first_trigger_loads_nothing_heavy_on_the_event_loop(
    aihc_emulator: EmulatorServer,
) -> None:
    job_id = str(aihc_emulator.backend.create_job(POOL, job_body("first-use")))
    env = {**os.environ, **aihc_emulator.connection(resource_pool_id=None).env()}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, job_id, POOL],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == "success"
    heavy = [n for n in report["on_loop"] if n.startswith(HEAVY) and n not in LIGHT]
    assert heavy == [], f"imported on the event loop: {heavy}"
    assert report["contexts"]
    assert not any(report["contexts"])  # every SSL context was built in a thread
