"""The control API is safe on a developer's laptop (security review F4): no DNS rebinding,
no cross-site POSTs, JSON only, a per-process token, and job views without secrets."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import requests
from aihc_emulator_client import Client, job_body

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.http.control import (
    REDACTED,
    TOKEN_ENV,
    TOKEN_HEADER,
    control_headers,
)

SECRET_BODY = {
    "jobSpec": {
        "imageConfig": {"username": "robot", "password": "RegPw-9999"},
        "envs": [{"name": "HF_TOKEN", "value": "hf_SECRET_8888"}],
    }
}


def _job(client: Client) -> str:
    body = job_body("leaky")
    body["jobSpec"].update(SECRET_BODY["jobSpec"])
    return str(client.create("leaky", **{"jobSpec": body["jobSpec"]})["jobId"])


@pytest.mark.parametrize("path", ["state", "jobs/pytorchjob-1"])
@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8080", "127.0.0.1.nip.io"])
def test_a_rebound_host_is_refused(server: EmulatorServer, path: str, host: str) -> None:
    answer = requests.get(f"{server.url}/_emulator/{path}", headers={"Host": host}, timeout=10)
    assert (answer.status_code, answer.json()["code"]) == (403, "AccessDenied")
    assert "loopback Host" in answer.json()["message"]


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "127.0.0.2:1"])
def test_a_loopback_host_is_answered(server: EmulatorServer, host: str) -> None:
    answer = requests.get(f"{server.url}/_emulator/state", headers={"Host": host}, timeout=10)
    assert answer.status_code == 200


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "text/plain"}, 415),  # a "simple" cross-site form POST
        ({"Origin": "http://attacker.example"}, 403),
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({TOKEN_HEADER: "guessed"}, 403),
        ({TOKEN_HEADER: ""}, 403),
    ],
)
def test_a_forgeable_post_is_refused(server: EmulatorServer, headers: dict, status: int) -> None:
    sent = {**control_headers(server.control_token), **headers}
    fault = json.dumps({"kind": "error", "status": 503, "times": 1000})
    answer = requests.post(f"{server.url}/_emulator/faults", data=fault, headers=sent, timeout=10)
    assert answer.status_code == status
    assert server.backend.faults.pending() == 0


def test_a_same_origin_post_with_the_token_is_answered(server: EmulatorServer) -> None:
    sent = {**control_headers(server.control_token), "Origin": server.url}
    sent["Sec-Fetch-Site"] = "same-origin"
    answer = requests.post(f"{server.url}/_emulator/reset", data="{}", headers=sent, timeout=10)
    assert answer.json()["reset"] is True


def test_job_views_hide_passwords_and_env_values(client: Client, server: EmulatorServer) -> None:
    job_id = _job(client)
    page = requests.get(f"{server.url}/_emulator/jobs/{job_id}", timeout=10).json()
    state = requests.get(f"{server.url}/_emulator/state", timeout=10).json()
    for view in (page, state["jobs"][0]):
        text = json.dumps(view)
        assert "RegPw-9999" not in text
        assert "hf_SECRET_8888" not in text
        spec = view["body"]["jobSpec"]
        assert spec["imageConfig"] == {"username": "robot", "password": REDACTED}
        assert spec["envs"] == [{"name": "HF_TOKEN", "value": REDACTED}]
        assert sorted(view["redacted"]) == [
            "body.jobSpec.envs[0].value",
            "body.jobSpec.imageConfig.password",
        ]
    # In process, the record keeps what was sent (what tests assert on).
    assert server.backend.job(job_id)["body"]["jobSpec"]["imageConfig"]["password"] == "RegPw-9999"


def test_loopback_host_only_refuses_every_api_request_for_another_host() -> None:
    with EmulatorServer(loopback_host_only=True) as strict:
        client = Client(strict.url)
        assert client.request("GET", "/api/v1/resourcepools").status_code == 200
        foreign = client.request("GET", "/api/v1/resourcepools", headers={"Host": "evil.example"})
        assert (foreign.status_code, foreign.json()["code"]) == (403, "AccessDenied")


def test_the_standalone_emulator_prints_its_token_and_takes_one_from_the_environment() -> None:
    env = {**os.environ, TOKEN_ENV: "token-from-the-environment"}
    process = subprocess.Popen(
        [sys.executable, "-m", "airflow_provider_aihc.emulator", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert "control token token-from-the-environment" in line


CODE_SOURCE = {"codeSource": {"mountPath": "/code", "bosTemporaryToken": "BOS-TEMP-TOKEN-7777"}}


@pytest.mark.parametrize(
    ("api_version", "framework", "extra"),
    [
        ("v1", "PyTorchJob", CODE_SOURCE),  # codeSource is v1's only
        ("v2", "PyTorchJob", {}),
        ("v2", "TFJob", {}),
        ("v2", "RayJob", {"advancedSettings": {"runtimeEnv": "{}"}}),
    ],
)
def test_job_views_hide_every_secret_of_every_job_type_and_dialect(
    server: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    api_version: str,
    framework: str,
    extra: dict,
) -> None:
    """S4-6: v2 role maps (``{"Worker": spec}``, ``{"Head": spec}``) and ``codeSource`` too,
    for a job the provider's own hook created."""
    from airflow_provider_aihc.emulator.connection import CONN_ENV
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    monkeypatch.setenv(CONN_ENV, server.connection(api_version=api_version).json)
    body = {
        "name": "leaky",
        "queue": "default",
        "jobFramework": framework,
        "jobSpec": {"image": "i", "command": "c", "replicas": 1, **SECRET_BODY["jobSpec"]},
        **extra,
    }
    job_id = AIHCHook().create_job(body).job_id
    page = requests.get(f"{server.url}/_emulator/jobs/{job_id}", timeout=10).json()
    state = requests.get(f"{server.url}/_emulator/state", timeout=10).json()
    for view in (page, state["jobs"][0]):
        text = json.dumps(view)
        for secret in ("RegPw-9999", "hf_SECRET_8888", "BOS-TEMP-TOKEN-7777"):
            assert secret not in text
        assert len(view["redacted"]) == (3 if "codeSource" in extra else 2), view["redacted"]
    # In process, the record keeps what was sent.
    assert "RegPw-9999" in json.dumps(server.backend.job(job_id)["body"])
