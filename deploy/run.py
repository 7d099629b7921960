"""``make test-deployment``: the provider in a real Airflow deployment, checked as a user would.

Installs what is missing from Debian (PostgreSQL, Redis, Chromium), starts PostgreSQL,
Redis, the AIHC emulator, and Airflow's API server, scheduler, DAG processor, two Celery
workers and two triggerers, each its own process with its own log under the build folder;
then runs the scenarios through the REST API, the CLI and a browser, stops everything it
started (also on failure or Ctrl-C), prints a pass/fail table and the time per phase, and
exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report
import scenarios
import stack
from api import Airflow, Emulator
from services import Services, ensure_debian_packages, free_port, kill_leftovers, wait_for

STARTUP_TIMEOUT = 420.0


class Interrupted(BaseException):
    """SIGTERM (or SIGINT) arrived: stop everything and report."""


def on_signal(signum: int, frame: FrameType | None) -> None:
    del frame
    raise Interrupted(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    """Run the deployment check; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=Path, default=Path("build/deployment"))
    parser.add_argument(
        "--only", default="", help="comma-separated scenario names to run (default: all)"
    )
    parser.add_argument(
        "--hold", type=float, default=0.0, help="seconds to keep the deployment up at the end"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    build = args.build_dir.resolve()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    table = report.Table()
    stale = kill_leftovers(build)  # an earlier run here that was killed before its stop
    if stale:
        print(f"deploy: killed {len(stale)} processes left by an earlier run: {stale}")
    logs = build / "logs"
    for output in (logs, build / "screenshots"):  # this run's only
        shutil.rmtree(output, ignore_errors=True)
    logs.mkdir(parents=True)
    (build / "report.txt").unlink(missing_ok=True)
    services = Services(log_dir=logs, env=dict(os.environ), build=build)
    try:
        deployment = start_deployment(build, services, table)
        if deployment is not None:
            only = {name for name in args.only.split(",") if name}
            scenarios.run_all(deployment, services, table, only)
            if args.hold:
                print(f"deploy: holding for {args.hold:.0f} s ({deployment.airflow.base_url})")
                time.sleep(args.hold)
    except Interrupted as exc:
        table.add("interrupted", False, f"stopped by {exc}", 0.0)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):  # a second Ctrl-C must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        left = ["(stop failed)"]
        with table.phase("stop everything") as stopped:
            left = services.stop_all()
            stopped.set()
        table.add("nothing left running", not left, ", ".join(left) or "all stopped by PID", 0.0)
        stack.remove_postgres_data(build, outside_only=True)
        table.phases.append(("whole run", time.monotonic() - started))
    return table.print(build)


def start_deployment(
    build: Path,
    services: Services,
    table: report.Table,
    *,
    schedulers: int = 1,
    dag_folders: dict[str, Path] | None = None,
    dag_ids: frozenset[str] = frozenset(scenarios.ALL_DAGS),
    config: dict[str, str] | None = None,
) -> scenarios.Deployment | None:
    """The deployment, started and healthy, its DAGs parsed and unpaused; ``None`` when a
    phase failed (in the table).

    :param schedulers: how many schedulers run (``make test-chaos``: two, Airflow's HA mode).
    :param dag_folders: the DAGs folder's links (:func:`stack.fresh_home`).
    :param dag_ids: the DAGs to wait for and unpause.
    :param config: Airflow settings on top of :func:`stack.airflow_env`'s
        (``SECTION__KEY``: value).
    """
    external_db = os.environ.get("AIHC_DEPLOY_DATABASE_URL", "")
    external_broker = os.environ.get("AIHC_DEPLOY_BROKER_URL", "")
    external = {"postgresql": external_db, "redis-server": external_broker}
    skip = frozenset(name for name, url in external.items() if url)
    steps: list[tuple[str, Callable[[], object]]] = [
        ("debian packages", lambda: ensure_debian_packages(skip)),
    ]
    endpoints = stack.Endpoints(database_url=external_db, broker_url=external_broker)

    def databases() -> None:
        endpoints.database_url = external_db or stack.start_postgres(services, build)
        endpoints.broker_url = external_broker or stack.start_redis(services, build)
        endpoints.emulator_url = stack.start_emulator(services)

    api_port = free_port()
    env: dict[str, str] = {}

    def migrate() -> None:
        env.update(stack.airflow_env(build, endpoints, api_port))
        env.update({f"AIRFLOW__{key}": value for key, value in (config or {}).items()})
        services.env = env
        stack.fresh_home(build, dag_folders)
        stack.migrate(env, build / "logs" / "db_migrate.log")

    def airflow() -> None:
        stack.start_airflow(services, schedulers)
        endpoints.api_url = f"http://127.0.0.1:{api_port}"
        stack.wait_until_healthy(services, endpoints.api_url, STARTUP_TIMEOUT)

    steps += [("postgres, redis, emulator", databases), ("airflow db migrate", migrate)]
    steps += [("airflow components healthy", airflow)]
    for name, step in steps:
        with table.phase(name) as ok:
            step()
            ok.set()
        if not ok.is_set():
            return None
    home = Path(env["AIRFLOW_HOME"])
    deployment = scenarios.Deployment(
        build=build,
        env=env,
        airflow=Airflow(endpoints.api_url, home),
        emulator=Emulator(endpoints.emulator_url),
    )
    with table.phase("DAGs parsed") as ok:
        wait_for(lambda: dag_ids <= deployment.airflow.dag_ids(), 240, "the DAGs", interval=3)
        for dag_id in sorted(dag_ids):
            deployment.airflow.unpause(dag_id)
        ok.set()
    return deployment if ok.is_set() else None


if __name__ == "__main__":
    sys.exit(main())
