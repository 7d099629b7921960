"""AIHCServiceSensor and AIHCServiceTrigger against the emulator over HTTP (poke,
reschedule and deferred), the trigger's serialization, and the rollout judgement on the
answer shapes of bce-sdk-go ``inference/v2/models.go`` (never on ``briefStat.status``)."""

from __future__ import annotations

import asyncio
import inspect
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.models.service import ServiceDetail
from airflow_provider_aihc.sensors.service import AIHCServiceSensor
from airflow_provider_aihc.triggers.service import AIHCServiceTrigger
from airflow_provider_aihc.version_compat import AirflowSensorTimeout, TaskDeferred
from airflow_provider_aihc.watch.service import (
    DONE,
    FAILED,
    WAITING,
    AIHCServiceRolloutError,
    Expectation,
    judge,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "operators"))
from operator_helpers import TaskInstanceStub, context_of
from service_helpers import require_actions, use_api_version

CONF: dict[str, Any] = {
    "name": "sensed-svc",
    "acceleratorType": "A100",
    "workloadType": "",
    "instanceCount": 2,
    "resourcePool": {"resourcePoolId": "cce-emulator0", "queueName": "default"},
    "containers": [{"name": "main", "cpus": 1, "memory": 2, "acceleratorCount": 0,
                    "image": {"imageType": 2, "imageUrl": "registry.example/s:1"}}],
}  # fmt: skip


def _detail(
    available: int, total: int, states: list[tuple[str, str]], *, status: int = 0, **conf: Any
) -> ServiceDetail:
    instances = [
        {"instanceId": f"i-{n}", "status": {"status": s, "reason": r, "availableContainers":
         int(s == "Running"), "totalContainers": 1}}
        for n, (s, r) in enumerate(states)
    ]  # fmt: skip
    return ServiceDetail.model_validate(
        {
            "service": {**CONF, **conf},
            "status": {"briefStat": {"status": status, "availableIns": available,
                                     "totalIns": total}},
            "instances": instances,
        }
    )  # fmt: skip


def test_done_needs_counts_instance_states_and_the_expected_configuration() -> None:
    expect = Expectation(CONF)
    running = [("Running", ""), ("Running", "")]
    assert judge("s", _detail(2, 2, running), expect).state == DONE
    assert judge("s", _detail(1, 2, running), expect).state == WAITING
    assert judge("s", _detail(2, 2, [("Running", ""), ("Pending", "")]), expect).state == WAITING
    assert judge("s", _detail(2, 2, running, instanceCount=3), expect).state == WAITING


@pytest.mark.parametrize("status", [0, 1, 2, 3, 99])
def test_the_unpublished_status_integer_decides_nothing(status: int) -> None:
    running = [("Running", ""), ("Running", "")]
    assert judge("s", _detail(2, 2, running, status=status), Expectation(CONF)).state == DONE
    pending = [("Running", ""), ("Pending", "")]
    assert judge("s", _detail(1, 2, pending, status=status), Expectation(CONF)).state == WAITING


def test_a_stuck_reason_fails_with_the_instances_reasons() -> None:
    verdict = judge("s", _detail(1, 2, [("Running", ""), ("Pending", "CrashLoopBackOff")]),
                    Expectation(CONF))  # fmt: skip
    assert verdict.state == FAILED
    assert "i-1: CrashLoopBackOff" in verdict.message


def test_a_configuration_neither_expected_nor_previous_fails() -> None:
    previous = {**CONF, "instanceCount": 1}
    running = [("Running", ""), ("Running", "")]
    expect = Expectation({**CONF, "instanceCount": 3}, previous_conf=previous)
    assert judge("s", _detail(1, 1, running[:1], instanceCount=1), expect).state == WAITING
    assert judge("s", _detail(2, 2, running), expect).state == FAILED


def test_the_trigger_serializes_to_plain_values_that_rebuild_it() -> None:
    arguments = {
        "service_id": "s-1", "aihc_conn_id": "aihc_prod", "expected_conf": CONF,
        "instance_count": 2, "previous_conf": {"name": "x"}, "stuck_reasons": ["Oops"],
        "poll_interval": 5.0, "deadline": 1_700_000_000.5, "carry": {"service_id": "s-1"},
    }  # fmt: skip
    assert set(arguments) == set(inspect.signature(AIHCServiceTrigger).parameters)
    classpath, kwargs = AIHCServiceTrigger(**arguments).serialize()  # type: ignore[arg-type]
    assert classpath == "airflow_provider_aihc.triggers.service.AIHCServiceTrigger"
    assert kwargs == arguments
    assert AIHCServiceTrigger(**kwargs).serialize() == (classpath, kwargs)


