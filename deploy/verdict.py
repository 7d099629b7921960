"""The judgement of ``make test-chaos``, from the emulator's own record and Airflow's.

Every promise is checked for every task instance the load made; a broken one is a line in
:attr:`Verdict.broken`, and the table shows the figures (``docs/reliability.md`` has one
run's).
"""

from __future__ import annotations

import itertools
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from api import FINAL_TI_STATES, Airflow, event_text
from load import CLEARED, KINDS, MARKED_FAILED, Run
from storm import Record
from tasklog import TOOK_OVER, TOOK_OVER_AGAIN, training_lines, written_at

from airflow_provider_aihc.emulator.state.jobs import MANUAL_TERMINATION, STOPPED, TERMINAL

STOPPED_STATUSES = {STOPPED, MANUAL_TERMINATION}
#: Ended badly: a retry may create a fresh job after one of these.
BAD_ENDS = STOPPED_STATUSES | {"Failed"}
#: Task instances that must end failed (the user, or the timeout, ended them), and whose
#: every job must be stopped (their jobs are held: they never end on their own).
MUST_FAIL_AND_STOP = {MARKED_FAILED, "chaos_timeout_deferred"}
#: A timeout in the worker may end either way: a retry that adopts a job near its end has
#: a whole ``execution_timeout`` of its own. Its jobs' ends are counted, not judged.
TIMEOUT_IN_WORKER = "chaos_timeout_worker"
#: Deferred waits whose task log must hold every training line of their job.
STREAMED = {
    "create+defer",
    "mapped sweep (deferred)",
    "sensor deferrable",
    "cleared while deferred",
}
#: Waits whose end is measured against their job's end.
WAITS = STREAMED | {"create+wait in worker", "sensor poke", "sensor reschedule"}
#: The last line of every emulated job's log.
LAST_LINE = "training process exited with code 0"
LOG_SETTLE_SECONDS = 30.0
#: How long ``on_kill``'s stop may take under the storm's faults (its retries included).
ON_KILL_SECONDS = 15.0


@dataclass
class TI:
    """One task instance of the load, its jobs and what was checked of it."""

    run: Run
    data: dict[str, Any]
    jobs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.run.dag_id, self.run.run_id, self.data["task_id"], self.data["map_index"])

    @property
    def kind(self) -> str:
        return KINDS.get((self.run.dag_id, self.data["task_id"]), str(self.data["task_id"]))

    @property
    def name(self) -> str:
        index = self.data["map_index"]
        return f"{self.run.dag_id}/{self.run.run_id}/{self.data['task_id']}" + (
            f"[{index}]" if index >= 0 else ""
        )


@dataclass
class Verdict:
    """What the judgement found."""

    tis: list[TI]
    broken: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    #: Jobs that ended unstopped for a reason that is no broken promise (a cleared
    #: series' job that ended before the new series began): job id → why.
    excused: dict[str, str] = field(default_factory=dict)

    def fail(self, what: str) -> None:
        self.broken.append(what)


def judge(
    api: Airflow,
    jobs: list[dict[str, Any]],
    runs: list[Run],
    record: Record,
    window: float,
    secrets: list[str],
    log_folders: list[Path],
) -> Verdict:
    """Check every promise; the verdict.

    :param jobs: the emulator's record of every job (``/_emulator/state``).
    :param window: the documented takeover window (seconds): lines written this long
        before a triggerer's kill may be shown twice in a task log.
    :param secrets: strings no log may hold.
    :param log_folders: every log the deployment wrote.
    """
    tis = [TI(run, data) for run in runs for data in api.task_instances(run.dag_id, run.run_id)]
    verdict = Verdict(tis)
    by_key = {ti.key: ti for ti in tis}
    for job in jobs:
        labels = job["labels"]
        key = (
            labels.get("airflow-dag-id", ""),
            labels.get("airflow-run-id", ""),
            labels.get("airflow-task-id", ""),
            int(labels.get("airflow-map-index", "-1")),
        )
        if key in by_key:
            by_key[key].jobs.append(job)
        else:
            verdict.fail(f"job {job['jobId']} ({job['name']}) belongs to no task instance")
    _final_states(verdict)
    verdict.figures["user actions"] = dict(
        Counter(what for run in runs for what, _ in run.actions)
    )  # a task that ended before it deferred had none: its kind's promises are judged still
    _one_job_per_series(verdict, api)
    _killed_tasks_stopped(verdict, api, record)
    _no_orphans(verdict, jobs)
    _lines(verdict, api, record, window)
    _wait_past_end(verdict)
    _no_secrets(verdict, secrets, log_folders)
    return verdict


