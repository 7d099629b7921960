"""The v1 job endpoints over real HTTP: envelopes, validation, lifecycle calls."""

from __future__ import annotations

import re
import uuid

import pytest
from aihc_emulator_client import POOL, Client, job_body

from airflow_provider_aihc.emulator import EmulatorServer

JOBS = "/api/v1/aijobs"
Q = {"resourcePoolId": POOL}
UUID_RE = re.compile(r"^[0-9a-f-]{36}$")
ISO_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def test_create_answers_the_v1_envelope_and_echoes_the_name(client: Client) -> None:
    response = client.request("POST", JOBS, Q, job_body("llama-7b"))
    assert response.status_code == 200
    data = response.json()
    assert set(data) == {"requestId", "result"}
    assert response.headers["x-bce-request-id"] == data["requestId"]
    assert UUID_RE.match(data["requestId"])
    assert data["result"]["jobName"] == "llama-7b"
    assert re.match(r"^pytorchjob-[0-9a-f-]{36}$", data["result"]["jobId"])


def test_mpi_jobs_get_mpijob_ids(client: Client) -> None:
    created = client.create("mpi-run", jobFramework="MPIJob")
    assert created["jobId"].startswith("mpijob-")
    assert client.get(created["jobId"])["jobFramework"] == "MPIJob"


def test_get_returns_job_info_with_pods(client: Client) -> None:
    job_id = client.create("dist-train", replicas=3)["jobId"]
    info = client.get(job_id)
    assert info["jobId"] == job_id
    assert info["name"] == "dist-train"
    assert info["resourcePoolId"] == POOL
    assert info["queue"] == "default"
    assert info["status"] == "Created"
    assert ISO_RE.match(info["createdAt"])
    assert info["finishedAt"] == ""
    assert info["image"].startswith("registry.baidubce.com/")
    assert info["command"] == "python pretrain_gpt.py"
    assert info["resources"] == [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}]
    assert info["enableRDMA"] is True
    labels = {label["key"]: label["value"] for label in info["labels"]}
    assert labels["team"] == "llm"
    assert labels["aijob.cce.baidubce.com/create-from-aihcp-api"] == "true"
    pod_list = info["podList"]
    assert pod_list["listMeta"]["totalItems"] == 3
    names = [pod["objectMeta"]["name"] for pod in pod_list["pods"]]
    assert names == ["dist-train-master-0", "dist-train-worker-0", "dist-train-worker-1"]
    pod = pod_list["pods"][0]
    assert {
        "PodIP",
        "nodeName",
        "podStatus",
        "replicaType",
        "restartCount",
        "finishedAt",
        "reason",
    } <= set(pod)
    assert pod["objectMeta"]["namespace"] == "default"
    assert pod["objectMeta"]["labels"]["training.kubeflow.org/job-name"] == "dist-train"
    assert pod["podStatus"] == {"podPhase": "Pending", "status": "Pending"}
    assert [p["replicaType"] for p in pod_list["pods"]] == ["master", "worker", "worker"]


def test_list_filters_orders_and_pages(client: Client) -> None:
    ids = [
        client.create(f"job-{i}", queue="research" if i % 2 else "default")["jobId"]
        for i in range(5)
    ]
    page = client.ok("GET", JOBS, {**Q, "pageSize": 2, "pageNo": 1, "order": "asc"})["result"]
    assert page["total"] == 5
    assert [j["jobId"] for j in page["jobs"]] == ids[:2]
    assert (page["orderBy"], page["order"], page["pageNo"], page["pageSize"]) == (
        "createdAt",
        "asc",
        1,
        2,
    )
    last = client.ok("GET", JOBS, {**Q, "pageSize": 2, "pageNo": 3, "order": "asc"})["result"]
    assert [j["jobId"] for j in last["jobs"]] == ids[4:]
    newest_first = client.ok("GET", JOBS, Q)["result"]
    assert [j["jobId"] for j in newest_first["jobs"]] == ids[::-1]
    assert "podList" not in newest_first["jobs"][0]
    research = client.ok("GET", JOBS, {**Q, "queue": "research"})["result"]
    assert sorted(j["jobId"] for j in research["jobs"]) == sorted(ids[1::2])
    assert client.ok("GET", JOBS, {**Q, "queue": "all"})["result"]["total"] == 5


def test_list_by_finished_at(client: Client) -> None:
    first, second = (client.create(name)["jobId"] for name in ("first", "second"))
    client.ok("POST", f"{JOBS}/{second}/stop", Q)
    client.ok("POST", f"{JOBS}/{first}/stop", Q)
    jobs = client.ok("GET", JOBS, {**Q, "orderBy": "finishedAt", "order": "desc"})["result"]
    assert next(j["jobId"] for j in jobs["jobs"]) == first


