"""Seeded fault schedules through real task execution, with task retries.

Each seed (``rel_plan.schedule``) picks a mode (sync or deferred wait), the job's fate
(succeeds, fails once, always fails, never ends, sits in a status the provider does not
know, or every create is refused) and a queue of faults per AIHC operation (5xx, 429 with
Retry-After, connections dropped before and after the server acted, answers slower than
the connection's ``timeout``, HTML instead of JSON) across create, polling and stop.
``rel_driver.py`` runs each as a DAG run (``dag.test()``, retries on); ``rel_plan.judge``
checks the run: the task's end state, one job per task instance (a retry after a failed
job may add ``<name>-r2``), no live or succeeded duplicate, nothing left running.

The regression tests at the end reproduce, deterministically and in this process, the
two ways the matrix found to leave a job behind (fixed in ``operators/``).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import rel_plan
from rel_support import (
    FIGURES,
    DriverRun,
    StubTaskInstance,
    TaskDeferred,
    connection_json,
    matrix_seeds,
    task_context,
)

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.operators import _submit
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

SEEDS = matrix_seeds()


def _describe(plan: rel_plan.Schedule, result: dict[str, Any], problems: list[str]) -> str:
    tries = [
        (t["try_number"], t["outcome"], t.get("error_type"), (t.get("error") or "")[:160])
        for t in result["tries"]
    ]
    return "\n".join(
        [
            f"seed {plan.seed}: {plan.mode}, {plan.outcome}, {plan.fault_count} faults",
            *problems,
            f"faults: {json.dumps(plan.faults)}",
            f"scripts: {json.dumps(plan.scripts)}",
            f"tries: {tries}",
            f"requests: {result['requests']}",
        ]
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_schedule_loses_nothing_duplicates_nothing_leaks_nothing(
    seed: int, driver_run: DriverRun
) -> None:
    plan = rel_plan.schedule(seed)
    result = driver_run.case(plan.case()["id"])
    verdict = rel_plan.judge(plan, result)
    FIGURES["fault matrix: schedules run"] += 1
    FIGURES["fault matrix: faults queued"] += plan.fault_count
    FIGURES["fault matrix: faults that hit a request"] += sum(1 for r in result["requests"] if r[2])
    FIGURES["fault matrix: task tries"] += verdict.tries
    FIGURES["fault matrix: jobs created"] += verdict.jobs
    FIGURES["fault matrix: duplicates found"] += verdict.duplicates
    FIGURES["fault matrix: orphans found"] += verdict.orphans
    assert not verdict.problems, _describe(plan, result, verdict.problems)


def test_the_matrix_exercised_every_fault_on_create_polling_and_stop(
    driver_run: DriverRun,
) -> None:
    """Guard against a matrix that silently tests nothing: every fault kind reached
    every phase, both modes and every fate ran, and tasks really retried."""
    hits: Counter[tuple[str, str]] = Counter()
    fates: Counter[tuple[str, str]] = Counter()
    retried = 0
    for seed in SEEDS:
        plan = rel_plan.schedule(seed)
        result = driver_run.case(plan.case()["id"])
        fates[(plan.mode, plan.outcome)] += 1
        retried += len(result["tries"]) > 1
        for operation, _status, fault in result["requests"]:
            if fault:
                hits[(operation, fault)] += 1
    kinds = {kind for _, kind in hits}
    assert set(rel_plan.FAULT_KINDS) <= kinds, hits
    for operation in ("CreateJob", "ListJobs", "GetJob", "StopJob"):
        assert any(op == operation for op, _ in hits), (operation, hits)
    assert {mode for mode, _ in fates} == {"sync", "deferred"}, fates
    assert {fate for _, fate in fates} == {*rel_plan.OUTCOMES_OK, *rel_plan.OUTCOMES_DOOMED}
    assert retried >= len(SEEDS) // 4, retried
    assert driver_run.returncode == 0, driver_run.output[-4000:]


# -- regressions the matrix found (fixed in operators/), reproduced deterministically ----------


@pytest.fixture
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    async def asleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(AIHCHook, "sleep", staticmethod(lambda seconds: None))
    monkeypatch.setattr(AIHCHook, "asleep", staticmethod(asleep))
    monkeypatch.setattr(_submit, "LOOKUP_DELAY_SECONDS", 0.0)
    monkeypatch.setitem(_submit.JobSubmitter.__init__.__kwdefaults__, "sleep", lambda s: None)


def _operator(**kwargs: Any) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(
        task_id="train", image="img:1", command="python train.py", poll_interval=0.01, **kwargs
    )


def test_a_5xx_burst_before_deferring_defers_instead_of_abandoning_the_job(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, no_waits: None
) -> None:
    """Deferrable, last try: the job is created, then GetJob fails past the hook's retries.
    The trigger waits through such errors; failing the task here left the job running
    with nobody watching it (an orphan when no retry is left)."""
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", connection_json(aihc_emulator, max_retries=1))
    aihc_emulator.backend.add_fault(scenarios.error(503, operation="GetJob", times=2))
    operator = _operator(wait_for_completion=True, deferrable=True)

    with pytest.raises(TaskDeferred) as deferred:
        operator.execute(task_context())

    trigger = deferred.value.trigger
    assert trigger.job_id == operator.job_id
    assert trigger.cancel_on_kill is True
    [job] = aihc_emulator.backend.jobs()
    assert job["status"] not in rel_plan.ENDED  # the trigger now watches it


def test_a_garbled_lookup_after_a_lost_create_answer_still_adopts_the_job(
    aihc_emulator: EmulatorServer, no_waits: None
) -> None:
    """The create lands but its answer is lost; the first lookup gets HTML instead of
    JSON.  That must count as a failed lookup (try again), not end the try with the job
    created and unconfirmed (an orphan when no retry is left)."""
    backend = aihc_emulator.backend
    backend.add_fault(
        scenarios.passthrough(operation="ListJobs"),
        scenarios.drop_after(operation="CreateJob"),
        scenarios.malformed(operation="ListJobs"),
    )
    ti = StubTaskInstance()

    job_id = _operator().execute(task_context(ti))

    [job] = backend.jobs()
    assert job_id == job["jobId"] == ti.xcom["job_id"]
    assert backend.count("CreateJob") == 1


def test_a_garbled_answer_to_the_deadline_stop_still_stops_the_job(
    aihc_emulator: EmulatorServer, no_waits: None
) -> None:
    backend = aihc_emulator.backend
    backend.add_script(scenarios.HoldJob(status="Running"))
    backend.add_fault(scenarios.malformed(operation="StopJob"))

    with pytest.raises(Exception, match="did not finish"):
        _operator(wait_for_completion=True, timeout=0.3).execute(task_context())

    [job] = backend.jobs()
    assert job["status"] == "ManualTermination"


def test_the_dags_use_the_plans_numbers() -> None:
    """``dags/reliability.py`` repeats rel_plan's numbers (it must import without it)."""
    import runpy

    dags = Path(__file__).parent / "dags"
    sys.path.insert(0, str(dags))
    try:
        module = runpy.run_path(str(dags / "reliability.py"))
    finally:
        sys.path.remove(str(dags))
    assert module["RETRIES"] == rel_plan.RETRIES
    assert module["DOOMED_RETRIES"] == rel_plan.DOOMED_RETRIES
    assert module["DOOMED_TIMEOUT"] == rel_plan.DOOMED_TIMEOUT
