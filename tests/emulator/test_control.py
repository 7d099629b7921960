"""The unsigned control API under /_emulator/."""

from __future__ import annotations

import contextlib
import json

import requests
from aihc_emulator_client import POOL, Client

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.http.control import control_headers


def control(
    server: EmulatorServer, method: str, path: str, body: object = None
) -> requests.Response:
    return requests.request(
        method,
        f"{server.url}/_emulator/{path}",
        data=None if body is None else json.dumps(body),
        headers=control_headers(server.control_token),
        timeout=5,
    )


def test_state_lists_jobs_and_request_counts(client: Client, server: EmulatorServer) -> None:
    job_id = client.create("observed")["jobId"]
    client.get(job_id)
    state = control(server, "GET", "state").json()
    assert state["requests"] == {"CreateJob": 1, "GetJob": 1}
    [job] = state["jobs"]
    assert job["jobId"] == job_id
    assert job["status"] == "Created"
    assert job["labels"]["team"] == "llm"
    assert job["polls"] == 1
    assert state["pendingFaults"] == 0
    assert state["progression"]["polls_per_status"] == 1


def test_faults_over_http(client: Client, server: EmulatorServer) -> None:
    answer = control(
        server,
        "POST",
        "faults",
        [
            {"kind": "throttle", "retry_after": 3, "operation": "ListJobs"},
            {"kind": "error", "status": 503, "times": 2},
        ],
    ).json()
    assert answer == {"queued": 2, "pendingFaults": 3}
    first = client.request("GET", "/api/v1/aijobs", {"resourcePoolId": POOL})
    assert (first.status_code, first.headers["Retry-After"]) == (429, "3")
    second = client.request("GET", "/api/v1/aijobs", {"resourcePoolId": POOL})
    assert (second.status_code, second.json()["code"]) == (503, "ServiceUnavailable")
    bad = control(server, "POST", "faults", {"kind": "meteor"})
    assert (bad.status_code, bad.json()["code"]) == (400, "InvalidParam")
    unknown_field = control(server, "POST", "faults", {"kind": "error", "colour": "red"})
    assert unknown_field.status_code == 400


def test_drop_after_over_http(client: Client, server: EmulatorServer) -> None:
    control(server, "POST", "faults", {"kind": "drop_after", "operation": "CreateJob"})
    with contextlib.suppress(requests.ConnectionError):
        client.create("lost")
    assert [j["name"] for j in control(server, "GET", "state").json()["jobs"]] == ["lost"]


def test_scripts_over_http(client: Client, server: EmulatorServer) -> None:
    control(
        server,
        "POST",
        "scripts",
        {"kind": "fail", "match": "bad", "reason": "OOM", "after_running_polls": 1},
    )
    control(server, "POST", "scripts", {"kind": "status", "match": "odd", "status": "Weird"})
    control(server, "POST", "scripts", {"kind": "hold", "match": "long"})
    bad, odd, long = (client.create(n)["jobId"] for n in ("bad-job", "odd-job", "long-job"))
    assert [client.status(bad) for _ in range(4)][-1] == "Failed"
    assert client.status(odd) == "Weird"
    assert [client.status(long) for _ in range(6)][-1] == "Running"


def test_set_job_status_over_http(client: Client, server: EmulatorServer) -> None:
    job_id = client.create("poked")["jobId"]
    answer = control(
        server, "POST", f"jobs/{job_id}/status", {"status": "Failed", "reason": "GPU Xid 79"}
    )
    assert answer.status_code == 200
    assert (answer.json()["status"], answer.json()["reason"]) == ("Failed", "GPU Xid 79")
    assert client.status(job_id) == "Failed"
    missing = control(server, "POST", "jobs/nope/status", {"status": "Running"})
    assert missing.status_code == 404


def test_reset_and_progression(client: Client, server: EmulatorServer) -> None:
    client.create("gone")
    control(server, "POST", "faults", {"kind": "error"})
    answer = control(server, "POST", "reset", {"progression": {"polls_per_status": 2}}).json()
    assert answer["progression"]["polls_per_status"] == 2
    state = control(server, "GET", "state").json()
    assert (state["jobs"], state["requests"], state["pendingFaults"]) == ([], {}, 0)
    job_id = client.create("slower")["jobId"]
    assert [client.status(job_id) for _ in range(3)] == ["Created", "Created", "Scheduled"]
    control(server, "POST", "progression", {"polls_per_status": None})
    assert client.status(job_id) == "Scheduled"
    assert control(server, "POST", "progression", {"speed": 1}).status_code == 400


def test_control_errors(server: EmulatorServer) -> None:
    assert control(server, "GET", "nothing").status_code == 404
    raw = requests.post(
        f"{server.url}/_emulator/faults",
        data=b"{",
        headers=control_headers(server.control_token),
        timeout=5,
    )
    assert (raw.status_code, raw.json()["code"]) == (400, "MalformedJSON")


def test_control_payloads_are_type_checked(server: EmulatorServer) -> None:
    for bad in (
        {"kind": "delay", "seconds": "slow"},
        {"kind": "error", "times": 0},
        {"kind": "error", "operation": 3},
    ):
        response = control(server, "POST", "faults", bad)
        assert (response.status_code, response.json()["code"]) == (400, "InvalidParam"), bad
    bad_script = control(server, "POST", "scripts", {"kind": "fail", "after_running_polls": "2"})
    assert bad_script.status_code == 400
    assert control(server, "GET", "state").json()["pendingFaults"] == 0


def test_control_answers_loopback_clients_only(server: EmulatorServer) -> None:
    """A non-loopback peer cannot be made over a test's socket: call the app directly."""
    from airflow_provider_aihc.emulator.http.wire import Request

    headers = [("Host", "127.0.0.1:1"), *control_headers(server.control_token).items()]
    remote = Request("POST", "/_emulator/reset", headers, b"", peer="10.1.2.3")
    answer = server.app(remote)
    assert answer.status == 403
    assert json.loads(answer.body)["code"] == "AccessDenied"
    local = Request("GET", "/_emulator/state", [("Host", "[::1]:9")], peer="::1")
    assert server.app(local).status == 200


def test_a_job_page_shows_one_job_and_404s_for_unknown_ids(
    client: Client, server: EmulatorServer
) -> None:
    job_id = client.create("linked")["jobId"]

    page = control(server, "GET", f"jobs/{job_id}")
    missing = control(server, "GET", "jobs/pytorchjob-missing")

    assert page.status_code == 200
    assert page.json()["jobId"] == job_id
    assert page.json()["name"] == "linked"
    assert missing.status_code == 404
    assert missing.json()["code"] == "JobNotFound"
