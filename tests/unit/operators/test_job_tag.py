"""The job's identity tag (security review S4-3, S4-7; issue #34): an HMAC, keyed by the
connection's tag key, over the job's name and every identity label, the try, its series and
the Airflow deployment among them.  A replayed, forged, foreign or unverifiable job is never
adopted; a retry after an STS refresh adopts its own job when ``job_tag_key`` is set."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os

import pytest
from aihc_jobs import job_body
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID as POOL
from airflow_provider_aihc.emulator import DEFAULT_SECRET_ACCESS_KEY as SK
from airflow_provider_aihc.emulator.pytest_plugin import CONN_ENV
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.operators._identity import (
    DEPLOYMENT_LABEL,
    SERIES_LABEL,
    SIGNED_LABELS,
    TAG_LABEL,
    TI_LABEL,
    TRY_LABEL,
    WATCHED_LABEL,
    TaskIdentity,
    deployment_id,
    job_tag,
    tag_verifies,
)
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

TAG_KEY = "0123456789abcdef0123456789abcdef"


def _operator(**kwargs: object) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(task_id="train", image="busybox", command="true", **kwargs)


def _plant(server: EmulatorServer, name: str, labels: dict[str, str]) -> str:
    body = job_body(name, image="attacker/img")
    body["labels"] = [{"key": k, "value": v} for k, v in labels.items()]
    job_id = server.backend.create_job(POOL, body, creator="attacker-ak")
    server.backend.set_status(job_id, "Running", hold=True)
    return str(job_id)


def _logged(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> str:
    return caplog.text + capsys.readouterr().out


def _own_labels(server: EmulatorServer, job_id: str) -> dict[str, str]:
    labels = server.backend.job(job_id)["labels"]
    return {k: v for k, v in labels.items() if not k.startswith("aijob.")}


def _connect(monkeypatch: pytest.MonkeyPatch, **changes: object) -> None:
    connection = json.loads(os.environ[CONN_ENV])
    extra = changes.pop("extra", {})
    assert isinstance(extra, dict)
    connection.update(changes)
    connection["extra"] = {**connection.get("extra", {}), **extra}
    monkeypatch.setenv(CONN_ENV, json.dumps(connection))


def test_a_deleted_jobs_labels_replayed_with_a_later_try_are_not_adopted_after_a_clear(
    aihc_emulator: EmulatorServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """S4-3's reproduction: a real job's labels copied, the try label raised to 999, the
    job recreated under its name once deleted; the next series must not adopt it (it did
    when the tag covered the task instance and the name only)."""
    ti = TaskInstanceStub()
    genuine = _operator().execute(context_of(ti))
    name = aihc_emulator.backend.job(genuine)["name"]
    copied = _own_labels(aihc_emulator, genuine)
    aihc_emulator.backend.delete_job(POOL, genuine)
    planted = _plant(aihc_emulator, name, copied | {TRY_LABEL: "999"})

    with caplog.at_level(logging.WARNING):
        series_2 = _operator().execute(context_of(ti.clear()))

    assert series_2 != planted
    assert aihc_emulator.backend.job(series_2)["body"]["jobSpec"]["image"] == "busybox"
    assert aihc_emulator.backend.job(series_2)["name"] == f"{name}-s2"
    assert "is not the one the connection's tag key computes" in _logged(caplog, capsys)


def test_a_deleted_jobs_labels_replayed_as_they_are_belong_to_the_old_series(
    aihc_emulator: EmulatorServer,
) -> None:
    """The copy verifies, but it says try 1: a cleared task's new series leaves it."""
    ti = TaskInstanceStub()
    genuine = _operator().execute(context_of(ti))
    name = aihc_emulator.backend.job(genuine)["name"]
    copied = _own_labels(aihc_emulator, genuine)
    aihc_emulator.backend.delete_job(POOL, genuine)
    planted = _plant(aihc_emulator, name, copied)
    assert tag_verifies(SK, copied, name)

    assert _operator().execute(context_of(ti.clear())) != planted


