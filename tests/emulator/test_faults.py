"""Injected faults: each kind, limited by operation and count; a seeded schedule."""

from __future__ import annotations

import time

import pytest
import requests
from aihc_emulator_client import POOL, Client, job_body

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios

JOBS = "/api/v1/aijobs"
Q = {"resourcePoolId": POOL}


def test_error_answers_a_bce_error_and_does_nothing(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.error(503, operation="CreateJob"))
    response = client.request("POST", JOBS, Q, job_body("unlucky"))
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "ServiceUnavailable"
    assert set(body) == {"requestId", "code", "message"}
    assert server.backend.jobs() == []
    assert client.request("POST", JOBS, Q, job_body("unlucky")).status_code == 200


def test_error_defaults_to_internal_error(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.error())
    response = client.request("GET", JOBS, Q)
    assert (response.status_code, response.json()["code"]) == (500, "InternalError")


def test_throttle_sends_retry_after(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.throttle(retry_after=2, times=2))
    for _ in range(2):
        response = client.request("GET", JOBS, Q)
        assert response.status_code == 429
        assert response.headers["Retry-After"] == "2"
        assert response.json()["code"] == "TooManyRequests"
    assert client.request("GET", JOBS, Q).status_code == 200
    assert server.backend.count("ListJobs", 429) == 2


def test_drop_before_closes_without_acting(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.drop_before(operation="CreateJob"))
    with pytest.raises(requests.ConnectionError):
        client.request("POST", JOBS, Q, job_body("dropped"))
    assert server.backend.jobs() == []
    assert server.backend.count("CreateJob", 0) == 1


def test_drop_after_really_creates_the_job(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.drop_after(operation="CreateJob"))
    with pytest.raises(requests.ConnectionError):
        client.request(
            "POST",
            JOBS,
            Q,
            job_body("lost-answer", labels=[{"key": "airflow-task", "value": "t1"}]),
        )
    found = server.backend.jobs_with_labels({"airflow-task": "t1"})
    assert [job["name"] for job in found] == ["lost-answer"]
    listed = client.ok("GET", JOBS, Q)["result"]["jobs"]
    assert [job["name"] for job in listed] == ["lost-answer"]
    retry = client.request("POST", JOBS, Q, job_body("lost-answer"))
    assert retry.status_code == 409


def test_delay_answers_late_but_acts_at_once(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.delay(0.4, operation="CreateJob"))
    with pytest.raises(requests.Timeout):
        client.request("POST", JOBS, Q, job_body("slow"), timeout=0.1)
    assert [job["name"] for job in server.backend.jobs()] == ["slow"]
    server.backend.add_fault(scenarios.delay(0.3))
    started = time.monotonic()
    assert client.request("GET", JOBS, Q).status_code == 200
    assert time.monotonic() - started >= 0.3


def test_malformed_is_a_200_with_html(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.malformed(operation="GetJob"))
    job_id = client.create("html")["jobId"]
    response = client.request("GET", f"{JOBS}/{job_id}", Q)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    with pytest.raises(requests.JSONDecodeError):
        response.json()
    assert server.backend.job(job_id)["polls"] == 0


def test_faults_only_hit_their_operation(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.error(500, operation="StopJob"))
    job_id = client.create("safe")["jobId"]
    assert client.request("GET", f"{JOBS}/{job_id}", Q).status_code == 200
    assert client.request("POST", f"{JOBS}/{job_id}/stop", Q).status_code == 500
    assert client.request("POST", f"{JOBS}/{job_id}/stop", Q).status_code == 200


def test_faults_are_consumed_in_order(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(
        scenarios.error(502), scenarios.throttle(0), scenarios.error(504, times=2)
    )
    codes = [client.request("GET", JOBS, Q).status_code for _ in range(5)]
    assert codes == [502, 429, 504, 504, 200]
    assert server.backend.faults.pending() == 0


def test_keep_alive_survives_a_drop(client: Client, server: EmulatorServer) -> None:
    server.backend.add_fault(scenarios.drop_before())
    with pytest.raises(requests.ConnectionError):
        client.request("GET", JOBS, Q)
    assert client.request("GET", JOBS, Q).status_code == 200


def test_random_schedule_is_reproducible() -> None:
    first = scenarios.random_schedule(seed=7, requests=50, rate=0.3)
    second = scenarios.random_schedule(seed=7, requests=50, rate=0.3)
    assert first == second
    kinds = {fault.kind for fault in first}
    assert "passthrough" in kinds
    assert len(kinds) > 2
    assert scenarios.random_schedule(seed=8, requests=50, rate=0.3) != first


def test_random_schedule_drives_requests(client: Client, server: EmulatorServer) -> None:
    schedule = scenarios.random_schedule(seed=3, requests=20, rate=0.5, kinds=["error"])
    server.backend.add_fault(*schedule)
    codes = [client.request("GET", JOBS, Q).status_code for _ in range(20)]
    assert codes == [503 if f.kind == "error" else 200 for f in schedule]
