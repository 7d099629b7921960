"""``build_create_request``: merging parameters over a body, and every problem reported once."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from seed_job import MINIMAL_PARAMS, SEED_BODY

from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.models.build import PARAMETER_PATHS, build_create_request
from airflow_provider_aihc.models.request import CreateJobRequest


def errors_of(*args: Any, **kwargs: Any) -> dict[str, str]:
    """The ``{field: problem}`` of the AIHCValidationError the call raises."""
    with pytest.raises(AIHCValidationError) as info:
        build_create_request(*args, **kwargs)
    assert str(info.value).startswith("Invalid AIHC job parameters")
    return dict(info.value.errors)


# -- the seed job, three ways -----------------------------------------------------------


def test_seed_from_params_body_and_json_string_is_identical(
    seed_body: dict[str, Any], seed_params: dict[str, Any]
) -> None:
    from_params = build_create_request(**seed_params).to_wire()
    from_body = build_create_request(seed_body).to_wire()
    from_text = build_create_request(json.dumps(seed_body)).to_wire()

    assert from_params == from_body == from_text == SEED_BODY
    assert json.dumps(from_params, sort_keys=True) == json.dumps(SEED_BODY, sort_keys=True)
    assert '"enableRDMA": true' in json.dumps(from_params)


def test_seed_from_params_rendered_to_text(seed_params: dict[str, Any]) -> None:
    """Jinja without native rendering turns every value into a string."""
    rendered = {
        key: value if isinstance(value, str) else str(value) for key, value in seed_params.items()
    }
    assert rendered["enable_rdma"] == "True"
    assert rendered["envs"] == "{'CUDA_DEVICE_MAX_CONNECTIONS': 1}"  # a Python repr, not JSON
    assert build_create_request(**rendered).to_wire() == SEED_BODY


def test_returns_the_model() -> None:
    assert isinstance(build_create_request(**MINIMAL_PARAMS), CreateJobRequest)


def test_body_may_be_a_model(seed_body: dict[str, Any]) -> None:
    model = CreateJobRequest.model_validate(seed_body)
    assert build_create_request(model, priority="high").to_wire() == {
        **SEED_BODY,
        "priority": "high",
    }


# -- merging ------------------------------------------------------------------------------


def test_params_override_the_body(seed_body: dict[str, Any]) -> None:
    wire = build_create_request(
        seed_body, name="other", replicas="2", envs={"X": "y"}, job_queue="q1", host_network=False
    ).to_wire()
    assert wire["name"] == "other"
    assert wire["queue"] == "q1"
    assert wire["jobSpec"]["replicas"] == 2
    assert wire["jobSpec"]["envs"] == [{"name": "X", "value": "y"}]
    assert wire["jobSpec"]["hostNetwork"] is False
    assert wire["jobSpec"]["image"] == SEED_BODY["jobSpec"]["image"]  # untouched fields stay


def test_body_is_never_mutated(seed_body: dict[str, Any]) -> None:
    seed_body["jobSpec"]["privileged"] = None
    seed_body["job_framework_note"] = None
    before = copy.deepcopy(seed_body)
    build_create_request(seed_body, replicas=3, envs={"B": 2}, labels={"k": "v"})
    with pytest.raises(AIHCValidationError):
        build_create_request(seed_body, replicas=0, priority="urgent")
    assert seed_body == before


def test_defaults_apply_only_when_nothing_gives_a_value() -> None:
    wire = build_create_request(**MINIMAL_PARAMS).to_wire()
    assert (wire["queue"], wire["jobFramework"], wire["priority"]) == (
        "default",
        "PyTorchJob",
        "normal",
    )
    assert wire["jobSpec"]["replicas"] == 1

    body = {"queue": "q", "jobFramework": "MPIJob", "priority": "low", "jobSpec": {"replicas": 4}}
    wire = build_create_request(body, **MINIMAL_PARAMS).to_wire()
    assert (wire["queue"], wire["jobFramework"], wire["priority"]) == ("q", "MPIJob", "low")
    assert wire["jobSpec"]["replicas"] == 4


def test_nulls_in_the_body_mean_not_given() -> None:
    body = {"queue": None, "priority": None, "jobSpec": {"replicas": None, "hostNetwork": None}}
    wire = build_create_request(body, **MINIMAL_PARAMS).to_wire()
    assert (wire["queue"], wire["priority"], wire["jobSpec"]["replicas"]) == (
        "default",
        "normal",
        1,
    )
    assert "hostNetwork" not in wire["jobSpec"]


def test_snake_case_body_keys_merge_with_params() -> None:
    body = {"name": "a", "job_spec": {"image": "i", "command": "c", "enable_rdma": "yes"}}
    wire = build_create_request(body, enable_rdma="off", job_framework="MPIJob").to_wire()
    assert wire["jobSpec"]["enableRDMA"] is False
    assert wire["jobFramework"] == "MPIJob"


def test_all_parameter_paths_land_where_documented() -> None:
    wire = build_create_request(
        **MINIMAL_PARAMS,
        job_queue="q",
        replicas=2,
        job_resources=[{"name": "cpu", "quantity": 1}],
        envs=[{"name": "A", "value": "1"}],
        priority="high",
        job_framework="MPIJob",
        enable_rdma=True,
        datasources=[{"type": "pfs", "mountPath": "/m"}],
        labels=[{"key": "k", "value": "v"}],
        fault_tolerance=True,
        fault_tolerance_config={"enabledHangDetection": True, "faultToleranceLimit": "3"},
        enable_bccl=False,
        image_config={"username": "u", "password": "p"},
        host_network=True,
        privileged=False,
        tensorboard_config={"enableTensorboard": True, "logPath": "/logs"},
        alert_config={"alertName": "slow", "for": "5m"},
        retention_period="1d",
        max_running_time="12h",
        code_source={"filePath": "/code/train.tar.gz", "mountPath": "/workspace"},
        log_collection_file_patterns=["/workspace/logs/*.log"],
        required_node_affinity=["node-1"],
        preferred_node_affinity=["node-2"],
        advanced_settings={"runtimeEnv": "{}", "SubmitterBackoffLimit": 2},
    ).to_wire()
    for param, path in PARAMETER_PATHS.items():
        node: Any = wire
        for key in path:
            assert key in node, f"{param} did not reach {'.'.join(path)}"
            node = node[key]
    assert wire["faultToleranceConfig"] == {"enabledHangDetection": True, "faultToleranceLimit": 3}


# -- values rendered to text --------------------------------------------------------------


@pytest.mark.parametrize(
    ("param", "text", "path", "expected"),
    [
        ("envs", '{"A": 1, "B": true}', ("jobSpec", "envs"),
         [{"name": "A", "value": "1"}, {"name": "B", "value": "true"}]),
        ("envs", '[{"name": "A", "value": "1"}]', ("jobSpec", "envs"),
         [{"name": "A", "value": "1"}]),
        ("job_resources", '{"cpu": "1.5", "baidu.com/a800_80g_cgpu": "8"}',
         ("jobSpec", "resources"),
         [{"name": "cpu", "quantity": 1.5}, {"name": "baidu.com/a800_80g_cgpu", "quantity": 8}]),
        ("labels", "{'team': 'nlp'}", ("labels",), [{"key": "team", "value": "nlp"}]),
        ("datasources", '[{"type": "pfs", "name": "p", "mount_path": "/m"}]', ("datasources",),
         [{"type": "pfs", "name": "p", "mountPath": "/m"}]),
        ("image_config", '{"username": "u", "password": "p"}', ("jobSpec", "imageConfig"),
         {"username": "u", "password": "p"}),
        ("tensorboard_config", '{"enable_tensorboard": "true"}', ("tensorboardConfig",),
         {"enableTensorboard": True}),
        ("alert_config", '{"alertIds": ["a"]}', ("alertConfig",), {"alertIds": ["a"]}),
        ("fault_tolerance_config", "{'faultToleranceLimit': '2'}", ("faultToleranceConfig",),
         {"faultToleranceLimit": 2}),
    ],
)  # fmt: skip
def test_json_string_params(param: str, text: str, path: tuple[str, ...], expected: Any) -> None:
    node: Any = build_create_request(**MINIMAL_PARAMS, **{param: text}).to_wire()
    for key in path:
        node = node[key]
    assert node == expected


@pytest.mark.parametrize("text", ["", "  ", "None", "null"])
def test_empty_text_means_not_given(text: str) -> None:
    wire = build_create_request(**MINIMAL_PARAMS, envs=text, labels=text).to_wire()
    assert "envs" not in wire["jobSpec"]
    assert "labels" not in wire


@pytest.mark.parametrize(
    ("param", "text", "expected"),
    [("replicas", "3", 3), ("enable_rdma", "False", False), ("enable_rdma", "1", True),
     ("fault_tolerance", "true", True), ("host_network", "0", False), ("privileged", "yes", True)],
)  # fmt: skip
def test_scalar_strings_are_coerced(param: str, text: str, expected: object) -> None:
    request = build_create_request(**MINIMAL_PARAMS, **{param: text})
    node: Any = request.to_wire()
    for key in PARAMETER_PATHS[param]:
        node = node[key]
    assert node == expected


def test_default_name_applies_only_when_no_name_is_given() -> None:
    spec = {"image": "busybox", "command": "true"}
    assert build_create_request(default_name="ti-abc", **spec).name == "ti-abc"
    assert build_create_request({"name": "from-body"}, default_name="ti-abc", **spec).name == (
        "from-body"
    )
    assert build_create_request(name="given", default_name="ti-abc", **spec).name == "given"
    errors = errors_of(default_name="Bad Name", **spec)
    assert "name (default_name)" in errors