def test_a_job_of_the_series_under_a_name_the_series_never_derives_is_not_adopted(
    aihc_emulator: EmulatorServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The derived name checked: a job whose tag verifies for its own (foreign) name and
    the series' labels is still no job of this series (here forged with the key, as a
    leaked tag of another name would be)."""
    ti = TaskInstanceStub()
    identity = TaskIdentity.from_context(context_of(ti))
    name = identity.default_name() + "-zz"  # found by the lookup's name prefix
    planted = _plant(aihc_emulator, name, identity.tagged(SK, name))

    with caplog.at_level(logging.WARNING):
        job_id = _operator().execute(context_of(ti))

    assert job_id != planted
    assert "its name is none the series derives" in _logged(caplog, capsys)


@pytest.mark.parametrize("label", SIGNED_LABELS)
def test_every_identity_label_is_under_the_tag(label: str) -> None:
    identity = TaskIdentity("dag", "task", "run", try_number=3, first_try=2, deployment="prod")
    labels = identity.tagged(TAG_KEY, "task-1234", watched=True)
    assert tag_verifies(TAG_KEY, labels, "task-1234")
    assert not tag_verifies(TAG_KEY, labels | {label: labels[label] + "0"}, "task-1234")
    assert not tag_verifies(TAG_KEY, {k: v for k, v in labels.items() if k != label}, "x")


def test_forged_and_unverifiable_tags_do_not_verify() -> None:
    identity = TaskIdentity("dag", "task", "run")
    labels = identity.tagged(TAG_KEY, "task-1234")
    assert not tag_verifies("another-key-of-32-characters-long", labels, "task-1234")
    assert not tag_verifies(TAG_KEY, labels, "task-12345")
    assert not tag_verifies(TAG_KEY, {k: v for k, v in labels.items() if k != TAG_LABEL}, "x")
    assert not tag_verifies(TAG_KEY, labels | {TAG_LABEL: "0" * 32}, "task-1234")
    assert not tag_verifies(TAG_KEY, {TAG_LABEL: labels[TAG_LABEL]}, "task-1234")


def test_a_tag_of_the_previous_release_does_not_verify() -> None:
    """The v1 tag (task instance and name only) is never adopted: the package was not
    released with it, and a v1 tag says nothing of the try or the deployment."""
    identity = TaskIdentity("dag", "task", "run")
    message = "\0".join(("airflow-provider-aihc/job-tag/v1", "tag", identity.key, "n"))
    v1 = hmac.new(TAG_KEY.encode(), message.encode(), hashlib.sha256).hexdigest()[:32]
    assert not tag_verifies(TAG_KEY, identity.labels() | {TAG_LABEL: v1}, "n")
    assert job_tag(TAG_KEY, identity.labels(), "n") != v1


def test_a_job_of_another_deployment_with_the_same_key_is_not_adopted(
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Staging and production share the credentials and the DAG files: a scheduled run has
    the same run id in both, so the same labels and name; the deployment tells them apart."""
    monkeypatch.setenv("AIRFLOW__AIHC__DEPLOYMENT_ID", "production")
    production = _operator(wait_for_completion=False).execute(context_of(TaskInstanceStub()))
    aihc_emulator.backend.set_status(production, "Running", hold=True)
    labels = aihc_emulator.backend.job(production)["labels"]
    assert labels[DEPLOYMENT_LABEL] == "production"

    monkeypatch.setenv("AIRFLOW__AIHC__DEPLOYMENT_ID", "staging")
    with caplog.at_level(logging.WARNING):
        staging = _operator().execute(context_of(TaskInstanceStub().retry()))

    assert staging != production
    assert aihc_emulator.backend.job(staging)["labels"][DEPLOYMENT_LABEL] == "staging"
    assert "Airflow deployment 'production' created it" in _logged(caplog, capsys)


