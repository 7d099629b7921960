"""AIHCJobSensor in real DAG runs (``airflow dags test``) against the emulator.

``watch_sensor_modes``: one job per mode (poke, reschedule, deferrable with a 5xx/429 burst
during the deferred wait), then a task printing the job ids from XCom.
``watch_sensor_failure``: a job the emulator fails; the deferred sensor fails with the
job's reason, a ``soft_fail`` sensor is skipped.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.links.aihc import AIHCJobLink
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

pytestmark = pytest.mark.dagrun

REASON = "CUDA error: out of memory on rank 0"
#: ``airflow dags test`` on 2.x prints each task log record twice, through two console
#: handlers; the second copy is the one with a comma before the milliseconds.
DUPLICATE_HANDLER = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] ")


def printed_once(output: str) -> str:
    """The run's output with each log record once (see ``DUPLICATE_HANDLER``)."""
    return "\n".join(line for line in output.splitlines() if not DUPLICATE_HANDLER.match(line))


def log_lines(server: EmulatorServer, job: dict[str, Any]) -> list[str]:
    """Every line the emulator wrote for the job's (one) pod."""
    pod = f"{job['name']}-master-0"
    page = server.backend.pod_logs(job["resourcePoolId"], job["jobId"], pod, marker="")
    return list(page.lines)


def last_run(dag_id: str) -> tuple[str, dict[str, str]]:
    """The run id of the DAG's latest run and its task states, from the metadata DB."""
    from airflow.models.dagrun import DagRun
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    with create_session() as session:
        run = session.query(DagRun).filter(DagRun.dag_id == dag_id).order_by(DagRun.id.desc())
        run_id = run.first().run_id
        tis = session.query(TaskInstance).filter(
            TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id
        )
        return run_id, {ti.task_id: str(getattr(ti.state, "value", ti.state)) for ti in tis}


def stored_link(dag_id: str, task_id: str, run_id: str) -> str:
    """The link as the UI reads it: Airflow 3's API server, or 2.x's webserver."""
    from airflow.models.taskinstancekey import TaskInstanceKey

    key = TaskInstanceKey(dag_id, task_id, run_id, 1, -1)
    if AIRFLOW_V_3_0_PLUS:
        from airflow.serialization.definitions.operatorlink import XComOperatorLink

        return str(
            XComOperatorLink(name="AIHC Job", xcom_key=AIHCJobLink.XCOM_KEY).get_link(
                None,
                ti_key=key,  # type: ignore[arg-type]
            )
        )
    return AIHCJobLink().get_link(None, ti_key=key)


def test_sensor_in_every_mode_succeeds_and_copies_each_log_line_once(
    aihc_emulator: EmulatorServer, run_dag: Any
) -> None:
    backend = aihc_emulator.backend
    backend.progression = Progression.per_poll(1, running=3)
    run = run_dag("watch_sensor_modes")

    assert run.succeeded, run.output[-4000:]
    run_id, states = last_run("watch_sensor_modes")
    assert set(states.values()) == {"success"}, states
    jobs = {job["name"]: job for job in backend.jobs()}
    assert set(jobs) == {"watch-poke", "watch-reschedule", "watch-defer"}
    assert {job["status"] for job in jobs.values()} == {"Succeeded"}
    ids = {name: job["jobId"] for name, job in jobs.items()}
    assert (
        f"WATCHED poke={ids['watch-poke']} reschedule={ids['watch-reschedule']} "
        f"deferrable={ids['watch-defer']}"
    ) in run.output
    # the burst hit the trigger's polls, and the hook and the loop waited it out
    assert backend.count("GetJob", 503) == 2
    assert backend.count("GetJob", 429) == 2
    output = printed_once(run.output)
    for job in jobs.values():
        lines = log_lines(aihc_emulator, job)
        assert len(lines) == 12 + 3 * 3 + 2 + 3  # start-up, iterations, output, closing
        for line in lines:
            assert output.count(line) == 1, (job["name"], line)
    for task_id, name in (
        ("sensor_poke", "watch-poke"),
        ("sensor_reschedule", "watch-reschedule"),
        ("sensor_deferrable", "watch-defer"),
    ):
        expected = f"{aihc_emulator.url}/_emulator/jobs/{ids[name]}"
        assert stored_link("watch_sensor_modes", task_id, run_id) == expected


def test_a_failed_job_fails_the_sensor_with_its_reason_or_skips_it(
    aihc_emulator: EmulatorServer, run_dag: Any
) -> None:
    aihc_emulator.backend.add_script(scenarios.FailJob(match="watch-fail", reason=REASON))
    run = run_dag("watch_sensor_failure")

    _, states = last_run("watch_sensor_failure")
    assert states == {
        "create": "success",
        "sensor_fails": "failed",
        "sensor_soft_fail": "skipped",
    }, run.output[-4000:]
    (job,) = aihc_emulator.backend.jobs()
    assert (job["status"], job["resourcePoolId"]) == ("Failed", DEFAULT_RESOURCE_POOL_ID)
    assert f"AIHC job {job['jobId']} ended Failed: {REASON}" in run.output
    assert f"RuntimeError: {REASON}" in printed_once(run.output)  # the job's own traceback
