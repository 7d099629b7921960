"""What the reliability driver runs, shared by the driver (``rel_driver.py``) and the tests.

Every case is plain JSON (faults and scripts in the emulator control API's form), derived
from a seed alone, so the test that checks a case and the process that runs it agree on
what was injected without talking to each other.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

#: Connection extras of the matrix: retry fast, give up on an answer after ``TIMEOUT``.
MAX_RETRIES = 2
TIMEOUT = 0.75
#: A ``delay`` fault holds its answer this long: past the client's timeout.
SLOW_ANSWER = TIMEOUT + 0.5
#: Task retries of the DAGs where success must come (more than any schedule's faults).
RETRIES = 8
#: Task retries of the DAGs where success is impossible (a bounded number of wasted tries).
DOOMED_RETRIES = 1
#: Non-passthrough faults per schedule, at most; each failed try consumes at least one.
MAX_FAULTS = 6
#: The deadline (operator ``timeout``) of the doomed DAGs, seconds.
DOOMED_TIMEOUT = 1.0
#: Statuses AIHC could send that the provider does not treat as an end.
UNEXPECTED_STATUSES = ("Weird", "Pending", "", "Abnormal", "Stopping")

#: The AIHC operations a task's run uses: create (with its lookups), polling, and stop.
OPERATIONS = ("ListJobs", "CreateJob", "GetJob", "GetPodLogs", "GetJobEvents", "StopJob")
#: Every fault the emulator can inject (``scenarios``), bar ``passthrough``.
FAULT_KINDS = ("error", "throttle", "drop_before", "drop_after", "delay", "malformed")

OUTCOMES_OK = ("succeed", "fail_once")
OUTCOMES_DOOMED = ("fail_always", "hold", "unexpected_status", "refuse_create")

#: Recognisable credentials: any of these in a log, the DB or an exception text is a leak.
CANARY_AK = "AK-LEAK-CANARY-ID-7f3a9c"
CANARY_SK = "SK-LEAK-CANARY-4d1e8b2a9f7c6e5d3b1a0f9e8d7c6b5a"
CANARY_TOKEN = "STS-LEAK-CANARY-TOKEN-8c7b6a5f4e3d2c1b0a9f/with+odd=chars"
CANARY_WRONG_SK = "SK-LEAK-CANARY-WRONG-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d"
SECRETS = (CANARY_SK, CANARY_TOKEN, CANARY_WRONG_SK)


@dataclass(frozen=True)
class Schedule:
    """One seeded fault schedule and the job's fate, run as one DAG run with retries.

    :param seed: the seed everything below is drawn from.
    :param mode: ``sync`` (wait in the worker) or ``deferred`` (wait in the trigger).
    :param outcome: what the emulator makes of the job (``OUTCOMES_*``).
    :param faults: the emulator's fault queue, in order (control-API JSON).
    :param scripts: the emulator's job scripts (control-API JSON).
    """

    seed: int
    mode: str
    outcome: str
    faults: tuple[dict[str, Any], ...]
    scripts: tuple[dict[str, Any], ...] = field(default=())

    @property
    def doomed(self) -> bool:
        """Whether the schedule makes success impossible."""
        return self.outcome in OUTCOMES_DOOMED

    @property
    def dag_id(self) -> str:
        return f"rel_matrix_{'doomed_' if self.doomed else ''}{self.mode}"

    @property
    def fault_count(self) -> int:
        return sum(1 for f in self.faults if f["kind"] != "passthrough")

    def case(self) -> dict[str, Any]:
        """The driver's case."""
        return {
            "id": f"matrix-{self.seed}",
            "kind": "matrix",
            "dag_id": self.dag_id,
            "faults": list(self.faults),
            "scripts": list(self.scripts),
        }


