"""The online-service operators against the emulator over HTTP: created, rolled and
scaled once whatever fails (a retry, a lost create or modify answer), the rollout judged
by counts, instance states and the live configuration, a stuck rollout failed early with
its reasons (and reverted when asked), deletes that find nothing counted as done, a v1
connection and bad input refused before any request."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest
from operator_helpers import TaskInstanceStub, context_of
from service_helpers import require_actions, sent, total, use_api_version

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCError, AIHCValidationError
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.operators.service import (
    AIHCDeleteServiceOperator,
    AIHCDeployServiceOperator,
    AIHCScaleServiceOperator,
    AIHCUpdateServiceOperator,
)
from airflow_provider_aihc.watch.service import AIHCServiceRolloutError

CONF: dict[str, Any] = {
    "name": "ranker-svc",
    "acceleratorType": "A100",
    "workloadType": "",
    "instanceCount": 2,
    "resourcePool": {"resourcePoolId": "cce-emulator0", "queueName": "default",
                     "resourcePoolType": ""},
    "containers": [
        {"name": "main", "cpus": 2, "memory": 8, "acceleratorCount": 1,
         "image": {"imageType": 2, "imageUrl": "registry.example/ranker:1"},
         "ports": [{"name": "http", "port": 8080}]}
    ],
    "deploy": {"canaryStrategy": {"maxSurge": 50, "maxUnavailable": 0}},
}  # fmt: skip
FAST = {"poll_interval": 0, "timeout": 60}


@pytest.fixture
def services(aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    use_api_version(monkeypatch, "v2")
    monkeypatch.setattr(AIHCHook, "sleep", staticmethod(lambda seconds: None))
    require_actions(aihc_emulator, "services", "models")
    return aihc_emulator


def _deploy(**kwargs: Any) -> AIHCDeployServiceOperator:
    given = {"task_id": "deploy", "service_conf": CONF, "deferrable": False, **FAST, **kwargs}
    return AIHCDeployServiceOperator(**given)


def _update(service_id: str, **kwargs: Any) -> AIHCUpdateServiceOperator:
    given = {"task_id": "roll", "service_id": service_id, "deferrable": False, **FAST, **kwargs}
    return AIHCUpdateServiceOperator(**given)


def _deployed(ti: TaskInstanceStub | None = None) -> str:
    result = _deploy().execute(context_of(ti or TaskInstanceStub()))
    return str(result["service_id"])


def test_deploy_creates_waits_until_every_instance_runs_and_a_retry_adopts(
    services: EmulatorServer,
) -> None:
    ti = TaskInstanceStub()
    first = _deploy().execute(context_of(ti))
    assert first["created"] is True
    assert ti.xcom["service_id"] == first["service_id"]
    summary = first["summary"]
    assert summary["brief_stat"]["availableIns"] == 2
    assert [i["status"] for i in summary["instances"]] == ["Running", "Running"]
    again = _deploy().execute(context_of(ti.retry()))
    assert again["service_id"] == first["service_id"]
    assert again["created"] is False
    assert sent(services, "CreateService") == 1


def test_a_lost_create_answer_is_adopted_not_created_twice(services: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    services.backend.add_fault(scenarios.drop_after(operation="CreateService"))
    with pytest.raises(AIHCError):
        _deploy().execute(context_of(ti))
    result = _deploy().execute(context_of(ti.retry()))
    assert result["created"] is False
    assert sent(services, "CreateService") == 1
    assert [s.name for s in AIHCHook().list_services()] == ["ranker-svc"]


def test_a_name_held_by_another_service_fails_without_creating(services: EmulatorServer) -> None:
    AIHCHook().create_service(CONF)  # not this task's: no verifying annotations
    with pytest.raises(AIHCConfigError, match="held by"):
        _deploy().execute(context_of(TaskInstanceStub()))
    assert sent(services, "CreateService") == 1


def test_a_cleared_task_does_not_adopt_the_earlier_series_service(
    services: EmulatorServer,
) -> None:
    ti = TaskInstanceStub()
    _deployed(ti)
    with pytest.raises(AIHCConfigError, match="try series"):
        _deploy().execute(context_of(ti.clear()))


def test_update_rolls_once_and_a_retry_does_not_roll_again(services: EmulatorServer) -> None:
    service_id = _deployed()
    ti = TaskInstanceStub(task_id="roll")
    first = _update(service_id, image="registry.example/ranker:2").execute(context_of(ti))
    assert first["applied"] is True
    assert first["conf_digest"] != first["previous_conf_digest"]
    live = AIHCHook().get_service(service_id).service
    assert live["containers"][0]["image"]["imageUrl"] == "registry.example/ranker:2"
    again = _update(service_id, image="registry.example/ranker:2").execute(context_of(ti.retry()))
    assert again["applied"] is False
    assert again["change_id"] == first["change_id"]
    assert sent(services, "ModifyService") == 1


def test_a_lost_modify_answer_is_not_sent_again(services: EmulatorServer) -> None:
    service_id = _deployed()
    ti = TaskInstanceStub(task_id="roll")
    services.backend.add_fault(scenarios.drop_after(operation="ModifyService"))
    with pytest.raises(AIHCError):
        _update(service_id, instance_count=3).execute(context_of(ti))
    result = _update(service_id, instance_count=3).execute(context_of(ti.retry()))
    assert result["applied"] is False
    assert result["summary"]["brief_stat"]["availableIns"] == 3
    assert sent(services, "ModifyService") == 1


def test_a_model_version_is_mounted_as_envs(services: EmulatorServer) -> None:
    from airflow_provider_aihc.operators.model_registry import AIHCRegisterModelVersionOperator

    version = AIHCRegisterModelVersionOperator(
        task_id="register", model_name="ranker", model_format="HuggingFace",
        storage_bucket="bkt", storage_path="/runs/r1/model",
    ).execute(context_of(TaskInstanceStub(task_id="register")))  # fmt: skip
    service_id = _deployed()
    _update(service_id, model_version=version).execute(context_of(TaskInstanceStub()))
    envs = AIHCHook().get_service(service_id).service["containers"][0]["envs"]
    assert envs["AIHC_MODEL_PATH"] == "bos://bkt/runs/r1/model"
    assert envs["AIHC_MODEL_VERSION"] == f"{version['model_id']}/{version['version_id']}"


@pytest.mark.parametrize("on_failure", ["fail", "revert"])
def test_a_stuck_rollout_fails_early_with_the_reason_and_reverts_when_asked(
    services: EmulatorServer,
    on_failure: str,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    service_id = _deployed()
    before = copy.deepcopy(AIHCHook().get_service(service_id).service)
    services.backend.add_script(scenarios.StuckRollout(match="ranker", reason="ImagePullBackOff"))
    op = _update(service_id, image="registry.example/ranker:broken", on_failure=on_failure)
    with caplog.at_level(logging.INFO), pytest.raises(AIHCServiceRolloutError) as failed:
        op.execute(context_of(TaskInstanceStub(task_id="roll")))
    assert "ImagePullBackOff" in str(failed.value)
    live = AIHCHook().get_service(service_id).service
    image = live["containers"][0]["image"]["imageUrl"]
    if on_failure == "revert":
        assert image == before["containers"][0]["image"]["imageUrl"]
        logged = caplog.text + capsys.readouterr().out  # Airflow 3 logs to stdout
        assert "reverted to its previous configuration" in logged
        assert sent(services, "ModifyService") == 2
    else:
        assert image == "registry.example/ranker:broken"
        assert sent(services, "ModifyService") == 1


def test_a_later_try_does_not_revert_a_change_an_earlier_try_sent_and_names_it(
    services: EmulatorServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The first try sent the roll and ended before it could revert (here: it did not ask
    to; a killed worker is the same); the retry finds the new configuration live, sends
    nothing, and on the failed rollout cannot know what to put back: it names the change
    to undo instead of sending a guess."""
    service_id = _deployed()
    services.backend.add_script(scenarios.StuckRollout(match="ranker", reason="CrashLoopBackOff"))
    ti = TaskInstanceStub(task_id="roll")
    broken = {"image": "registry.example/ranker:broken", "on_failure": "revert"}
    with pytest.raises(AIHCServiceRolloutError):
        _update(service_id, **{**broken, "on_failure": "fail"}).execute(context_of(ti))
    first_change = ti.xcom["change_id"]
    assert first_change
    with caplog.at_level(logging.INFO), pytest.raises(AIHCServiceRolloutError):
        _update(service_id, **broken).execute(context_of(ti.retry()))
    logged = caplog.text + capsys.readouterr().out  # Airflow 3 logs to stdout
    assert f"not reverted: change {first_change} was sent by an earlier try" in logged
    assert sent(services, "ModifyService") == 1  # the roll, once; no guessed revert
    live = AIHCHook().get_service(service_id).service
    assert live["containers"][0]["image"]["imageUrl"] == "registry.example/ranker:broken"


