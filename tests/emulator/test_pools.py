"""Resource pool and queue endpoints: envelopes (``requestID`` for queues) and fields."""

from __future__ import annotations

from aihc_emulator_client import POOL, Client

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.state.pools import Pool, Queue


def test_list_pools(client: Client) -> None:
    data = client.ok("GET", "/api/v1/resourcepools", {"pageNo": 1, "pageSize": 20})
    assert set(data) == {"requestId", "result"}
    result = data["result"]
    assert result["total"] == result["totalCount"] == 2
    ids = [p["metadata"]["id"] for p in result["resourcePools"]]
    assert ids == ["aihc-serverless", POOL]
    pool = result["resourcePools"][1]
    assert pool["metadata"]["name"] == "emulator-pool"
    assert pool["spec"]["region"] == "cn-beijing"
    assert pool["status"]["gpuCount"] == {"total": 64, "used": 0}
    assert pool["status"]["nodeCount"] == {"total": 8, "used": 0}
    second = client.ok("GET", "/api/v1/resourcepools", {"pageNo": 2, "pageSize": 1})
    assert [p["metadata"]["id"] for p in second["result"]["resourcePools"]] == [POOL]


def test_get_pool_shows_usage(client: Client) -> None:
    job_id = client.create("gpu-user", replicas=2)["jobId"]
    client.get(job_id)
    client.get(job_id)  # Scheduled: holds its GPUs
    pool = client.ok("GET", f"/api/v1/resourcepools/{POOL}")["result"]["resourcePool"]
    assert pool["status"]["gpuCount"]["used"] == 16
    assert pool["status"]["nodeCount"]["used"] == 2
    assert pool["spec"]["associatedPfsId"].startswith("pfs-")
    missing = client.request("GET", "/api/v1/resourcepools/cce-missing")
    assert (missing.status_code, missing.json()["code"]) == (404, "ResourcePoolNotFound")


def test_queues_use_request_id_spelled_requestID(client: Client) -> None:
    data = client.ok("GET", f"/api/v1/resourcepools/{POOL}/queue", {"pageSize": 20})
    assert set(data) == {"requestID", "result"}
    assert data["result"]["total"] == 2
    names = [q["name"] for q in data["result"]["queues"]]
    assert names == ["default", "research"]
    queue = client.ok("GET", f"/api/v1/resourcepools/{POOL}/queue/research")
    assert set(queue) == {"requestID", "result"}
    info = queue["result"]["queue"]
    assert info["capability"]["baidu.com/a800_80g_cgpu"] == "16"  # ResourceList: map[string]string
    assert info["allocated"]["baidu.com/a800_80g_cgpu"] == "0"
    assert info["createdTime"].endswith("Z")
    missing = client.request("GET", f"/api/v1/resourcepools/{POOL}/queue/nope")
    assert (missing.status_code, missing.json()["code"]) == (404, "QueueNotFound")


def test_queue_allocation_follows_running_jobs(client: Client) -> None:
    job_id = client.create("alloc", queue="research")["jobId"]
    client.get(job_id)
    client.get(job_id)
    info = client.ok("GET", f"/api/v1/resourcepools/{POOL}/queue/research")["result"]["queue"]
    assert info["allocated"]["baidu.com/a800_80g_cgpu"] == "8"


def test_serverless_queue_by_id(client: Client) -> None:
    queue = client.ok("GET", "/api/v1/resourcepools/aihc-serverless/queue/aihcq-emulator0")
    assert queue["result"]["queue"]["queueId"] == "aihcq-emulator0"


def test_custom_pools() -> None:
    pools = [Pool("cce-custom", "custom", queues=(Queue("q1"),), nodes=2, gpus_per_node=4)]
    with EmulatorServer(pools=pools) as server:
        client = Client(server.url)
        result = client.ok("GET", "/api/v1/resourcepools")["result"]
        assert [p["metadata"]["id"] for p in result["resourcePools"]] == ["cce-custom"]
        assert result["resourcePools"][0]["status"]["gpuCount"]["total"] == 8
        assert client.create("in-custom", pool="cce-custom", queue="q1")["jobName"] == "in-custom"
