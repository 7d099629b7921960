"""The queue travels with the job, in real DAG runs (``airflow dags test``) on the emulator.

``queue_travels`` creates and watches jobs every way (the create operator waiting in the
worker and deferred; the sensor in poke, reschedule and deferrable modes, given only the
job id or a ``job_queue``) in one pool and queue:

* the managed pool ``aihc-serverless`` (queue id ``aihcq-emulator0``, named ``default``)
  on ``api_version`` v1 and v2: the emulator refuses every call there without the queue's
  id, as AIHC does, so a run without a refused request sent it on every call;
* the self-managed pool's ``research`` queue on v2, where every single-job action names
  the job's queue (the sensor's log says where it found it).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from test_watch_dags import last_run, printed_once

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression

pytestmark = pytest.mark.dagrun

NAMES = {"qt-sync", "qt-deferred", "qt-poke", "qt-resched", "qt-defer"}
CASES = [
    pytest.param("v1", "aihc-serverless", "aihcq-emulator0", id="managed-v1"),
    pytest.param("v2", "aihc-serverless", "aihcq-emulator0", id="managed-v2"),
    pytest.param("v2", DEFAULT_RESOURCE_POOL_ID, "research", id="self-managed-research-v2"),
]


def connection(api_version: str) -> dict[str, str]:
    """The environment of a run on ``api_version`` (the fixture's connection otherwise)."""
    conn = json.loads(os.environ["AIRFLOW_CONN_AIHC_DEFAULT"])
    conn["extra"]["api_version"] = api_version
    return {"AIRFLOW_CONN_AIHC_DEFAULT": json.dumps(conn)}


def log_lines(server: EmulatorServer, job: dict[str, Any], queue: str) -> list[str]:
    """Every line the emulator wrote for the job's (one) pod."""
    pod = f"{job['name']}-master-0"
    page = server.backend.pod_logs(
        job["resourcePoolId"], job["jobId"], pod, marker="", queue_id=queue
    )
    return list(page.lines)


@pytest.mark.parametrize(("api_version", "pool", "queue"), CASES)
def test_every_way_to_create_and_watch_a_job_names_its_queue(
    aihc_emulator: EmulatorServer, run_dag: Any, api_version: str, pool: str, queue: str
) -> None:
    backend = aihc_emulator.backend
    backend.progression = Progression.per_poll(1, running=3)
    conf = json.dumps({"pool": pool, "queue": queue})
    run = run_dag("queue_travels", conf=conf, env=connection(api_version))

    assert run.succeeded, run.output[-4000:]
    _, states = last_run("queue_travels")
    assert set(states.values()) == {"success"}, states
    jobs = {job["name"]: job for job in backend.jobs()}
    assert set(jobs) == NAMES
    assert {(job["status"], job["resourcePoolId"]) for job in jobs.values()} == {
        ("Succeeded", pool)
    }
    refused = [f"{r.operation} {r.status}" for r in backend.requests if 400 <= r.status < 500]
    assert refused == []
    output = printed_once(run.output)
    for job in jobs.values():  # the training log is in the task log, each line once
        lines = log_lines(aihc_emulator, job, queue)
        assert lines, job["name"]
        for line in lines:
            assert output.count(line) == 1, (job["name"], line)
    # The sensors given only a job id took the queue from the create operator's XCom.
    for task_id in ("for_poke", "for_reschedule"):
        assert f"queue {queue}, from the XCom job_queue of task {task_id!r}" in output
    assert f"queue {queue}, from the sensor's job_queue" in output
