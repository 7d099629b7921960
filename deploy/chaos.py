"""``make test-chaos``: the real deployment under a storm, judged by its promises.

Starts the deployment of ``make test-deployment`` with two schedulers (Airflow's HA mode on
PostgreSQL), two Celery workers and two triggerers; triggers 200-odd task instances of every
kind through the REST API over about nine minutes (``deploy/load.py``) while the storm
(``deploy/storm.py``) SIGKILLs workers, triggerers and schedulers, restarts PostgreSQL once
and makes the emulator misbehave, all on a seeded schedule; lets everything finish, then
judges every promise from the emulator's record and Airflow's (``deploy/verdict.py``),
prints one table (also ``<build>/report.txt``) and exits non-zero on any broken promise.

Reproduce a run with ``--seed`` (the table's first line).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report
import stack
from api import FINAL_TI_STATES, Emulator
from load import ACT_WITHIN, RUNS, SCRIPTS, Load, PatientAirflow
from run import Interrupted, on_signal, start_deployment
from services import Services, kill_leftovers, wait_for
from storm import Storm
from verdict import judge, table

from airflow_provider_aihc.emulator import DEFAULT_SECRET_ACCESS_KEY

ROOT = Path(__file__).resolve().parent.parent
LOAD_SECONDS = 480.0
KILLS = 24
#: After the load: how long every run may take to end, then the quiet before the judgement
#: (a job still running after it is an orphan).
DRAIN_SECONDS = 420.0
#: The orphan sweep's interval (``dags_examples/aihc_orphan_sweep.py``): a job whose task
#: ended is stopped within two of them.
SWEEP_SECONDS = 30.0
SWEEP_DAG = "aihc_orphan_sweep"
#: The quiet before the judgement: the sweep's bound (two intervals) and a margin; a job
#: still running after it is an orphan.
GRACE_SECONDS = 2 * SWEEP_SECONDS + 15.0
#: What the chaos deployment sets beyond ``make test-deployment``'s: a task instance queued
#: to a worker that died before it started is queued again after 90 s, checked every 30 s
#: (Airflow's defaults: 10 minutes, every 2), as an operator running Celery under failures
#: would set; more worker slots and runs at once than the defaults, for the load.
CONFIG = {
    "SCHEDULER__TASK_QUEUED_TIMEOUT": "90",
    "SCHEDULER__TASK_QUEUED_TIMEOUT_CHECK_INTERVAL": "30",
    "CORE__PARALLELISM": "64",
    "CELERY__WORKER_CONCURRENCY": "8",
    "CORE__MAX_ACTIVE_TASKS_PER_DAG": "64",
}


def main(argv: list[str] | None = None) -> int:
    """Run the storm; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=Path, default=Path("build/chaos"))
    parser.add_argument("--seed", type=int, default=None, help="default: drawn and printed")
    parser.add_argument("--seconds", type=float, default=LOAD_SECONDS, help="of load")
    parser.add_argument("--kills", type=int, default=KILLS)
    parser.add_argument("--scale", type=float, default=1.0, help="of the runs, for a short try")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    print(f"chaos: seed {seed} (rerun: make test-chaos CHAOS_SEED={seed})", flush=True)
    started = time.monotonic()
    build = args.build_dir.resolve()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    kill_leftovers(build)
    logs = build / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    # Every Airflow process inherits it (stack.airflow_env copies this environment).
    os.environ["AIHC_ORPHAN_SWEEP_MINUTES"] = str(SWEEP_SECONDS / 60)
    services = Services(log_dir=logs, env=dict(os.environ), build=build)
    phases = report.Table()
    status = 1
    try:
        deployment = start_deployment(
            build,
            services,
            phases,
            schedulers=2,
            dag_folders={"chaos": ROOT / "deploy" / "chaos_dags"},
            dag_ids=frozenset(RUNS) | {SWEEP_DAG},
            config=CONFIG,
        )
        if deployment is not None:
            api = PatientAirflow(deployment.airflow.base_url, build / "airflow-home")
            status = _storm(api, deployment.emulator, services, seed, args, build, phases)
    except Interrupted as exc:
        print(f"chaos: interrupted by {exc}")
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        left = services.stop_all()
        if left:
            print(f"chaos: still running after the stop: {left}")
            status = status or 1
        stack.remove_postgres_data(build, outside_only=True)
        print(f"chaos: whole run {time.monotonic() - started:.0f} s", flush=True)
    return status


def _storm(
    api: PatientAirflow,
    emulator: Emulator,
    services: Services,
    seed: int,
    args: argparse.Namespace,
    build: Path,
    phases: report.Table,
) -> int:
    for script in SCRIPTS:
        emulator.script(**script)
    storm = Storm(services, emulator, seed, args.kills, args.seconds + 30, args.seconds / 2)
    load = Load(api, seed, args.seconds, args.scale)
    began = time.monotonic()
    storm.start()
    load.run(lambda line: storm.record.log(storm.started, line))
    load.wait_for_actions(timeout=ACT_WITHIN)
    while storm.record.kills.total() < args.kills and time.monotonic() - began < args.seconds + 90:
        time.sleep(2)  # the last kills of the schedule
    storm.stop()
    storm.record.log(storm.started, "storm over; waiting for every run to end")

    def all_final() -> bool:
        return all(
            ti["state"] in FINAL_TI_STATES
            for run in load.runs
            for ti in api.task_instances(run.dag_id, run.run_id)
        )

    try:
        wait_for(all_final, DRAIN_SECONDS, "every task instance final", interval=10)
    except TimeoutError as exc:
        print(f"chaos: {exc}")
    storm.record.log(
        storm.started, f"every run ended; {GRACE_SECONDS:.0f} s of quiet (the sweep's bound)"
    )
    time.sleep(GRACE_SECONDS)
    state = emulator.state()
    window = stack.TAKEOVER_SECONDS + 2 * 2  # the threshold plus two polls (chaos_dags JOB)
    secrets = [DEFAULT_SECRET_ACCESS_KEY, "bce-auth-v1/"]
    folders = [build / "logs", build / "airflow-home" / "logs"]
    verdict = judge(api, state["jobs"], load.runs, storm.record, window, secrets, folders)
    for error in load.errors:
        verdict.fail(f"load: {error}")
    text = table(verdict, storm.record, state["requests"])
    text += f"\nfaults still queued at the end: {state['pendingFaults']}"
    text += f"\nload and storm {time.monotonic() - began:.0f} s"
    broken = "\n".join(f"  BROKEN {line}" for line in verdict.broken[:60])
    out = "=" * 100 + "\n" + text + ("\n" + broken if broken else "") + "\n" + "=" * 100
    print("\n" + out, flush=True)
    (build / "report.txt").write_text(out + "\n" + "\n".join(storm.record.events) + "\n")
    return 1 if verdict.broken or not verdict.tis else 0


if __name__ == "__main__":
    sys.exit(main())
