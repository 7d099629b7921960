"""A pool AIHC reports as managed is treated as managed, whatever its id.

Baidu's v1 client knows the managed pools by id (``aihc-serverless``, ``aihc-bhcmp``); on
v2 a pool's ``type`` says it (``dedicatedV2``, ``bhcmp``: bce-sdk-go
``services/aihc/v2/api/resourcepool.go:59-65``).  The emulator here has a managed pool
with another id, which refuses every job call without its queue's id (as AIHC does): a
task that succeeds there sent it every time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.state.pools import Pool, Queue, default_pools
from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

DEDICATED_POOL = "aihc-dedicated-7"
DEDICATED_QUEUE = "aihcq-dedicated7"
CONN_ENV = "AIRFLOW_CONN_AIHC_DEFAULT"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """The default pools and a managed pool whose id is neither of Baidu's two; ``aihc_default``
    on v2 pointing at it."""
    dedicated = Pool(
        DEDICATED_POOL,
        "dedicated",
        queues=(Queue("default", queue_id=DEDICATED_QUEUE),),
        serverless=True,
    )
    server = EmulatorServer(pools=[*default_pools(), dedicated]).start()
    monkeypatch.setenv(CONN_ENV, server.connection(api_version="v2").json)
    try:
        yield server
    finally:
        server.stop()


def _sent(hook: AIHCHook) -> list[tuple[str, str | None]]:
    """Spy on ``hook``: the action and ``queueID`` of every request it sends from now on."""
    sent: list[tuple[str, str | None]] = []
    real = hook.session.request

    def request(method: str, url: str, **kwargs: Any) -> Any:
        query = dict(parse_qsl(urlsplit(url).query))
        sent.append((query.get("action", "?"), query.get("queueID")))
        return real(method, url, **kwargs)

    hook.session.request = request  # type: ignore[method-assign]
    return sent


def _operator(**kwargs: Any) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(
        task_id="train",
        **{"image": "busybox", "command": "true", "resource_pool_id": DEDICATED_POOL, **kwargs},
    )


@pytest.mark.parametrize("job_queue", [None, "default"])
def test_a_pool_reported_managed_needs_a_queue_id_before_the_create(
    server: EmulatorServer, job_queue: str | None
) -> None:
    with pytest.raises(AIHCValidationError, match="is managed: job_queue must be the id") as err:
        _operator(job_queue=job_queue).execute(context_of(TaskInstanceStub()))
    assert [field for field, _ in err.value.errors] == ["queue (job_queue)"]
    assert [r.operation for r in server.backend.requests] == ["GetResourcePool"]


def test_its_queue_id_travels_with_the_job_and_no_pool_is_described(
    server: EmulatorServer,
) -> None:
    server.backend.progression = Progression.per_poll(1, running=2)
    operator = _operator(job_queue=DEDICATED_QUEUE, wait_for_completion=True, poll_interval=0.01)
    sent = _sent(operator.hook)
    ti = TaskInstanceStub()
    operator.execute(context_of(ti))
    assert ti.xcom["job_summary"]["status"] == "Succeeded"
    assert {"CreateJob", "DescribeJob", "DescribeJobLogs"} <= {action for action, _ in sent}
    assert {queue for _, queue in sent} == {DEDICATED_QUEUE}
    assert "DescribeResourcePool" not in {action for action, _ in sent}  # a queue was given


def test_the_sensor_finds_the_only_queue_of_a_pool_reported_managed(
    server: EmulatorServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = {"name": "reported", "queue": DEDICATED_QUEUE, "jobSpec": {"image": "b", "command": "c"}}
    job_id = AIHCHook().create_job(body, DEDICATED_POOL).job_id
    caplog.set_level("INFO")
    sensor = AIHCJobSensor(
        task_id="wait", job_id=job_id, resource_pool_id=DEDICATED_POOL, poke_interval=0.01
    )
    sent = _sent(sensor.hook)
    while not sensor.poke({"ti": TaskInstanceStub()}):
        pass
    actions = [action for action, _ in sent]
    assert actions.count("DescribeResourcePool") == 1  # asked once, then remembered
    assert actions.count("DescribeQueues") == 1
    assert {queue for action, queue in sent if action == "DescribeJob"} == {DEDICATED_QUEUE}
    assert not [r for r in server.backend.requests if r.status >= 400]
    logged = caplog.text + capsys.readouterr().out
    assert f"the only queue of managed pool {DEDICATED_POOL!r} (ListQueues)" in logged


@pytest.mark.parametrize(
    ("api_version", "pool", "managed", "described"),
    [
        ("v2", DEDICATED_POOL, True, 1),
        ("v2", "aihc-serverless", True, 0),  # Baidu's clients know it by id
        ("v2", "cce-emulator0", False, 0),  # a CCE cluster's id: self-managed, not asked
        ("v2", "aihc-unknown", False, 1),  # not found: AIHC itself will refuse what it must
        ("v1", DEDICATED_POOL, False, 0),  # v1 goes by id, as bce-sdk-go's v1 client
    ],
)
def test_the_hook_asks_aihc_once_and_only_where_the_id_does_not_tell(
    server: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    api_version: str,
    pool: str,
    managed: bool,
    described: int,
) -> None:
    monkeypatch.setenv(CONN_ENV, server.connection(api_version=api_version).json)
    hook = AIHCHook()
    assert [hook.is_managed_pool(pool), hook.is_managed_pool(pool)] == [managed, managed]
    assert server.backend.count("GetResourcePool") == described