def _final_states(verdict: Verdict) -> None:
    stuck = [ti for ti in verdict.tis if ti.data["state"] not in FINAL_TI_STATES]
    for ti in stuck:
        verdict.fail(f"{ti.name} stuck in {ti.data['state']}")
    verdict.figures["stuck"] = len(stuck)
    for ti in verdict.tis:
        state, dag_id = ti.data["state"], ti.run.dag_id
        if dag_id == TIMEOUT_IN_WORKER:
            expected = {"failed", "success"}
        else:
            expected = {"failed"} if dag_id in MUST_FAIL_AND_STOP else {"success"}
        if state in FINAL_TI_STATES and state not in expected:
            verdict.fail(f"{ti.name} ended {state}, expected {' or '.join(sorted(expected))}")


def _one_job_per_series(verdict: Verdict, api: Airflow) -> None:
    """At most one job per try series (a fresh one only after the last ended badly), and
    for a succeeded create, exactly one that succeeded, the one its XCom names."""
    duplicates = 0
    for ti in verdict.tis:
        series: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for job in sorted(ti.jobs, key=lambda j: j["createdAt"]):
            series[job["labels"].get("airflow-try-series", "")].append(job)
        for jobs in series.values():
            for before, job in itertools.pairwise(jobs):
                if before["status"] not in BAD_ENDS:
                    duplicates += 1
                    verdict.fail(
                        f"{ti.name}: duplicate job {job['jobId']} beside {before['jobId']} "
                        f"({before['status']})"
                    )
        creates = ti.kind.startswith(("create", "mapped", "cleared"))
        if creates and ti.data["state"] == "success":
            job_id = api.xcom(*ti.key[:3], "job_id", map_index=ti.key[3])
            mine = {j["jobId"]: j for j in ti.jobs}
            if job_id not in mine:
                verdict.fail(f"{ti.name}: XCom job id {job_id} is none of its jobs {list(mine)}")
            elif mine[job_id]["status"] != "Succeeded":
                verdict.fail(f"{ti.name}: its job {job_id} is {mine[job_id]['status']}")
            ti.data["xcom_job_id"] = job_id
    verdict.figures["duplicates"] = duplicates


def _no_orphans(verdict: Verdict, jobs: list[dict[str, Any]]) -> None:
    """No job runs once every task ended and the orphan sweep's bound passed (the quiet
    before the judgement is that bound): none is excused."""
    orphans = [job for job in jobs if job["status"] not in TERMINAL]
    for job in orphans:
        verdict.fail(f"orphan: job {job['jobId']} ({job['name']}) still {job['status']}")
    verdict.figures["orphans"] = len(orphans)


