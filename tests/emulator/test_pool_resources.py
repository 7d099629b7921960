"""The emulator's pools offer the resource names their nodes have, and a create asking for
another (a misspelled GPU) is refused as AIHC refuses a bad parameter, in both dialects
(issue #38, point 4).  A v1 pool shows its cards by kind (``status.gpuDetail``), and a
queue's quota (v1 ``capability``, v2 ``acceleratorCardList``) names its pool's cards: the
names the provider's check reads (``operators/_resource_names.py``)."""

from __future__ import annotations

import pytest
from aihc_emulator_client import POOL, Client, job_body

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.state.pools import NODE_RESOURCES, Pool, Queue, default_pools

MISSPELLED = "baidu.com/a800_80g_gpu"


def test_a_misspelled_gpu_is_refused_with_an_error_that_names_it(client: Client) -> None:
    answer = client.request(
        "POST",
        "/api/v1/aijobs",
        {"resourcePoolId": "cce-emulator0"},
        {"name": "typo", "queue": "default", "jobSpec": {
            "image": "i", "command": "c", "replicas": 1,
            "resources": [{"name": MISSPELLED, "quantity": 8}, {"name": "cpu", "quantity": 4}],
        }},
    )  # fmt: skip
    assert answer.status_code == 400
    error = answer.json()
    assert set(error) == {"requestId", "code", "message"}
    assert error["code"] == "InvalidParam"
    assert repr(MISSPELLED) in error["message"]
    assert "baidu.com/a800_80g_cgpu" in error["message"]
    assert "'cpu'" not in error["message"].split(";")[0]


@pytest.mark.parametrize("api_version", ["v1", "v2"])
def test_the_hook_gets_the_refusal_and_every_offered_name_is_accepted(
    server: EmulatorServer, monkeypatch: pytest.MonkeyPatch, api_version: str
) -> None:
    from airflow_provider_aihc.emulator.connection import CONN_ENV
    from airflow_provider_aihc.exceptions import AIHCApiError
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    monkeypatch.setenv(CONN_ENV, server.connection(api_version=api_version, max_retries=0).json)
    hook = AIHCHook()

    def body(name: str, resource: str) -> dict:
        return {"name": name, "queue": "default", "jobSpec": {
            "image": "i", "command": "c", "replicas": 1,
            "resources": [{"name": resource, "quantity": 1}],
        }}  # fmt: skip

    with pytest.raises(AIHCApiError) as refused:
        hook.create_job(body("typo", MISSPELLED))
    assert (refused.value.status, refused.value.code) == (400, "InvalidParam")
    assert MISSPELLED in refused.value.message
    for index, resource in enumerate(NODE_RESOURCES):
        hook.create_job(body(f"ok-{index}", resource))
    assert server.backend.count("CreateJob") == 1 + len(NODE_RESOURCES)
    assert len(server.backend.jobs()) == len(NODE_RESOURCES)


GPU = "baidu.com/a800_80g_cgpu"
XPU = "baidu.com/xpu_r300"
KUNLUN_POOL = "cce-kunlun0"
V2 = {"X-API-Version": "v2"}


def _kunlun() -> Pool:
    """A pool whose 4 nodes offer a Kunlun XPU and no GPU; queue ``small`` has a GPU quota
    by name (the default queue's), which the pool's cards replace."""
    return Pool(
        KUNLUN_POOL,
        "kunlun",
        queues=(Queue("default", gpus={XPU: 32}), Queue("small", gpus={GPU: 4})),
        nodes=4,
        resources=("cpu", "memory", "sharedMemory", "rdma/hca", XPU),
    )


def test_a_v1_pool_shows_its_cards_by_kind_as_gpu_detail(client: Client) -> None:
    """``status.gpuDetail[{gpuDescriptor, total, used}]`` (bce-sdk-go
    ``api/v1/resourcePool.go:57``, ``:69-73``), its ``used`` following the jobs."""
    path = f"/api/v1/resourcepools/{POOL}"
    detail = client.ok("GET", path)["result"]["resourcePool"]["status"]["gpuDetail"]
    assert detail == [{"gpuDescriptor": GPU, "total": 64, "used": 0}]
    job_id = client.create("cards", replicas=2)["jobId"]
    client.get(job_id)
    client.get(job_id)  # Scheduled: holds its GPUs
    status = client.ok("GET", path)["result"]["resourcePool"]["status"]
    assert status["gpuDetail"] == [{"gpuDescriptor": GPU, "total": 64, "used": 16}]
    assert status["gpuDetail"][0]["used"] == status["gpuCount"]["used"]


