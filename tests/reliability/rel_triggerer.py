"""Run one DAG whose deferred wait goes to a real ``airflow triggerer`` process.

``python rel_triggerer.py RESULT.json`` (its environment names an ``AIRFLOW_HOME`` of its
own, its SQLite DB and ``AIRFLOW__CORE__DAGS_FOLDER``; ``test_triggerer_log.py`` makes
them) does what a deployment does to a deferred task, bar the scheduler:

1. migrates the DB, starts an emulator that executes the jobs' commands (``--execute``),
   points ``aihc_default`` at it, and starts ``airflow triggerer`` with that environment;
2. once the triggerer's job heartbeats, runs the DAG with ``dag.test()``.  Airflow 2.11's
   ``dag.test`` runs a trigger inline only when no triggerer is healthy, so the deferral
   goes to the real one; 3.x's always runs it inline, so its private
   ``airflow.sdk.definitions.dag._run_task`` is called with ``run_triggerer=False``: the
   task instance stays ``deferred``, the triggerer runs the trigger and schedules the
   task again, and the loop of ``dag.test`` resumes it, as a scheduler would;
3. reads the task's log the way the UI does (``TaskLogReader.read_log_stream``) and
   writes RESULT.json: the run's and task's states, the trigger log files, that text.

Every process it started (the triggerer, the emulator's jobs) is stopped by it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from rel_driver import load_dags  # noqa: E402

from airflow_provider_aihc.emulator.server import EmulatorServer  # noqa: E402
from airflow_provider_aihc.emulator.state.execute import ExecuteSettings  # noqa: E402

AIRFLOW = str(Path(sys.executable).with_name("airflow"))
DAG_ID = "rel_triggerer_log"
TASK_ID = "train"
#: Not the documented default: an executing emulator refuses that one.
SECRET_ACCESS_KEY = "rel-triggerer-log-sk-3b9d0e7a51c64f28"
#: Seconds the triggerer gets to start and heartbeat (Airflow 3 builds its API first).
TRIGGERER_START_SECONDS = 120.0
#: Seconds the triggerer gets to stop on SIGTERM before it is killed.
TRIGGERER_STOP_SECONDS = 30.0


def start_triggerer(home: Path) -> subprocess.Popen[bytes]:
    """``airflow triggerer``, its output in ``AIRFLOW_HOME/triggerer.out`` (searched too).

    Without its log server (``--skip-serve-logs``): the UI's reader here reads the local
    files, and a fixed port would clash with any other triggerer on the machine."""
    out = (home / "triggerer.out").open("wb")
    return subprocess.Popen(
        [AIRFLOW, "triggerer", "--skip-serve-logs"],
        env=dict(os.environ),
        stdout=out,
        stderr=subprocess.STDOUT,
    )


def wait_for_triggerer(process: subprocess.Popen[bytes]) -> float:
    """Seconds until the triggerer's job is alive (2.11's ``dag.test`` asks the same)."""
    from airflow.jobs.job import most_recent_job

    started = time.monotonic()
    while time.monotonic() < started + TRIGGERER_START_SECONDS:
        if process.poll() is not None:
            raise RuntimeError(f"airflow triggerer exited with {process.returncode}")
        job = most_recent_job("TriggererJob")
        if job is not None and job.is_alive():
            return time.monotonic() - started
        time.sleep(0.5)
    raise RuntimeError("airflow triggerer never heartbeated")


def stop(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM to the triggerer (what a deployment sends), SIGKILL if it hangs."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(TRIGGERER_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait()


def defer_to_the_triggerer() -> None:
    """Airflow 3: ``dag.test`` leaves a deferred task to the triggerer (see above)."""
    try:
        from airflow.sdk.definitions import dag as sdk_dag
    except ImportError:  # Airflow 2.11: dag.test asks whether a triggerer is healthy
        return
    inline = sdk_dag._run_task

    def run_task(*, ti: Any, task: Any, run_triggerer: bool = False) -> Any:
        return inline(ti=ti, task=task, run_triggerer=False)

    sdk_dag._run_task = run_task


def ui_log(dag_run: Any) -> tuple[str, int]:
    """The task's log as the UI reads it, and the task's try number."""
    from airflow.utils.log.log_reader import TaskLogReader
    from airflow.utils.session import create_session

    with create_session() as session:
        ti = dag_run.get_task_instance(TASK_ID, session=session)
        metadata: Any = {}  # the reader's own bookkeeping, as the UI starts it
        text = "".join(TaskLogReader().read_log_stream(ti, ti.try_number, metadata))
        return text, int(ti.try_number)


def main() -> None:
    result_file = Path(sys.argv[1])
    home = Path(os.environ["AIRFLOW_HOME"])
    subprocess.run(
        [AIRFLOW, "db", "migrate"], check=True, capture_output=True, text=True, timeout=300
    )
    settings = ExecuteSettings(grace=1.0, timeout=60.0)
    result: dict[str, Any] = {}
    with EmulatorServer(secret_access_key=SECRET_ACCESS_KEY, execute=settings) as server:
        os.environ["AIRFLOW_CONN_AIHC_DEFAULT"] = server.connection().json
        triggerer = start_triggerer(home)
        try:
            result["triggerer_start_seconds"] = round(wait_for_triggerer(triggerer), 1)
            defer_to_the_triggerer()
            dag = load_dags().get_dag(DAG_ID)
            started = time.monotonic()
            run = dag.test()
            result["run_seconds"] = round(time.monotonic() - started, 1)
            result["run_state"] = str(getattr(run.state, "value", run.state))
            result["ui_log"], result["try_number"] = ui_log(run)
            result["jobs"] = [
                {"name": job["name"], "status": job["status"]} for job in server.backend.jobs()
            ]
        finally:
            result["triggerer_exit"] = stop(triggerer)
    result["trigger_log_files"] = sorted(
        str(path.relative_to(home)) for path in (home / "logs").rglob("*.trigger.*.log")
    )
    result_file.write_text(json.dumps(result))


if __name__ == "__main__":
    main()