def _killed_tasks_stopped(verdict: Verdict, api: Airflow, record: Record) -> None:
    """Every job of a marked-failed or timed-out task is stopped; a cleared task's job of
    the series before the clear is stopped.

    By ``on_kill`` or the timeout's own stop, or, where none ran (a task marked failed while
    no triggerer ran its trigger, a triggerer killed during ``on_kill``, every try killed
    before it deferred), by the orphan sweep within its bound: no job is excused.  How many
    were left to the sweep is counted (``ended without on_kill``).
    """
    stopped = Counter[str]()
    left_to_sweep = 0
    for ti in verdict.tis:
        if ti.run.dag_id in MUST_FAIL_AND_STOP | {TIMEOUT_IN_WORKER}:
            for job in ti.jobs:
                ok = job["status"] in STOPPED_STATUSES
                stopped["stopped" if ok else job["status"]] += 1
                if ok and ti.run.dag_id == MARKED_FAILED:
                    marked = any(what == "marked failed" for what, _ in ti.run.actions)
                    if not marked or _triggerer_lost_it(api, ti, record):
                        left_to_sweep += 1
                if ok or ti.run.dag_id not in MUST_FAIL_AND_STOP:
                    continue
                verdict.fail(f"{ti.name}: its job {job['jobId']} ended {job['status']}")
        if ti.run.dag_id == CLEARED:
            cleared = [when for what, when in ti.run.actions if what == "cleared"]
            for job in ti.jobs:
                # AIHC's createdAt is in whole seconds: a job created in the second the
                # clear's call began reads up to a second early (seed 746882: the new
                # series' job, 0.8 s after, read as before). The first series deferred 4 s
                # before the clear, so its jobs are older than that second.
                created_by = _epoch(job["createdAt"]) + 1  # the latest it may have been
                if cleared and created_by < cleared[0] and job["status"] not in STOPPED_STATUSES:
                    finished = _epoch(job.get("finishedAt") or "")
                    if finished and finished <= cleared[0]:
                        continue  # it ended before the clear
                    restarted = _epoch(str(ti.data.get("start_date") or ""))
                    if finished and restarted > finished and not _on_kill_logged(api, ti):
                        # No triggerer ran on_kill, and the new series started (Airflow
                        # held it in "queued") only after the job had ended: the limit.
                        verdict.excused[job["jobId"]] = "ended before the new series began"
                        continue
                    verdict.fail(f"{ti.name}: job {job['jobId']} of the cleared series "
                                 f"ended {job['status']}")  # fmt: skip
    verdict.figures["jobs of killed tasks"] = dict(stopped)
    verdict.figures["stopped where no on_kill ran (the sweep's)"] = left_to_sweep
    # Shown, not hidden: a cleared series' job no on_kill stopped ran to its own end while
    # the new series waited to start (the sweep leaves a queued task's job alone).
    verdict.figures["cleared series' jobs that ended by themselves before the new series"] = (
        sorted(verdict.excused) or 0
    )


def _on_kill_logged(api: Airflow, ti: TI) -> bool:
    """Whether any try's log says a triggerer called ``on_kill``."""
    tries = range(1, ti.data["try_number"] + 1)
    logs = (api.task_log(*ti.key[:3], n, ti.key[3]) for n in tries)
    return any("Trigger cancelled by user action" in text for text in logs)


def _triggerer_lost_it(api: Airflow, ti: TI, record: Record) -> str:
    """Why no ``on_kill`` could stop the job of a task marked failed ("": none of the
    limit's reasons). Airflow logs "Trigger cancelled by user action" before it calls
    ``on_kill``."""
    events = api.task_log_events(*ti.key[:3], ti.data["try_number"], ti.key[3])
    called = [
        _epoch(str(e.get("timestamp", "")))
        for e in events
        if "Trigger cancelled by user action" in str(e.get("event", ""))
    ]
    if not called:
        return "marked failed while no triggerer ran its trigger"
    stops = record.triggerer_stops()
    if any(called[-1] - 1 <= when <= called[-1] + ON_KILL_SECONDS for when in stops):
        return "its triggerer stopped while on_kill stopped the job"
    return ""


