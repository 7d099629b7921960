"""Adoption trusts only what an attacker cannot forge (security review F5): a job planted
with the task instance's public labels, or with a real job's labels copied, or by another
user under the very name, is never adopted; the task says why and creates its own."""

from __future__ import annotations

import json
import logging
import os

import pytest
from aihc_jobs import job_body
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator import DEFAULT_ACCESS_KEY_ID as AK
from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID as POOL
from airflow_provider_aihc.emulator.pytest_plugin import CONN_ENV
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.pods import user_id
from airflow_provider_aihc.operators._identity import TAG_LABEL, TaskIdentity, tag_verifies
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator


def _operator(**kwargs: object) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(task_id="train", image="busybox", command="true", **kwargs)


def _plant(server: EmulatorServer, name: str, labels: dict[str, str], creator: str) -> str:
    body = job_body(name, image="attacker/img")
    body["labels"] = [{"key": k, "value": v} for k, v in labels.items()]
    job_id = server.backend.create_job(POOL, body, creator=creator)
    server.backend.set_status(job_id, "Running", hold=True)
    return str(job_id)


def _logged(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> str:
    """The task log: Airflow 2.11 logs through ``logging``, 3.x's structlog to stdout."""
    return caplog.text + capsys.readouterr().out


def _image(server: EmulatorServer, job_id: str) -> str:
    return str(server.backend.job(job_id)["body"]["jobSpec"]["image"])


def test_a_job_planted_with_the_public_labels_is_not_adopted(
    aihc_emulator: EmulatorServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The review's reproduction: labels and default name computed from public facts."""
    ti = TaskInstanceStub()
    identity = TaskIdentity.from_context(context_of(ti))
    planted = _plant(aihc_emulator, identity.default_name(), identity.labels(), "attacker-ak")

    with caplog.at_level(logging.WARNING):
        job_id = _operator().execute(context_of(ti))
    logged = _logged(caplog, capsys)

    assert job_id != planted
    assert _image(aihc_emulator, job_id) == "busybox"
    assert f"Not adopting AIHC job {planted}" in logged
    assert "no airflow-ti-tag label" in logged
    assert f"held by AIHC job {planted}" in logged  # the squatted name: a fresh one


def test_a_real_jobs_labels_copied_onto_a_planted_job_are_not_enough(
    aihc_emulator: EmulatorServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ti = TaskInstanceStub()
    ours = _operator().execute(context_of(ti))
    labels = aihc_emulator.backend.job(ours)["labels"]
    aihc_emulator.backend.set_status(ours, "Failed", reason="preempted")
    name = aihc_emulator.backend.job(ours)["name"]
    planted = _plant(aihc_emulator, f"{name}-zz", labels, "attacker-ak")  # found by the lookup

    with caplog.at_level(logging.WARNING):
        retried = _operator().execute(context_of(ti.retry()))
    logged = _logged(caplog, capsys)

    assert retried not in (ours, planted)
    assert "is not the one the connection's tag key computes" in logged


def test_the_same_name_and_labels_by_another_user_are_refused_by_the_creator_label(
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Our job deleted, another user recreates it under its name with every label copied
    (the tag verifies): AIHC's creator label still tells them apart."""
    connection = json.loads(os.environ[CONN_ENV])
    connection["extra"]["user_id"] = user_id(AK)
    monkeypatch.setenv(CONN_ENV, json.dumps(connection))
    ti = TaskInstanceStub()
    ours = _operator().execute(context_of(ti))
    copied = aihc_emulator.backend.job(ours)
    assert copied["labels"]["aijob.cce.baidubce.com/ai-user-id"] == user_id(AK)
    aihc_emulator.backend.delete_job(POOL, ours)
    user_labels = {k: v for k, v in copied["labels"].items() if not k.startswith("aijob.")}
    planted = _plant(aihc_emulator, copied["name"], user_labels, "attacker-ak")

    with caplog.at_level(logging.WARNING):
        retried = _operator().execute(context_of(ti.retry()))
    logged = _logged(caplog, capsys)

    assert retried != planted
    assert _image(aihc_emulator, retried) == "busybox"
    assert f"AIHC says {user_id('attacker-ak')} created it" in logged


def test_every_job_carries_a_tag_for_its_own_name(aihc_emulator: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    job = aihc_emulator.backend.job(_operator().execute(context_of(ti)))
    assert len(job["labels"][TAG_LABEL]) == 32
    assert tag_verifies("aihc-emulator-sk", job["labels"], job["name"])
    assert not tag_verifies("rotated-secret", job["labels"], job["name"])
    assert not tag_verifies("aihc-emulator-sk", job["labels"], job["name"] + "-2")
