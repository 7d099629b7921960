"""``job_summary``'s GPU use: the mean and max ``GpuUsage`` of an ended job's run, from one
job-metrics request (v1's per-pod series, v2's DescribeJobMetrics answer), over real HTTP
against the emulator; ``None`` when the job never ran or the metrics cannot be read."""

from __future__ import annotations

import json
import os
import time

import pytest
from watch_helpers import POOL, Recorder

from airflow_provider_aihc.emulator.pytest_plugin import CONN_ENV
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.watch import drive
from airflow_provider_aihc.watch.results import OutputSpec
from airflow_provider_aihc.watch.summary import collect

NO_OUTPUTS = OutputSpec.build(None, {})


@pytest.fixture(params=["v1", "v2"])
def api_hook(
    request: pytest.FixtureRequest, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> AIHCHook:
    conn = json.loads(os.environ[CONN_ENV])
    conn["extra"]["api_version"] = request.param
    monkeypatch.setenv(CONN_ENV, json.dumps(conn))
    return AIHCHook()


class SteppingClock:
    """The emulator's clock, 30 s on at every read: a job runs for minutes of it."""

    def __init__(self) -> None:
        self.now = time.time() - 3600

    def __call__(self) -> float:
        self.now += 30
        return self.now


def _ended(server: EmulatorServer, hook: AIHCHook, name: str) -> str:
    from watch_helpers import job_body

    server.backend.clock = SteppingClock()
    job_id = hook.create_job(job_body(name)).job_id
    for _ in range(20):
        if hook.get_job(job_id, POOL).is_terminal:
            return job_id
    raise AssertionError("the job never ended")


def test_an_ended_jobs_gpu_use_is_read_in_one_request(
    aihc_emulator: EmulatorServer, api_hook: AIHCHook, log: Recorder
) -> None:
    job_id = _ended(aihc_emulator, api_hook, "gpu-use")
    aihc_emulator.backend.request_log.clear()
    summary, _, _ = drive(collect(job_id, POOL, NO_OUTPUTS, None, log), api_hook)
    mean, peak = summary["gpu_utilisation_mean"], summary["gpu_utilisation_max"]
    assert mean is not None
    assert peak is not None
    assert 70 <= mean <= peak <= 99  # the emulator's busy GPU (samples.py _BUSY)
    assert aihc_emulator.backend.counts().get("GetJobMetrics") == 1


def test_a_job_that_never_ran_asks_for_no_metrics(
    aihc_emulator: EmulatorServer, hook: AIHCHook, log: Recorder
) -> None:
    aihc_emulator.backend.add_script(
        scenarios.FailJob(match="never-ran", reason="quota", from_status="Scheduled")
    )
    job_id = hook.create_job(__import__("watch_helpers").job_body("never-ran")).job_id
    for _ in range(10):
        if hook.get_job(job_id, POOL).is_terminal:
            break
    aihc_emulator.backend.request_log.clear()
    summary, _, _ = drive(collect(job_id, POOL, NO_OUTPUTS, None, log), hook)
    assert (summary["gpu_utilisation_mean"], summary["gpu_utilisation_max"]) == (None, None)
    assert "GetJobMetrics" not in aihc_emulator.backend.counts()


def test_unreadable_metrics_leave_the_gpu_use_null_and_say_why(
    aihc_emulator: EmulatorServer, hook: AIHCHook, log: Recorder, no_hook_retries: None
) -> None:
    job_id = _ended(aihc_emulator, hook, "gpu-unread")
    aihc_emulator.backend.add_fault(scenarios.error(503, operation="GetJobMetrics"))
    summary, _, _ = drive(collect(job_id, POOL, NO_OUTPUTS, None, log), hook)
    assert summary["gpu_utilisation_mean"] is None
    assert summary["status"] == "Succeeded"
    assert any("GPU use" in m for m in log.messages("warning"))