def schedule(seed: int) -> Schedule:
    """The schedule of ``seed``: its mode, the job's fate and a fault queue per operation.

    Faults are queued per operation with passthrough gaps, so a fault lands on the n-th
    request of its operation wherever the other operations' requests fall.  At most one
    slow answer (it costs ``TIMEOUT`` of real time) and ``MAX_FAULTS`` faults in all; at
    most ``MAX_RETRIES`` StopJob faults and no garbled StopJob answer, so a stop always
    gets through the hook's retries (one that cannot is a reported gap: see the tests).
    """
    rng = random.Random(seed)
    mode = rng.choice(("sync", "deferred"))
    outcome = rng.choices((*OUTCOMES_OK, *OUTCOMES_DOOMED), weights=(50, 20, 8, 8, 8, 6), k=1)[0]
    budget = rng.randint(0, MAX_FAULTS)
    slow_left = 1
    per_op: dict[str, list[dict[str, Any]]] = {op: [] for op in OPERATIONS}
    for _ in range(budget):
        op = rng.choice(OPERATIONS)
        if op == "CreateJob" and outcome == "refuse_create":
            continue  # every create is refused below; a passthrough slot would let one in
        if op == "StopJob" and sum(f["kind"] != "passthrough" for f in per_op[op]) >= MAX_RETRIES:
            continue
        kind = rng.choice(FAULT_KINDS)
        if kind == "delay":
            if not slow_left:
                kind = "error"
            slow_left -= kind == "delay"
        gap = rng.choice((0, 0, 0, 1, 2, 3))
        per_op[op].extend({"kind": "passthrough", "operation": op} for _ in range(gap))
        per_op[op].append(_fault(rng, kind, op))
    faults: list[dict[str, Any]] = [f for op in OPERATIONS for f in per_op[op]]
    scripts: list[dict[str, Any]] = []
    if outcome == "fail_once":
        scripts.append({"kind": "fail", "reason": f"CUDA error: out of memory (seed {seed})"})
    elif outcome == "fail_always":
        scripts.append({"kind": "fail", "reason": "NCCL timeout", "times": 99})
    elif outcome == "hold":
        scripts.append({"kind": "hold", "status": "Running", "times": 99})
    elif outcome == "unexpected_status":
        status = rng.choice(UNEXPECTED_STATUSES)
        scripts.append({"kind": "status", "status": status, "times": 99})
    elif outcome == "refuse_create":
        faults.append({"kind": "error", "status": 503, "operation": "CreateJob", "times": 99})
    return Schedule(seed, mode, outcome, tuple(faults), tuple(scripts))


def _fault(rng: random.Random, kind: str, op: str) -> dict[str, Any]:
    if kind == "error":
        return {"kind": "error", "status": rng.choice((500, 502, 503, 504)), "operation": op}
    if kind == "throttle":
        return {"kind": "throttle", "retry_after": rng.choice((0, 0.2)), "operation": op}
    if kind == "delay":
        return {"kind": "delay", "seconds": SLOW_ANSWER, "operation": op}
    return {"kind": kind, "operation": op}


# -- kills ----------------------------------------------------------------------------------


def kill_cases() -> list[dict[str, Any]]:
    """Kills of a waiting task through real task execution.

    * ``sigterm``: SIGTERM to the process running the task, while the job runs.
    * ``markfailed``: the task instance's row set to ``failed`` (what the UI or API does),
      then SIGTERM: what Airflow's supervisor (3.x) and LocalTaskJob (2.x) do to a
      running task whose state was changed under it.
    * ``exectimeout``: ``execution_timeout`` passes while the wait is deferred (the trigger
      enforces it; Airflow does not apply it to a deferred task).
    * ``sensor``: SIGTERM to a poking sensor: a sensor only watches; the job must run on.
    """
    cases = []
    for kind, modes in (
        ("sigterm", ("sync", "deferred")),
        ("markfailed", ("sync",)),
        ("exectimeout", ("deferred",)),
    ):
        for mode in modes:
            for cancel in (True, False):
                name = f"{kind}-{mode}-{'cancel' if cancel else 'keep'}"
                cases.append(
                    {
                        "id": f"kill-{name}",
                        "kind": "kill",
                        "dag_id": f"rel_kill_{kind}_{mode}_{'cancel' if cancel else 'keep'}",
                        "scripts": [{"kind": "hold", "status": "Running", "match": name}],
                        "action": None if kind == "exectimeout" else kind,
                        "job_name": name,
                        "mode": mode,
                        "cancel_on_kill": cancel,
                    }
                )
    cases.append(
        {
            "id": "kill-sensor-poke",
            "kind": "kill",
            "dag_id": "rel_kill_sensor_poke",
            "scripts": [{"kind": "hold", "status": "Running", "match": "sensor-poke"}],
            "action": "sigterm",
            "job_name": "sensor-poke",
            "mode": "sensor",
            "cancel_on_kill": False,
        }
    )
    return cases


