"""Results, metrics and the job summary are the same from every way of waiting, in real
DAG runs (``airflow dags test``), on both dialects; a secret the job prints is masked."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from airflow_provider_aihc.emulator import DEFAULT_SECRET_ACCESS_KEY
from airflow_provider_aihc.emulator.pytest_plugin import CONN_ENV
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering import scenarios

pytestmark = pytest.mark.dagrun

WAYS = ("create_sync", "create_deferred", "sensor_poke", "sensor_reschedule", "sensor_deferrable")
LINES = "phase: warmup\nfinal loss: 1.875\nphase: done"
RESULT = json.dumps({"accuracy": 0.91, "note": f"key={DEFAULT_SECRET_ACCESS_KEY}"})
#: Summary fields that differ from job to job (its id and times).
PER_JOB = {"job_id", "created_at", "running_at", "finished_at", "queue_seconds", "run_seconds",
           "accelerator_seconds", "gpu_utilisation_mean", "gpu_utilisation_max",
           "try_series", "series_accelerator_seconds"}  # fmt: skip


def pushed_by(output: str) -> dict[str, Any]:
    line = next(line for line in output.splitlines() if "FIVE_WAYS " in line)
    return json.loads(line.split("FIVE_WAYS ", 1)[1])


@pytest.mark.parametrize("dialect", ["v1", "v2"])
def test_five_ways_of_waiting_push_the_same_outputs(
    aihc_emulator: EmulatorServer, run_dag: Any, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    if dialect == "v2":
        conn = json.loads(os.environ[CONN_ENV])
        conn["extra"]["api_version"] = "v2"
        monkeypatch.setenv(CONN_ENV, json.dumps(conn))
    backend = aihc_emulator.backend
    backend.progression = Progression.per_poll(1, running=2)
    backend.add_script(scenarios.Output(match="five-", lines=LINES, result=RESULT, times=3))
    run = run_dag("results_five_ways")

    assert run.succeeded, run.output[-4000:]
    pushed = pushed_by(run.output)
    assert pushed["create_nowait"] == {"result": None, "metrics": None, "job_summary": None}
    first = pushed["create_sync"]
    assert first["result"] == {"accuracy": 0.91, "note": "key=***"}  # masked
    assert first["metrics"] == {"loss": 1.875, "phase": "done"}
    summary = first["job_summary"]
    assert summary["status"] == "Succeeded"
    assert summary["replicas"] == 2
    assert summary["accelerators_per_replica"] == {"baidu.com/a800_80g_cgpu": 8}
    assert summary["restarts"] == 0
    assert summary["metrics"] == first["metrics"]
    assert summary["queue_seconds"] is not None
    assert summary["run_seconds"] is not None
    assert summary["accelerator_seconds"] == pytest.approx(2 * 8 * summary["run_seconds"])
    # GpuUsage over the run (None if it ran under a second): the emulator's busy GPU.
    mean, peak = summary["gpu_utilisation_mean"], summary["gpu_utilisation_max"]
    assert (mean, peak) == (None, None) or 70 <= mean <= peak <= 99
    for way in WAYS:
        got = pushed[way]
        assert got["result"] == first["result"], way
        assert got["metrics"] == first["metrics"], way
        assert set(got["job_summary"]) == set(summary), way
        gpu = got["job_summary"]["gpu_utilisation_mean"], got["job_summary"]["gpu_utilisation_max"]
        assert gpu == (None, None) or 70 <= gpu[0] <= gpu[1] <= 99, way
        same = {k: v for k, v in got["job_summary"].items() if k not in PER_JOB}
        assert same == {k: v for k, v in summary.items() if k not in PER_JOB}, way
    summary_lines = [line for line in run.output.splitlines() if "GPU-hours;" in line]
    assert len(summary_lines) >= len(WAYS)
    assert not [line for line in summary_lines if DEFAULT_SECRET_ACCESS_KEY in line]
