"""GPU use of a training job in both answer shapes the sources define:
v2 ``DescribeJobMetrics`` one ``Metric{time, value}`` (baiducloud-go-sdk
``model_describe_job_metrics_response.go:7-9``) as bce-python-sdk 0.9.79 sends it
(``X-API-Version: v2``, times as strings), and v1 ``GET …/metrics`` ``podMetrics`` series
(bce-sdk-go ``api/v1/aiJob.go:388-401``): the same job, the same samples."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aihc_emulator_client import POOL, Client
from bce_sdk import bce_client, server_error

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression


@pytest.fixture
def running() -> Iterator[EmulatorServer]:
    with EmulatorServer(progression=Progression.per_poll(1, running=20)) as server:
        yield server


def test_one_sample_in_v2_is_the_pods_newest_mean(running: EmulatorServer) -> None:
    sdk = bce_client(running.url)
    spec = {
        "image": "trainer:1",
        "replicas": 2,
        "resources": [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}],
    }
    job_id = sdk.CreateJob(
        resourcePoolId=POOL, queueID="default", name="gpu", command="python t.py", jobSpec=spec
    ).jobId
    for _ in range(4):
        status = sdk.DescribeJob(resourcePoolId=POOL, queueID="default", jobId=job_id).job.status
    assert status == "Running"
    v2 = sdk.job.DescribeJobMetrics(
        resourcePoolId=POOL, queueID="default", jobId=job_id, metricType="GpuUsage",
        startTime="0", timeStep="60",
    )  # fmt: skip
    assert v2.jobId == job_id
    v1 = Client(running.url).request(
        "GET",
        f"/api/v1/aijobs/{job_id}/metrics",
        {"resourcePoolId": POOL, "metricType": "GpuUsage", "startTime": "0", "timeStep": "60"},
    )
    pods = v1.json()["result"]["podMetrics"]
    assert [p["podName"] for p in pods] == ["gpu-master-0", "gpu-worker-0"]
    newest = [p["metrics"][-1] for p in pods]
    assert v2.metrics.time == newest[0]["time"]
    assert v2.metrics.value == round(sum(s["value"] for s in newest) / len(newest))
    assert isinstance(v2.metrics.time, str)
    error = server_error(
        lambda: sdk.job.DescribeJobMetrics(POOL, "default", job_id, metricType="GpuHeat")
    )
    assert "metricType must be one of" in str(error)
