"""AIHCJobSensor finds the job's queue and names it in every call.

The sensor may be given only a job id: it takes the queue from ``job_queue``, the create
operator's XCom, or one lookup, and logs which.  On the emulator's managed pool every call
without the queue's id is refused (as AIHC refuses it), so a sensor that succeeds there
sent it; on a v2 self-managed pool the queue name is checked on the wire.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from watch_helpers import MANAGED_POOL, MANAGED_QUEUE, POOL, log_lines, refused

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

try:
    from airflow.sdk import DAG
    from airflow.sdk.exceptions import TaskDeferred
except ImportError:  # Airflow 2
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.exceptions import TaskDeferred  # type: ignore[no-redef]

CONN_ENV = "AIRFLOW_CONN_AIHC_DEFAULT"


class XComTaskInstance:
    """What the sensor pulls from (``(task_id, key) -> value``) and pushes to."""

    def __init__(self, xcom: dict[tuple[str, str], Any] | None = None) -> None:
        self.xcom = dict(xcom or {})
        self.pulled: list[tuple[str, str]] = []

    def xcom_pull(self, task_ids: str, key: str) -> Any:
        self.pulled.append((task_ids, key))
        return self.xcom.get((task_ids, key))

    def xcom_push(self, key: str, value: Any) -> None:
        self.xcom[("wait", key)] = value


def output(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> str:
    """What the task logged: Airflow 2 through logging, Airflow 3 through structlog."""
    return caplog.text + capsys.readouterr().out


def job(name: str, queue: str) -> dict[str, Any]:
    """A create body in the given queue."""
    spec = {"image": "registry.baidubce.com/t:1", "command": "train", "replicas": 1}
    return {"name": name, "queue": queue, "jobSpec": spec}


def poke_to_the_end(sensor: AIHCJobSensor, context: dict[str, Any]) -> Any:
    while not (result := sensor.poke(context)):
        pass
    return result


def v2(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = json.loads(os.environ[CONN_ENV])
    conn["extra"]["api_version"] = "v2"
    monkeypatch.setenv(CONN_ENV, json.dumps(conn))


def queue_ids_sent(sensor: AIHCJobSensor) -> list[str | None]:
    """Spy on the sensor's hook: the ``queueID`` of every request it sends from now on."""
    sent: list[str | None] = []
    real = sensor.hook.session.request

    def request(method: str, url: str, **kwargs: Any) -> Any:
        sent.append(dict(parse_qsl(urlsplit(url).query)).get("queueID"))
        return real(method, url, **kwargs)

    sensor.hook.session.request = request  # type: ignore[method-assign]
    return sent


def test_job_queue_is_templated() -> None:
    assert "job_queue" in AIHCJobSensor.template_fields


@pytest.mark.parametrize("api_version", ["v1", "v2"])
def test_poke_on_a_managed_pool_with_job_queue_streams_the_log(
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    api_version: str,
) -> None:
    if api_version == "v2":
        v2(monkeypatch)
    aihc_emulator.backend.progression = Progression.per_poll(1, running=3)
    job_id = AIHCHook().create_job(job("managed-poked", MANAGED_QUEUE), MANAGED_POOL).job_id
    caplog.set_level("INFO")
    sensor = AIHCJobSensor(
        task_id="wait", job_id=job_id, resource_pool_id=MANAGED_POOL, job_queue=MANAGED_QUEUE,
        poke_interval=0.01,
    )  # fmt: skip
    sent = queue_ids_sent(sensor)
    assert poke_to_the_end(sensor, {"ti": XComTaskInstance()}).xcom_value == job_id
    assert refused(aihc_emulator) == []
    assert set(sent) == {MANAGED_QUEUE}
    text = output(caplog, capsys)
    assert f"queue {MANAGED_QUEUE}, from the sensor's job_queue" in text
    lines = log_lines(aihc_emulator, job_id, "managed-poked-master-0", MANAGED_POOL, MANAGED_QUEUE)
    assert lines
    assert all(line in text for line in lines)


