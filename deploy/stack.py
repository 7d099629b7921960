"""What the deployment runs: PostgreSQL, Redis, the AIHC emulator, and Airflow's components.

``AIHC_DEPLOY_DATABASE_URL`` (a SQLAlchemy URL, e.g.
``postgresql+psycopg2://user:pw@db:5432/airflow``) and ``AIHC_DEPLOY_BROKER_URL`` (e.g.
``redis://cache:6379/0``) point the run at an existing PostgreSQL / Redis instead of
starting its own.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import requests
from services import Fatal, Services, free_port, wait_for

from airflow_provider_aihc.emulator.http.control import TOKEN_ENV

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
#: The emulator's pace: a job is Created, Scheduled, Running for 8 s, then Succeeded.
EMULATOR_ARGS = ["--seconds-per-status", "1", "--running-seconds", "8"]
INITDB_ARGS = ["--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"]
AS_POSTGRES = ["runuser", "-u", "postgres", "--"]
#: A data directory outside the build folder (see ``postgres_data_dir``).
PG_TEMP_PREFIX = "aihc-deploy-pgdata-"
WORKERS = ("worker_a", "worker_b")
#: Each triggerer and the host name it reports (``deploy_hostname``): two names of the loopback.
TRIGGERERS = {"triggerer_a": "localhost", "triggerer_b": "127.0.0.1"}
#: Airflow's log servers bind every interface (``host=""``, not configurable), and nothing
#: here may listen beyond the loopback: the API server reads the shared log folder instead.
#: Each worker and triggerer still gets its own log-server port, as two on one host need.
NO_LOG_SERVER = ["--skip-serve-logs"]
#: ``[triggerer] triggerer_health_check_threshold`` (Airflow's default, stated): a triggerer
#: silent this long is dead, and another takes its triggers over.
TAKEOVER_SECONDS = 30
#: The poll interval of scenario 2's DAG (``deploy_takeover``): a trigger that takes over
#: resumes the job's log ``TAKEOVER_SECONDS`` plus two polls before it started, so a short
#: poll keeps the window of lines that may be shown twice small.
TAKEOVER_POLL_SECONDS = 1


@dataclass
class Endpoints:
    """Where the deployment's services listen."""

    database_url: str
    broker_url: str
    emulator_url: str = ""
    api_url: str = ""


def start_postgres(services: Services, build: Path) -> str:
    """initdb (as ``postgres``) in :func:`postgres_data_dir`, run it on the loopback; its URL.

    :raises RuntimeError: with initdb's or createdb's error output when one fails.
    """
    pg_bin = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]
    data = postgres_data_dir(build)
    _run([*AS_POSTGRES, str(pg_bin / "initdb"), "-D", str(data), "-U", "airflow", *INITDB_ARGS])
    port = free_port()
    settings = ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="]
    service = services.start(
        "postgres",
        [*AS_POSTGRES, str(pg_bin / "postgres"), "-D", str(data), "-p", str(port), *settings],
    )
    ready = [str(pg_bin / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)]
    wait_for(lambda: service.alive() and subprocess.run(ready).returncode == 0, 60, "postgres")
    _run([str(pg_bin / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "airflow", "airflow"])
    return f"postgresql+psycopg2://airflow@127.0.0.1:{port}/airflow"


def postgres_data_dir(build: Path) -> Path:
    """A new, empty data directory owned by ``postgres``: ``<build>/pgdata``.

    When the ``postgres`` user cannot reach the build folder (a parent it may not search:
    a clone under ``mktemp -d``, as CI makes, or under ``/root``), the data goes to a new
    temporary directory that ``<build>/pgdata`` links to (removed by
    :func:`remove_postgres_data`); no permission outside the build folder is changed.
    """
    remove_postgres_data(build)
    link = build / "pgdata"
    if subprocess.run([*AS_POSTGRES, "test", "-x", str(build)]).returncode == 0:
        link.mkdir(parents=True)
        data = link
    else:
        data = Path(tempfile.mkdtemp(prefix=PG_TEMP_PREFIX))
        link.symlink_to(data, target_is_directory=True)
    shutil.chown(data, "postgres", "postgres")
    return data


def remove_postgres_data(build: Path, *, outside_only: bool = False) -> None:
    """Remove ``<build>/pgdata`` and the temporary directory it may link to.

    :param outside_only: keep a data directory inside the build folder (to look at).
    """
    link = build / "pgdata"
    if link.is_symlink():
        target = link.readlink()
        if target.name.startswith(PG_TEMP_PREFIX):
            shutil.rmtree(target, ignore_errors=True)
        link.unlink()
    elif link.exists() and not outside_only:
        shutil.rmtree(link)


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:5])} failed: {(done.stderr or done.stdout)[-1500:]}")


