"""Scenarios 1-5 of the deployment check (6, the browser, is in ``ui.py``).

Each one drives the deployment through the REST API (and, to crash a process, a signal),
and checks the result against the emulator's own record: the jobs whose labels name the
task instance are every CreateJob that made a job for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests
import ui
from api import Airflow, Emulator, event_text
from report import Table
from services import Fatal, Services, is_below, wait_for
from stack import BIN, SWEEP_SECONDS, TAKEOVER_POLL_SECONDS, TAKEOVER_SECONDS, TRIGGERERS, WORKERS
from tasklog import Takeover, span, training_lines

#: Example DAG → (the task that creates the job, the task that waits for it, map indexes).
EXAMPLES: dict[str, tuple[str, str, list[int]]] = {
    "aihc_cleanup": ("train", "wait_for_training", [-1]),
    "aihc_hyperparameter_sweep": ("trial", "trial", [0, 1, 2]),
    "aihc_llama2_seed_job": ("pretrain_llama2_7b", "pretrain_llama2_7b", [-1]),
}
#: The examples left out here, and why: the retraining example closes the loop on AIHC's
#: model registry and an online service, which only the v2 action API has (this
#: deployment's connection is v1); tests/e2e runs it on v2, onto a service made first.
V2_ONLY_EXAMPLES = {"aihc_scheduled_retraining": "v2 only (model registry, online service)"}
#: Examples whose teardown deletes the job: the emulator forgets it (its record is gone).
DELETES_ITS_JOB = {"aihc_cleanup"}
#: The XCom key of a deferred wait's log position (the product's
#: ``triggers.log_position.XCOM_LOG_POSITION``).
LOG_POSITION = "log_position"
#: The last line of every emulated job's log.
LAST_TRAINING_LINE = "training process exited with code 0"
SCENARIO_DAGS = {
    "deploy_takeover",
    "deploy_worker_crash",
    "deploy_clear",
    "deploy_failed_try",
    "deploy_mark_failed",
    "deploy_exec_timeout",
    "deploy_sweep_deferred",
    "deploy_sweep_sync",
    "deploy_sweep_healthy",
}
#: The orphan sweep's DAG (an example, paused until scenario 7 unpauses it).
SWEEP_DAG = "aihc_orphan_sweep"
ALL_DAGS = set(EXAMPLES) | SCENARIO_DAGS
STOPPED = {"ManualTermination", "Stopped"}
RUN_TIMEOUT = 180.0
#: How long after a run's end its task log may still be missing the lines a triggerer
#: streamed into it (_settled_training_lines).
LOG_SETTLE_SECONDS = 30.0


@dataclass
class Deployment:
    """What the scenarios drive."""

    build: Path
    env: dict[str, str]
    airflow: Airflow
    emulator: Emulator


def run_id(label: str) -> str:
    """A run id that is also a valid label value (so the job's label equals it)."""
    return f"{label}-{datetime.now(UTC).strftime('%H%M%S%f')}"


def check(condition: bool, message: str) -> None:
    """Fail the scenario with ``message`` unless ``condition``."""
    if not condition:
        raise AssertionError(message)


# ---- 1: every example DAG, without and with a logical date ------------------------------


def examples(d: Deployment, table: Table) -> None:
    """Trigger every example DAG without a logical date, then with one; check each run."""
    for dag_id, why in V2_ONLY_EXAMPLES.items():
        print(f"deploy: not run here: {dag_id}: {why}", flush=True)
    for kind, label in (("no logical date", "s1-nodate"), ("with logical date", "s1-dated")):
        runs = {}
        for dag_id in EXAMPLES:
            logical = None if label == "s1-nodate" else datetime.now(UTC).isoformat()
            runs[dag_id] = d.airflow.trigger(dag_id, run_id(label), logical)["dag_run_id"]
        for dag_id, rid in runs.items():
            started = time.monotonic()
            try:
                detail = _example_run(d, dag_id, rid)
                table.add(f"1 {dag_id} ({kind})", True, detail, time.monotonic() - started)
            except Exception as exc:
                table.add(f"1 {dag_id} ({kind})", False, str(exc), time.monotonic() - started)


def _example_run(d: Deployment, dag_id: str, rid: str) -> str:
    state = d.airflow.wait_run(dag_id, rid, RUN_TIMEOUT)
    if state != "success":
        raise AssertionError(f"run {rid}: {state}{_failure_hint(d, dag_id, rid)}")
    create_task, wait_task, indexes = EXAMPLES[dag_id]
    shown: list[int] = []
    lates: list[str] = []
    for index in indexes:
        jobs = d.emulator.jobs_of(dag_id, rid, create_task, index)
        ti = _ti(d.airflow, dag_id, rid, wait_task, index)
        where = f"{wait_task}[{index}] log"
        lines, late = _settled_training_lines(d.airflow, dag_id, rid, wait_task, ti, index)
        check(
            any(LAST_TRAINING_LINE in line for line in lines),
            f"{where} lacks the job's last line {LOG_SETTLE_SECONDS:.0f} s after the run ended",
        )
        if late:
            lates.append(f"{where} complete {late:.1f} s after the run ended")
        if dag_id in DELETES_ITS_JOB:
            job_id = d.airflow.xcom(dag_id, rid, create_task, "job_id")
            check(not jobs and d.emulator.gone(job_id), f"job {job_id} not deleted by the teardown")
        else:
            check(len(jobs) == 1, f"{create_task}[{index}]: {len(jobs)} jobs, expected 1")
            written = jobs[0]["logLines"]
            check(len(lines) >= written, f"{where} shows {len(lines)} of {written} job lines")
        shown.append(len(lines))
    settled = f" ({'; '.join(lates)})" if lates else ""
    return f"run {rid} success; training lines in the log: {shown}{settled}"


def _settled_training_lines(
    api: Airflow, dag_id: str, rid: str, task_id: str, ti: dict[str, Any], index: int
) -> tuple[list[str], float]:
    """The training lines of a try's log once it has the job's last line (or
    :data:`LOG_SETTLE_SECONDS` passed), and how long that took (0: at once).

    The lines a deferred wait streams are written by the triggerer, which hands them to its
    log file on its own schedule: once (of 18 scenario runs) a log read right after the run
    succeeded had every line but the last few, written there a moment later.
    """
    started = time.monotonic()
    while True:
        lines = training_lines(api.task_log(dag_id, rid, task_id, ti["try_number"], index))
        waited = time.monotonic() - started
        if any(LAST_TRAINING_LINE in line for line in lines) or waited > LOG_SETTLE_SECONDS:
            return lines, waited if waited >= 1.0 else 0.0
        time.sleep(1.0)


def _ti(api: Airflow, dag_id: str, rid: str, task_id: str, index: int) -> dict[str, Any]:
    for ti in api.task_instances(dag_id, rid):
        if ti["task_id"] == task_id and ti["map_index"] == index:
            return ti
    raise AssertionError(f"no task instance {task_id}[{index}] in {rid}")


def _failure_hint(d: Deployment, dag_id: str, rid: str) -> str:
    """The first failed task's last error line, from its log."""
    for ti in d.airflow.task_instances(dag_id, rid):
        if ti["state"] in {"failed", "up_for_retry"}:
            log = d.airflow.task_log(dag_id, rid, ti["task_id"], ti["try_number"], ti["map_index"])
            errors = [line for line in log.splitlines() if "Error" in line or "error" in line]
            return f" ({ti['task_id']}: {(errors or ['no error line'])[-1][:300]})"
    return ""


# ---- 2: a triggerer dies with the trigger ----------------------------------------------------


def _log_position(d: Deployment, dag_id: str, rid: str, task_id: str) -> dict[str, Any]:
    """The log position a trigger keeps in its task instance's XCom (``{}``: none)."""
    try:
        value = d.airflow.xcom(dag_id, rid, task_id, LOG_POSITION)
    except requests.HTTPError:  # 404: none kept
        return {}
    value = json.loads(value) if isinstance(value, str) else value
    return value if isinstance(value, dict) else {}


def triggerer_takeover(d: Deployment, services: Services) -> str:
    """SIGKILL the triggerer running a deferred wait; the other one finishes it, once.

    The job runs well past the product's takeover window before the kill, so that its first
    lines would be shown twice if the new trigger streamed the log from the start again.
    """
    dag_id, task_id = "deploy_takeover", "takeover"
    window = TAKEOVER_SECONDS + 2 * TAKEOVER_POLL_SECONDS
    d.emulator.script(kind="hold", status="Running", match="takeover")
    rid = d.airflow.trigger(dag_id, run_id("s2"), None)["dag_run_id"]
    d.airflow.wait_ti(dag_id, rid, task_id, {"deferred"}, 120)
    job = _running_job(d, dag_id, rid, task_id)
    ran = window + 15  # about 15 lines older than the window
    wait_for(lambda: span(_lines(d, dag_id, rid, task_id)) >= ran, ran + 60, "the job's lines")
    owner = _trigger_owner(d, services, dag_id, rid, task_id)
    before = _lines(d, dag_id, rid, task_id)
    check(len(before) == len(set(before)), "the task log repeats lines before any takeover")
    kept = _log_position(d, dag_id, rid, task_id)
    check(
        kept.get("job_id") == job["jobId"] and bool(kept.get("markers")),
        f"the trigger keeps no log position in XCom {LOG_POSITION!r}: {kept!r}",
    )
    killed_at = time.time()
    owner.kill()
    other = next(s for s in services.started if s.name in TRIGGERERS and s.alive())
    wait_for(lambda: _runs_trigger(other, d, dag_id, rid, task_id), 120, "the other triggerer")
    takeover = time.time() - killed_at
    time.sleep(5)  # a few more lines, streamed by the new triggerer
    d.emulator.set_status(job["jobId"], "Succeeded")
    state = d.airflow.wait_run(dag_id, rid, 120)
    ti = d.airflow.task_instance(dag_id, rid, task_id)
    jobs = d.emulator.jobs_of(dag_id, rid, task_id)
    written = jobs[0]["logLines"] if jobs else 0
    log = Takeover(d.airflow.task_log(dag_id, rid, task_id, 1), killed_at, window, written)
    seen = (
        f"killed {owner.name} (pid {owner.pid}) after {len(before)} lines; {other.name} took "
        f"over in {takeover:.0f} s; run {state} at try {ti['try_number']}; {len(jobs)} job(s); "
        f"{log.summary()}"
    )
    problems = log.problems()
    check(state == "success" and ti["try_number"] == 1 and len(jobs) == 1, seen)
    check(not problems, f"{'; '.join(problems)} ({seen})")
    return seen


def triggerer_handover(d: Deployment, services: Services) -> str:
    """Pause (SIGSTOP) the triggerer running a deferred wait past the health-check threshold:
    the other takes the trigger over; when the paused one goes on, Airflow 3.3 cancels its
    copy as if a user had acted ("Trigger cancelled by user action", apache/airflow PR
    #73454), and the trigger's ``on_kill`` must leave the job running: its task is still
    deferred, and the other triggerer watches it to its end (one job, try 1).
    """
    dag_id, task_id = "deploy_takeover", "takeover"
    for name in TRIGGERERS:  # scenario 2 leaves its victim dead
        if not services.get(name).alive():
            services.restart(services.get(name))
    d.emulator.script(kind="hold", status="Running", match="takeover")
    rid = d.airflow.trigger(dag_id, run_id("s2b"), None)["dag_run_id"]
    d.airflow.wait_ti(dag_id, rid, task_id, {"deferred"}, 120)
    job = _running_job(d, dag_id, rid, task_id)
    wait_for(lambda: len(_lines(d, dag_id, rid, task_id)) >= 5, 90, "the job's first lines")
    owner = _trigger_owner(d, services, dag_id, rid, task_id)
    other = next(s for s in services.started if s.name in TRIGGERERS and s is not owner)
    paused = owner.pids()
    paused_at = time.time()
    for pid in paused:
        os.kill(pid, signal.SIGSTOP)
    try:
        wait_for(
            lambda: _runs_trigger(other, d, dag_id, rid, task_id),
            TAKEOVER_SECONDS + 120,
            "the other triggerer taking the trigger over",
        )
    finally:
        for pid in paused:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    taken = time.time() - paused_at

    said: list[str] = []

    def dropped() -> bool:  # by either triggerer: the two may swap the trigger more than once
        said[:] = [
            line for line in _trigger_log_lines(d, dag_id, rid, task_id)
            if "cancelled by user action" in line or "keeps running" in line
        ]  # fmt: skip
        return any("keeps running" in line for line in said)

    wait_for(dropped, 120, "a triggerer's copy of the trigger cancelled 'by user action'")
    check(
        any("cancelled by user action" in line for line in said),
        f"no 'Trigger cancelled by user action' in the trigger logs: {said}",
    )
    time.sleep(10)  # time for a wrong on_kill's StopJob to land
    status = d.emulator.jobs_of(dag_id, rid, task_id)[0]["status"]
    check(status == "Running", f"the job is {status} after {owner.name}'s on_kill")
    d.emulator.set_status(job["jobId"], "Succeeded")
    state = d.airflow.wait_run(dag_id, rid, 120)
    ti = d.airflow.task_instance(dag_id, rid, task_id)
    jobs = d.emulator.jobs_of(dag_id, rid, task_id)
    seen = (
        f"paused {owner.name} for {taken:.0f} s until {other.name} took over; then a copy of "
        f"the trigger was cancelled 'by user action' and its on_kill left the job {status}; "
        f"run {state} at try {ti['try_number']}; {len(jobs)} job(s)"
    )
    check(state == "success" and ti["try_number"] == 1 and len(jobs) == 1, seen)
    return seen


def _trigger_log_lines(d: Deployment, dag_id: str, rid: str, task_id: str) -> list[str]:
    """The lines of try 1's trigger log files, one per triggerer that ran the trigger
    (``attempt=1.log.trigger.<triggerer job id>.log``, Airflow 3's file task handler):
    read from disk, since a triggerer that starts the trigger again rewrites its file."""
    folder = d.build / "airflow-home" / "logs" / f"dag_id={dag_id}" / f"run_id={rid}"
    lines: list[str] = []
    for path in sorted((folder / f"task_id={task_id}").glob("attempt=1.log.trigger.*.log")):
        lines += path.read_text(errors="replace").splitlines()
    return lines


def _lines(d: Deployment, dag_id: str, rid: str, task_id: str) -> list[str]:
    return training_lines(d.airflow.task_log(dag_id, rid, task_id, 1))


def _running_job(d: Deployment, dag_id: str, rid: str, task_id: str) -> dict[str, Any]:
    def running() -> bool:
        jobs = d.emulator.jobs_of(dag_id, rid, task_id)
        return bool(jobs) and jobs[0]["status"] == "Running"

    wait_for(running, 60, f"{task_id}'s job running")
    return d.emulator.jobs_of(dag_id, rid, task_id)[0]


def _trigger_owner(d: Deployment, services: Services, dag_id: str, rid: str, task_id: str) -> Any:
    """The triggerer that the REST API says holds the task instance's trigger."""
    triggerers = [s for s in services.started if s.name in TRIGGERERS and s.alive()]
    for service in triggerers:
        if _runs_trigger(service, d, dag_id, rid, task_id):
            return service
    ti = d.airflow.task_instance(dag_id, rid, task_id)
    raise AssertionError(f"no live triggerer holds the trigger: {ti.get('trigger')}")


def _runs_trigger(service: Any, d: Deployment, dag_id: str, rid: str, task_id: str) -> bool:
    """Whether the task instance's trigger is held by this triggerer (by its host name)."""
    ti = d.airflow.task_instance(dag_id, rid, task_id)
    holder = (ti.get("trigger") or {}).get("triggerer_id")
    if ti["state"] != "deferred" or holder is None:
        return False
    jobs = d.airflow.call("GET", "/jobs", params={"job_type": "TriggererJob", "limit": 100})
    hostnames = {job["id"]: job["hostname"] for job in jobs["jobs"]}
    return bool(hostnames.get(holder) == TRIGGERERS[service.name])


# ---- 3: a Celery worker dies while the create answer is held ---------------------------------


def worker_crash(d: Deployment, services: Services) -> str:
    """SIGKILL the worker whose task waits for the create answer; the retry adopts the job."""
    dag_id, task_id = "deploy_worker_crash", "crash_create"
    d.emulator.fault(kind="delay", seconds=120, operation="CreateJob", times=1)
    rid = d.airflow.trigger(dag_id, run_id("s3"), None)["dag_run_id"]
    wait_for(lambda: bool(d.emulator.jobs_of(dag_id, rid, task_id)), 120, "the create request")
    ti = d.airflow.wait_ti(dag_id, rid, task_id, {"running"}, 30)
    workers = [s for s in services.started if s.name.startswith("worker")]
    victim = next((w for w in workers if ti.get("pid") and is_below(ti["pid"], w.pid)), None)
    check(victim is not None, f"no worker runs the task's process {ti.get('pid')}")
    assert victim is not None
    victim.kill()
    other = next(w for w in workers if w is not victim)
    retried_on: list[str] = []

    def retried() -> bool:
        now = d.airflow.task_instance(dag_id, rid, task_id)
        if now["try_number"] >= 2 and now.get("pid") and now["state"] in {"running", "deferred"}:
            retried_on.append(other.name if is_below(now["pid"], other.pid) else "?")
        return now["state"] in {"success", "failed"}

    wait_for(retried, 240, "the retry", interval=1)
    ti = d.airflow.task_instance(dag_id, rid, task_id)
    check(ti["state"] == "success", f"ended {ti['state']}")
    check(ti["try_number"] == 2, f"ended at try {ti['try_number']}, expected the retry (2)")
    jobs = d.emulator.jobs_of(dag_id, rid, task_id)
    check(len(jobs) == 1, f"{len(jobs)} jobs for the task instance, expected 1 (adopted)")
    where = retried_on[-1] if retried_on else f"{other.name} (the only worker left)"
    return f"killed {victim.name} mid-create; try 2 ran on {where}, adopted {jobs[0]['jobId']}"


# ---- 4: a clear trains again, a failed try's retry adopts ------------------------------------


def clear_trains_again(d: Deployment) -> str:
    """Clear a succeeded training task: a second job is created."""
    dag_id, task_id = "deploy_clear", "train"
    rid = d.airflow.trigger(dag_id, run_id("s4c"), None)["dag_run_id"]
    check(d.airflow.wait_run(dag_id, rid, RUN_TIMEOUT) == "success", f"first run {rid} failed")
    first = d.emulator.jobs_of(dag_id, rid, task_id)
    check(len(first) == 1, f"{len(first)} jobs before the clear, expected 1")
    d.airflow.clear(dag_id, rid, [task_id])

    def ran_again() -> bool:
        ti = d.airflow.task_instance(dag_id, rid, task_id)
        return ti["try_number"] >= 2 and ti["state"] in {"success", "failed"}

    wait_for(ran_again, RUN_TIMEOUT, "the cleared task's new try")
    state = d.airflow.wait_run(dag_id, rid, RUN_TIMEOUT)
    check(state == "success", f"after the clear: {state}")
    after = d.emulator.jobs_of(dag_id, rid, task_id)
    check(
        len(after) == 2,
        f"{len(after)} job(s) after the clear, expected 2: the cleared task adopted "
        f"{first[0]['jobId']} instead of training again",
    )
    return f"clear created a second job ({after[1]['jobId']})"


def failed_try_adopts(d: Deployment) -> str:
    """A try killed while it waits fails; its retry adopts the running job."""
    dag_id, task_id = "deploy_failed_try", "sync_train"
    d.emulator.script(kind="hold", status="Running", match="sync-train")
    rid = d.airflow.trigger(dag_id, run_id("s4r"), None)["dag_run_id"]
    job = _running_job(d, dag_id, rid, task_id)
    ti = d.airflow.wait_ti(dag_id, rid, task_id, {"running"}, 30)
    check(bool(ti.get("pid")), "the running task reports no pid")
    time.sleep(3)
    os.kill(ti["pid"], signal.SIGKILL)

    def second_try_running() -> bool:
        now = d.airflow.task_instance(dag_id, rid, task_id)
        if now["state"] == "failed":
            raise Fatal(f"try {now['try_number']} failed without a retry")
        return bool(now["try_number"] == 2 and now["state"] == "running")

    wait_for(second_try_running, 120, "the retry")
    time.sleep(5)
    d.emulator.set_status(job["jobId"], "Succeeded")
    state = d.airflow.wait_run(dag_id, rid, 120)
    check(state == "success", f"run {rid}: {state}")
    jobs = d.emulator.jobs_of(dag_id, rid, task_id)
    check(len(jobs) == 1, f"{len(jobs)} jobs after the retry, expected 1 (adopted)")
    return f"try 1 killed (pid {ti['pid']}); try 2 adopted {job['jobId']}"


# ---- 5: a killed task stops its job -------------------------------------------------------


def mark_failed_stops(d: Deployment) -> str:
    """ "Mark as failed" on a deferred wait: the job is stopped within 10 s."""
    dag_id, task_id = "deploy_mark_failed", "mark_failed"
    d.emulator.script(kind="hold", status="Running", match="mark-failed")
    rid = d.airflow.trigger(dag_id, run_id("s5m"), None)["dag_run_id"]
    d.airflow.wait_ti(dag_id, rid, task_id, {"deferred"}, 120)
    job = _running_job(d, dag_id, rid, task_id)
    d.airflow.mark(dag_id, rid, task_id, "failed")
    marked = time.monotonic()
    wait_for(lambda: d.emulator.job(job["jobId"])["status"] in STOPPED, 10, "the job stopped", 0.5)
    status = d.emulator.job(job["jobId"])["status"]
    return f"job {job['jobId']} {status} {time.monotonic() - marked:.1f} s after"


def timeout_stops(d: Deployment) -> str:
    """``execution_timeout`` on a sync wait: the wait ends before it (2 s before, at 20 s)
    and the job is stopped within 10 s of the task's timeout line."""
    dag_id, task_id = "deploy_exec_timeout", "exec_timeout"
    d.emulator.script(kind="hold", status="Running", match="exec-timeout")
    rid = d.airflow.trigger(dag_id, run_id("s5t"), None)["dag_run_id"]
    job = _running_job(d, dag_id, rid, task_id)
    ti = d.airflow.wait_ti(dag_id, rid, task_id, {"failed", "success"}, 120)
    check(ti["state"] == "failed", f"the task ended {ti['state']}, not failed by its timeout")
    events = d.airflow.task_log_events(dag_id, rid, task_id, ti["try_number"])
    said = [e for e in events if "its deadline passed" in event_text(e) and e.get("timestamp")]
    check(bool(said), "no timestamped 'its deadline passed' line in the task log")
    alarm = any("Process timed out" in event_text(e) for e in events)
    timed_out = datetime.fromisoformat(said[0]["timestamp"])
    wait_for(lambda: d.emulator.job(job["jobId"])["status"] in STOPPED, 30, "the job stopped", 0.5)
    finished = datetime.fromisoformat(
        d.emulator.job(job["jobId"])["finishedAt"].replace("Z", "+00:00")
    )
    # finishedAt has whole seconds: the job stopped before the next one began.
    late = (finished - timed_out).total_seconds() + 1
    check(late <= 10, f"the job stopped up to {late:.1f} s after the timeout, not within 10 s")
    ended = "Airflow's alarm fired too" if alarm else "before Airflow's alarm"
    return f"job {job['jobId']} stopped at most {late:.1f} s after the task timed out ({ended})"


# ---- 7: the orphan sweep ---------------------------------------------------------------------


def sweep_stops_orphans(d: Deployment, services: Services) -> str:
    """Where no ``on_kill`` runs, the orphan sweep stops the job within two intervals of
    its task's end: a deferred task marked failed while both triggerers are down, and a
    sync wait whose worker is SIGKILLed on its last try. Then a healthy deferred wait
    through several sweeps (and one of a second deployment) is never stopped.

    The healthy wait starts after the triggerers are back: killing both while a deferred
    wait runs made its trigger, taken over, run ``on_kill`` ("cancelled by user action")
    and stop the job itself in one run; that is the takeover's, not the sweep's."""
    bound = 2 * SWEEP_SECONDS
    wait_for(lambda: SWEEP_DAG in d.airflow.dag_ids(), 120, "the sweep's DAG parsed", 3)
    d.emulator.script(kind="hold", status="Running", match="sweep-", times=3)
    cases = ("deploy_sweep_deferred", "sweep_deferred"), ("deploy_sweep_sync", "sweep_sync")
    rids = {dag: d.airflow.trigger(dag, run_id("s7"), None)["dag_run_id"] for dag, _ in cases}
    d.airflow.wait_ti(cases[0][0], rids[cases[0][0]], cases[0][1], {"deferred"}, 120)
    jobs = {dag: _running_job(d, dag, rids[dag], task) for dag, task in cases}
    sync_dag, sync_task = cases[1]
    sync_ti = d.airflow.wait_ti(sync_dag, rids[sync_dag], sync_task, {"running"}, 120)
    check(_sweeps(d) == 0, "the sweep ran before the scenario unpaused it")
    d.airflow.unpause(SWEEP_DAG)
    try:
        seen = _kill_and_wait(d, services, cases, rids, jobs, sync_ti, bound)
        healthy = _healthy_wait_left(d)
    finally:
        d.airflow.call("PATCH", f"/dags/{SWEEP_DAG}", json={"is_paused": True})
    return f"{seen}; {healthy}"


def _healthy_wait_left(d: Deployment) -> str:
    """A deferred wait through three sweeps of this deployment and one of another: its
    job is never stopped, and the other deployment's sweep logs that it left it."""
    dag_id, task_id = "deploy_sweep_healthy", "sweep_healthy"
    rid = d.airflow.trigger(dag_id, run_id("s7"), None)["dag_run_id"]
    d.airflow.wait_ti(dag_id, rid, task_id, {"deferred"}, 120)
    job_id = _running_job(d, dag_id, rid, task_id)["jobId"]
    before = _sweeps(d)
    other: list[str] = []
    beside = threading.Thread(target=lambda: other.append(_other_deployment_sweeps(d)))
    beside.start()
    wait_for(lambda: _sweeps(d) >= before + 3, 6 * SWEEP_SECONDS + 60, "three sweeps", 3)
    beside.join(300)
    status = d.emulator.job(job_id)["status"]
    check(status == "Running", f"the healthy wait's job {job_id} is {status}")
    check(bool(other), "the other deployment's sweep did not end within 300 s")
    listed = [line[-200:] for line in other[0].splitlines() if "Orphan sweep" in line]
    check(
        f"Left AIHC job {job_id}" in other[0] and "0 job(s) stopped" in other[0],
        f"the other deployment's sweep did not leave job {job_id}: {listed} "
        "(logs/other_deployment_sweep.log)",
    )
    sweeps = _sweeps(d) - before
    d.emulator.set_status(job_id, "Succeeded")
    state = d.airflow.wait_run(dag_id, rid, 120)
    check(state == "success", f"the healthy wait's run ended {state}")
    return (
        f"a healthy deferred wait through {sweeps} sweeps never stopped; the "
        f"{OTHER_DEPLOYMENT} deployment's sweep saw its job and left it"
    )


#: The second deployment beside the first: the same credentials and DAG files.
OTHER_DEPLOYMENT = "aihc-deploy-other"


def _other_deployment_sweeps(d: Deployment) -> str:
    """One sweep of a second deployment (its own SQLite database, ``airflow dags test``
    as its scheduler, its own ``deployment_id``); its output."""
    home = d.build / "other-deployment"
    home.mkdir(exist_ok=True)
    env = {
        **d.env,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__AIHC__DEPLOYMENT_ID": OTHER_DEPLOYMENT,
    }
    airflow = str(BIN / "airflow")
    out = []
    for argv in ([airflow, "db", "migrate"], [airflow, "dags", "test", SWEEP_DAG]):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=280)
        out.append(done.stdout + done.stderr)
    (d.build / "logs" / "other_deployment_sweep.log").write_text(out[-1])
    return out[-1]


