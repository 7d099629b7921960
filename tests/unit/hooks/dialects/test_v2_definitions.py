"""The v2 dialect's requests held to Baidu's own definitions of each action.

``tests/unit/hooks/definitions/v2_job_actions.json`` records, per v2 job action, where
each parameter goes, its type and whether it is required, as ``baidubce/bce-openapi-meta``
defines them (each fact with its file and line). Every request the provider builds is
checked against it: the method, the query, and every body field (nested ones too) with
its type. Where the provider still disagrees with the definitions, the case is a strict
``xfail`` naming the item of the fidelity list it belongs to, so fixing the provider turns
it into a pass and a new disagreement into a failure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_aihc.hooks import calls
from airflow_provider_aihc.hooks._endpoint import ApiRequest, Call, Endpoint
from airflow_provider_aihc.hooks.dialects.v2 import V2

TABLE = json.loads((Path(__file__).parents[1] / "definitions" / "v2_job_actions.json").read_text())
DEFINED: dict[str, dict[str, Any]] = TABLE["actions"]
TYPES: dict[str, tuple[type, ...]] = {
    "String": (str,),
    "Integer": (int,),
    "Boolean": (bool,),
    "List": (list,),
    "Object": (dict,),
}
POOL, QUEUE_ID, JOB, POD = "cce-1", "aihcq-7", "job-abc123def456", "job-abc123def456-master-0"

#: Every optional field the provider can put in a create body, so each is checked.
CREATE_BODY = {
    "name": "train",
    "queue": QUEUE_ID,
    "jobFramework": "PyTorchJob",
    "jobSpec": {
        "image": "registry.example/trainer:1",
        "imageConfig": {"username": "u", "password": "p"},
        "command": "python train.py",
        "replicas": 2,
        "resources": [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}],
        "envs": [{"name": "LR", "value": "0.1"}],
        "enableRDMA": True,
        "hostNetwork": False,
    },
    "labels": [{"key": "team", "value": "ml"}],
    "priority": "normal",
    "datasources": [{"type": "pfs", "name": "pfs-7xWeAt", "mountPath": "/mnt/data"}],
    "enableBccl": False,
    "faultTolerance": False,
    "retentionPeriod": "7d",
}

#: One call per operation, with every optional argument the provider sends filled in.
CALLS: dict[str, tuple[Endpoint, list[tuple[str, str]], Any, dict[str, str]]] = {
    "CreateJob": (calls.CreateJob.endpoint, [], CREATE_BODY, {}),
    "ListJobs": (
        calls.ListJobsCall.endpoint,
        [("queue", QUEUE_ID), ("keyword", "train"), ("pageNo", "2"), ("pageSize", "100")],
        None,
        {},
    ),
    "GetJob": (calls.GetJobCall.endpoint, [], None, {"job_id": JOB}),
    "StopJob": (calls.StopJob.endpoint, [], None, {"job_id": JOB}),
    "DeleteJob": (calls.DeleteJob.endpoint, [], None, {"job_id": JOB}),
    "UpdateJob": (calls.UpdateJob.endpoint, [], {"priority": "high"}, {"job_id": JOB}),
    "GetJobEvents": (
        calls.GetJobEvents.endpoint,
        [("startTime", "2026-12-01T00:00:00Z"), ("endTime", "2026-12-01T01:00:00Z")],
        None,
        {"job_id": JOB},
    ),
    "GetPodLogs": (
        calls.GetPodLogs.endpoint,
        [("startTime", "1764547200"), ("maxLines", "500"), ("marker", "m-2")],
        None,
        {"job_id": JOB, "pod_name": POD},
    ),
    "GetPodEvents": (calls.GetPodEvents.endpoint, [], None, {"job_id": JOB, "pod_name": POD}),
}


def _of(call: Call[Any]) -> tuple[Endpoint, list[tuple[str, str]], Any, dict[str, str]]:
    """A declared call as the hook's sender hands it to the dialect."""
    params = [(k, v) for k, v in call.params() if v is not None]
    return call.endpoint, params, call.payload(), call.path_args()


#: The job tools, every optional argument filled in (hooks/_tools.py builds these calls).
CALLS.update(
    GetJobMetrics=_of(
        calls.GetJobMetrics(JOB, POOL, metric_type="GpuUsage", start_time="1764547200",
                            end_time="1764550800", time_step="60", rate_interval="300")
    ),
    GetJobWebterminal=_of(calls.GetJobWebterminal(JOB, POD, POOL, 600, 30)),
    GetJobNodes=_of(calls.GetJobNodes(JOB, POOL)),
    BatchStopJobs=_of(calls.StopJobs((JOB, "job-other"), POOL)),
)  # fmt: skip
#: Known disagreements with the definitions (docs/fidelity.md, "Known differences").
KNOWN: dict[str, str] = {}


def _action(operation: str) -> str:
    action = CALLS[operation][0].v2
    assert action is not None
    return action.name