# -- secrets --------------------------------------------------------------------------------

SECRET_DAGS = (
    "rel_secret_create_wait",
    "rel_secret_sensors",
    "rel_secret_failing_job",
    "rel_secret_invalid",
    "rel_secret_wrong_secret",
    "rel_secret_timeout",
)


def secret_cases() -> list[dict[str, Any]]:
    """Every DAG path, with the canary credentials, faults on the way and failures."""
    bursts = [
        {"kind": "error", "status": 503, "operation": "GetJob"},
        {"kind": "drop_before", "operation": "GetJob"},
        {"kind": "throttle", "retry_after": 0, "operation": "ListJobs"},
        {"kind": "malformed", "operation": "GetJob"},
        {"kind": "drop_after", "operation": "CreateJob"},
    ]
    scripts: dict[str, list[dict[str, Any]]] = {
        "rel_secret_failing_job": [{"kind": "fail", "reason": "loss is NaN", "times": 9}],
        "rel_secret_timeout": [{"kind": "hold", "status": "Running", "times": 9}],
    }
    return [
        {
            "id": f"secret-{dag_id}",
            "kind": "secret",
            "dag_id": dag_id,
            "server": "canary",
            "faults": bursts,
            "scripts": scripts.get(dag_id, []),
        }
        for dag_id in SECRET_DAGS
    ]


# -- verdicts -------------------------------------------------------------------------------

#: Emulator statuses in which a job no longer holds GPUs.
ENDED = frozenset({"Succeeded", "Failed", "Stopped", "ManualTermination"})
TI_LABEL = "airflow-ti"


@dataclass
class Verdict:
    """What one schedule's run shows: duplicates, orphans, and every broken expectation."""

    jobs: int = 0
    duplicates: int = 0
    orphans: int = 0
    tries: int = 0
    problems: list[str] = field(default_factory=list)

    def expect(self, condition: bool, problem: str) -> None:
        if not condition:
            self.problems.append(problem)


