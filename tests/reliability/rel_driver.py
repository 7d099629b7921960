"""Run many real DAG runs in one Airflow process, against in-process emulators.

``python rel_driver.py PLAN.json RESULTS.jsonl`` runs every case of the plan with
``dag.test()`` (real task execution: templating, retries, deferral with the trigger run
inline, callbacks, XCom) and appends one JSON line per case to RESULTS.jsonl.  One process
for all cases, because Airflow 3 builds its execution API once per process (~20 s).

Per case: the emulator is reset, the case's faults and scripts are queued, the DAG runs,
and the result records the run's and task instances' states, how every try ended (from
the DAG's callbacks), the emulator's jobs and its request counts.  A case with an
``action`` also gets a watcher thread that, once the job runs, sends this process SIGTERM
(after setting the task instance to ``failed`` for ``markfailed``), which is what Airflow's
supervisor does to a task that is killed or marked failed.

Waits between attempts (``AIHCHook.sleep``/``asleep``, the submitter's pauses) are
shortened to nothing; everything else runs as in production.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import rel_plan  # noqa: E402

from airflow_provider_aihc.emulator import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY  # noqa: E402
from airflow_provider_aihc.emulator.server import EmulatorServer  # noqa: E402
from airflow_provider_aihc.emulator.state.jobs import Progression  # noqa: E402
from airflow_provider_aihc.emulator.steering import scenarios  # noqa: E402

EVENTS_ENV = "AIHC_REL_EVENTS"
#: A case that takes longer than this is abandoned (the whole driver exits).
CASE_LIMIT_SECONDS = 300.0
#: How long the kill watcher waits for the job to run, from the case's start: a hang guard
#: (a task on a loaded machine took 30 s to start, before its wait's KILL_DEADLINE counts).
WATCH_LIMIT_SECONDS = 120.0
#: Reads of a kept job after its wait's kill that show the kill left it running.
KEPT_READS = 3


def connection(server: EmulatorServer, ak: str, sk: str, **extra: Any) -> str:
    return replace(server.connection(**extra), login=ak, password=sk).json


def shorten_waits() -> None:
    """No real sleeping between attempts (the schedules hold hundreds of them)."""
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.operators import _submit

    async def no_asleep(seconds: float) -> None:
        await asyncio.sleep(0)

    AIHCHook.sleep = staticmethod(lambda seconds: None)  # type: ignore[assignment]
    AIHCHook.asleep = staticmethod(no_asleep)  # type: ignore[assignment]
    defaults = _submit.JobSubmitter.__init__.__kwdefaults__
    defaults["sleep"] = lambda seconds: None
    _submit.LOOKUP_DELAY_SECONDS = 0.0


def load_dags() -> Any:
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 2.11
        from airflow.models.dagbag import DagBag

    folder = os.environ["AIRFLOW__CORE__DAGS_FOLDER"]
    sys.path.insert(0, folder)  # what Airflow's CLI does, for the DAGs' own imports
    bag = DagBag(folder)
    if bag.import_errors:
        raise RuntimeError(f"DAG import errors: {bag.import_errors}")
    return bag


def set_ti_failed(dag_id: str) -> None:
    """What "Mark failed" in the UI does to the DAG's running task instance's row."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from airflow.utils.state import TaskInstanceState

    with create_session() as session:
        query = session.query(TaskInstance).filter(
            TaskInstance.dag_id == dag_id, TaskInstance.state == TaskInstanceState.RUNNING
        )
        for ti in query:
            ti.state = TaskInstanceState.FAILED


def watcher(
    server: EmulatorServer, case: dict[str, Any], done: threading.Event, log: list[str]
) -> None:
    """Once the case's job runs (and has been watched a little), kill the task."""
    limit = time.monotonic() + WATCH_LIMIT_SECONDS
    while not done.is_set() and time.monotonic() < limit:
        jobs = server.backend.jobs()
        if jobs and jobs[-1]["status"] == "Running" and server.backend.count("GetJob") >= 3:
            time.sleep(0.3)
            if case["action"] == "markfailed":
                set_ti_failed(case["dag_id"])
                log.append("marked failed")
            os.kill(os.getpid(), signal.SIGTERM)
            log.append(f"SIGTERM at {jobs[-1]['status']}")
            if not case["cancel_on_kill"]:
                end_a_kept_wait(server, jobs[-1]["jobId"], done, log)
            return
        time.sleep(0.02)
    log.append("no kill: the job never ran")


