"""The emulator's v2 validation held to Baidu's definitions table
(``tests/unit/hooks/definitions/v2_job_actions.json``, from bce-openapi-meta): for every
action, a request that leaves out one required parameter is refused, naming it, and the
complete request is accepted. Where an official client sends less than the definitions
require, the emulator accepts what the client sends (listed in ``LENIENT`` with the source).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aihc_emulator_client import POOL, Client

TABLE = json.loads(
    (Path(__file__).parents[1] / "unit/hooks/definitions/v2_job_actions.json").read_text()
)
#: Required by the definitions, optional in the emulator because an official client omits it.
LENIENT = {
    ("CreateJob", "queue"): "bce-python-sdk 0.9.79 CreateJob sends no body queue",
}
JOB = "held"
#: A complete body per action (the required fields and nothing the action lacks).
BODIES: dict[str, dict[str, Any]] = {
    "CreateJob": {
        "name": "held-2",
        "queue": "default",
        "command": "python train.py",
        "jobSpec": {"image": "trainer:1"},
    },
    "DescribeJobs": {},
    "DescribeJob": {"jobId": JOB},
    "StopJob": {"jobId": JOB},
    "DeleteJob": {"jobId": JOB},
    "ModifyJob": {"jobId": JOB, "priority": "high"},
    "DescribeJobEvents": {"jobId": JOB},
    "DescribePodEvents": {"jobId": JOB, "podName": "held-master-0"},
    "DescribeJobLogs": {"jobId": JOB, "podName": "held-master-0"},
    "DescribeJobNodes": {"jobId": JOB},
    "DescribeJobMetrics": {"jobId": JOB, "metricType": "GpuUsage"},
    "DescribeJobWebterminal": {"jobId": JOB, "podName": "held-master-0"},
    "BatchStopJobs": {"jobList": [{"jobId": JOB}]},
}


def _required(action: str) -> list[tuple[str, str]]:
    return [
        (p["in"], p["name"])
        for p in TABLE["actions"][action]["parameters"]
        if p["required"] and "." not in p["name"] and (action, p["name"]) not in LENIENT
    ]


CASES = [
    pytest.param(action, where, name, id=f"{action}-{name}")
    for action in TABLE["actions"]
    for where, name in _required(action)
]


def send(client: Client, action: str, query: dict[str, str], body: dict[str, Any]) -> Any:
    return client.request(
        "POST", "/", {"action": action, **query}, body, headers={"X-API-Version": "v2"}
    )


@pytest.fixture
def job_id(client: Client) -> str:
    body = {**BODIES["CreateJob"], "name": JOB}
    created = send(client, "CreateJob", {"resourcePoolId": POOL, "queueID": "default"}, body)
    assert created.status_code == 200, created.text
    return str(created.json()["jobId"])


def _with_job(body: dict[str, Any], job_id: str) -> dict[str, Any]:
    text = json.dumps(body).replace(f'"{JOB}"', json.dumps(job_id))
    return json.loads(text)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("action", "where", "name"), CASES)
def test_a_missing_required_parameter_is_refused_by_name(
    client: Client, job_id: str, action: str, where: str, name: str
) -> None:
    query = {"resourcePoolId": POOL, "queueID": "default"}
    body = _with_job(BODIES[action], job_id)
    if where == "query":
        query.pop(name)
    else:
        body.pop(name)
    answer = send(client, action, query, body)
    assert answer.status_code == 400, answer.text
    assert name in answer.json()["message"]
    complete = send(
        client,
        action,
        {"resourcePoolId": POOL, "queueID": "default"},
        _with_job(BODIES[action], job_id),
    )
    assert complete.status_code == 200, complete.text
