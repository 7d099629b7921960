"""Pod logs: plausible lines that grow while running; tail, marker, startTime, chunk."""

from __future__ import annotations

import re

from aihc_emulator_client import POOL, Client, FakeClock

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression

Q = {"resourcePoolId": POOL}
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")


def logs(client: Client, job_id: str, pod: str, **params: object) -> dict[str, object]:
    path = f"/api/v1/aijobs/{job_id}/pods/{pod}/logs"
    return dict(client.ok("GET", path, {**Q, **params})["result"])


def lines_of(page: dict[str, object]) -> list[str]:
    return [line for record in page["logs"] for line in str(record).splitlines()]  # type: ignore[attr-defined]


def test_logs_envelope_and_lines(client: Client) -> None:
    job_id = client.create("llama")["jobId"]
    for _ in range(3):
        client.get(job_id)
    page = logs(client, job_id, "llama-master-0")
    assert set(page) == {"jobId", "podName", "logs", "nextMarker"}
    assert (page["jobId"], page["podName"]) == (job_id, "llama-master-0")
    lines = lines_of(page)
    assert all(STAMP.match(line) for line in lines)
    text = "\n".join(lines)
    assert "NCCL INFO" in text
    assert "Init COMPLETE" in text
    assert re.search(r"iteration +10/ +20000 \| .*learning rate: .*lm loss: .*tokens/s", text)


def test_logs_are_empty_before_running_and_end_with_a_completion_line(client: Client) -> None:
    job_id = client.create("finisher")["jobId"]
    assert logs(client, job_id, "finisher-master-0")["logs"] == []
    while client.status(job_id) != "Succeeded":
        pass
    last = lines_of(logs(client, job_id, "finisher-master-0"))[-1]
    assert last.endswith("training process exited with code 0")


def test_incremental_reads_with_marker_never_repeat_a_line() -> None:
    with EmulatorServer(progression=Progression.per_poll(1, running=8)) as server:
        client = Client(server.url)
        job_id = client.create("stream", replicas=2)["jobId"]
        marker, seen = "", []
        while True:
            status = client.status(job_id)
            page = logs(client, job_id, "stream-worker-0", marker=marker, maxLines=7)
            seen.extend(lines_of(page))
            marker = str(page["nextMarker"])
            if status == "Succeeded" and not page["logs"]:
                break
        everything = lines_of(logs(client, job_id, "stream-worker-0"))
    assert seen == everything
    assert len(seen) == len(set(seen))
    iterations = [line for line in seen if "consumed samples" in line]
    assert len(iterations) == 8 * 3  # 3 lines per running poll
    assert "RANK=1" in "\n".join(seen)


def test_tail_max_lines_and_chunk(client: Client) -> None:
    job_id = client.create("tail")["jobId"]
    for _ in range(4):
        client.get(job_id)
    everything = lines_of(logs(client, job_id, "tail-master-0"))
    tail = logs(client, job_id, "tail-master-0", maxLines=3)
    assert lines_of(tail) == everything[-3:]
    assert len(tail["logs"]) == 1  # type: ignore[arg-type]
    chunked = logs(client, job_id, "tail-master-0", maxLines=5, chunk=2)
    assert [len(str(r).splitlines()) for r in chunked["logs"]] == [2, 2, 1]  # type: ignore[attr-defined]
    head = logs(client, job_id, "tail-master-0", marker="", maxLines=2)
    assert lines_of(head) == everything[:2]


def test_start_time_filters_lines(clock: FakeClock) -> None:
    with EmulatorServer(progression=Progression.per_poll(1, running=5), clock=clock) as server:
        client = Client(server.url)
        job_id = client.create("since")["jobId"]
        for _ in range(3):
            client.get(job_id)
            clock.advance(10)
        cutoff = clock.now
        client.get(job_id)
        later = lines_of(logs(client, job_id, "since-master-0", startTime=int(cutoff)))
        everything = lines_of(logs(client, job_id, "since-master-0"))
    assert 0 < len(later) < len(everything)
    assert later == everything[-len(later) :]


def test_bad_marker_and_unknown_pod(client: Client) -> None:
    job_id = client.create("errs")["jobId"]
    bad = client.request(
        "GET", f"/api/v1/aijobs/{job_id}/pods/errs-master-0/logs", {**Q, "marker": "garbage"}
    )
    assert (bad.status_code, bad.json()["code"]) == (400, "InvalidParam")
    missing = client.request("GET", f"/api/v1/aijobs/{job_id}/pods/other-master-0/logs", Q)
    assert (missing.status_code, missing.json()["code"]) == (404, "PodNotFound")


def test_logs_are_deterministic(client: Client) -> None:
    first = client.create("same-seed")["jobId"]
    for _ in range(3):
        client.get(first)
    a = [
        line.split(" ", 1)[1]
        for line in lines_of(logs(client, first, "same-seed-master-0"))
        if "consumed samples" in line
    ]
    client.ok("DELETE", f"/api/v1/aijobs/{first}", Q)
    second = client.create("same-seed")["jobId"]
    for _ in range(3):
        client.get(second)
    b = [
        line.split(" ", 1)[1]
        for line in lines_of(logs(client, second, "same-seed-master-0"))
        if "consumed samples" in line
    ]
    assert len(a) == 3
    assert a == b