@pytest.mark.parametrize(
    "params",
    [{"orderBy": "name"}, {"order": "up"}, {"pageNo": 0}, {"pageSize": 0}, {"pageNo": "x"}],
)
def test_list_rejects_bad_paging(client: Client, params: dict[str, object]) -> None:
    response = client.request("GET", JOBS, {**Q, **params})
    assert response.status_code == 400
    assert response.json()["code"] == "InvalidParam"


def test_stop_a_live_job_ends_it_manual_termination(client: Client) -> None:
    job_id = client.create("to-stop")["jobId"]
    client.status(job_id)
    result = client.ok("POST", f"{JOBS}/{job_id}/stop", Q)["result"]
    assert result == {"jobId": job_id, "jobName": "to-stop"}
    info = client.get(job_id)
    assert info["status"] == "ManualTermination"
    assert ISO_RE.match(info["finishedAt"])
    assert client.get(job_id)["status"] == "ManualTermination"


def test_stop_an_ended_job_is_a_no_op(client: Client, server: EmulatorServer) -> None:
    job_id = client.create("done")["jobId"]
    while client.status(job_id) != "Succeeded":
        pass
    result = client.ok("POST", f"{JOBS}/{job_id}/stop", Q)["result"]
    assert result == {"jobId": job_id, "jobName": "done"}
    assert client.status(job_id) == "Succeeded"
    assert server.backend.count("StopJob", 200) == 1


def test_delete_removes_the_job(client: Client) -> None:
    job_id = client.create("to-delete")["jobId"]
    result = client.ok("DELETE", f"{JOBS}/{job_id}", Q)["result"]
    assert result == {"jobId": job_id, "jobName": "to-delete"}
    response = client.request("GET", f"{JOBS}/{job_id}", Q)
    assert response.status_code == 404
    body = response.json()
    assert set(body) == {"requestId", "code", "message"}
    assert body["code"] == "JobNotFound"
    assert client.request("DELETE", f"{JOBS}/{job_id}", Q).status_code == 404
    client.create("to-delete")  # the name is free again


def test_update_priority(client: Client, server: EmulatorServer) -> None:
    job_id = client.create("prio")["jobId"]
    result = client.ok("PUT", f"{JOBS}/{job_id}", Q, {"priority": "high"})["result"]
    assert result == {"jobId": job_id}
    assert client.get(job_id)["priority"] == "high"
    for bad in ({"priority": "urgent"}, {"priority": "low", "name": "x"}, {}):
        response = client.request("PUT", f"{JOBS}/{job_id}", Q, bad)
        assert response.status_code == 400, bad
        assert response.json()["code"] == "InvalidParam"
    assert server.backend.count("UpdateJob") == 4


def test_name_clash_in_the_same_pool_is_rejected(client: Client) -> None:
    job_id = client.create("same-name")["jobId"]
    client.ok("POST", f"{JOBS}/{job_id}/stop", Q)
    response = client.request("POST", JOBS, Q, job_body("same-name"))
    assert response.status_code == 409
    assert response.json()["code"] == "JobAlreadyExists"
    assert "same-name" in response.json()["message"]
    serverless = {"resourcePoolId": "aihc-serverless", "queueID": "aihcq-emulator0"}
    # A managed pool's job names its queue by id (bce-sdk-go resource/client.go:232-235).
    body = job_body("same-name", queue="aihcq-emulator0")
    other_pool = client.request("POST", JOBS, serverless, body)
    assert other_pool.status_code == 200


@pytest.mark.parametrize(
    ("mutate", "code", "fragment"),
    [
        (lambda b: b.pop("name"), "InvalidParam", "name is required"),
        (lambda b: b.pop("jobSpec"), "InvalidParam", "jobSpec is required"),
        (lambda b: b["jobSpec"].pop("image"), "InvalidParam", "jobSpec.image is required"),
        (lambda b: b["jobSpec"].update(command=""), "InvalidParam", "jobSpec.command"),
        (lambda b: b.update(priority="urgent"), "InvalidParam", "priority"),
        (lambda b: b.update(jobFramework="TFJob"), "InvalidParam", "jobFramework"),
        (lambda b: b["jobSpec"].update(replicas=0), "InvalidParam", "replicas"),
        (lambda b: b.update(name="Bad_Name"), "InvalidParam", "lowercase"),
        (lambda b: b.update(name="x" * 51), "InvalidParam", "50"),
        (lambda b: b.update(queue="nope"), "InvalidParam", "queue"),
        (lambda b: b.update(name=42), "MalformedJSON", "name must be a string"),
        (lambda b: b["jobSpec"].update(replicas="2"), "MalformedJSON", "replicas"),
        (lambda b: b.update(labels=[{"key": "a", "value": 1}]), "MalformedJSON", "labels"),
        (lambda b: b.update(enableBccl=True), "InvalidParam", "enableBccl"),
    ],
)
def test_create_validation(client: Client, mutate: object, code: str, fragment: str) -> None:
    body = job_body("valid-name")
    mutate(body)  # type: ignore[operator]
    response = client.request("POST", JOBS, Q, body)
    assert response.status_code == 400
    data = response.json()
    assert data["code"] == code
    assert fragment in data["message"]
    assert UUID_RE.match(data["requestId"])