def _lines(verdict: Verdict, api: Airflow, record: Record, window: float) -> None:
    """Each succeeded deferred wait's log holds every line of its job, in order, repeated
    only inside the takeover window before a triggerer stopped (killed, or exited by
    itself: then its triggers are taken over at once, and resume from their deferral), or
    inside a takeover the log itself states (:func:`stated_takeovers`).

    "Its log" is every try's: a try that dies after its trigger copied the lines leaves
    them in its own log, and the retry adopts the job that already ended. Order and
    repeats are judged within each try's log.
    """
    triggerer_kills = record.triggerer_stops()
    kill_windows = [(kill - window - 1, kill + 2) for kill in triggerer_kills]
    jobs = {job["jobId"]: job for ti in verdict.tis for job in ti.jobs}
    todo = [ti for ti in verdict.tis if ti.kind in STREAMED and ti.data["state"] == "success"]
    logs: dict[tuple[str, str, str, int], list[str]] = {}
    stated: dict[tuple[str, str, str, int], list[list[tuple[float, float]]]] = {}
    deadline = time.monotonic() + LOG_SETTLE_SECONDS
    while todo:
        for ti in todo:
            tries = range(1, ti.data["try_number"] + 1)
            events = [api.task_log_events(*ti.key[:3], n, ti.key[3]) for n in tries]
            logs[ti.key] = ["\n".join(event_text(e) for e in try_events) for try_events in events]
            stated[ti.key] = [stated_takeovers(try_events) for try_events in events]
        todo = [ti for ti in todo if not any(LAST_LINE in text for text in logs[ti.key])]
        if not todo or time.monotonic() > deadline:
            break
        time.sleep(5)
    lost = repeated = checked = taken_over = handed_over = 0
    for ti in verdict.tis:
        if ti.key not in logs:
            continue
        job_id = ti.data.get("xcom_job_id") or _sensed_job(verdict, ti)
        job = jobs.get(job_id or "")
        if job is None:
            verdict.fail(f"{ti.name}: no job to compare its log with")
            continue
        checked += 1
        began, ended = _epoch(job["createdAt"]) - 1, _epoch(job.get("finishedAt") or "") + 1
        shown: set[str] = set()
        for text, handovers in zip(logs[ti.key], stated[ti.key], strict=True):
            windows = kill_windows + handovers
            handed_over += len(handovers)
            lines = [line for line in training_lines(text) if began <= written_at(line) <= ended]
            shown.update(lines)
            counts = Counter(lines)
            first_seen = list(counts)
            if first_seen != sorted(first_seen, key=written_at):
                verdict.fail(f"{ti.name}: its job's lines are out of order")
            twice = [line for line, n in counts.items() if n > 1]
            repeated += sum(counts[line] - 1 for line in twice)
            outside = [
                line
                for line in twice
                if not any(start <= written_at(line) <= end for start, end in windows)
            ]
            if outside:
                verdict.fail(f"{ti.name}: {len(outside)} lines shown twice outside the window")
            taken_over += bool(TOOK_OVER.search(text) or TOOK_OVER_AGAIN.search(text))
        missing = max(0, job["logLines"] - len(shown))
        lost += missing
        if missing:
            verdict.fail(f"{ti.name}: {missing} of the {job['logLines']} lines of its job lost")
    verdict.figures.update(
        {
            "logs checked": checked,
            "lines lost": lost,
            "lines repeated": repeated,
            "logs with a 'took over' line": taken_over,
            "takeovers stated in logs": handed_over,
        }
    )