def start_redis(services: Services, build: Path) -> str:
    """Redis on the loopback, no persistence; its URL."""
    port = free_port()
    directory = build / "redis"
    directory.mkdir(exist_ok=True)
    argv = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    argv += ["--appendonly", "no", "--dir", str(directory), "--daemonize", "no"]
    service = services.start("redis", argv)
    wait_for(lambda: service.alive() and "Ready to accept" in service.log_tail(4000), 30, "redis")
    return f"redis://127.0.0.1:{port}/0"


def start_emulator(services: Services) -> str:
    """The AIHC emulator, standalone, as a user runs it; its URL."""
    port = free_port()
    argv = [sys.executable, "-m", "airflow_provider_aihc.emulator", "--port", str(port)]
    # Its control token, which deploy/api.py's control calls read from this environment.
    token = os.environ.setdefault(TOKEN_ENV, secrets.token_urlsafe(24))
    service = services.start("emulator", [*argv, *EMULATOR_ARGS], {TOKEN_ENV: token})
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: requests.get(f"{url}/_emulator/state", timeout=5).ok, 30, "emulator")
    del service
    return url


def airflow_env(build: Path, endpoints: Endpoints, api_port: int) -> dict[str, str]:
    """The environment every Airflow process shares (config through ``AIRFLOW__*``)."""
    from airflow_provider_aihc.emulator.connection import connection_to

    api = f"http://127.0.0.1:{api_port}"
    database = endpoints.database_url
    connection = connection_to(endpoints.emulator_url)
    config = {
        "CORE__EXECUTOR": "CeleryExecutor",
        "CORE__DAGS_FOLDER": str(build / "dags"),
        "CORE__LOAD_EXAMPLES": "False",
        "CORE__FERNET_KEY": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "CORE__EXECUTION_API_SERVER_URL": f"{api}/execution/",
        "CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
        "DATABASE__SQL_ALCHEMY_CONN": database,
        "CELERY__BROKER_URL": endpoints.broker_url,
        "CELERY__RESULT_BACKEND": "db+" + database,
        "CELERY__WORKER_CONCURRENCY": "4",
        "API__BASE_URL": api,
        "API__PORT": str(api_port),
        "API__HOST": "127.0.0.1",
        "API__WORKERS": "1",
        "API__SECRET_KEY": secrets.token_urlsafe(32),
        "API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
        # A dead worker's task is found after 30 s, not 5 minutes, to fit the budget.
        "SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "30",
        "SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "5",
        "DAG_PROCESSOR__REFRESH_INTERVAL": "15",
        "DAG_PROCESSOR__PARSING_PROCESSES": "1",
        "TRIGGERER__TRIGGERER_HEALTH_CHECK_THRESHOLD": str(TAKEOVER_SECONDS),
        # The jobs' airflow-deployment label: what the orphan sweep recognises as its own.
        "AIHC__DEPLOYMENT_ID": DEPLOYMENT_ID,
    }
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")},
        "AIRFLOW_HOME": str(build / "airflow-home"),
        **{f"AIRFLOW__{key}": value for key, value in config.items()},
        "AIRFLOW_CONN_AIHC_DEFAULT": connection.json,
        "AIHC_EXAMPLE_POLL_SECONDS": "2",
        "AIHC_DEPLOY_TAKEOVER_POLL_SECONDS": str(TAKEOVER_POLL_SECONDS),
        # The orphan sweep's interval (dags_examples/aihc_orphan_sweep.py); chaos sets its own.
        "AIHC_ORPHAN_SWEEP_MINUTES": os.environ.get(
            "AIHC_ORPHAN_SWEEP_MINUTES", str(SWEEP_SECONDS / 60)
        ),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }


