"""A deferred create operator whose triggerer is replaced mid-wait (the trigger rebuilt
from ``serialize()`` by another triggerer) still pushes the result, metrics and summary a
wait in the worker pushes."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.version_compat import TaskDeferred

sys.path.insert(0, str(Path(__file__).parents[1] / "operators"))
from operator_helpers import TaskInstanceStub, context_of

METRICS = {"loss": r"final loss: (\S+)"}
LINES = "final loss: 0.5\nfinal loss: 0.25"
RESULT = json.dumps({"best": [1, 2]})
PER_JOB = {"job_id", "created_at", "running_at", "finished_at", "queue_seconds", "run_seconds",
           "accelerator_seconds", "series_accelerator_seconds", "try_series",
           "gpu_utilisation_mean", "gpu_utilisation_max"}  # fmt: skip


def operator(task_id: str, **kwargs: Any) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(
        task_id=task_id,
        name=task_id,
        image="busybox",
        command="true",
        job_resources={"baidu.com/a800_80g_cgpu": 8},
        wait_for_completion=True,
        poll_interval=0.05,
        metrics=METRICS,
        **kwargs,
    )


async def test_a_trigger_taken_over_mid_wait_gives_the_same_outputs(
    aihc_emulator: EmulatorServer,
) -> None:
    backend = aihc_emulator.backend
    backend.progression = Progression.per_poll(1, running=6)
    backend.add_script(scenarios.Output(match="res-", lines=LINES, result=RESULT, times=2))

    in_worker = TaskInstanceStub(task_id="res-sync")
    # Called on the loop's thread: Airflow 2.11's executor safeguard is thread-local.
    operator("res-sync").execute(context_of(in_worker))

    deferred = operator("res-deferred", deferrable=True)
    ti = TaskInstanceStub(task_id="res-deferred")
    with pytest.raises(TaskDeferred) as raised:
        deferred.execute(context_of(ti))
    first: AIHCJobTrigger = raised.value.trigger
    job_id = first.job_id

    async def run(trigger: AIHCJobTrigger) -> list[dict[str, Any]]:
        return [event.payload async for event in trigger.run()]

    started = asyncio.create_task(run(first))
    until = time.monotonic() + 60
    while backend.job(job_id)["status"] != "Running" and time.monotonic() < until:  # noqa: ASYNC110 (the emulator's state, read from another thread)
        await asyncio.sleep(0.01)  # the first triggerer is mid-wait
    started.cancel()  # it dies
    with pytest.raises(asyncio.CancelledError):
        await started
    assert backend.job(job_id)["status"] == "Running"
    _classpath, kwargs = first.serialize()
    [payload] = await run(AIHCJobTrigger(**kwargs))  # another triggerer rebuilds it

    job_id_back = deferred.execute_complete(context_of(ti), payload)
    assert job_id_back == job_id
    assert ti.xcom["result"] == in_worker.xcom["result"] == {"best": [1, 2]}
    assert ti.xcom["metrics"] == in_worker.xcom["metrics"] == {"loss": 0.25}
    mine, theirs = ti.xcom["job_summary"], in_worker.xcom["job_summary"]
    assert {k: v for k, v in mine.items() if k not in PER_JOB} == {
        k: v for k, v in theirs.items() if k not in PER_JOB
    }
    assert mine["status"] == "Succeeded"


def test_a_create_operator_that_does_not_wait_pushes_no_outputs(
    aihc_emulator: EmulatorServer,
) -> None:
    ti = TaskInstanceStub(task_id="res-nowait")
    op = AIHCCreateJobOperator(task_id="res-nowait", image="busybox", command="true",
                               metrics=METRICS)  # fmt: skip
    op.execute(context_of(ti))
    assert not {"result", "metrics", "job_summary"} & set(ti.xcom)
