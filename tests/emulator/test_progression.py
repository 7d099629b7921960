"""Status progression (per poll and by an injected clock), scripts and forced statuses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aihc_emulator_client import POOL, Client, FakeClock

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering.scenarios import FailJob, ForceStatus, HoldJob

Q = {"resourcePoolId": POOL}
EVENTS_Q = {**Q, "jobFramework": "PyTorchJob"}


def statuses(client: Client, job_id: str, polls: int) -> list[str]:
    return [client.status(job_id) for _ in range(polls)]


def events(client: Client, job_id: str) -> list[dict[str, object]]:
    data = client.ok("GET", f"/api/v1/aijobs/{job_id}/events", EVENTS_Q)
    assert set(data) == {"events", "total"}  # unwrapped, no envelope
    assert data["total"] == len(data["events"])
    return list(data["events"])


@pytest.fixture
def timed(clock: FakeClock) -> Iterator[tuple[EmulatorServer, Client]]:
    progression = Progression.by_time(seconds=3.0, running=10.0)
    with EmulatorServer(progression=progression, clock=clock) as running:
        yield running, Client(running.url)


def test_each_status_is_seen_by_one_poll_by_default(client: Client) -> None:
    job_id = client.create("per-poll")["jobId"]
    assert statuses(client, job_id, 5) == [
        "Created",
        "Scheduled",
        "Running",
        "Succeeded",
        "Succeeded",
    ]


def test_polls_per_status_and_running_polls() -> None:
    with EmulatorServer(progression=Progression.per_poll(2, running=3)) as server:
        client = Client(server.url)
        job_id = client.create("slow")["jobId"]
        seen = statuses(client, job_id, 8)
    assert seen == ["Created"] * 2 + ["Scheduled"] * 2 + ["Running"] * 3 + ["Succeeded"]


def test_zero_polls_moves_on_every_get() -> None:
    with EmulatorServer(progression=Progression.per_poll(0)) as server:
        client = Client(server.url)
        job_id = client.create("fast")["jobId"]
        assert statuses(client, job_id, 3) == ["Scheduled", "Running", "Succeeded"]


def test_list_never_counts_as_a_poll(client: Client, server: EmulatorServer) -> None:
    job_id = client.create("listed")["jobId"]
    for _ in range(5):
        jobs = client.ok("GET", "/api/v1/aijobs", Q)["result"]["jobs"]
        assert jobs[0]["status"] == "Created"
    assert server.backend.job(job_id)["polls"] == 0
    assert client.status(job_id) == "Created"


def test_time_progression_with_an_injected_clock(
    timed: tuple[EmulatorServer, Client], clock: FakeClock
) -> None:
    _server, client = timed
    job_id = client.create("timed")["jobId"]
    assert statuses(client, job_id, 3) == ["Created"] * 3  # polls do not move it
    clock.advance(3)
    assert client.status(job_id) == "Scheduled"
    clock.advance(3)
    info = client.get(job_id)
    assert info["status"] == "Running"
    assert info["podList"]["pods"][0]["podStatus"]["status"] == "READY"
    clock.advance(9.9)
    assert client.status(job_id) == "Running"
    clock.advance(0.1)
    info = client.get(job_id)
    assert info["status"] == "Succeeded"
    assert info["finishedAt"] == "2024-07-03T09:46:56Z"  # created at 09:46:40, + 16 s


def test_time_moves_are_back_dated_and_seen_by_list(
    timed: tuple[EmulatorServer, Client], clock: FakeClock
) -> None:
    _, client = timed
    job_id = client.create("catch-up")["jobId"]
    clock.advance(100)
    listed = client.ok("GET", "/api/v1/aijobs", Q)["result"]["jobs"][0]
    assert listed["status"] == "Succeeded"
    stamps = [e["lastTimestamp"] for e in events(client, job_id)]
    assert stamps == [
        "2024-07-03 09:46:40 +0000 UTC",
        "2024-07-03 09:46:43 +0000 UTC",
        "2024-07-03 09:46:46 +0000 UTC",
        "2024-07-03 09:46:56 +0000 UTC",
    ]


def test_time_progression_grows_the_log_with_time(
    timed: tuple[EmulatorServer, Client], clock: FakeClock
) -> None:
    _, client = timed
    job_id = client.create("log-time")["jobId"]
    clock.advance(6 + 4.5)
    logs = client.ok(
        "GET", f"/api/v1/aijobs/{job_id}/pods/log-time-master-0/logs", {**Q, "marker": ""}
    )["result"]["logs"][0].splitlines()
    assert sum("iteration" in line for line in logs) == 4


def test_one_event_per_status_change(client: Client) -> None:
    job_id = client.create("evented")["jobId"]
    statuses(client, job_id, 4)
    got = events(client, job_id)
    assert [e["reason"] for e in got] == ["Created", "Scheduled", "Running", "Succeeded"]
    assert all(e["type"] == "Normal" and e["count"] == 1 for e in got)
    assert all(e["firstTimestamp"] == e["lastTimestamp"] for e in got)
    assert str(got[0]["lastTimestamp"]).endswith(" +0000 UTC")


def test_events_need_the_job_framework(client: Client) -> None:
    job_id = client.create("no-framework")["jobId"]
    response = client.request("GET", f"/api/v1/aijobs/{job_id}/events", Q)
    assert (response.status_code, response.json()["code"]) == (400, "InvalidParam")


def test_scripted_failure_carries_its_reason(client: Client, server: EmulatorServer) -> None:
    server.backend.add_script(FailJob(match="oom", reason="CUDA out of memory"))
    ok_id = client.create("healthy")["jobId"]
    job_id = client.create("llama-oom")["jobId"]
    assert statuses(client, job_id, 4) == ["Created", "Scheduled", "Running", "Failed"]
    assert statuses(client, ok_id, 4)[-1] == "Succeeded"
    info = client.get(job_id)
    assert info["finishedAt"] != ""
    assert {p["reason"] for p in info["podList"]["pods"]} == {"CUDA out of memory"}
    assert info["podList"]["pods"][0]["podStatus"] == {"podPhase": "Failed", "status": "Error"}
    last = events(client, job_id)[-1]
    assert last["type"] == "Warning"
    assert last["reason"] == "Failed"
    assert "CUDA out of memory" in str(last["message"])
    pod_events = client.ok(
        "GET", f"/api/v1/aijobs/{job_id}/pods/llama-oom-master-0/events", EVENTS_Q
    )
    assert pod_events["events"][-1]["type"] == "Warning"
    assert "CUDA out of memory" in pod_events["events"][-1]["message"]
    logs = client.ok("GET", f"/api/v1/aijobs/{job_id}/pods/llama-oom-master-0/logs", Q)
    text = logs["result"]["logs"][0]
    assert "RuntimeError: CUDA out of memory" in text
    assert text.splitlines()[-1].endswith("exited with code 1: CUDA out of memory")


def test_failure_after_n_running_polls(client: Client, server: EmulatorServer) -> None:
    server.backend.add_script(FailJob(reason="NCCL timeout", after_running_polls=3))
    job_id = client.create("nccl")["jobId"]
    assert statuses(client, job_id, 6) == ["Created", "Scheduled"] + ["Running"] * 3 + ["Failed"]


def test_failure_before_running(client: Client, server: EmulatorServer) -> None:
    server.backend.add_script(FailJob(reason="ErrImagePull", from_status="Scheduled"))
    job_id = client.create("bad-image")["jobId"]
    assert statuses(client, job_id, 3) == ["Created", "Scheduled", "Failed"]
    logs = client.ok("GET", f"/api/v1/aijobs/{job_id}/pods/bad-image-master-0/logs", Q)
    assert logs["result"]["logs"] == []


def test_scripts_bind_once_to_the_next_job_by_default(
    client: Client, server: EmulatorServer
) -> None:
    server.backend.add_script(FailJob(reason="boom"))
    first, second = (client.create(n)["jobId"] for n in ("first", "second"))
    assert statuses(client, first, 4)[-1] == "Failed"
    assert statuses(client, second, 4)[-1] == "Succeeded"
    assert server.backend.scripts.pending() == 0


def test_hold_keeps_a_job_running(client: Client, server: EmulatorServer) -> None:
    server.backend.add_script(HoldJob(match="forever", status="Running"))
    job_id = client.create("forever-1")["jobId"]
    seen = statuses(client, job_id, 30)
    assert seen[2:] == ["Running"] * 28
    client.ok("POST", f"/api/v1/aijobs/{job_id}/stop", Q)
    assert client.status(job_id) == "ManualTermination"


def test_force_status_script_and_control(client: Client, server: EmulatorServer) -> None:
    server.backend.add_script(ForceStatus(status="Weird"))
    job_id = client.create("weird")["jobId"]
    assert statuses(client, job_id, 3) == ["Weird"] * 3
    assert client.get(job_id)["finishedAt"] == ""
    server.backend.set_status(job_id, "Running")
    assert statuses(client, job_id, 2) == ["Running", "Succeeded"]
    server.backend.set_status(job_id, "Failed", reason="node lost", hold=True)
    info = client.get(job_id)
    assert (info["status"], info["podList"]["pods"][0]["reason"]) == ("Failed", "node lost")
    server.backend.set_status(job_id, "Running")  # fault tolerance: back to Running
    assert client.get(job_id)["finishedAt"] == ""


def test_manual_progression_only_moves_by_control() -> None:
    with EmulatorServer(progression=Progression.manual()) as server:
        client = Client(server.url)
        job_id = client.create("manual")["jobId"]
        assert statuses(client, job_id, 5) == ["Created"] * 5
        server.backend.set_status(job_id, "Succeeded")
        assert client.status(job_id) == "Succeeded"