#: The orphan sweep's interval in ``make test-deployment`` (scenario 7's bound is two).
SWEEP_SECONDS = 20.0
#: This deployment's ``[aihc] deployment_id``.
DEPLOYMENT_ID = "aihc-deploy-check"

#: The DAG folders ``make test-deployment`` runs: name in the DAGs folder → folder.
SCENARIO_DAG_FOLDERS = {"examples": ROOT / "dags_examples", "scenarios": ROOT / "deploy" / "dags"}


def fresh_home(build: Path, dag_folders: dict[str, Path] | None = None) -> None:
    """An empty ``AIRFLOW_HOME`` whose DAGs folder links ``dag_folders`` (default: the
    examples and the scenarios' DAGs)."""
    home = build / "airflow-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    dags = build / "dags"
    if dags.exists():
        shutil.rmtree(dags)
    dags.mkdir()
    for name, folder in (dag_folders or SCENARIO_DAG_FOLDERS).items():
        (dags / name).symlink_to(folder, target_is_directory=True)


def migrate(env: dict[str, str], log: Path) -> None:
    """``airflow db migrate``, its output in ``log``.

    :raises RuntimeError: with the end of the output when it fails.
    """
    with log.open("wb") as out:
        done = subprocess.run(
            [str(BIN / "airflow"), "db", "migrate"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    if done.returncode != 0:
        raise RuntimeError(f"airflow db migrate failed, see {log}")


def start_airflow(services: Services, schedulers: int = 1) -> None:
    """The API server, the scheduler(s), DAG processor, two Celery workers and two triggerers.

    :param schedulers: how many schedulers (more than one: Airflow's HA mode on PostgreSQL,
        named ``scheduler_a``, ``scheduler_b``, …).
    """
    airflow = str(BIN / "airflow")
    services.start("api_server", [airflow, "api-server"])
    for name in scheduler_names(schedulers):
        services.start(name, [airflow, "scheduler"])
    services.start("dag_processor", [airflow, "dag-processor"])
    for name in WORKERS:
        argv = [airflow, "celery", "worker", "--celery-hostname", f"{name}@%h", *NO_LOG_SERVER]
        port = {"AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port())}
        services.start(name, argv, port)
    for name, hostname in TRIGGERERS.items():
        env = {
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__CORE__HOSTNAME_CALLABLE": "deploy_hostname.of_this_process",
            "AIHC_DEPLOY_HOSTNAME": hostname,
            "PYTHONPATH": str(ROOT / "deploy"),
        }
        services.start(name, [airflow, "triggerer", *NO_LOG_SERVER], env)


def scheduler_names(schedulers: int) -> list[str]:
    """The services' names of ``schedulers`` schedulers (one: ``scheduler``)."""
    if schedulers == 1:
        return ["scheduler"]
    return [f"scheduler_{chr(ord('a') + n)}" for n in range(schedulers)]


def wait_until_healthy(services: Services, api_url: str, timeout: float) -> None:
    """Every component up: the API's health check, both workers ready, every process alive.

    :raises Fatal: naming a component that died, with the end of its log.
    """

    def healthy() -> bool:
        dead = [s for s in services.started if not s.alive()]
        if dead:
            raise Fatal(f"{dead[0].name} exited:\n{dead[0].log_tail()}")
        health = requests.get(f"{api_url}/api/v2/monitor/health", timeout=10).json()
        parts = ("metadatabase", "scheduler", "triggerer", "dag_processor")
        workers_ready = all(
            re.search(r"@\S+ ready\.", services.get(name).log_tail(100_000)) for name in WORKERS
        )
        return workers_ready and all(health[p]["status"] == "healthy" for p in parts)

    wait_for(healthy, timeout, "the Airflow deployment", interval=3)