def test_scale_sets_the_count_and_waits(services: EmulatorServer) -> None:
    service_id = _deployed()
    for _ in range(2):  # absolute: a second send changes nothing
        result = AIHCScaleServiceOperator(
            task_id="scale", service_id=service_id, instance_count=1, deferrable=False, **FAST
        ).execute(context_of(TaskInstanceStub()))
    assert result["summary"]["brief_stat"]["availableIns"] == 1


def test_deleting_a_service_twice_counts_the_second_as_done(services: EmulatorServer) -> None:
    service_id = _deployed()
    for _ in range(2):
        AIHCDeleteServiceOperator(task_id="rm", service_id=service_id).execute(
            context_of(TaskInstanceStub())
        )
    assert AIHCHook().list_services() == []


def test_a_v1_connection_is_refused_before_any_request(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_api_version(monkeypatch, "v1")
    ops = [_deploy(), _update("s-1", instance_count=1),
           AIHCScaleServiceOperator(task_id="s", service_id="s-1", instance_count=1),
           AIHCDeleteServiceOperator(task_id="d", service_id="s-1")]  # fmt: skip
    for op in ops:
        with pytest.raises(AIHCConfigError, match="api_version"):
            op.execute(context_of(TaskInstanceStub()))
    assert total(aihc_emulator) == 0


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: _deploy(service_conf={**CONF, "name": "Bad_Name"}), "service_conf.name"),
        (lambda: _deploy(service_conf={**CONF, "instanceCount": -1}), "instanceCount"),
        (
            lambda: _deploy(service_conf={**CONF, "containers": [
                {**CONF["containers"][0], "cpus": 0}]}),
            "containers[0].cpus",
        ),
        (lambda: _update("s-1", max_surge=0, max_unavailable=0), "max_surge"),
        (lambda: _update("s-1"), "service_conf"),
        (
            lambda: AIHCScaleServiceOperator(task_id="s", service_id="s-1", instance_count=-2),
            "instance_count",
        ),
    ],
)  # fmt: skip
def test_bad_input_names_the_field_before_any_request(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, make: Any, field: str
) -> None:
    use_api_version(monkeypatch, "v2")
    with pytest.raises(AIHCValidationError) as refused:
        make().execute(context_of(TaskInstanceStub()))
    assert field in str(refused.value)
    assert str(refused.value).startswith("Invalid AIHC service parameters")  # not a job's
    assert total(aihc_emulator) == 0