def _kill_and_wait(
    d: Deployment,
    services: Services,
    cases: tuple[tuple[str, str], ...],
    rids: dict[str, str],
    jobs: dict[str, dict[str, Any]],
    sync_ti: dict[str, Any],
    bound: float,
) -> str:
    (deferred_dag, deferred_task), (sync_dag, sync_task) = cases
    workers = [services.get(name) for name in WORKERS]
    pid = sync_ti.get("pid")
    victim = next((w for w in workers if pid and is_below(pid, w.pid)), None)
    check(victim is not None, f"no worker runs the sync wait's process {pid}")
    assert victim is not None
    victim.kill()
    triggerers = [services.get(name) for name in TRIGGERERS]
    for triggerer in triggerers:
        triggerer.kill()
    d.airflow.mark(deferred_dag, rids[deferred_dag], deferred_task, "failed")
    marked = time.monotonic()
    services.restart(victim)
    took: dict[str, float] = {}
    try:
        _stopped_within(d, jobs[deferred_dag]["jobId"], marked, bound, took, "marked failed")
    finally:
        for triggerer in triggerers:
            services.restart(triggerer)
    # Airflow fails the dead worker's task after its heartbeat timeout (no retries left).
    d.airflow.wait_ti(sync_dag, rids[sync_dag], sync_task, {"failed"}, 180)
    failed = time.monotonic()
    _stopped_within(d, jobs[sync_dag]["jobId"], failed, bound, took, "worker killed")
    return (
        f"marked failed with both triggerers down: job stopped {took['marked failed']:.0f} s "
        f"after; {victim.name} SIGKILLed on the last try: job stopped "
        f"{took['worker killed']:.0f} s after the task failed (bound {bound:.0f} s)"
    )