@pytest.mark.parametrize(
    ("kwargs", "watched"),
    [
        ({}, "false"),  # the task only starts the job
        ({"wait_for_completion": True, "deferrable": True}, "true"),
        ({"wait_for_completion": True, "deferrable": True, "cancel_on_kill": False}, "false"),
    ],
)
def test_the_watched_label_says_whether_the_job_may_outlive_its_task(
    aihc_emulator: EmulatorServer, kwargs: dict[str, object], watched: str
) -> None:
    from airflow_provider_aihc.version_compat import TaskDeferred

    with contextlib.suppress(TaskDeferred):  # the job is created before the deferral
        _operator(**kwargs).execute(context_of(TaskInstanceStub()))
    [job] = aihc_emulator.backend.jobs()
    assert job["labels"][WATCHED_LABEL] == watched
    assert tag_verifies(SK, job["labels"], job["name"])


def test_a_retry_after_an_sts_refresh_adopts_its_own_job_with_a_job_tag_key(
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """S4-7: STS brings a new key pair at every refresh; the tag key does not change."""
    aihc_emulator.app.credentials.update({"sts-ak-1": "sts-sk-1", "sts-ak-2": "sts-sk-2"})
    sts = {"security_token": "sts-token-1", "job_tag_key": TAG_KEY}
    _connect(monkeypatch, login="sts-ak-1", password="sts-sk-1", extra=sts)
    ti = TaskInstanceStub()
    first = _operator().execute(context_of(ti))
    aihc_emulator.backend.set_status(first, "Running", hold=True)

    refreshed = {"security_token": "sts-token-2", "job_tag_key": TAG_KEY}
    _connect(monkeypatch, login="sts-ak-2", password="sts-sk-2", extra=refreshed)
    with caplog.at_level(logging.INFO):
        retried = _operator().execute(context_of(ti.retry()))

    assert retried == first
    assert aihc_emulator.backend.count("CreateJob") == 1
    assert f"Adopting AIHC job {first}" in _logged(caplog, capsys)


def test_without_a_job_tag_key_a_refreshed_key_is_an_error_naming_the_running_job(
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The fallback (the secret access key) cannot prove a job across an STS refresh: the
    retry says so at error level, naming the job that still runs."""
    aihc_emulator.app.credentials.update({"sts-ak-1": "sts-sk-1", "sts-ak-2": "sts-sk-2"})
    _connect(monkeypatch, login="sts-ak-1", password="sts-sk-1")
    ti = TaskInstanceStub()
    first = _operator().execute(context_of(ti))
    aihc_emulator.backend.set_status(first, "Running", hold=True)

    _connect(monkeypatch, login="sts-ak-2", password="sts-sk-2")
    with caplog.at_level(logging.WARNING):
        retried = _operator().execute(context_of(ti.retry()))

    assert retried != first
    logged = _logged(caplog, capsys)
    assert f"AIHC job {first}" in logged
    assert "stop it by hand" in logged


@pytest.mark.parametrize("key", ["short", " " + TAG_KEY, 12345678901234567890123456789012345])
def test_a_bad_job_tag_key_is_refused_without_showing_it(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, key: object
) -> None:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    _connect(monkeypatch, extra={"job_tag_key": key})
    with pytest.raises(AIHCConfigError, match="job_tag_key") as refused:
        _ = AIHCHook().config
    assert str(key).strip() not in str(refused.value)


@pytest.mark.parametrize("value", ["has space", "-dash-first", "x" * 64, "ü"])
def test_a_deployment_id_that_is_no_label_value_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("AIRFLOW__AIHC__DEPLOYMENT_ID", value)
    with pytest.raises(AIHCConfigError, match=r"\[aihc\] deployment_id"):
        deployment_id()


def test_labels_name_the_try_series_deployment_and_task_instance() -> None:
    identity = TaskIdentity("d", "t", "r", try_number=4, first_try=3, deployment="prod")
    labels = identity.tagged(TAG_KEY, "n")
    assert (labels[TRY_LABEL], labels[SERIES_LABEL], labels[DEPLOYMENT_LABEL]) == ("4", "3", "prod")
    assert labels[TI_LABEL] == identity.key
