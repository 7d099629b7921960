"""A job's own secrets are masked in the log lines a deferred wait or a sensor copies
(security review S4-2): the triggerer and the sensor never rendered the job, so nothing
there registered its env tokens; the streamer reads the job's env and masks the values
whose names are sensitive, without carrying them in the trigger's kwargs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.watch import JobEvent

TOKEN = "hf_S4_2_never_registered_token"
ENVS = [
    {"name": "HF_TOKEN", "value": TOKEN},
    {"name": "NCCL_DEBUG", "value": "WARN"},  # not a secret: stays readable
    {"name": "DATA_DIR", "value": "/mnt/data/s4-2-visible"},
]
LINES = f"+ huggingface-cli login --token {TOKEN}\ndata in /mnt/data/s4-2-visible, NCCL_DEBUG=WARN"


def leaky_job(server: EmulatorServer, create: Callable[..., str], name: str) -> str:
    server.backend.progression = Progression.per_poll(1, running=2)
    server.backend.add_script(scenarios.Output(match=name, lines=LINES))
    return create(name, envs=ENVS)


def logged(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> str:
    """What was logged: Airflow 2 through logging, Airflow 3 through structlog (stdout)."""
    return caplog.text + capsys.readouterr().out


def assert_masked(text: str) -> None:
    assert "huggingface-cli login --token ***" in text  # the line was copied, masked
    assert TOKEN not in text
    assert "data in /mnt/data/s4-2-visible, NCCL_DEBUG=WARN" in text


async def test_a_deferred_wait_masks_the_jobs_env_tokens_in_the_lines_it_copies(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level("INFO")
    job_id = leaky_job(aihc_emulator, create, "deferred-leaky")
    trigger = AIHCJobTrigger(job_id, None, poll_interval=0.05)

    payloads = [event.payload async for event in trigger.run()]

    assert JobEvent.from_payload(payloads[0]).status == "success"
    assert_masked(logged(caplog, capsys))
    # Nothing of the job's secrets travels with the trigger (stored in the DB).
    assert TOKEN not in json.dumps(trigger.serialize()[1])


@pytest.mark.parametrize("mode", ["poke", "reschedule"])
def test_a_sensor_masks_the_jobs_env_tokens_it_never_knew(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    mode: str,
) -> None:
    caplog.set_level("INFO")
    job_id = leaky_job(aihc_emulator, create, f"sensed-{mode}")
    sensor = AIHCJobSensor(task_id="wait", job_id=job_id, poke_interval=0.01, mode=mode)
    context: dict[str, Any] = {"ti": None}

    while not sensor.poke(context):
        pass

    assert_masked(logged(caplog, capsys))


def test_a_job_without_sensitive_env_costs_one_env_read_and_masks_nothing(
    aihc_emulator: EmulatorServer,
    create: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level("INFO")
    aihc_emulator.backend.progression = Progression.per_poll(1, running=3)
    job_id = create("plain", envs=[{"name": "NCCL_DEBUG", "value": "WARN"}])
    sensor = AIHCJobSensor(task_id="wait", job_id=job_id, poke_interval=0.01)
    pokes = 1
    while not sensor.poke({"ti": None}):
        pokes += 1

    assert "***" not in logged(caplog, capsys)
    # One GetJob per poke, one for the summary at the end, and one, once, for the env:
    # not one per poll.
    assert aihc_emulator.backend.count("GetJob") == pokes + 1 + 1
