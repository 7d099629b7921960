"""The create-job request model: wire names, coercion, secrets (bce-sdk-go api/v1/aiJob.go)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from seed_job import SEED_BODY

from airflow_provider_aihc.models.request import (
    AlertConfig,
    CreateJobRequest,
    Datasource,
    EnvVar,
    JobSpec,
    Resource,
)


def test_seed_round_trips_exactly(seed_body: dict[str, Any]) -> None:
    request = CreateJobRequest.model_validate(seed_body)

    wire = request.to_wire()

    assert wire == SEED_BODY
    assert '"enableRDMA": true' in json.dumps(wire)
    assert "hostNetwork" not in wire["jobSpec"]
    assert "privileged" not in wire["jobSpec"]
    assert CreateJobRequest.model_validate(wire) == request


def test_python_names_and_wire_names_build_the_same_model() -> None:
    by_name = CreateJobRequest(
        name="a",
        job_framework="MPIJob",
        job_spec=JobSpec(command="c", image="i", enable_rdma=True, host_network=False),
    )
    by_alias = CreateJobRequest.model_validate(
        {
            "name": "a",
            "jobFramework": "MPIJob",
            "jobSpec": {"command": "c", "image": "i", "enableRDMA": True, "hostNetwork": False},
        }
    )
    assert by_name == by_alias
    assert by_name.to_wire()["jobSpec"] == {
        "command": "c",
        "image": "i",
        "replicas": 1,
        "enableRDMA": True,
        "hostNetwork": False,
    }


def test_defaults() -> None:
    request = CreateJobRequest(name="a", job_spec=JobSpec(command="c", image="i"))
    wire = request.to_wire()
    assert (wire["queue"], wire["jobFramework"], wire["priority"]) == (
        "default",
        "PyTorchJob",
        "normal",
    )
    assert wire["jobSpec"]["replicas"] == 1
    assert set(wire) == {"name", "queue", "jobFramework", "jobSpec", "priority"}


def test_password_is_masked_everywhere_but_the_wire() -> None:
    spec = JobSpec.model_validate(
        {"command": "c", "image": "i", "imageConfig": {"username": "bob", "password": "hunter2"}}
    )
    request = CreateJobRequest(name="a", job_spec=spec)

    for text in (repr(request), str(request), repr(spec.image_config), str(request.model_dump())):
        assert "hunter2" not in text
    assert request.to_wire()["jobSpec"]["imageConfig"] == {"username": "bob", "password": "hunter2"}
    assert '"password":"hunter2"' in request.model_dump_json()


def test_numeric_password_and_username_become_strings() -> None:
    spec = JobSpec.model_validate(
        {"command": "c", "image": "i", "imageConfig": {"username": 7, "password": 123456}}
    )
    assert spec.to_wire()["imageConfig"] == {"username": "7", "password": "123456"}


@pytest.mark.parametrize(
    ("given", "expected"),
    [("8", 8), (8.0, 8), ("8.0", 8), ("1.5", 1.5), (1.5, 1.5), (0, 0), (" 2 ", 2), ("1e1", 10)],
)
def test_quantity_coercion(given: object, expected: float) -> None:
    quantity = Resource.model_validate({"name": "cpu", "quantity": given}).quantity
    assert quantity == expected
    assert type(quantity) is type(expected)


@pytest.mark.parametrize("given", [-1, "-0.5", "lots", True, None, float("nan"), float("inf"), [8]])
def test_quantity_rejects(given: object) -> None:
    with pytest.raises(ValidationError):
        Resource.model_validate({"name": "cpu", "quantity": given})


@pytest.mark.parametrize(("given", "expected"), [("3", 3), (3.0, 3), ("3.0", 3), (3, 3)])
def test_replicas_coercion(given: object, expected: int) -> None:
    assert JobSpec(command="c", image="i", replicas=given).replicas == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("given", [0, -1, 1.5, "two", True, "1e400"])
def test_replicas_rejects(given: object) -> None:
    with pytest.raises(ValidationError):
        JobSpec(command="c", image="i", replicas=given)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("true", True),
        ("false", False),
        ("True", True),
        ("FALSE", False),
        ("1", True),
        ("0", False),
        (1, True),
        (0, False),
        ("yes", True),
        ("no", False),
        ("on", True),
        ("off", False),
    ],
)
def test_boolean_coercion(given: object, expected: bool) -> None:
    spec = JobSpec.model_validate({"command": "c", "image": "i", "enableRDMA": given})
    assert spec.enable_rdma is expected


@pytest.mark.parametrize("given", ["maybe", "2", 2, "", [True]])
def test_boolean_rejects(given: object) -> None:
    with pytest.raises(ValidationError):
        JobSpec.model_validate({"command": "c", "image": "i", "enableRDMA": given})


@pytest.mark.parametrize(
    ("given", "expected"), [(1, "1"), (True, "true"), (False, "false"), (1.5, "1.5"), ("x", "x")]
)
def test_env_values_become_strings(given: object, expected: str) -> None:
    assert EnvVar.model_validate({"name": "A", "value": given}).value == expected


def test_friendly_forms_are_stored_in_wire_form() -> None:
    spec = JobSpec.model_validate(
        {
            "command": "c",
            "image": "i",
            "envs": {"A": 1, "B": "x"},
            "resources": {"cpu": "1.5", "baidu.com/a800_80g_cgpu": 8},
        }
    )
    request = CreateJobRequest(name="a", job_spec=spec, labels={"team": "nlp", "v": 2})  # type: ignore[arg-type]
    wire = request.to_wire()
    assert wire["jobSpec"]["envs"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "x"}]
    assert wire["jobSpec"]["resources"] == [
        {"name": "cpu", "quantity": 1.5},
        {"name": "baidu.com/a800_80g_cgpu", "quantity": 8},
    ]
    assert wire["labels"] == [{"key": "team", "value": "nlp"}, {"key": "v", "value": "2"}]
    assert spec.gpus_per_replica() == 8


def test_a_single_wire_item_is_one_item_not_two() -> None:
    spec = JobSpec.model_validate(
        {"command": "c", "image": "i", "envs": {"name": "A", "value": "1"}}
    )
    assert spec.to_wire()["envs"] == [{"name": "A", "value": "1"}]


def test_datasource_options_keep_extra_keys() -> None:
    source = Datasource.model_validate(
        {
            "type": "emptydir",
            "name": "devshm",
            "mount_path": "/dev/shm",
            "options": {
                "medium": "Memory",
                "size_limit": "10",
                "readOnly": "false",
                "pfsPath": "/x",
            },
        }
    )
    assert source.to_wire() == {
        "type": "emptydir",
        "name": "devshm",
        "mountPath": "/dev/shm",
        "options": {"medium": "Memory", "sizeLimit": 10, "readOnly": False, "pfsPath": "/x"},
    }


def test_alert_config_for_is_spelled_for_on_the_wire() -> None:
    alert = AlertConfig.model_validate({"alertIds": ["a1"], "for": "5m", "instanceId": "cprom-1"})
    assert alert.for_ == "5m"
    assert alert.to_wire() == {"alertIds": ["a1"], "instanceId": "cprom-1", "for": "5m"}
    with pytest.raises(ValidationError):
        AlertConfig.model_validate({"alertID": "typo"})


def test_unknown_fields_are_rejected_at_every_level() -> None:
    with pytest.raises(ValidationError) as info:
        CreateJobRequest.model_validate(
            {"name": "a", "jobSpec": {"command": "c", "image": "i", "gpus": 8}, "extra": 1}
        )
    locs = {error["loc"] for error in info.value.errors()}
    assert locs == {("jobSpec", "gpus"), ("extra",)}


def test_bccl_passes_when_every_condition_holds() -> None:
    spec = JobSpec.model_validate(
        {
            "command": "c",
            "image": "i",
            "replicas": 2,
            "enableRDMA": True,
            "resources": {"baidu.com/a800_80g_cgpu": 8, "cpu": 32},
        }
    )
    request = CreateJobRequest(name="a", job_spec=spec, enable_bccl=True)
    assert request.cross_field_problems() == []


def test_every_model_field_is_documented() -> None:
    """Every model and every field carries a docstring (an attribute docstring below it)."""
    import ast
    import inspect

    from airflow_provider_aihc.models import job, pool, request

    for module in (request, job, pool):
        tree = ast.parse(inspect.getsource(module))
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            assert ast.get_docstring(node), node.name
            body = node.body
            undocumented = [
                stmt.target.id
                for stmt, following in zip(body, [*body[1:], None], strict=True)
                if isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and not stmt.target.id.startswith("_")
                and stmt.target.id != "model_config"
                and not (
                    isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)
                )
            ]
            assert not undocumented, f"{node.name}: {undocumented}"