def test_create_rejects_bodies_that_are_not_json_objects(client: Client) -> None:
    assert client.request("POST", JOBS, Q, ["a"]).json()["code"] == "InappropriateJSON"
    raw = client.request("POST", JOBS, Q, raw_body=b"{not json")
    assert (raw.status_code, raw.json()["code"]) == (400, "MalformedJSON")
    empty = client.request("POST", JOBS, Q)
    assert (empty.status_code, empty.json()["code"]) == (400, "InappropriateJSON")


def test_create_accepts_the_nulls_the_aihc_cli_sends(client: Client) -> None:
    body = job_body(
        "cli-style",
        labels=None,
        datasources=[{"mountPath": "/mnt/cluster", "name": None, "type": "pfs"}],
    )
    body["jobSpec"].update(envs=None, imageConfig=None, hostNetwork=False)
    assert client.request("POST", JOBS, Q, body).status_code == 200


def test_pool_errors(client: Client) -> None:
    missing = client.request("POST", JOBS, {}, job_body("no-pool"))
    assert (missing.status_code, missing.json()["code"]) == (400, "InvalidParam")
    unknown = client.request("GET", JOBS, {"resourcePoolId": "cce-nope"})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "ResourcePoolNotFound")


def test_serverless_pool_needs_a_queue_id(client: Client) -> None:
    pool = {"resourcePoolId": "aihc-serverless"}
    response = client.request("POST", JOBS, pool, job_body("managed"))
    assert response.status_code == 400
    assert response.json() | {"requestId": ""} == {
        "requestId": "",
        "code": "InvalidParam",
        "message": "queueID must be set in serverless pool",
    }
    with_queue = {**pool, "queueID": "aihcq-emulator0"}
    job_id = client.ok("POST", JOBS, with_queue, job_body("managed", queue="aihcq-emulator0"))[
        "result"
    ]["jobId"]
    assert client.request("GET", f"{JOBS}/{job_id}", pool).status_code == 400
    assert client.ok("GET", f"{JOBS}/{job_id}", with_queue)["result"]["jobId"] == job_id
    wrong = client.request("GET", f"{JOBS}/{job_id}", {**pool, "queueID": "aihcq-other"})
    assert (wrong.status_code, wrong.json()["code"]) == (403, "AccessDenied")
    assert client.request("GET", JOBS, pool).status_code == 400
    # The queue's name where its id is wanted (the definitions want the id,
    # bce-openapi-meta ``StopJob.json:4``; the queue is ``default`` by
    # name, ``aihcq-emulator0`` by id), on a call and on a create.
    by_name = client.request("GET", f"{JOBS}/{job_id}", {**pool, "queueID": "default"})
    assert (by_name.status_code, by_name.json()["code"]) == (400, "InvalidParam")
    assert "id of a queue" in by_name.json()["message"]
    named = client.request("POST", JOBS, with_queue, job_body("by-name", queue="default"))
    assert named.status_code == 400


def test_a_job_of_another_pool_is_not_found(client: Client) -> None:
    job_id = client.create("here")["jobId"]
    other = {"resourcePoolId": "aihc-serverless", "queueID": "aihcq-emulator0"}
    assert client.request("GET", f"{JOBS}/{job_id}", other).status_code == 404


def test_encoded_slash_in_a_job_id_stays_in_its_segment(client: Client) -> None:
    response = client.request("GET", f"{JOBS}/..%2Fresourcepools", Q)
    assert response.status_code == 404
    assert response.json()["code"] in ("JobNotFound", "SignatureDoesNotMatch")
    weird_id = f"pytorchjob-{uuid.uuid4()}/../x"
    response = client.request("GET", f"{JOBS}/{weird_id.replace('/', '%2F')}", Q)
    assert response.status_code in (403, 404)


def test_job_nodes(client: Client) -> None:
    job_id = client.create("nodes", replicas=2)["jobId"]
    assert client.ok("GET", f"{JOBS}/{job_id}/nodes", Q)["result"] == {
        "jobId": job_id,
        "nodeName": [],
    }
    client.get(job_id)
    client.get(job_id)
    nodes = client.ok("GET", f"{JOBS}/{job_id}/nodes", Q)["result"]["nodeName"]
    assert 1 <= len(nodes) <= 2


def test_unknown_paths_and_methods(client: Client) -> None:
    unknown = client.request("GET", "/api/v1/nothing", Q)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "InvalidURI")
    wrong_method = client.request("PATCH", f"{JOBS}/abc", Q)
    assert wrong_method.status_code == 405