def end_a_kept_wait(
    server: EmulatorServer, job_id: str, done: threading.Event, log: list[str]
) -> None:
    """After the kill of a wait that keeps its job: once the wait has read the job
    ``KEPT_READS`` more times and nothing stopped it, fail the job, which ends the wait.

    On Airflow 3 such a SIGTERM runs ``on_kill`` and the wait goes on (in a deployment
    the supervisor's SIGKILL ends it; ``dag.test`` has none), so only its ``timeout`` ended
    it, 30 s a case. What the case shows is the same: the job was left alone by the kill
    (the log's "kept" line), and the try failed.
    """

    def reads() -> int:
        return server.backend.count("GetJob") + server.backend.count("ListJobs")

    before = reads()
    while not done.is_set() and reads() < before + KEPT_READS:
        time.sleep(0.02)
    if done.is_set():
        return  # the kill ended the wait itself (Airflow 2.11)
    [job] = [job for job in server.backend.jobs() if job["jobId"] == job_id]
    log.append(f"kept: {job['status']} {KEPT_READS} reads after the SIGTERM")
    server.backend.set_status(job_id, "Failed", reason="ended by the driver", hold=True)


def run_case(case: dict[str, Any], bag: Any, servers: dict[str, EmulatorServer], tmp: Path) -> dict:
    server = servers[case.get("server", "main")]
    backend = server.backend
    backend.reset(progression=Progression.per_poll())
    for fault in case.get("faults", []):
        backend.add_fault(scenarios.fault_from_json(fault))
    for script in case.get("scripts", []):
        backend.add_script(scenarios.script_from_json(script))
    events = tmp / f"{case['id']}.events.jsonl"
    events.unlink(missing_ok=True)
    os.environ[EVENTS_ENV] = str(events)
    done = threading.Event()
    actions: list[str] = []
    thread = None
    if case.get("action"):
        thread = threading.Thread(target=watcher, args=(server, case, done, actions), daemon=True)
        thread.start()
    dag = bag.get_dag(case["dag_id"])
    started = time.monotonic()
    run_state, tis, error = None, [], None
    try:
        run = dag.test()
        run_state = str(getattr(run.state, "value", run.state))
        tis = [
            {
                "task_id": ti.task_id,
                "state": str(getattr(ti.state, "value", ti.state)),
                "try_number": ti.try_number,
            }
            for ti in run.get_task_instances()
        ]
    except BaseException as err:  # reported, never hidden
        error = "".join(traceback.format_exception(err))
    finally:
        done.set()
        if thread is not None:
            thread.join(5)
    return {
        "id": case["id"],
        "seconds": round(time.monotonic() - started, 3),
        "run_state": run_state,
        "tis": tis,
        "driver_error": error,
        "actions": actions,
        "tries": [json.loads(line) for line in events.read_text().splitlines()]
        if events.exists()
        else [],
        "jobs": backend.jobs(),
        "counts": backend.counts(),
        "requests": [[r.operation, r.status, r.fault] for r in backend.requests],
    }


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text())
    results = Path(sys.argv[2])
    tmp = results.parent
    main_server = EmulatorServer().start()
    canary = EmulatorServer(
        access_key_id=rel_plan.CANARY_AK, secret_access_key=rel_plan.CANARY_SK
    ).start()
    servers = {"main": main_server, "canary": canary}
    os.environ["AIRFLOW_CONN_AIHC_DEFAULT"] = connection(
        main_server,
        DEFAULT_ACCESS_KEY_ID,
        DEFAULT_SECRET_ACCESS_KEY,
        max_retries=rel_plan.MAX_RETRIES,
        timeout=rel_plan.TIMEOUT,
    )
    os.environ["AIRFLOW_CONN_AIHC_CANARY"] = connection(
        canary,
        rel_plan.CANARY_AK,
        rel_plan.CANARY_SK,
        security_token=rel_plan.CANARY_TOKEN,
        max_retries=rel_plan.MAX_RETRIES,
    )
    os.environ["AIRFLOW_CONN_AIHC_CANARY_WRONG"] = connection(
        canary,
        rel_plan.CANARY_AK,
        rel_plan.CANARY_WRONG_SK,
        security_token=rel_plan.CANARY_TOKEN,
        max_retries=rel_plan.MAX_RETRIES,
    )
    shorten_waits()
    bag = load_dags()
    # A SIGTERM that reaches no task (a bug in a kill case) must not end the driver.
    signal.signal(signal.SIGTERM, lambda signum, frame: print("SIGTERM outside a task"))
    for case in plan["cases"]:
        watchdog = threading.Timer(CASE_LIMIT_SECONDS, lambda: os._exit(3))
        watchdog.daemon = True
        watchdog.start()
        result = run_case(case, bag, servers, tmp)
        watchdog.cancel()
        with results.open("a", encoding="utf-8") as out:
            out.write(json.dumps(result, default=str) + "\n")
        print(f"[rel-driver] {case['id']}: {result['run_state']} in {result['seconds']} s")
    main_server.stop()
    canary.stop()


if __name__ == "__main__":
    main()