def test_deferred_a_stuck_rollout_is_reverted_when_the_task_resumes(
    services: EmulatorServer,
) -> None:
    import asyncio

    from airflow_provider_aihc.version_compat import TaskDeferred

    service_id = _deployed()
    before = AIHCHook().get_service(service_id).service["containers"][0]["image"]["imageUrl"]
    services.backend.add_script(scenarios.StuckRollout(match="ranker", reason="CrashLoopBackOff"))
    op = _update(service_id, image="registry.example/ranker:bad", on_failure="revert",
                 deferrable=True, poll_interval=0.01)  # fmt: skip
    context = context_of(TaskInstanceStub(task_id="roll"))
    with pytest.raises(TaskDeferred) as deferred:
        op.execute(context)

    async def fire() -> list[Any]:
        return [event.payload async for event in deferred.value.trigger.run()]

    [event] = asyncio.run(fire())
    assert event["status"] == "failed"
    with pytest.raises(AIHCServiceRolloutError, match="CrashLoopBackOff"):
        op.execute_complete(context, event)
    live = AIHCHook().get_service(service_id).service
    assert live["containers"][0]["image"]["imageUrl"] == before
    assert sent(services, "ModifyService") == 2


def test_no_registry_password_reaches_the_trigger_or_the_result_and_a_revert_keeps_it(
    services: EmulatorServer,
) -> None:
    import asyncio

    from airflow_provider_aihc.version_compat import TaskDeferred

    secret = "reg-pass-9f3e1c"
    conf = copy.deepcopy(CONF)
    conf["containers"][0]["image"].update(username="puller", password=secret)
    service_id = _deploy(service_conf=conf).execute(context_of(TaskInstanceStub()))["service_id"]
    services.backend.add_script(scenarios.StuckRollout(match="ranker"))
    op = _update(service_id, image="registry.example/ranker:bad", on_failure="revert",
                 deferrable=True, poll_interval=0.01)  # fmt: skip
    context = context_of(TaskInstanceStub(task_id="roll"))
    with pytest.raises(TaskDeferred) as deferred:
        op.execute(context)
    trigger = deferred.value.trigger
    assert secret not in repr(trigger.serialize())

    async def fire() -> list[Any]:
        return [event.payload async for event in trigger.run()]

    [event] = asyncio.run(fire())
    assert secret not in repr(event)
    with pytest.raises(AIHCServiceRolloutError) as failed:
        op.execute_complete(context, event)
    assert secret not in str(failed.value)
    image = AIHCHook().get_service(service_id).service["containers"][0]["image"]
    assert image["imageUrl"] == "registry.example/ranker:1"
    assert image.get("password") == secret  # the revert did not drop it


def test_a_rendered_registry_password_is_masked() -> None:
    from airflow_provider_aihc.version_compat import redact

    secret = "rendered-pass-41c7a2"
    conf = copy.deepcopy(CONF)
    conf["containers"][0]["image"]["password"] = "{{ params.registry_password }}"
    op = _deploy(service_conf=conf)
    op.render_template_fields({"params": {"registry_password": secret}})
    assert op.service_conf["containers"][0]["image"]["password"] == secret
    assert redact(f"pull with {secret}") == "pull with ***"