def test_a_kunlun_pool_offers_its_xpu_in_its_cards_nodes_and_queue_quotas() -> None:
    with EmulatorServer(pools=[_kunlun()]) as server:
        client = Client(server.url)
        path = f"/api/v1/resourcepools/{KUNLUN_POOL}"
        pool = client.ok("GET", path)["result"]["resourcePool"]
        assert pool["status"]["gpuDetail"] == [{"gpuDescriptor": XPU, "total": 32, "used": 0}]
        nodes = client.ok("GET", path + "/nodes")["result"]["nodes"]
        assert {(n["gpuDescriptor"], n["gpuType"], n["gpuTotal"]) for n in nodes} == {
            (XPU, "XPU", 8)
        }
        queues = client.ok("GET", path + "/queue")["result"]["queues"]
        capabilities = {q["name"]: q["capability"] for q in queues}
        assert capabilities == {
            "default": {"cpu": "1024", "memory": "8192", XPU: "32"},
            "small": {"cpu": "1024", "memory": "8192", XPU: "4"},  # its quota, on the pool's card
        }
        # A job on the XPU is held by its queue; a GPU job is refused naming the XPU.
        xpu_job = job_body("on-xpu")
        xpu_job["jobSpec"]["resources"] = [
            {"name": XPU, "quantity": 8},
            {"name": "cpu", "quantity": 8},
        ]
        created = client.ok("POST", "/api/v1/aijobs", {"resourcePoolId": KUNLUN_POOL}, xpu_job)
        job_id = created["result"]["jobId"]
        client.get(job_id, KUNLUN_POOL)
        client.get(job_id, KUNLUN_POOL)
        queue = client.ok("GET", path + "/queue/default")["result"]["queue"]
        assert queue["allocated"] == {"cpu": "0", "memory": "0", XPU: "8"}
        refused = client.request(
            "POST", "/api/v1/aijobs", {"resourcePoolId": KUNLUN_POOL}, job_body("on-gpu")
        )
        assert refused.status_code == 400
        assert repr(GPU) in refused.json()["message"]
        assert XPU in refused.json()["message"]
        # v2 names the same card in the queue's ResourceAmount (services/aihc/v2/api/queue.go:71,
        # :85-89): the v2 queue offers what the v1 queue offers.
        query = {"action": "DescribeQueues", "resourcePoolId": KUNLUN_POOL}
        answer = client.request("GET", "/", query, headers=V2)
        assert answer.status_code == 200, answer.text
        spec = next(q for q in answer.json()["queues"] if q["queueName"] == "default")
        assert spec["capability"]["acceleratorCardList"] == [
            {"acceleratorCount": "32", "acceleratorType": XPU}
        ]
        assert spec["allocated"]["acceleratorCardList"] == [
            {"acceleratorCount": "8", "acceleratorType": XPU}
        ]


@pytest.mark.parametrize("api_version", ["v1", "v2"])
def test_the_hooks_models_read_the_names_a_pool_and_its_queues_offer(
    monkeypatch: pytest.MonkeyPatch, api_version: str
) -> None:
    from airflow_provider_aihc.emulator.connection import CONN_ENV
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    with EmulatorServer(pools=[*default_pools(), _kunlun()]) as server:
        monkeypatch.setenv(CONN_ENV, server.connection(api_version=api_version).json)
        hook = AIHCHook()
        queues = {q.name: q.accelerators for q in hook.list_queues(KUNLUN_POOL)}
        assert queues == {"default": (XPU,), "small": (XPU,)}
        assert hook.get_queue("research").accelerators == (GPU,)
        managed = hook.list_queues("aihc-serverless") if api_version == "v1" else []
        assert [q.queue_id for q in managed] == (["aihcq-emulator0"] if managed else [])
        pool = hook.get_resource_pool(KUNLUN_POOL)
        # v1 pools show their cards (gpuDetail); a v2 pool carries none: read its queue.
        assert pool.accelerators == ((XPU,) if api_version == "v1" else ())
        if api_version == "v2":
            assert hook.get_queue("aihcq-emulator0").queue_id == "aihcq-emulator0"
