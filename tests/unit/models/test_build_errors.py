"""``build_create_request`` validation: every rule names the field and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest
from seed_job import MINIMAL_PARAMS

from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCValidationError
from airflow_provider_aihc.models.build import build_create_request

BCCL_OK: dict[str, Any] = {
    **MINIMAL_PARAMS,
    "enable_bccl": True,
    "replicas": 2,
    "enable_rdma": True,
    "job_resources": {"baidu.com/a800_80g_cgpu": 8},
}


def errors_of(*args: Any, **kwargs: Any) -> dict[str, str]:
    """The ``{field: problem}`` of the AIHCValidationError the call raises."""
    with pytest.raises(AIHCValidationError) as info:
        build_create_request(*args, **kwargs)
    return dict(info.value.errors)


# Each case: (body, parameters, field, fragments the problem must contain).
RULES: list[tuple[Any, dict[str, Any], str, list[str]]] = [
    # name
    (None, {"name": "My_Job"}, "name (name)",
     ["lowercase letters, digits and '-'", "starting and ending", "'My_Job'"]),
    (None, {"name": "-job"}, "name (name)",
     ["starting and ending with a letter or digit", "'-job'"]),
    (None, {"name": "a" * 51}, "name (name)", ["1-50", "got 51 characters"]),
    (None, {"name": ""}, "name (name)", ["1-50"]),
    (None, {"name": 12}, "name (name)", ["must be a string", "12"]),
    (None, {"name": None}, "name", ["required", "name="]),
    ({"name": "x"}, {"name": None, "image": None}, "jobSpec.image", ["required", "image="]),
    # allowed values
    (None, {"priority": "urgent"}, "priority (priority)",
     ["must be one of high, normal, low", "'urgent'"]),
    ({"priority": "High"}, {}, "priority", ["high, normal, low", "'High'"]),
    (None, {"job_framework": "JaxJob"}, "jobFramework (job_framework)",
     ["must be one of PyTorchJob, MPIJob, TFJob, RayJob", "'JaxJob'"]),
    (None, {"retention_period": "forever"}, "retentionPeriod (retention_period)",
     ["whole number followed by m, h or d", "'forever'"]),
    (None, {"job_queue": ""}, "queue (job_queue)", ["must not be empty"]),
    # counts and quantities
    (None, {"replicas": 0}, "jobSpec.replicas (replicas)", ["must be >= 1, got 0"]),
    (None, {"replicas": "two"}, "jobSpec.replicas (replicas)", ["must be an integer", "'two'"]),
    (None, {"replicas": 1.5}, "jobSpec.replicas (replicas)", ["must be an integer", "1.5"]),
    (None, {"replicas": True}, "jobSpec.replicas (replicas)", ["must be an integer", "True"]),
    (None, {"job_resources": {"cpu": -1}}, "jobSpec.resources[0].quantity (job_resources)",
     ["must be a number >= 0", "-1"]),
    (None, {"job_resources": {"cpu": "lots"}}, "jobSpec.resources[0].quantity (job_resources)",
     ["must be a number >= 0", "'lots'"]),
    (None, {"job_resources": [{"name": "", "quantity": 1}]},
     "jobSpec.resources[0].name (job_resources)", ["must not be empty"]),
    (None, {"job_resources": 8}, "jobSpec.resources (job_resources)",
     ["{name, quantity}", '{"name": quantity} mapping', "got 8"]),
    # envs and labels
    (None, {"envs": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]},
     "jobSpec.envs (envs)", ["env var names must be unique", "'A'"]),
    (None, {"envs": {"": "x"}}, "jobSpec.envs[0].name (envs)", ["must not be empty"]),
    (None, {"envs": {"A": [1]}}, "jobSpec.envs[0].value (envs)", ["must be a string", "<hidden>"]),
    (None, {"envs": "A=1"}, "jobSpec.envs (envs)", ["is not valid JSON", "line 1, column 1"]),
    (None, {"envs": 5}, "jobSpec.envs (envs)", ["{name, value}", '{"NAME": "value"} mapping']),
    (None, {"labels": [{"key": "k", "value": "1"}, {"key": "k", "value": "2"}]},
     "labels (labels)", ["label keys must be unique", "'k'"]),
    (None, {"labels": {"": "x"}}, "labels[0].key (labels)", ["must not be empty"]),
    # fault tolerance
    ({"faultToleranceArgs": "--max-restarts=3"},
     {"fault_tolerance_config": {"faultToleranceLimit": 3}},
     "faultToleranceConfig (fault_tolerance_config)",
     ["give faultToleranceConfig or faultToleranceArgs, not both"]),
    (None, {"fault_tolerance_config": {"faultToleranceLimit": -1}},
     "faultToleranceConfig.faultToleranceLimit (fault_tolerance_config)", ["must be >= 0, got -1"]),
    # BCCL
    (None, {**BCCL_OK, "replicas": 1}, "enableBccl (enable_bccl)",
     ["true requires", "jobSpec.replicas >= 2 (got 1)"]),
    (None, {**BCCL_OK, "enable_rdma": False}, "enableBccl (enable_bccl)",
     ["jobSpec.enableRDMA true (got False)"]),
    (None, {**BCCL_OK, "enable_rdma": None}, "enableBccl (enable_bccl)",
     ["jobSpec.enableRDMA true (got unset)"]),
    (None, {**BCCL_OK, "job_resources": {"baidu.com/a800_80g_cgpu": 4}}, "enableBccl (enable_bccl)",
     ["8 GPUs per replica", "got 4"]),
    (None, {**BCCL_OK, "job_resources": {"cpu": 8}}, "enableBccl (enable_bccl)",
     ["8 GPUs per replica", "got 0"]),
    # datasources
    (None, {"datasources": [{"type": "", "mountPath": "/m"}]}, "datasources[0].type (datasources)",
     ["must not be empty"]),
    (None, {"datasources": [{"type": "pfs", "mount_path": "data"}]},
     "datasources[0].mountPath (datasources)", ["absolute path", "'data'"]),
    (None, {"datasources": [{"type": "pfs"}]}, "datasources[0].mountPath (datasources)",
     ["required"]),
    (None, {"datasources": [{"type": "pfs", "mountPath": "/m", "mount": "/x"}]},
     "datasources[0].mount (datasources)",
     ["unknown field", "allowed: type, id, name, mountPath, sourcePath, options"]),
    # booleans
    (None, {"enable_rdma": "maybe"}, "jobSpec.enableRDMA (enable_rdma)",
     ["must be a boolean", "true/false", "'maybe'"]),
    (None, {"fault_tolerance": 2}, "faultTolerance (fault_tolerance)", ["must be a boolean", "2"]),
    # unknown fields and structure
    ({"queu": "q"}, {}, "queu",
     ["unknown field", "did you mean 'queue'?", "allowed: name, queue,"]),
    ({"jobSpec": {"imge": "x"}}, {}, "jobSpec.imge",
     ["unknown field", "did you mean 'image'?", "allowed: command, image, imageConfig, replicas"]),
    ({"command": "c"}, {}, "command", ["unknown field", "belongs inside jobSpec"]),
    ({"resourcePoolId": "cce-1"}, {}, "resourcePoolId", ["unknown field", "resource_pool_id"]),
    ({"jobSpec": "x"}, {}, "jobSpec", ["must be an object", "'x'"]),
    ({"jobSpec": {"enable_rdma": True, "enableRDMA": False}}, {}, "jobSpec.enableRDMA",
     ["given twice", "'enableRDMA'", "'enable_rdma'"]),
    (None, {"tensorboard_config": ["x"]}, "tensorboardConfig (tensorboard_config)",
     ["must be an object", "['x']"]),
    # body
    ('{"name": "x",', {}, "body", ["is not valid JSON", "line 1, column 14"]),
    ("[1, 2]", {}, "body", ["must be a JSON object, got list"]),
    (42, {}, "body", ["must be a mapping or a JSON object string, got int"]),
]  # fmt: skip


@pytest.mark.parametrize(("body", "params", "field", "fragments"), RULES)
def test_rule(body: Any, params: dict[str, Any], field: str, fragments: list[str]) -> None:
    errors = errors_of(body, **{**MINIMAL_PARAMS, **params})
    assert field in errors, errors
    for fragment in fragments:
        assert fragment in errors[field]


def test_bccl_with_every_condition_met_passes() -> None:
    assert build_create_request(**BCCL_OK).enable_bccl is True


def test_bccl_lists_every_unmet_condition_at_once() -> None:
    errors = errors_of(**MINIMAL_PARAMS, enable_bccl="true")
    problem = errors["enableBccl (enable_bccl)"]
    assert "replicas >= 2" in problem
    assert "enableRDMA true" in problem
    assert "8 GPUs per replica" in problem


def test_every_problem_is_reported_at_once() -> None:
    errors = errors_of(
        {"queu": "q", "jobSpec": {"imge": "x"}},
        name="Bad Name",
        command="c",
        replicas=0,
        priority="urgent",
        job_framework="JaxJob",
        envs="{oops",
        enable_rdma="maybe",
        datasources=[{"type": "pfs", "mountPath": "relative"}],
    )
    assert set(errors) == {
        "jobSpec.envs (envs)",
        "name (name)",
        "queu",
        "jobFramework (job_framework)",
        "jobSpec.image",
        "jobSpec.imge",
        "jobSpec.replicas (replicas)",
        "jobSpec.enableRDMA (enable_rdma)",
        "priority (priority)",
        "datasources[0].mountPath (datasources)",
    }


def test_the_error_is_a_config_error_without_a_pydantic_cause() -> None:
    with pytest.raises(AIHCValidationError) as info:
        build_create_request(name="x")
    assert isinstance(info.value, AIHCConfigError)
    assert isinstance(info.value, ValueError)
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__
    assert "nothing was sent" in str(info.value)
    assert all(isinstance(pair, tuple) and len(pair) == 2 for pair in info.value.errors)


def test_a_broken_body_does_not_add_missing_field_noise() -> None:
    errors = errors_of('{"name": ', replicas=0)
    assert set(errors) == {"body", "jobSpec.replicas (replicas)"}


@pytest.mark.parametrize(
    "image_config",
    [
        {"username": "u", "password": ["s3cret-pw"]},
        "s3cret-pw",
        '{"username": "u", "password": "s3cret-pw"',
        {"username": "u", "password": "s3cret-pw", "token": "x"},
    ],
)
def test_registry_credentials_never_appear_in_errors(image_config: Any) -> None:
    with pytest.raises(AIHCValidationError) as info:
        build_create_request(**MINIMAL_PARAMS, image_config=image_config)
    assert "s3cret-pw" not in str(info.value)
    assert "s3cret-pw" not in repr(info.value.errors)
    assert any(field.startswith("jobSpec.imageConfig") for field, _ in info.value.errors)


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("body", "params", "field", "fragment"),
    [
        ("[" * 100_000, {}, "body", "is not valid JSON"),
        ({"alertConfig": {"alertItems": _deep(5000)}}, {}, "body", "nested too deeply"),
        (None, {"alert_config": {"alertItems": _deep(300)}}, "alertConfig (alert_config)",
         "cannot be sent as JSON"),
        ({"datasources": [{"type": "pfs", "mountPath": "/m", "options": {"x": object()}}]}, {},
         "datasources", "cannot be sent as JSON"),
        (None, {"replicas": 10**5000}, "jobSpec.replicas (replicas)", "must be an integer"),
        (None, {"replicas": 2**31}, "jobSpec.replicas (replicas)", "must be <= 2147483647"),
        (None, {"job_resources": {"cpu": 10**400}}, "jobSpec.resources[0].quantity (job_resources)",
         "must be a number >= 0"),
        (None, {"envs": {"A": 10**5000}}, "jobSpec.envs[0].value (envs)", "too long"),
        (None, {"image": object()}, "jobSpec.image (image)", "must be a string"),
    ],
)  # fmt: skip
def test_adversarial_input_is_reported_not_raised(
    body: Any, params: dict[str, Any], field: str, fragment: str
) -> None:
    errors = errors_of(body, **{**MINIMAL_PARAMS, **params})
    assert fragment in errors[field]


def test_a_miscased_acronym_is_named_as_written_with_the_wire_spelling_suggested() -> None:
    errors = errors_of({"jobSpec": {"enableRdma": True}}, **MINIMAL_PARAMS)

    assert "jobSpec.enableRdma" in errors
    assert "did you mean 'enableRDMA'" in errors["jobSpec.enableRdma"]
