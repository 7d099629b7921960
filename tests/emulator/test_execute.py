"""The emulator really runs jobs (``--execute``), over real HTTP.

Processes are checked by a ``/proc`` scan (``tests/local_processes.py``): by the replicas'
process groups and by the job marker every process of a job carries in its environment.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aihc_emulator_client import POOL, Client
from local_processes import group_members, job_processes, wait_for

from airflow_provider_aihc.emulator import DEFAULT_SECRET_ACCESS_KEY, EmulatorServer
from airflow_provider_aihc.emulator.state.execute import ExecuteSettings
from airflow_provider_aihc.emulator.steering import scenarios

SECRET = secrets.token_urlsafe(18)
Q = {"resourcePoolId": POOL}


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(secret_access_key=SECRET, execute=ExecuteSettings(grace=1.0)) as running:
        yield running


@pytest.fixture
def client(server: EmulatorServer) -> Client:
    return Client(server.url, secret_access_key=SECRET)


def create(client: Client, name: str, command: str, replicas: int = 1, **fields: Any) -> str:
    return str(client.create(name, command=command, replicas=replicas, **fields)["jobId"])


def ended(client: Client, job_id: str) -> dict[str, Any] | None:
    job = client.get(job_id)
    return job if job["status"] in ("Succeeded", "Failed", "ManualTermination") else None


def pod_log(client: Client, job_id: str, pod: str) -> list[str]:
    page = client.ok("GET", f"/api/v1/aijobs/{job_id}/pods/{pod}/logs", Q)["result"]
    return [line.split(" ", 1)[1] for record in page["logs"] for line in record.splitlines()]


def test_every_replica_runs_with_the_distributed_environment_and_its_output_is_its_log(
    client: Client,
) -> None:
    command = 'echo "rank=$RANK world=$WORLD_SIZE addr=$MASTER_ADDR port=$MASTER_PORT '
    command += 'name=$AIHC_JOB_NAME team=$TEAM"; echo to-stderr >&2; pwd'
    job_id = create(client, "twin", command, replicas=2, envs=[{"name": "TEAM", "value": "llm"}])

    job = wait_for("the job to end", lambda: ended(client, job_id))

    assert job["status"] == "Succeeded"
    master = pod_log(client, job_id, "twin-master-0")
    worker = pod_log(client, job_id, "twin-worker-0")
    [m_line] = [line for line in master if line.startswith("rank=")]
    [w_line] = [line for line in worker if line.startswith("rank=")]
    assert m_line.startswith("rank=0 world=2 addr=127.0.0.1 port=")
    assert w_line.startswith("rank=1 world=2 addr=127.0.0.1 port=")
    assert m_line.split("port=")[1] == w_line.split("port=")[1]  # one rendezvous port
    assert m_line.endswith("name=twin team=llm")
    assert "to-stderr" in master
    workdir = master[-1]
    assert worker[-1] == workdir  # the job's own working directory
    # said once, in the first replica's log: the image is not used
    assert sum("is not used" in line for line in master + worker) == 1


def test_the_log_is_live_while_the_job_runs(client: Client) -> None:
    command = "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second"
    job_id = create(client, "live", command)

    wait_for("the first line", lambda: "first" in pod_log(client, job_id, "live-master-0"))
    assert client.status(job_id) == "Running"
    workdir = next(
        line.split("working directory ")[1]
        for line in pod_log(client, job_id, "live-master-0")
        if "working directory" in line
    )
    Path(workdir, "go").touch()
    assert wait_for("the end", lambda: ended(client, job_id))["status"] == "Succeeded"
    assert pod_log(client, job_id, "live-master-0")[-1] == "second"


def test_a_replica_that_fails_fails_the_job_and_the_others_are_stopped(
    client: Client, server: EmulatorServer
) -> None:
    job_id = create(client, "broken", 'if [ "$RANK" = 1 ]; then exit 3; fi; sleep 600', replicas=3)

    job = wait_for("the job to end", lambda: ended(client, job_id))

    assert job["status"] == "Failed"
    assert server.backend.job(job_id)["reason"] == "broken-worker-0 exited with code 3"
    assert job_processes(job_id) == []  # the sleeping replicas too


def test_stop_sends_sigterm_then_sigkill_to_every_process_group(
    client: Client, server: EmulatorServer
) -> None:
    # bash ignores SIGTERM and so does its background child: only SIGKILL ends them
    job_id = create(client, "stubborn", "trap '' TERM; sleep 600 & sleep 600; wait", replicas=2)
    wait_for("both replicas", lambda: len(job_processes(job_id)) >= 4)
    groups = server.backend.state.find(job_id).runner.pids()  # type: ignore[union-attr]

    client.ok("POST", f"/api/v1/aijobs/{job_id}/stop", Q)

    assert client.status(job_id) == "ManualTermination"
    wait_for("the processes to be gone", lambda: not job_processes(job_id))
    assert group_members(groups) == []


def test_delete_removes_the_working_directory(client: Client, server: EmulatorServer) -> None:
    job_id = create(client, "tidy", "echo data > out.txt; sleep 600")
    run = server.backend.state.find(job_id).runner
    wait_for("the output file", lambda: (run.workdir / "out.txt").exists())  # type: ignore[union-attr]

    client.ok("DELETE", f"/api/v1/aijobs/{job_id}", Q)

    wait_for("the directory to go", lambda: not run.workdir.exists())  # type: ignore[union-attr]
    assert job_processes(job_id) == []


def test_shutdown_leaves_no_process_behind() -> None:
    server = EmulatorServer(secret_access_key=SECRET, execute=ExecuteSettings(grace=0.5)).start()
    client = Client(server.url, secret_access_key=SECRET)
    job_id = create(client, "orphan", "trap '' TERM; (sleep 600 &); sleep 600", replicas=2)
    wait_for("the processes", lambda: len(job_processes(job_id)) >= 4)

    server.stop()

    assert job_processes(job_id) == []


def test_a_job_past_the_execute_timeout_is_stopped_and_fails() -> None:
    settings = ExecuteSettings(timeout=1.0, grace=0.5)
    with EmulatorServer(secret_access_key=SECRET, execute=settings) as server:
        client = Client(server.url, secret_access_key=SECRET)
        job_id = create(client, "slow", "sleep 600")
        job = wait_for("the job to end", lambda: ended(client, job_id))
        assert job["status"] == "Failed"
        assert "execute timeout (1 s)" in server.backend.job(job_id)["reason"]
        assert job_processes(job_id) == []


def test_datasource_mounts_map_to_local_directories(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = ExecuteSettings(mounts={"pfs-7xWeAt": str(data)})
    sources = [
        {"type": "pfs", "name": "pfs-7xWeAt", "mountPath": "/mnt/cluster", "sourcePath": "/"},
        {"type": "pfs", "name": "pfs-other", "mountPath": "/mnt/other", "sourcePath": "/"},
    ]
    command = "echo hello > /mnt/cluster/out.txt && echo $OUT && ls -d /mnt/other"
    with EmulatorServer(secret_access_key=SECRET, execute=settings) as server:
        client = Client(server.url, secret_access_key=SECRET)
        job_id = create(
            client, "mounts", command, datasources=sources,
            envs=[{"name": "OUT", "value": "/mnt/cluster/out.txt"}],
        )  # fmt: skip
        assert wait_for("the end", lambda: ended(client, job_id))["status"] == "Succeeded"
        lines = pod_log(client, job_id, "mounts-master-0")
    assert (data / "out.txt").read_text() == "hello\n"
    assert f"[AIHC emulator] datasource mount /mnt/cluster -> {data}" in lines
    assert str(data / "out.txt") in lines  # the env value was mapped too
    assert any(line.endswith("mounts/pfs-other") for line in lines)  # a directory of the job's


def test_the_environment_of_the_emulator_does_not_reach_the_job(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SECRET_THING", "do-not-leak")
    job_id = create(client, "clean", "env")
    wait_for("the end", lambda: ended(client, job_id))
    assert not any("do-not-leak" in line for line in pod_log(client, job_id, "clean-master-0"))


def test_scripted_faults_still_apply_a_lost_create_answer_still_runs_the_job(
    client: Client, server: EmulatorServer
) -> None:
    server.backend.add_fault(scenarios.drop_after(operation="CreateJob"))
    with pytest.raises(Exception, match=r"Connection|RemoteDisconnected|aborted"):
        client.create("lost", command="echo ran")
    [job] = server.backend.jobs()
    assert wait_for("the end", lambda: ended(client, job["jobId"]))["status"] == "Succeeded"
    assert "ran" in pod_log(client, job["jobId"], "lost-master-0")


def test_execute_refuses_the_documented_credentials_and_other_hosts() -> None:
    with pytest.raises(ValueError, match="--allow-default-credentials"):
        EmulatorServer(execute=True)
    with pytest.raises(ValueError, match="loopback"):
        EmulatorServer(host="0.0.0.0", secret_access_key=SECRET, execute=True)
    allowed = EmulatorServer(execute=True, allow_default_credentials=True)
    assert allowed.backend.executor is not None
    assert EmulatorServer(secret_access_key=DEFAULT_SECRET_ACCESS_KEY).backend.executor is None


def test_with_execute_every_api_request_must_have_a_loopback_host(client: Client) -> None:
    """A page on another site cannot make the browser send it jobs (DNS rebinding)."""
    assert client.request("GET", "/api/v1/resourcepools").status_code == 200
    foreign = client.request(
        "POST",
        "/api/v1/aijobs",
        Q,
        {"name": "rebound", "queue": "default", "jobSpec": {"image": "i", "command": "id"}},
        headers={"Host": "evil.example"},
    )
    assert (foreign.status_code, foreign.json()["code"]) == (403, "AccessDenied")
