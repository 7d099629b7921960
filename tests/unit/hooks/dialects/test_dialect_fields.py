"""Create fields Baidu's own clients send, sent by the hook in the dialect that defines them
and refused, naming the field and the dialect, before anything is sent in the other.

v1: bce-sdk-go ``services/aihc/api/v1/aiJob.go:172-194`` (``codeSource``,
``logCollectionFilePatterns``, node affinity, ``runningTimeoutStopTimeUnit``,
``retentionPeriod``, ``datasources[].id``); v2: bce-openapi-meta
``schema/aihc/CreateJob.json:240-261`` (``retentionPeriod``, ``advancedSettings``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aihc_jobs import OFFICIAL_V1_FIELDS, RAY_SETTINGS
from hook_helpers import job_body, total_requests

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.hooks.aihc import AIHCHook

ConnSetter = Callable[..., Any]

V1_FIELDS, RAY = OFFICIAL_V1_FIELDS, RAY_SETTINGS


@pytest.fixture
def v2(set_conn: ConnSetter) -> AIHCHook:
    set_conn(extra={"api_version": "v2"})
    return AIHCHook()


def sent_body(server: EmulatorServer, job_id: str) -> dict[str, Any]:
    body: dict[str, Any] = server.backend.job(job_id)["body"]
    return body


def test_v1_sends_the_fields_its_official_client_sends(
    hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    job_id = hook.create_job(job_body("official-v1", **V1_FIELDS)).job_id
    body = sent_body(aihc_emulator, job_id)
    assert {key: body[key] for key in V1_FIELDS} == V1_FIELDS


def test_v2_sends_retention_and_a_ray_jobs_advanced_settings(
    v2: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    body = job_body(
        "official-v2", jobFramework="RayJob", retentionPeriod="1d", advancedSettings=RAY
    )
    job_id = v2.create_job(body).job_id
    sent = sent_body(aihc_emulator, job_id)
    assert (sent["retentionPeriod"], sent["advancedSettings"]) == ("1d", RAY)
    assert list(sent["jobSpec"]) == ["Head"]


@pytest.mark.parametrize("field", sorted(set(V1_FIELDS) - {"retentionPeriod"}))
def test_a_v1_only_field_is_refused_on_v2_before_sending(
    v2: AIHCHook, aihc_emulator: EmulatorServer, field: str
) -> None:
    with pytest.raises(AIHCValidationError, match="api_version v1") as refused:
        v2.create_job(job_body("not-on-v2", **{field: V1_FIELDS[field]}))
    assert field in str(refused.value)
    assert total_requests(aihc_emulator) == 0


def test_advanced_settings_are_refused_on_v1_before_sending(
    hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    with pytest.raises(AIHCValidationError, match=r"advancedSettings.*api_version v2"):
        hook.create_job(job_body("not-on-v1", advancedSettings=RAY))
    assert total_requests(aihc_emulator) == 0