def stated_takeovers(events: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """The windows of the takeovers a try's log states: a trigger that took over logs "took
    over X s after its task deferred … from N s ago" at time T, and lines written from
    T - N (a second of slack) to T + 2 may be shown twice; one that found no saved position
    says its copy starts again where the worker left it, and any line up to T + 2 may.
    This covers what no kill explains: a triggerer whose heartbeat lapsed (paused or
    starved under load, not killed) hands its triggers over, and the two may swap a
    trigger more than once (``make test-deployment`` scenario 2b).  A repeat outside every
    stated and kill window is still a broken promise.
    """
    windows = []
    for event in events:
        text = str(event.get("event", ""))
        said, again = TOOK_OVER.search(text), TOOK_OVER_AGAIN.search(text)
        try:
            when = _epoch(str(event.get("timestamp") or ""))
        except ValueError:  # not a timestamp Airflow wrote: no window
            continue
        if said and when:
            windows.append((when - int(said.group(2)) - 1, when + 2))
        elif again and when:  # copied again from where the worker left it
            windows.append((0.0, when + 2))
    return windows


def _sensed_job(verdict: Verdict, ti: TI) -> str | None:
    """The job a sensor watched: its run's ``submit`` task's job."""
    for other in verdict.tis:
        if other.run is ti.run and other.data["task_id"] == "submit" and other.jobs:
            return str(other.jobs[0]["jobId"])
    return None


def _wait_past_end(verdict: Verdict) -> None:
    """How long a succeeded wait took to end after its job did."""
    worst = (0.0, "")
    jobs = {job["jobId"]: job for ti in verdict.tis for job in ti.jobs}
    for ti in verdict.tis:
        if ti.kind not in WAITS or ti.data["state"] != "success" or not ti.data.get("end_date"):
            continue
        job = jobs.get(ti.data.get("xcom_job_id") or _sensed_job(verdict, ti) or "")
        if job and job.get("finishedAt"):
            past = _epoch(ti.data["end_date"]) - _epoch(job["finishedAt"])
            worst = max(worst, (past, ti.name))
    verdict.figures["longest wait past its job's end"] = f"{worst[0]:.0f} s ({worst[1]})"


def _no_secrets(verdict: Verdict, secrets: list[str], log_folders: list[Path]) -> None:
    found = 0
    # The emulator prints its own credentials at start, for a user to copy (docs/emulator.md).
    files = [
        p
        for folder in log_folders
        for p in folder.rglob("*")
        if p.is_file() and p.name != "emulator.log"
    ]
    for path in files:
        text = path.read_bytes()
        for secret in secrets:
            if secret.encode() in text:
                found += 1
                verdict.fail(f"a secret ({secret[:12]}…) is in {path}")
    verdict.figures["log files searched for secrets"] = len(files)
    verdict.figures["secrets found"] = found


def _epoch(text: str) -> float:
    if not text:
        return 0.0
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def table(verdict: Verdict, record: Record, requests: dict[str, int]) -> str:
    """The one table: task instances by kind and final state, kills, faults, figures."""
    states = sorted({ti.data["state"] for ti in verdict.tis})
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    for ti in verdict.tis:
        kinds[ti.kind][ti.data["state"]] += 1
    width = max(len(kind) for kind in kinds) if kinds else 10
    lines = [f"seed {record.seed}", "", f"{'task instances by kind':<{width}}  " + "  ".join(
        f"{s:>8}" for s in states)]  # fmt: skip
    for kind, counts in sorted(kinds.items()):
        lines.append(f"{kind:<{width}}  " + "  ".join(f"{counts[s]:>8}" for s in states))
    total = Counter(ti.data["state"] for ti in verdict.tis)
    lines.append(f"{'all':<{width}}  " + "  ".join(f"{total[s]:>8}" for s in states))
    lines.append(f"{'':<{width}}  {len(verdict.tis)} task instances")
    kills, faults = record.kills.total(), record.faults.total()
    lines += ["", f"kills by component: {_counts(record.kills)} ({kills})"]
    lines.append("exited by themselves: " + (_counts(record.died_alone) or "none"))
    lines.append(f"PostgreSQL restarted: {'yes' if record.postgres_restarted_at else 'no'}")
    lines.append(f"faults queued by kind: {_counts(record.faults)} ({faults})")
    lines.append("AIHC requests: " + _counts(Counter(requests)))
    for name, value in verdict.figures.items():
        lines.append(f"{name}: {value}")
    lines.append(f"broken promises: {len(verdict.broken)}")
    return "\n".join(lines)


def _counts(counts: Counter[str]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
