"""Fidelity: Baidu's own ``aihc`` CLI (PyPI aihc 1.1.1) works against the emulator unchanged.

The CLI reads ``~/.aihc/config`` (``[default]`` ``access_id``, ``access_key``, ``host``)
and always speaks ``http://{host}``, so pointing ``HOME`` at a temporary directory and
writing ``host = 127.0.0.1:<port>`` there is all it takes: no patching.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_SECRET_ACCESS_KEY,
    EmulatorServer,
)
from airflow_provider_aihc.emulator.steering.scenarios import HoldJob

AIHC = Path(sys.executable).with_name("aihc")
POOL_NAME = "emulator-pool"

pytestmark = pytest.mark.skipif(not AIHC.exists(), reason="the aihc CLI is not installed")

Run = Callable[..., str]


@pytest.fixture
def aihc(server: EmulatorServer, tmp_path: Path) -> Run:
    config = tmp_path / ".aihc" / "config"
    config.parent.mkdir()
    host = server.url.removeprefix("http://")
    config.write_text(
        "[default]\n"
        f"access_id = {DEFAULT_ACCESS_KEY_ID}\n"
        f"access_key = {DEFAULT_SECRET_ACCESS_KEY}\n"
        "region = cn-beijing\n"
        f"host = {host}\n"
    )
    env = {**os.environ, "HOME": str(tmp_path)}

    def run(*args: str) -> str:
        result = subprocess.run(
            [str(AIHC), *args], env=env, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
        return result.stdout

    return run


def test_the_aihc_cli_runs_a_job_end_to_end(aihc: Run, server: EmulatorServer) -> None:
    server.backend.add_script(HoldJob(match="cli-", status="Running"))  # so that stop stops it
    pools = aihc("pool", "list")
    assert re.search(r"cce-emulator0 +emulator-pool +running +cn-beijing +0/8 +0/64", pools)

    queues = aihc("queue", "list", "--pool", POOL_NAME)
    assert re.search(r"default +NVIDIA A800-SXM4-80GB +0/64", queues)

    submitted = aihc(
        "job",
        "submit",
        "--pool",
        POOL_NAME,
        "--name",
        "cli-llama",
        "--image",
        "registry.baidubce.com/aihc-aiak/aiak-megatron:latest",
        "--command",
        "bash /workspace/run.sh",
        "--gpu",
        "8",
        "--workers",
        "2",
        "--label",
        "team=llm",
    )
    match = re.search(r"Job cli-llama/(pytorchjob-[0-9a-f-]{36}) created successfully", submitted)
    assert match, submitted
    job_id = match.group(1)
    [job] = server.backend.jobs()
    assert (job["jobId"], job["name"], job["labels"]["team"]) == (job_id, "cli-llama", "llm")

    listed = aihc("job", "list", "--pool", POOL_NAME)  # also GETs the job: one poll
    assert re.search(
        rf"cli-llama +{job_id} +cce-emulator0 +default +PyTorchJob +Created +0/2 +"
        r"baidu.com/a800_80g_cgpu:8 +aihc-emulator-ak",
        listed,
    )

    got = aihc("job", "get", "cli-llama", "--pool", POOL_NAME)
    assert re.search(r"cli-llama +cce-emulator0 +default +PyTorchJob +Scheduled +0/2", got)
    pods = aihc("job", "get", "cli-llama", "--pool", POOL_NAME, "--pods", "yes")
    assert re.search(r"cli-llama-master-0 +master +10\.\d+\.\d+\.\d+ +READY", pods)
    assert re.search(r"cli-llama-worker-0 +worker +10\.\d+\.\d+\.\d+ +READY", pods)

    logs = aihc("logs", "cli-llama", "--pool", POOL_NAME, "--tail", "5")
    assert "cli-llama-master-0:" in logs
    assert "cli-llama-worker-0:" in logs
    assert "lm loss" in logs

    stopped = aihc("job", "stop", job_id, "--pool", POOL_NAME)
    assert stopped.strip() == f"cli-llama in {POOL_NAME} was stoped"  # sic
    assert server.backend.job(job_id)["status"] == "ManualTermination"

    deleted = aihc("job", "delete", job_id, "--pool", POOL_NAME)
    assert deleted.strip() == f"cli-llama in {POOL_NAME} was deleted"
    assert server.backend.jobs() == []

    counts = server.backend.counts()
    assert counts["CreateJob"] == 1
    assert counts["StopJob"] == 1
    assert counts["DeleteJob"] == 1
    assert counts["GetPodLogs"] == 2
    assert server.backend.count("ListJobs", 200) == counts["ListJobs"]  # every call signed OK
    assert all(record.status == 200 for record in server.backend.requests)
