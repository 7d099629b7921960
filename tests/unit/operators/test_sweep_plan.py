"""The orphan sweep's decision for every task-instance state and every kind of label
(issue #34): it stops only a verified, watched job of this deployment whose task ended."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_aihc.models.job import JobSummary
from airflow_provider_aihc.operators._identity import (
    DEPLOYMENT_LABEL,
    TAG_LABEL,
    TRY_LABEL,
    WATCHED_LABEL,
    TaskIdentity,
)
from airflow_provider_aihc.operators._sweep import (
    LEAVE,
    REPORT,
    STOP,
    TaskInstanceState,
    claimed_dag_ids,
    plan_sweep,
    states_from_task_sdk,
)

KEY = "k" * 32
DEPLOYMENT = "production"
IDENTITY = TaskIdentity("train_dag", "train", "scheduled__2026-01-01T00:00:00+00:00")
NAME = IDENTITY.default_name()


def _job(labels: dict[str, str], *, status: str = "Running", name: str = NAME) -> JobSummary:
    items = [{"key": key, "value": value} for key, value in labels.items()]
    return JobSummary.model_validate(
        {"jobId": f"job-{len(items)}-{status}", "name": name, "status": status, "labels": items}
    )


def _ours(**identity: Any) -> JobSummary:
    fields = {"deployment": DEPLOYMENT, **identity}
    ti = TaskIdentity(IDENTITY.dag_id, IDENTITY.task_id, IDENTITY.run_id, **fields)
    return _job(ti.tagged(KEY, NAME, watched=True))


def _states(state: str | None) -> dict[str, TaskInstanceState]:
    ti = TaskInstanceState(IDENTITY.dag_id, IDENTITY.task_id, IDENTITY.run_id, -1, state)
    return {ti.key: ti}


def _decide(job: JobSummary, states: dict[str, TaskInstanceState], **kwargs: Any) -> Any:
    [decision] = plan_sweep([job], states, key=KEY, deployment=DEPLOYMENT, **kwargs)
    return decision


@pytest.mark.parametrize("state", ["failed", "success", "upstream_failed", "skipped", "removed"])
def test_a_job_of_an_ended_task_instance_is_stopped(state: str) -> None:
    decision = _decide(_ours(), _states(state))
    assert (decision.action, decision.reason) == (STOP, f"its task instance is {state}")
    assert str(decision.task_instance) == f"train_dag/{IDENTITY.run_id}/train"


@pytest.mark.parametrize(
    "state",
    [
        "running",
        "deferred",
        "queued",
        "scheduled",
        "up_for_retry",
        "up_for_reschedule",
        "restarting",
        None,  # cleared, not yet scheduled: its next series adopts or stops the job
    ],
)
def test_a_job_of_a_live_task_instance_is_left(state: str | None) -> None:
    assert _decide(_ours(), _states(state)).action == LEAVE


def test_a_job_whose_task_instance_cannot_be_found_is_reported_or_stopped_when_opted_in() -> None:
    assert _decide(_ours(), {}).action == REPORT
    assert _decide(_ours(), {}, stop_unknown=True).action == STOP


def test_a_job_of_another_deployment_is_left_whatever_its_task() -> None:
    decision = _decide(_ours(deployment="staging"), _states("failed"))
    assert decision.action == LEAVE
    assert "'staging' created it" in decision.reason


def test_a_job_of_no_deployment_is_left() -> None:
    assert _decide(_ours(deployment=""), _states("failed")).action == LEAVE


@pytest.mark.parametrize(
    "change",
    [
        {DEPLOYMENT_LABEL: DEPLOYMENT + "x"},  # relabelled
        {TRY_LABEL: "7"},
        {TAG_LABEL: "0" * 32},  # forged
        {WATCHED_LABEL: "false"},
    ],
)
def test_a_job_whose_labels_do_not_verify_is_never_touched(change: dict[str, str]) -> None:
    labels = _ours().labels_dict | change
    decision = _decide(_job(labels), _states("failed"))
    assert decision.action == LEAVE
    assert "do not verify" in decision.reason


def test_a_job_tagged_with_another_key_or_name_is_never_touched() -> None:
    foreign = IDENTITY.tagged("another-key-" + "x" * 21, NAME, watched=True)
    foreign_job = _job(foreign | {DEPLOYMENT_LABEL: DEPLOYMENT})
    assert _decide(foreign_job, _states("failed")).action == LEAVE
    copied = _job(_ours().labels_dict, name=NAME + "-copy")
    assert _decide(copied, _states("failed")).action == LEAVE


def test_a_job_without_a_tag_is_never_touched() -> None:
    decision = _decide(_job(IDENTITY.labels(watched=True)), _states("failed"))
    assert decision.action == LEAVE


def test_a_job_its_task_only_started_is_left() -> None:
    ti = TaskIdentity(IDENTITY.dag_id, IDENTITY.task_id, IDENTITY.run_id, deployment=DEPLOYMENT)
    job = _job(ti.tagged(KEY, NAME, watched=False))
    decision = _decide(job, _states("success"))
    assert (decision.action, decision.reason.startswith("its task only started it")) == (
        LEAVE,
        True,
    )


def test_ended_jobs_and_jobs_of_no_task_are_not_considered() -> None:
    ended = _job(_ours().labels_dict, status="Succeeded")
    unlabelled = _job({"team": "nlp"})
    assert plan_sweep([ended, unlabelled], _states("failed"), key=KEY, deployment=DEPLOYMENT) == []


def test_only_the_dags_of_claimable_jobs_are_read() -> None:
    foreign = _ours(deployment="staging")
    assert claimed_dag_ids([_ours(), foreign, _job({"x": "y"})], KEY, DEPLOYMENT) == {"train_dag"}
    assert claimed_dag_ids([foreign], KEY, DEPLOYMENT) == set()


def test_the_task_sdk_answer_is_read_with_mapped_task_instances() -> None:
    answer = {"run_1": {"train": "success", "sweep_2": "failed", "eval_0": None}}
    found = {(s.task_id, s.map_index): s.state for s in states_from_task_sdk("d", answer)}
    assert found[("train", -1)] == "success"
    assert found[("sweep", 2)] == "failed"  # a mapped task instance
    assert found[("sweep_2", -1)] == "failed"  # or a task so named: the label tells
    assert ("eval", 0) in found
    mapped = TaskIdentity("d", "sweep", "run_1", map_index=2, deployment=DEPLOYMENT)
    job = _job(mapped.tagged(KEY, NAME, watched=True))
    states = {s.key: s for s in states_from_task_sdk("d", answer)}
    assert plan_sweep([job], states, key=KEY, deployment=DEPLOYMENT)[0].action == STOP