def test_the_queue_comes_from_the_create_operators_xcom(
    aihc_emulator: EmulatorServer,
    create_managed: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    job_id = create_managed("from-xcom")
    with DAG("queue_from_xcom", schedule=None):
        train = AIHCCreateJobOperator(task_id="train", image="i", command="c")
        sensor = AIHCJobSensor(
            task_id="wait", job_id=job_id, resource_pool_id=MANAGED_POOL, poke_interval=0.01
        )
        train >> sensor
    ti = XComTaskInstance({("train", "job_id"): job_id, ("train", "job_queue"): MANAGED_QUEUE})
    caplog.set_level("INFO")
    assert poke_to_the_end(sensor, {"ti": ti}).xcom_value == job_id
    assert refused(aihc_emulator) == []
    assert "from the XCom job_queue of task 'train'" in output(caplog, capsys)


def test_an_upstream_xcom_of_another_job_is_not_taken(
    aihc_emulator: EmulatorServer, create_managed: Callable[..., str]
) -> None:
    job_id = create_managed("other-xcom")
    with DAG("queue_of_another_job", schedule=None):
        train = AIHCCreateJobOperator(task_id="train", image="i", command="c")
        sensor = AIHCJobSensor(task_id="wait", job_id=job_id, resource_pool_id=MANAGED_POOL)
        train >> sensor
    ti = XComTaskInstance({("train", "job_id"): "another", ("train", "job_queue"): "aihcq-x"})
    sensor.poke({"ti": ti})  # falls through to the lookup: the managed pool's only queue
    assert sensor.watch.queue_id == MANAGED_QUEUE


def test_a_managed_pools_only_queue_is_looked_up_once(
    aihc_emulator: EmulatorServer,
    create_managed: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    job_id = create_managed("looked-up")
    caplog.set_level("INFO")
    sensor = AIHCJobSensor(
        task_id="wait", job_id=job_id, resource_pool_id=MANAGED_POOL, poke_interval=0.01
    )
    poke_to_the_end(sensor, {"ti": XComTaskInstance()})
    assert aihc_emulator.backend.count("ListQueues") == 1
    assert refused(aihc_emulator) == []
    assert "the only queue of managed pool 'aihc-serverless' (ListQueues)" in output(caplog, capsys)


def test_a_managed_pool_with_several_queues_needs_job_queue(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_provider_aihc.models.pool import Queue

    two = [Queue.model_validate({"name": n, "queueId": f"aihcq-{n}"}) for n in ("a", "b")]
    monkeypatch.setattr(AIHCHook, "list_queues", lambda self, pool=None: two)
    sensor = AIHCJobSensor(task_id="wait", job_id="pytorchjob-1", resource_pool_id=MANAGED_POOL)
    with pytest.raises(AIHCValidationError, match=r"job_queue.*aihcq-a', 'aihcq-b'"):
        sensor.poke({"ti": XComTaskInstance()})


def test_a_v2_self_managed_job_in_another_queue_is_addressed_by_its_queue_name(
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    v2(monkeypatch)
    job_id = AIHCHook().create_job(job("in-research", "research")).job_id
    caplog.set_level("INFO")
    sensor = AIHCJobSensor(task_id="wait", job_id=job_id, poke_interval=0.01)
    sent = queue_ids_sent(sensor)
    poke_to_the_end(sensor, {"ti": XComTaskInstance()})
    assert "research" in sent
    assert "default" not in sent  # never the default queue: the job is not there
    assert f"queue research, from the job's list item in pool {POOL!r}" in output(caplog, capsys)


def test_a_v1_self_managed_pool_needs_no_queue(
    aihc_emulator: EmulatorServer, create: Callable[..., str]
) -> None:
    job_id = create("v1-plain")
    sensor = AIHCJobSensor(task_id="wait", job_id=job_id, poke_interval=0.01)
    poke_to_the_end(sensor, {"ti": XComTaskInstance()})
    assert sensor.watch.queue_id is None
    assert aihc_emulator.backend.count("ListJobs") == 0


def test_the_deferred_sensor_hands_its_queue_to_the_trigger(
    aihc_emulator: EmulatorServer, create_managed: Callable[..., str]
) -> None:
    job_id = create_managed("deferred-managed")
    sensor = AIHCJobSensor(
        task_id="wait", job_id=job_id, resource_pool_id=MANAGED_POOL, job_queue=MANAGED_QUEUE,
        deferrable=True, poke_interval=0.01,
    )  # fmt: skip
    with pytest.raises(TaskDeferred) as deferred:
        sensor.poke({"ti": XComTaskInstance()})
    assert deferred.value.trigger.serialize()[1]["job_queue"] == MANAGED_QUEUE
