"""TaskFlow DAGs (airflow dags test) for tests/e2e/test_taskflow.py, run against the
executing emulator.

Each job function returns what only the job's own process knows (its rank, its pid and the
emulator's job marker from its environment), so the test can tell the value was computed
in the job, not on the worker.  ``check`` prints what it received, one JSON line.
"""

from __future__ import annotations

import json
import os
from datetime import date, datetime

from _compat import DAG, task

POLL = 0.2
CHECK = "TASKFLOW-CHECK "

with DAG("taskflow_chain", start_date=datetime(2024, 1, 1), schedule=None):

    @task
    def seed() -> int:
        return 3

    @task.aihc_python(image="python:3.11", replicas=2, poll_interval=POLL)
    def square(x: int, scale: float = 1.0) -> dict:
        import os

        rank = int(os.environ["RANK"])
        print(f"rank {rank} of {os.environ['WORLD_SIZE']} squares {x}", flush=True)
        return {
            "value": x * x * scale,
            "rank": rank,
            "world": int(os.environ["WORLD_SIZE"]),
            "pid": os.getpid(),
            "job": os.environ.get("AIHC_EMULATOR_JOB_ID"),
        }

    @task.aihc_python(image="python:3.11", poll_interval=POLL, deferrable=True)
    def add(left: dict, right: int) -> dict:
        import os

        return {"value": left["value"] + right, "job": os.environ.get("AIHC_EMULATOR_JOB_ID")}

    @task.aihc_python(image="python:3.11", poll_interval=POLL)
    def cube(x: int) -> int:
        return x**3

    @task.aihc(image="python:3.11", poll_interval=POLL)
    def echo(total: dict) -> list[str]:
        return ["echo", f"total is {total['value']}", "and a 'quoted' word"]

    @task
    def check(squared: dict, added: dict, cubes: list, echoed: str) -> None:
        print(CHECK + json.dumps({"square": squared, "add": added, "cubes": list(cubes),
                                  "echo": echoed, "worker_pid": os.getpid()}))  # fmt: skip

    squared = square(seed(), scale=2.0)
    added = add(squared, 5)
    check(squared, added, cube.expand(x=[1, 2, 3]), echo(added))


with DAG("taskflow_failures", start_date=datetime(2024, 1, 1), schedule=None):

    @task.aihc_python(image="python:3.11", poll_interval=POLL)
    def diverge(lr: float) -> float:
        import math

        loss = 1.0
        for step in range(3):
            loss *= 10 * lr
            print(f"step {step} loss {loss}", flush=True)
        if not math.isfinite(loss) or loss > 100:
            raise FloatingPointError(f"loss diverged to {loss} at lr={lr}")
        return loss

    @task.aihc_python(image="python:3.11", poll_interval=POLL)
    def not_json(when: object) -> None:
        print(when)

    diverge(lr=5.0)
    not_json(when=date(2025, 1, 1))


with DAG("taskflow_killed", start_date=datetime(2024, 1, 1), schedule=None):

    @task.aihc_python(image="python:3.11", replicas=2, poll_interval=POLL)
    def forever() -> None:
        import time

        print("training forever", flush=True)
        while True:
            time.sleep(0.2)

    forever()