def _stopped_within(
    d: Deployment, job_id: str, since: float, bound: float, took: dict[str, float], what: str
) -> None:
    wait_for(lambda: d.emulator.job(job_id)["status"] in STOPPED, bound, f"{what}: job stopped")
    took[what] = time.monotonic() - since


def _sweeps(d: Deployment) -> int:
    """The orphan sweep's succeeded runs."""
    runs = d.airflow.call("GET", f"/dags/{SWEEP_DAG}/dagRuns", params={"state": "success"})
    return int(runs["total_entries"])


# ---- running them ----------------------------------------------------------------------------


def _side_by_side(table: Table, rows: dict[str, Callable[[], str]]) -> None:
    threads = [
        threading.Thread(target=table.check, args=(n, b), daemon=True) for n, b in rows.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def run_all(d: Deployment, services: Services, table: Table, only: set[str]) -> None:
    """Every scenario, in an order that keeps crashes apart from other work.

    :param only: names (``examples``, ``ui``, ``retries``, ``kills``, ``takeover``,
        ``handover``, ``sweep``, ``worker``) to run; empty = all.
    """

    def wanted(name: str) -> bool:
        return not only or name in only

    if wanted("examples"):
        with table.phase("scenario 1: example DAGs") as ok:
            examples(d, table)
            ok.set()
    if wanted("retries") or wanted("kills"):
        with table.phase("scenarios 4, 5: clears, retries, kills") as ok:
            rows = {
                "4 clear of a succeeded task trains again": lambda: clear_trains_again(d),
                "4 a failed try's retry adopts the job": lambda: failed_try_adopts(d),
                "5 mark failed (deferred) stops the job": lambda: mark_failed_stops(d),
                "5 execution_timeout (sync) stops the job": lambda: timeout_stops(d),
            }
            _side_by_side(table, rows)
            ok.set()
    if wanted("ui"):
        with table.phase("scenario 6: the UI in a browser") as ok:
            ui.check_ui(d, table)
            ok.set()
    checks = {
        "takeover": ("scenario 2: triggerer takeover", "2 SIGKILLed triggerer, the other "
                     "takes over", lambda: triggerer_takeover(d, services)),
        "handover": ("scenario 2b: triggerer handover", "2b a paused triggerer resumes after "
                     "a takeover; its on_kill leaves the job",
                     lambda: triggerer_handover(d, services)),
        "sweep": ("scenario 7: the orphan sweep", "7 the sweep stops what no on_kill stopped, "
                  "and nothing else", lambda: sweep_stops_orphans(d, services)),
        "worker": ("scenario 3: worker crash mid-create", "3 SIGKILLed worker, the retry "
                   "adopts", lambda: worker_crash(d, services)),
    }  # fmt: skip
    for name, (phase, row, body) in checks.items():
        if wanted(name):
            _one_check(table, phase, row, body)


def _one_check(table: Table, phase: str, row: str, body: Callable[[], str]) -> None:
    """A phase of one check."""
    with table.phase(phase) as ok:
        table.check(row, body)
        ok.set()