def _sent(operation: str) -> ApiRequest:
    endpoint, params, body, path = CALLS[operation]
    return V2.request(endpoint, POOL, QUEUE_ID, params, body, path)


def _parameters(action: str, where: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in DEFINED[action]["parameters"] if p["in"] == where}


def _type_problems(value: Any, name: str, defined: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each field of ``value`` (at dotted ``name``) that is undefined or of another type."""
    spec = defined.get(name)
    if spec is None:
        return [f"{name}: not defined"]
    expected = TYPES[spec["type"]]
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
        return [f"{name}: defined {spec['type']}, sent {type(value).__name__} {value!r}"]
    problems: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            problems += _type_problems(item, f"{name}.{key}", defined)
    elif isinstance(value, list):
        for element in value:
            if isinstance(element, dict):
                for key, item in element.items():
                    child = f"{name}[].{key}" if f"{name}[].{key}" in defined else f"{name}.{key}"
                    problems += _type_problems(item, child, defined)
    return problems


def _maybe_known(operation: str) -> Sequence[Any]:
    if operation in KNOWN:
        return [pytest.mark.xfail(strict=True, reason=KNOWN[operation])]
    return []


OPERATIONS = [pytest.param(op, marks=_maybe_known(op), id=op) for op in CALLS]


def test_the_table_names_its_source_and_every_action_the_provider_sends() -> None:
    assert TABLE["source"]["repository"] == "baidubce/bce-openapi-meta"
    for operation in CALLS:
        action = _action(operation)
        assert action in DEFINED, f"{operation} is sent as {action}, which Baidu does not define"
        assert DEFINED[action]["provider_operation"] == operation
        for parameter in DEFINED[action]["parameters"]:
            assert parameter["in"] in {"query", "body"}
            assert parameter["type"] in TYPES
            assert isinstance(parameter["line"], int)


@pytest.mark.parametrize("operation", list(CALLS))
def test_each_action_goes_out_with_its_defined_method(operation: str) -> None:
    assert _sent(operation).endpoint.method == DEFINED[_action(operation)]["method"]


@pytest.mark.parametrize("operation", list(CALLS))
def test_the_query_holds_every_required_and_only_defined_parameters(operation: str) -> None:
    action = _action(operation)
    query = dict(_sent(operation).params)
    assert query.pop("action") == action
    defined = _parameters(action, "query")
    assert set(query) <= set(defined), f"{action}: undefined query {set(query) - set(defined)}"
    required = {name for name, p in defined.items() if p["required"]}
    assert required <= set(query), f"{action}: query lacks {required - set(query)}"


@pytest.mark.parametrize("operation", OPERATIONS)
def test_the_body_holds_every_required_and_only_defined_fields_of_their_types(
    operation: str,
) -> None:
    action = _action(operation)
    body = json.loads(_sent(operation).body or b"{}")
    defined = _parameters(action, "body")
    problems = [p for key, value in body.items() for p in _type_problems(value, key, defined)]
    top_required = {n for n, p in defined.items() if p["required"] and "." not in n}
    problems += [f"{name}: required, not sent" for name in sorted(top_required - set(body))]
    assert problems == [], f"{action}: " + "; ".join(problems)


def test_a_fractional_quantity_is_refused_before_sending_and_a_whole_one_goes_as_integer() -> None:
    # v2's quantity is an Integer (schema/aihc/CreateJob.json:78-79).
    spec = {**CREATE_BODY["jobSpec"], "resources": [{"name": "cpu", "quantity": 0.5}]}
    problems = V2.create_problems({**CREATE_BODY, "jobSpec": spec})
    assert [field for field, _ in problems] == ["jobSpec.resources[0].quantity (job_resources)"]
    assert "api_version v2" in problems[0][1]
    assert "0.5" in problems[0][1]
    spec = {**CREATE_BODY["jobSpec"], "resources": [{"name": "cpu", "quantity": 2.0}]}
    assert V2.create_problems({**CREATE_BODY, "jobSpec": spec}) == []
    sent = V2.request(
        calls.CreateJob.endpoint, POOL, QUEUE_ID, [], {**CREATE_BODY, "jobSpec": spec}, {}
    )
    quantity = json.loads(sent.body or b"{}")["jobSpec"]["resources"][0]["quantity"]
    assert quantity == 2
    assert isinstance(quantity, int)


def test_a_ray_job_spec_is_a_role_map_with_head() -> None:
    # "若 jobType=RayJob：传递Map结构（Key必须包含Head…）":
    # bce-openapi-meta i18n/zh-CN/aihc/CreateJob.json:8.
    sent = V2.request(
        calls.CreateJob.endpoint, POOL, QUEUE_ID, [], {**CREATE_BODY, "jobFramework": "RayJob"}, {}
    )
    spec = json.loads(sent.body or b"{}")["jobSpec"]
    assert list(spec) == ["Head"]
    assert spec["Head"]["image"] == CREATE_BODY["jobSpec"]["image"]
