"""AIHCCreateJobOperator in real DAG runs (``airflow dags test``) against the emulator."""

from __future__ import annotations

import json
import re

import pytest

from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.operators._identity import TI_LABEL

pytestmark = pytest.mark.dagrun


def _wire(job: dict) -> dict:
    """The create body as AIHC received it, without what differs per task."""
    body = dict(job["body"])
    body.pop("name")
    body.pop("labels")
    return body


def test_seed_job_named_and_body_file_send_the_same_wire_json(aihc_emulator, run_dag):
    run = run_dag("create_seed")

    assert run.succeeded, run.output[-3000:]
    jobs = {job["name"]: job for job in aihc_emulator.backend.jobs()}
    assert len(jobs) == 2
    named = next(job for name, job in jobs.items() if name.startswith("llama2-7b-named-"))
    from_file = next(job for name, job in jobs.items() if not name.startswith("llama2-7b-named-"))
    assert _wire(named) == _wire(from_file)
    spec = named["body"]["jobSpec"]
    assert spec["enableRDMA"] is True
    assert spec["replicas"] == 1
    assert spec["resources"] == [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}]
    assert spec["envs"] == [{"name": "CUDA_DEVICE_MAX_CONNECTIONS", "value": "1"}]
    assert "{{" not in spec["command"]
    assert "/checkpoints/manual__" in spec["command"]
    assert re.fullmatch(r"seed-body-[0-9a-f]{8}", from_file["name"])
    assert aihc_emulator.backend.count("CreateJob") == 2

    for task_id, job in (("seed_named", named), ("seed_body", from_file)):
        line = re.search(rf"XCOM {task_id} (\{{.*\}})", run.output)
        assert line, run.output[-3000:]
        values = json.loads(line.group(1))
        assert values == {
            "return_value": job["jobId"],
            "job_id": job["jobId"],
            "job_name": job["name"],
            "resource_pool_id": job["resourcePoolId"],
        }
        assert job["labels"]["airflow-task-id"] == task_id
        assert job["labels"]["airflow-dag-id"] == "create_seed"
        assert len(job["labels"][TI_LABEL]) == 20


def test_invalid_input_fails_listing_every_field_and_sends_nothing(aihc_emulator, run_dag):
    run = run_dag("create_invalid")

    assert not run.succeeded
    assert "Invalid AIHC job parameters" in run.output
    for field in ("name", "jobSpec.replicas (replicas)", "priority (priority)", "quantity"):
        assert field in run.output, field
    assert "high, normal, low" in run.output
    assert "enableRdma" in run.output  # the typo in body is named, not silently dropped
    assert aihc_emulator.backend.requests == []


def test_lost_create_answer_then_task_retry_leaves_exactly_one_job(aihc_emulator, run_dag):
    backend = aihc_emulator.backend
    # Try 1: the lookup before the create works, the create lands but its answer is lost,
    # and every lookup after it fails, so the try cannot tell and gives up. Try 2 adopts.
    backend.add_fault(
        scenarios.passthrough(operation="ListJobs"),
        scenarios.drop_after(operation="CreateJob"),
        scenarios.error(503, operation="ListJobs", times=3),
    )
    conn = aihc_emulator.connection(max_retries=0)

    run = run_dag("create_lost_answer", env=conn.env())

    assert run.succeeded, run.output[-4000:]
    assert backend.count("CreateJob") == 1
    jobs = backend.jobs()
    assert [job["status"] for job in jobs] == ["Succeeded"]
    assert "Adopting AIHC job" in run.output


@pytest.mark.parametrize(
    ("name", "final_status"),
    [
        ("sync-timeout", "ManualTermination"),
        ("deferred-timeout", "ManualTermination"),
        ("sync-keep", "Running"),
    ],
)
def test_a_deadline_stops_the_job_unless_cancel_on_kill_is_false(
    aihc_emulator, run_dag, name, final_status
):
    aihc_emulator.backend.add_script(scenarios.HoldJob(match=name))

    run = run_dag(f"create_{name.replace('-', '_')}")

    assert not run.succeeded
    jobs = aihc_emulator.backend.jobs()
    [(job_name, status)] = [(job["name"], job["status"]) for job in jobs]
    assert job_name == name
    if final_status == "ManualTermination":
        assert status == final_status
    else:  # left alone: wherever the emulator's clock got it (a loaded machine is slow)
        assert status not in ("ManualTermination", "Failed"), status
        assert aihc_emulator.backend.count("StopJob") == 0
