"""The create operator checks the accelerators a job asks for against its queue's, where
that costs no request per task (issue #38, point 4; operators/_resource_names.py).

``validate(against_pool=True)`` reads the job's queue once and names a misspelt accelerator
with the names the queue offers; ``execute`` sends no such read before its create, and
reads the queue only after AIHC refused the create about a resource, to fail with the same
words, without a retry or a second create.  Real HTTP against the emulator, whose pools
refuse a resource name their nodes do not offer (``emulator/state/store.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator.connection import CONN_ENV
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.pools import NODE_RESOURCES, Pool, Queue, default_pools
from airflow_provider_aihc.exceptions import AIHCRefusedError, AIHCValidationError
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

GPU = "baidu.com/a800_80g_cgpu"
MISSPELT = "baidu.com/a800_80g_gpu"
XPU = "baidu.com/xpu_r300"
KUNLUN_POOL = "cce-kunlun0"
FIELD = "jobSpec.resources[0].name (job_resources)"


@pytest.fixture(params=["v1", "v2"])
def server(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[EmulatorServer]:
    """The default pools and a Kunlun pool (its nodes offer an XPU, no GPU), with
    ``aihc_default`` on each API version pointing at them."""
    kunlun = Pool(
        KUNLUN_POOL,
        "kunlun",
        queues=(Queue("default", gpus={XPU: 32}),),
        resources=("cpu", "memory", "sharedMemory", "rdma/hca", XPU),
    )
    server = EmulatorServer(pools=[*default_pools(), kunlun]).start()
    monkeypatch.setenv(CONN_ENV, server.connection(api_version=request.param, max_retries=0).json)
    try:
        yield server
    finally:
        server.stop()


def _task(resources: dict[str, int], **kwargs: object) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(
        task_id="train", image="img", command="python train.py", job_resources=resources, **kwargs
    )


def _sent(server: EmulatorServer) -> list[str]:
    return [f"{r.operation} {r.status}" for r in server.backend.requests]


def test_validate_against_the_pool_names_a_misspelt_accelerator_and_what_the_queue_offers(
    server: EmulatorServer,
) -> None:
    task = _task({MISSPELT: 8, "cpu": 16})
    assert task.validate()["jobSpec"]["resources"][0]["name"] == MISSPELT  # offline: no read
    assert server.backend.requests == []

    with pytest.raises(AIHCValidationError) as refused:
        task.validate(against_pool=True)
    ((field, problem),) = refused.value.errors
    assert field == FIELD
    assert problem == (
        f"{MISSPELT!r} is not offered by queue 'default' of resource pool 'cce-emulator0'; "
        f"it offers {GPU}"
    )
    assert "of task 'train'" in str(refused.value)
    assert len(server.backend.requests) == 1  # one read of the queue, never a create
    assert server.backend.count("CreateJob") == 0


def test_validate_against_the_pool_passes_what_the_queue_offers(server: EmulatorServer) -> None:
    body = _task({GPU: 8, "cpu": 16, "memory": 64, "rdma/hca": 1}).validate(against_pool=True)
    assert [r["name"] for r in body["jobSpec"]["resources"]] == [GPU, "cpu", "memory", "rdma/hca"]
    assert len(server.backend.requests) == 1
    # A job that asks for no accelerator has nothing to compare: no read at all.
    _task({"cpu": 4}).validate(against_pool=True)
    assert len(server.backend.requests) == 1


def test_the_queue_offers_its_pools_cards(server: EmulatorServer) -> None:
    """A Kunlun pool's queue offers its XPU, and a GPU there is refused naming the XPU."""
    assert _task({XPU: 8}, resource_pool_id=KUNLUN_POOL).validate(against_pool=True)
    with pytest.raises(AIHCValidationError) as refused:
        _task({GPU: 8}, resource_pool_id=KUNLUN_POOL).validate(against_pool=True)
    assert refused.value.errors == (
        (FIELD, f"{GPU!r} is not offered by queue 'default' of resource pool {KUNLUN_POOL!r}; "
                f"it offers {XPU}"),
    )  # fmt: skip


def test_validate_against_the_pool_names_a_queue_it_cannot_read(server: EmulatorServer) -> None:
    with pytest.raises(AIHCValidationError) as refused:
        _task({GPU: 8}, job_queue="nope").validate(against_pool=True)
    ((field, problem),) = refused.value.errors
    assert field == "queue (job_queue)"
    assert problem.startswith("could not read queue 'nope' of resource pool 'cce-emulator0': ")
    assert "'nope'" in problem.partition(": ")[2]
    assert "QueueNotFound" in problem or "lists no queue" in problem


def test_execute_reads_no_queue_before_its_create(server: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    job_id = _task({GPU: 8}).execute(context_of(ti))
    assert job_id == ti.xcom["job_id"]
    assert server.backend.count("CreateJob") == 1
    assert [s for s in _sent(server) if "Queue" in s] == []


def test_a_create_refused_for_a_resource_name_fails_naming_it_once(server: EmulatorServer) -> None:
    with pytest.raises(AIHCRefusedError) as refused:
        _task({MISSPELT: 8, "cpu": 16}).execute(context_of(TaskInstanceStub()))
    message = str(refused.value)
    assert "InvalidParam, HTTP 400" in message  # AIHC's own answer first
    assert (
        f"; {FIELD}: {MISSPELT!r} is not offered by queue 'default' of resource pool "
        f"'cce-emulator0'; it offers {GPU} (not retried"
    ) in message
    sent = _sent(server)
    assert sent.count("CreateJob 400") == 1  # no retry, no second create
    assert server.backend.count("CreateJob") == 1
    assert len([s for s in sent if "Queue" in s]) == 1  # the one read, after the refusal
    assert sent.index(next(s for s in sent if "Queue" in s)) > sent.index("CreateJob 400")
    assert server.backend.jobs() == []


def test_a_create_refused_for_another_reason_reads_no_queue(server: EmulatorServer) -> None:
    """A queue the pool lacks is refused by AIHC alone (a 400 about the queue, not a
    resource): no read is added, and the refusal is AIHC's."""
    with pytest.raises(AIHCRefusedError) as refused:
        _task({GPU: 8}, job_queue="nope").execute(context_of(TaskInstanceStub()))
    assert "queue 'nope' does not exist" in str(refused.value)
    assert "is not offered" not in str(refused.value)
    assert [s for s in _sent(server) if "Queue" in s] == []


def test_every_name_the_emulators_nodes_offer_passes(server: EmulatorServer) -> None:
    """The names the check compares are the names the emulator accepts: none is refused."""
    resources = {name: 1 for name in NODE_RESOURCES}
    assert _task(resources).validate(against_pool=True)
    _task(resources).execute(context_of(TaskInstanceStub()))
    assert server.backend.count("CreateJob") == 1


def test_a_managed_pools_queue_is_read_by_its_id(server: EmulatorServer) -> None:
    task = _task({MISSPELT: 8}, resource_pool_id="aihc-serverless", job_queue="aihcq-emulator0")
    with pytest.raises(AIHCValidationError) as refused:
        task.validate(against_pool=True)
    assert refused.value.errors == (
        (FIELD, f"{MISSPELT!r} is not offered by queue 'aihcq-emulator0' of resource pool "
                f"'aihc-serverless'; it offers {GPU}"),
    )  # fmt: skip
    assert [s.split()[1] for s in _sent(server)] == ["200"]
