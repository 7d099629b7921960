"""The create fields Baidu's own clients send, as typed operator parameters.

v1 (bce-sdk-go ``services/aihc/api/v1/aiJob.go:172-194``): ``runningTimeoutStopTimeUnit``
(``max_running_time``), ``codeSource``, ``logCollectionFilePatterns``, node affinity, a
``dataset`` datasource by ``id``; both dialects ``retentionPeriod``; v2 (bce-openapi-meta
``schema/aihc/CreateJob.json:246-261``) a RayJob's ``advancedSettings``. Through
``execute`` against the emulator over HTTP: what the emulator stored is what was sent.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from aihc_jobs import OFFICIAL_V1_FIELDS, RAY_SETTINGS
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.job_parameters import JOB_FIELDS
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

#: The operator parameter (its row in job_parameters) of each field Baidu's v1 client sends.
WIRE = {
    row.name: row.wire
    for row in JOB_FIELDS
    if row.wire in OFFICIAL_V1_FIELDS and row.kind == "operator" and row.name != "retention_period"
}
V1_PARAMETERS = {name: OFFICIAL_V1_FIELDS[wire] for name, wire in WIRE.items()}
RAY = RAY_SETTINGS


@pytest.fixture
def v2(monkeypatch: pytest.MonkeyPatch, aihc_emulator: EmulatorServer) -> EmulatorServer:
    conn = json.loads(os.environ["AIRFLOW_CONN_AIHC_DEFAULT"])
    conn["extra"]["api_version"] = "v2"
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", json.dumps(conn))
    return aihc_emulator


def _create(**parameters: Any) -> str:
    operator = AIHCCreateJobOperator(
        task_id="train", image="busybox", command="python train.py", **parameters
    )
    job_id: str = operator.execute(context_of(TaskInstanceStub()))
    return job_id


def _sent(server: EmulatorServer, job_id: str) -> dict[str, Any]:
    body: dict[str, Any] = server.backend.job(job_id)["body"]
    return body


def test_v1_sends_every_official_field_given_as_a_parameter(
    aihc_emulator: EmulatorServer,
) -> None:
    job_id = _create(retention_period="7d", **V1_PARAMETERS)
    sent = _sent(aihc_emulator, job_id)
    assert {name: sent[WIRE[name]] for name in V1_PARAMETERS} == V1_PARAMETERS
    assert sent["retentionPeriod"] == "7d"


def test_rendered_text_parameters_are_parsed_and_checked_as_their_types(
    aihc_emulator: EmulatorServer,
) -> None:
    """What a template renders to (text) is read as JSON, as the other structured ones."""
    job_id = _create(
        code_source=json.dumps(V1_PARAMETERS["code_source"]),
        required_node_affinity='["node-1", "node-2"]',
    )
    sent = _sent(aihc_emulator, job_id)
    assert sent["codeSource"] == V1_PARAMETERS["code_source"]
    assert sent["requiredNodeAffinity"] == ["node-1", "node-2"]


@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        ({"max_running_time": "forever"}, "runningTimeoutStopTimeUnit (max_running_time)"),
        ({"code_source": {"mountPath": 7, "branch": "main"}}, "codeSource"),
        ({"required_node_affinity": "node-1"}, "requiredNodeAffinity"),
        ({"advanced_settings": {"SubmitterBackoffLimit": "many"}}, "advancedSettings"),
    ],
    ids=["running-time-format", "code-source-keys", "affinity-not-a-list", "backoff-not-int"],
)
def test_bad_values_fail_naming_the_field_before_any_request(
    aihc_emulator: EmulatorServer, parameters: dict[str, Any], field: str
) -> None:
    with pytest.raises(AIHCValidationError) as refused:
        _create(**parameters)
    assert any(name.startswith(field) for name, _ in refused.value.errors), refused.value.errors
    assert aihc_emulator.backend.requests == []


@pytest.mark.parametrize("name", sorted(set(V1_PARAMETERS) - {"datasources"}))
def test_a_v1_only_parameter_is_refused_on_v2_before_any_request(
    v2: EmulatorServer, name: str
) -> None:
    with pytest.raises(AIHCValidationError, match="api_version v1") as refused:
        _create(**{name: V1_PARAMETERS[name]})
    assert [field for field, _ in refused.value.errors] == [f"{WIRE[name]} ({name})"]
    assert v2.backend.requests == []


def test_v2_sends_a_ray_jobs_advanced_settings_and_retention(v2: EmulatorServer) -> None:
    job_id = _create(job_framework="RayJob", advanced_settings=RAY, retention_period="1d")
    sent = _sent(v2, job_id)
    assert (sent["advancedSettings"], sent["retentionPeriod"]) == (RAY, "1d")


def test_advanced_settings_are_refused_on_v1_before_any_request(
    aihc_emulator: EmulatorServer,
) -> None:
    with pytest.raises(AIHCValidationError, match="api_version v2") as refused:
        _create(job_framework="PyTorchJob", advanced_settings=RAY)
    assert [field for field, _ in refused.value.errors] == ["advancedSettings (advanced_settings)"]
    assert aihc_emulator.backend.requests == []
