"""The load of ``make test-chaos``: DAG runs of every kind, triggered through the REST API
over the storm, and what a user does to some of them while they run (clear, mark failed).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import requests
from api import FINAL_TI_STATES, Airflow

#: Task kinds (for the table): (DAG, task) → kind.
KINDS: dict[tuple[str, str], str] = {
    ("chaos_worker_wait", "train"): "create+wait in worker",
    ("chaos_worker_wait_long", "train_long"): "create+wait in worker",
    ("chaos_deferred", "train"): "create+defer",
    ("chaos_deferred_long", "train_long"): "create+defer",
    ("chaos_sweep", "trial"): "mapped sweep (deferred)",
    ("chaos_sensors", "submit"): "create (no wait)",
    ("chaos_sensors", "watch_poke"): "sensor poke",
    ("chaos_sensors", "watch_reschedule"): "sensor reschedule",
    ("chaos_sensors", "watch_deferred"): "sensor deferrable",
    ("chaos_mark_failed", "held_mark"): "marked failed while deferred",
    ("chaos_timeout_deferred", "held_timeout"): "execution_timeout (deferred)",
    ("chaos_timeout_worker", "long_timeout"): "execution_timeout (worker)",
    ("chaos_clear", "clear_train"): "cleared while deferred",
}
#: Runs of each DAG (task instances: sensors 4 a run, the sweep 3): 206 in all.
RUNS = {
    "chaos_worker_wait": 24,
    "chaos_worker_wait_long": 8,
    "chaos_deferred": 30,
    "chaos_deferred_long": 10,
    "chaos_sweep": 12,
    "chaos_sensors": 16,
    "chaos_mark_failed": 10,
    "chaos_timeout_deferred": 7,
    "chaos_timeout_worker": 7,
    "chaos_clear": 10,
}
#: The DAGs whose task a user acts on while it is deferred.
MARKED_FAILED = "chaos_mark_failed"
CLEARED = "chaos_clear"
#: The emulator's scripts, bound by job name (the task id is in it; the first that matches
#: binds): ``held`` jobs never end unless stopped, ``long`` ones wait in the queue first,
#: ``clear`` ones wait long enough to be cleared while they run (their second series too).
SCRIPTS: list[dict[str, Any]] = [
    # Longer than two tries' execution_timeout: a retry that adopts the job times out too.
    {"kind": "queue", "seconds": 70, "match": "long-timeout", "times": 10_000},
    {"kind": "hold", "status": "Running", "match": "held-", "times": 10_000},
    {"kind": "queue", "seconds": 20, "match": "long", "times": 10_000},
    {"kind": "queue", "seconds": 30, "match": "clear-train", "times": 10_000},
]
RETRY_SECONDS = 120.0
#: How long a clear or a mark-failed waits for its task to defer.
ACT_WITHIN = 600.0


class PatientAirflow(Airflow):
    """The REST API as a user's tooling calls it: a 5xx or a refused connection (the API
    server's database restarting) is retried for up to :data:`RETRY_SECONDS`."""

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request under ``/api/v2``, retried while the server cannot answer it."""
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            try:
                return super().call(method, path, **kwargs)
            except (requests.ConnectionError, requests.Timeout, requests.HTTPError) as exc:
                transient = not isinstance(exc, requests.HTTPError) or ": 5" in str(exc)
                if not transient or time.monotonic() > deadline:
                    raise
                time.sleep(2)


@dataclass
class Run:
    """One triggered DAG run, and what was done to it."""

    dag_id: str
    run_id: str
    triggered_at: float
    actions: list[tuple[str, float]] = field(default_factory=list)  # (what, when: epoch)


@dataclass
class Load:
    """Triggers :data:`RUNS` over ``seconds``, in a seeded order, and acts on the runs of
    :data:`MARKED_FAILED` and :data:`CLEARED` once their task is deferred.

    :param api: the REST API.
    :param seed: the seed of the order and the spacing.
    :param seconds: how long the triggering lasts.
    :param scale: a fraction of :data:`RUNS` (at least one run of each DAG), for a short try.
    """

    api: Airflow
    seed: int
    seconds: float
    scale: float = 1.0
    runs: list[Run] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _actors: list[threading.Thread] = field(default_factory=list)

    def run(self, log: Callable[[str], None]) -> None:
        """Trigger every run, spread evenly over ``seconds``; return when the last is in."""
        rng = random.Random(self.seed)
        order = [dag for dag, n in RUNS.items() for _ in range(max(1, round(n * self.scale)))]
        rng.shuffle(order)
        gap = self.seconds / len(order)
        started = time.monotonic()
        for n, dag_id in enumerate(order):
            time.sleep(max(0.0, started + n * gap - time.monotonic()))
            stamp = datetime.now(UTC).strftime("%H%M%S%f")
            run_id = f"chaos-{n:03d}-{stamp}"
            try:
                self.api.trigger(dag_id, run_id, None)
            except Exception as exc:
                self.errors.append(f"trigger {dag_id} {run_id}: {exc}")
                continue
            run = Run(dag_id, run_id, time.time())
            self.runs.append(run)
            if dag_id in (MARKED_FAILED, CLEARED):
                actor = threading.Thread(target=self._act, args=(run,), daemon=True)
                actor.start()
                self._actors.append(actor)
            if n % 25 == 0:
                log(f"triggered {n + 1} of {len(order)} runs")
        log(f"triggered {len(self.runs)} runs")

    def wait_for_actions(self, timeout: float) -> None:
        """Wait until every clear and mark-failed was done (or gave up)."""
        deadline = time.monotonic() + timeout
        for actor in self._actors:
            actor.join(timeout=max(0.0, deadline - time.monotonic()))

    def _act(self, run: Run) -> None:
        (task_id,) = {task for dag, task in KINDS if dag == run.dag_id}
        try:
            # After a few seconds deferred, so the trigger is running in a triggerer.
            # A task whose worker died after taking it waits in "queued" until the
            # schedulers stop being killed (docs/reliability.md): minutes, not seconds.
            states = {"deferred", *FINAL_TI_STATES}
            ti = self.api.wait_ti(run.dag_id, run.run_id, task_id, states, timeout=ACT_WITHIN)
            if ti["state"] != "deferred":
                # No deferred wait to act on: its tries were killed until one found its job
                # ended and finished without deferring (seed 866003: the first two tries'
                # worker was SIGKILLed twice). The judgement still judges the task and jobs.
                run.actions.append((f"ended {ti['state']} before it deferred", time.time()))
                return
            time.sleep(4)
            # When the call began: the action takes effect somewhere inside it, and a call
            # retried through a 5xx may return long after (seed 162482: the new series had
            # created its job 0.3 s before the clear's call returned, and the judgement
            # took that job for the cleared series').
            began = time.time()
            if run.dag_id == MARKED_FAILED:
                self.api.mark(run.dag_id, run.run_id, task_id, "failed")
                run.actions.append(("marked failed", began))
            else:
                self.api.clear(run.dag_id, run.run_id, [task_id])
                run.actions.append(("cleared", began))
        except Exception as exc:
            self.errors.append(f"{run.dag_id} {run.run_id}: could not act: {exc}")
