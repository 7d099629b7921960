"""Bad model, dataset and service input fails naming the field, before any request:
names, container resources, instance counts, canary percentages both 0, metrics that are
not JSON (the rules and their Baidu sources: ``models/service_requests.py``)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.models.service_requests import (
    check_name,
    metrics_text,
    service_conf_problems,
)

CONF: dict[str, Any] = {
    "name": "svc-a",
    "acceleratorType": "A100",
    "instanceCount": 1,
    "resourcePool": {"resourcePoolId": "cce-x"},
    "containers": [
        {"name": "main", "cpus": 2, "memory": 4, "acceleratorCount": 1,
         "image": {"imageType": 2, "imageUrl": "registry/x:1"}}
    ],
    "deploy": {"canaryStrategy": {"maxSurge": 25, "maxUnavailable": 25}},
}  # fmt: skip


def test_a_valid_conf_has_no_problem() -> None:
    assert service_conf_problems(CONF) == []


@pytest.mark.parametrize("name", ["a", "ab-9", "m" * 50])
def test_good_names(name: str) -> None:
    assert check_name("model_name", name) == []


@pytest.mark.parametrize("name", ["", "9a", "a-", "A", "a_b", "m" * 51, None, 3])
def test_bad_names_name_the_field_and_the_rule(name: object) -> None:
    [(field, problem)] = check_name("model_name", name)
    assert field == "model_name"
    assert "lowercase letters" in problem


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("name",), "Bad_Name", "service_conf.name"),
        (("instanceCount",), -1, "service_conf.instanceCount"),
        (("instanceCount",), True, "service_conf.instanceCount"),
        (("containers", 0, "cpus"), 0, "service_conf.containers[0].cpus"),
        (("containers", 0, "memory"), "4", "service_conf.containers[0].memory"),
        (("containers", 0, "acceleratorCount"), -1, "service_conf.containers[0].acceleratorCount"),
        (("containers", 0, "name"), "Main", "service_conf.containers[0].name"),
        (("containers", 0, "image"), {}, "service_conf.containers[0].image.imageUrl"),
        (("resourcePool",), {}, "service_conf.resourcePool.resourcePoolId"),
        (("deploy", "canaryStrategy", "maxSurge"), 101,
         "service_conf.deploy.canaryStrategy.maxSurge"),
    ],
)  # fmt: skip
def test_a_bad_field_is_named(path: tuple[Any, ...], value: object, field: str) -> None:
    conf = copy.deepcopy(CONF)
    target: Any = conf
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert [f for f, _ in service_conf_problems(conf)] == [field]


def test_canary_percentages_both_zero_are_refused() -> None:
    conf = copy.deepcopy(CONF)
    conf["deploy"]["canaryStrategy"] = {"maxSurge": 0, "maxUnavailable": 0}
    [(field, problem)] = service_conf_problems(conf)
    assert field == "service_conf.deploy.canaryStrategy"
    assert "both be 0" in problem


def test_no_containers_and_too_many_are_refused() -> None:
    for containers in ([], [CONF["containers"][0]] * 11):
        conf = {**CONF, "containers": containers}
        assert [f for f, _ in service_conf_problems(conf)] == ["service_conf.containers"]


def test_metrics_dict_becomes_baidus_json_string_with_the_dataset() -> None:
    text = metrics_text({"loss": 2.13, "lr": 0.0005}, "ds-1")
    assert isinstance(text, str)
    # bce-openapi-meta i18n/zh-CN/aihc/CreateModelVersion.json:3-8's example shape.
    assert json.loads(text) == {
        "Results": [{"Metrics": {"loss": 2.13, "lr": 0.0005}, "Dataset": {"DatasetId": "ds-1"}}]
    }


def test_metrics_already_in_baidus_shape_or_text_are_kept() -> None:
    given = {"Results": [{"Metrics": {"acc": 0.9}}]}
    assert json.loads(metrics_text(given) or "") == given
    assert metrics_text('{"Results": []}') == '{"Results": []}'
    assert metrics_text(None) is None


@pytest.mark.parametrize("metrics", ["{not json", {"loss": float("nan")}, {"x": object()}, 3])
def test_metrics_that_are_not_json_name_the_field(metrics: object) -> None:
    with pytest.raises(AIHCValidationError, match="model_metrics"):
        metrics_text(metrics)
