"""``JobStatus`` and the status predicates (docs/fidelity.md, "Not verified")."""

from __future__ import annotations

import subprocess
import sys

import pytest

from airflow_provider_aihc.models.status import (
    FAILURE_STATUSES,
    SUCCESS_STATUSES,
    TERMINAL_STATUSES,
    JobStatus,
    is_failed,
    is_successful,
    is_terminal,
    parse_status,
)

ACTIVE = ["Created", "Scheduled", "Running", "Starting", "Restarting", "Abnormal", "Stopping"]


def test_values_are_the_wire_strings() -> None:
    assert [status.value for status in JobStatus] == [
        *ACTIVE,
        "Succeeded",
        "Failed",
        "Stopped",
        "ManualTermination",
    ]
    assert str(JobStatus.MANUAL_TERMINATION) == "ManualTermination"
    assert isinstance(JobStatus.RUNNING, str)


def test_sets() -> None:
    assert {"Succeeded", "Failed", "Stopped", "ManualTermination"} == TERMINAL_STATUSES
    assert {JobStatus.SUCCEEDED} == SUCCESS_STATUSES
    assert FAILURE_STATUSES == TERMINAL_STATUSES - SUCCESS_STATUSES
    assert JobStatus.SUCCEEDED not in FAILURE_STATUSES


@pytest.mark.parametrize("status", ACTIVE)
def test_active_statuses_are_not_terminal(status: str) -> None:
    assert not is_terminal(status)
    assert not is_successful(status)
    assert not is_failed(status)


@pytest.mark.parametrize("status", ["Failed", "Stopped", "ManualTermination"])
def test_failure_statuses(status: str) -> None:
    assert is_terminal(status)
    assert is_failed(status)
    assert not is_successful(status)


def test_success() -> None:
    assert is_terminal("Succeeded")
    assert is_successful("Succeeded")
    assert is_successful(JobStatus.SUCCEEDED)
    assert not is_failed("Succeeded")


@pytest.mark.parametrize("status", [None, "", "  ", "Pending", "Completed", "Unknown", "Succeed"])
def test_unknown_or_empty_is_not_terminal(status: str | None) -> None:
    assert parse_status(status) is None
    assert not is_terminal(status)
    assert not is_successful(status)
    assert not is_failed(status)


def test_matching_ignores_case_and_blanks() -> None:
    assert parse_status(" succeeded ") is JobStatus.SUCCEEDED
    assert is_terminal("MANUALTERMINATION")


def test_non_string_input_is_unknown() -> None:
    assert parse_status(42) is None  # type: ignore[arg-type]


def test_status_module_does_not_import_pydantic() -> None:
    code = (
        "import sys, airflow_provider_aihc.models, airflow_provider_aihc.models.status; "
        "sys.exit('pydantic' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.parametrize(
    ("status", "started"),
    [("Created", False), ("scheduled", False), ("Running", True), ("Weird", True), ("", True)],
)
def test_is_started_is_false_only_while_queued_or_scheduled(status: str, started: bool) -> None:
    from airflow_provider_aihc.models.status import is_started

    assert is_started(status) is started
