"""The emulator's pools offer the resource names their nodes have, and a create asking for
another (a misspelled GPU) is refused as AIHC refuses a bad parameter, in both dialects
(issue #38, point 4)."""

from __future__ import annotations

import pytest
from aihc_emulator_client import Client

from airflow_provider_aihc.emulator import EmulatorServer
from airflow_provider_aihc.emulator.state.pools import NODE_RESOURCES

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
