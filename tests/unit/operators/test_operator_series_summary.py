"""The job summary adds up what a task cost: every job of its try series, every kind of
accelerator, and a job stopped by ``queue_timeout`` (newcomer trial F14, issue 38)."""

from __future__ import annotations

from typing import Any

import pytest
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCJobFailedError, AIHCQueueTimeoutError
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.watch.results import Outputs
from airflow_provider_aihc.watch.summary import add_series, summarize


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    monkeypatch.setattr(AIHCHook, "sleep", staticmethod(lambda seconds: None))


def _operator(**kwargs: Any) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(
        task_id="train",
        image="busybox",
        command="true",
        wait_for_completion=True,
        poll_interval=0.01,
        job_resources={"baidu.com/a800_80g_cgpu": 8},
        **kwargs,
    )


def test_a_retry_after_a_failed_job_sums_both_jobs(aihc_emulator: EmulatorServer) -> None:
    aihc_emulator.backend.add_script(scenarios.FailJob(match="train", reason="CUDA OOM"))
    ti = TaskInstanceStub()
    with pytest.raises(AIHCJobFailedError):
        _operator().execute(context_of(ti))
    failed = ti.xcom["job_summary"]

    _operator().execute(context_of(ti.retry()))

    summary = ti.xcom["job_summary"]
    first, second = summary["try_series"]
    assert first["job_id"] == failed["job_id"] != second["job_id"] == summary["job_id"]
    assert (first["status"], second["status"]) == ("Failed", "Succeeded")
    assert ti.xcom["earlier_job_ids"] == [failed["job_id"]]
    expected = round(failed["accelerator_seconds"] + summary["accelerator_seconds"], 3)
    assert summary["series_accelerator_seconds"] == expected


def test_a_queue_timeout_still_pushes_the_summary(aihc_emulator: EmulatorServer) -> None:
    aihc_emulator.backend.add_script(scenarios.HoldJob(match="train", status="Created"))
    ti = TaskInstanceStub()
    with pytest.raises(AIHCQueueTimeoutError):
        _operator(queue_timeout=0.5).execute(context_of(ti))

    summary = ti.xcom["job_summary"]
    assert summary["job_id"] == ti.xcom["job_id"]
    assert summary["run_seconds"] is None  # it never ran: no accelerator time is made up
    assert summary["try_series"][-1]["job_id"] == summary["job_id"]


def test_every_accelerator_kind_counts_cpu_memory_and_rdma_do_not() -> None:
    from airflow_provider_aihc.models.job import JobInfo

    job = JobInfo.model_validate(
        {
            "jobId": "job-1",
            "name": "xpu",
            "status": "Succeeded",
            "createdAt": "2026-01-01T00:00:00Z",
            "runningAt": "2026-01-01T00:00:10Z",
            "finishedAt": "2026-01-01T00:01:10Z",
            "replicas": 2,
            "resources": [
                {"name": "baidu.com/kunlunxin_p800_xpu", "quantity": 8},
                {"name": "cpu", "quantity": 32},
                {"name": "memory", "quantity": 256},
                {"name": "sharedMemory", "quantity": 64},
                {"name": "rdma/hca", "quantity": 1},
            ],
        }
    )
    summary = summarize(job, "job-1", Outputs(), None)

    assert summary["accelerators_per_replica"] == {"baidu.com/kunlunxin_p800_xpu": 8}
    assert summary["accelerator_seconds"] == 2 * 8 * 60.0
    add_series(summary, [])
    assert summary["series_accelerator_seconds"] == summary["accelerator_seconds"]