def judge(plan: Schedule, result: dict[str, Any]) -> Verdict:
    """Check one schedule's run against what must hold whatever the faults.

    * The task ends ``success`` when success is possible, else ``failed``, and every failed
      try raised an ``AIHCError`` (a clear error, never a bug's ``KeyError``).
    * One task instance, so one ``airflow-ti`` label; at most one job of it is live or
      succeeded (duplicates), and none is live once the task has ended (orphans).
    * Succeeding schedules create one job (two when the first one failed: the retry's job
      is ``<name>-r2``); the XCom return value is the job that succeeded.
    """
    verdict = Verdict()
    jobs = result["jobs"]
    verdict.jobs = len(jobs)
    tries = result["tries"]
    verdict.tries = len(tries)
    labels = {job["labels"].get(TI_LABEL) for job in jobs}
    verdict.expect(len(labels) <= 1 and None not in labels, f"jobs of several TIs: {labels}")
    live = [job for job in jobs if job["status"] not in ENDED]
    good = [job for job in jobs if job["status"] == "Succeeded"]
    verdict.duplicates = max(0, len(live) + len(good) - 1)
    verdict.orphans = len(live)
    verdict.expect(verdict.duplicates == 0, f"duplicates: {_jobs(jobs)}")
    verdict.expect(verdict.orphans == 0, f"left running: {_jobs(live)}")
    verdict.expect(not result["driver_error"], f"driver error: {result['driver_error']}")
    states = [ti["state"] for ti in result["tis"]]
    for attempt in tries:
        if attempt["outcome"] != "success":
            verdict.expect(
                "AIHCError" in attempt.get("error_bases", []),
                f"try {attempt['try_number']} failed with a non-AIHC error: "
                f"{attempt.get('error_repr')}",
            )
    limit = (DOOMED_RETRIES if plan.doomed else RETRIES) + 1
    verdict.expect(0 < len(tries) <= limit, f"{len(tries)} tries recorded (limit {limit})")
    if not plan.doomed:
        verdict.expect(states == ["success"], f"task ended {states}, expected success")
        verdict.expect(len(good) == 1, f"expected one succeeded job: {_jobs(jobs)}")
        if tries and good:
            verdict.expect(
                tries[-1].get("xcom") == good[0]["jobId"],
                f"XCom {tries[-1].get('xcom')!r} is not the job {good[0]['jobId']}",
            )
        if plan.outcome == "succeed":
            verdict.expect(len(jobs) == 1, f"expected exactly one job: {_jobs(jobs)}")
        else:  # fail_once: the failed job, then the retry's own
            names = [job["name"] for job in jobs]
            verdict.expect(
                len(jobs) == 2 and names[1] == names[0] + "-r2",
                f"expected <name> then <name>-r2: {_jobs(jobs)}",
            )
            verdict.expect(
                [job["status"] for job in jobs] == ["Failed", "Succeeded"],
                f"expected Failed then Succeeded: {_jobs(jobs)}",
            )
        return verdict
    verdict.expect(states == ["failed"], f"task ended {states}, expected failed")
    verdict.expect(not good, f"a doomed schedule's job succeeded: {_jobs(jobs)}")
    verdict.expect(len(jobs) <= limit, f"more jobs than tries: {_jobs(jobs)}")
    final = tries[-1] if tries else {}
    expected_errors = {
        "refuse_create": ("AIHCError",),
        "fail_always": ("AIHCJobFailedError", "AIHCJobTimeoutError"),
        "hold": ("AIHCJobTimeoutError",),
        "unexpected_status": ("AIHCJobTimeoutError",),
    }[plan.outcome]
    verdict.expect(
        final.get("error_type") in expected_errors or _fault_failure(final),
        f"last try ended {final.get('error_repr')}, expected one of {expected_errors}",
    )
    if plan.outcome == "refuse_create":
        verdict.expect(not jobs, f"a refused create left jobs: {_jobs(jobs)}")
    elif plan.outcome in ("hold", "unexpected_status"):
        verdict.expect(
            all(job["status"] == "ManualTermination" for job in jobs),
            f"every job must have been stopped: {_jobs(jobs)}",
        )
    return verdict


def _fault_failure(attempt: dict[str, Any]) -> bool:
    """The try failed on an injected fault the hook could not retry past."""
    return attempt.get("error_type") in (
        "AIHCServerError",
        "AIHCThrottledError",
        "AIHCTransportError",
        "AIHCResponseError",
    )


def _jobs(jobs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(job["name"], job["status"]) for job in jobs]


# -- S4-2 through a real triggerer (rel_triggerer.py, dags/triggerer_log.py) -----------------

#: The env token the job prints (its name is sensitive by Airflow's key-name rule).
TRIGGERER_TOKEN = "hf_S4_2_TRIGGERER_LOG_7c1e9a"
#: The start of the job's line that prints it.
TRIGGERER_JOB_LINE = "S4-2 job line: hf login --token"