@pytest.fixture
def services(aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    use_api_version(monkeypatch, "v2")
    require_actions(aihc_emulator, "services")
    return aihc_emulator


def _sensor(service_id: str, **kwargs: Any) -> AIHCServiceSensor:
    given = {"task_id": "sense", "service_id": service_id, "expected_conf": CONF,
             "poke_interval": 0, "timeout": 30, "deferrable": False, **kwargs}  # fmt: skip
    return AIHCServiceSensor(**given)


def test_the_sensor_pokes_until_every_instance_runs(services: EmulatorServer) -> None:
    service_id = AIHCHook().create_service(CONF)
    sensor = _sensor(service_id)
    context = context_of(TaskInstanceStub())
    pokes = 0
    while not (done := sensor.poke(context)):
        pokes += 1
        assert pokes < 20
    assert done.xcom_value["brief_stat"]["availableIns"] == 2  # type: ignore[union-attr]


def test_a_stuck_rollout_fails_the_sensor_with_its_reason(services: EmulatorServer) -> None:
    services.backend.add_script(
        scenarios.StuckRollout(match="sensed", rollout="create", reason="CrashLoopBackOff")
    )
    service_id = AIHCHook().create_service(CONF)
    sensor, context = _sensor(service_id), context_of(TaskInstanceStub())

    def poke_until_it_fails() -> None:
        for _ in range(20):
            sensor.poke(context)

    with pytest.raises(AIHCServiceRolloutError, match="CrashLoopBackOff"):
        poke_until_it_fails()


def test_a_timeout_names_the_last_reasons(services: EmulatorServer) -> None:
    service_id = AIHCHook().create_service(CONF)
    sensor = _sensor(service_id, expected_instance_count=5, timeout=0.01)
    with pytest.raises(AirflowSensorTimeout, match="last reasons"):
        sensor.execute(context_of(TaskInstanceStub()))


def test_deferred_the_trigger_fires_success_and_the_sensor_returns_the_summary(
    services: EmulatorServer,
) -> None:
    service_id = AIHCHook().create_service(CONF)
    sensor = _sensor(service_id, deferrable=True)
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute(context_of(TaskInstanceStub()))
    trigger = deferred.value.trigger
    trigger.poll_interval = 0.01

    async def fire() -> list[Any]:
        return [event.payload async for event in trigger.run()]

    [event] = asyncio.run(fire())
    assert event["status"] == "success"
    summary = sensor.execute_complete(context_of(TaskInstanceStub()), event)
    assert summary["brief_stat"]["availableIns"] == 2


def test_deferred_a_deadline_fires_timeout_with_the_last_reasons(services: EmulatorServer) -> None:
    service_id = AIHCHook().create_service(CONF)
    trigger = AIHCServiceTrigger(service_id, instance_count=7, poll_interval=0.01,
                                 deadline=__import__("time").time() + 0.2)  # fmt: skip

    async def fire() -> list[Any]:
        return [event.payload async for event in trigger.run()]

    [event] = asyncio.run(fire())
    assert event["status"] == "timeout"
    assert "of 7 instances available" in event["message"]
    with pytest.raises(AirflowSensorTimeout):
        _sensor(service_id).execute_complete(context_of(TaskInstanceStub()), event)


def test_rescheduled_each_poke_starts_afresh_and_still_ends(services: EmulatorServer) -> None:
    """Reschedule mode rebuilds the sensor for every poke: nothing is carried over."""
    service_id = AIHCHook().create_service(CONF)
    for _ in range(20):
        sensor = _sensor(service_id, mode="reschedule")
        if done := sensor.poke(context_of(TaskInstanceStub())):
            break
    assert done.xcom_value["brief_stat"]["availableIns"] == 2  # type: ignore[union-attr]


def test_a_trigger_taken_over_mid_wait_resumes_from_its_serialized_form(
    services: EmulatorServer,
) -> None:
    """A triggerer that dies mid-wait: the next one rebuilds the trigger from what Airflow
    stored and polls on; the trigger only reads, so nothing is sent twice."""
    service_id = AIHCHook().create_service(CONF)
    first = AIHCServiceTrigger(service_id, expected_conf=CONF, poll_interval=0.01)

    async def one_poll_then_die() -> None:
        runner = first.run().__aiter__()
        task = asyncio.ensure_future(runner.__anext__())
        await asyncio.sleep(0)  # started, then the triggerer goes away
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(one_poll_then_die())
    _, kwargs = first.serialize()
    taken_over = AIHCServiceTrigger(**kwargs)

    async def fire() -> list[Any]:
        return [event.payload async for event in taken_over.run()]

    [event] = asyncio.run(fire())
    assert event["status"] == "success"
    counts = services.backend.counts()
    assert set(counts) <= {"CreateService", "DescribeService"}
