"""Run DAGs the ways users do, in one Airflow process, against an in-process emulator.

``python runs_driver.py DAGS_FOLDER CASES RESULTS.jsonl`` runs every case of the set
``CASES`` (``examples``, ``examples_v2`` or ``series``) and appends one JSON line per case
to RESULTS.jsonl. ``examples_v2`` runs each example once on a connection that speaks v2,
and the retraining example twice, onto the online service its ``service`` step creates;
``examples`` runs each example but the v2-only ones twice on v1.

* ``dag.test()`` runs a DAG as Airflow does, with the trigger inline; on Airflow 3 with
  ``logical_date=None``, as a manual, API or asset-triggered run has none.
* A *clear* is Airflow's own ``clear_task_instances`` on the run's task instances (it sets
  ``max_tries = try_number + retries``), after which :func:`drive` schedules and runs
  the run again with the loop ``dag.test()`` uses: real try numbers, real retries.
  ``airflow dags test`` cannot show this: it recreates the run at try 1.

One process per set, because Airflow 3 builds its execution API once per process.  The
waits between attempts (the hook's and the submitter's) are shortened to nothing.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from example_service import V2_ONLY_EXAMPLES, retraining_conf

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

EXAMPLES = (
    "aihc_cleanup",
    "aihc_hyperparameter_sweep",
    "aihc_llama2_seed_job",
    "aihc_scheduled_retraining",
)
#: case id -> (dag id, steps); a step is ``run`` (a new DAG run), ``clear`` (clear the
#: last run and run it again), ``fault:<name>`` (queue the emulator faults of FAULTS) or
#: ``waiting:<action>`` (once the next run's job is being watched, do ACTIONS[action]) or
#: ``service`` (create the retraining example's service; later runs get its id as conf).
SERIES = {
    "clear_succeeded": ("series_train", ["run", "clear"]),
    "clear_lost_answer": ("series_sync", ["run", "fault:lost", "clear"]),
    "bad_priority": ("series_bad_priority", ["run"]),
    "name_taken": ("series_fixed_name", ["run", "run"]),
    "undefined_template": ("series_undefined_template", ["run"]),
    "sensor_no_connection": ("series_sensor_no_connection", ["run"]),
    "sensor_missing_xcom": ("series_sensor_missing_xcom", ["run"]),
    "sensor_missing_job": ("series_sensor_missing_job", ["run"]),
    "sensor_missing_job_deferred": ("series_sensor_missing_job_deferred", ["run"]),
    "deleted_while_waiting": ("series_train", ["waiting:delete", "run"]),
    "unavailable_while_waiting": ("series_train", ["waiting:unavailable", "run"]),
}
#: Steps of an example on v2 other than one ``run``: the retraining example rolls a service
#: that must exist, and runs twice (each run's checkpoints, model version and roll apart).
V2_STEPS = {"aihc_scheduled_retraining": ["service", "run", "run"]}
#: The create lands but its answer is lost, and the lookups after it fail: the try cannot
#: tell, fails, and its retry must find the job of *its* series.
FAULTS = {
    "lost": [
        scenarios.passthrough(operation="ListJobs"),
        scenarios.drop_after(operation="CreateJob"),
        scenarios.error(503, operation="ListJobs", times=3),
    ]
}


def _delete(server: EmulatorServer, job_id: str, pool: str) -> None:
    server.backend.delete_job(pool, job_id)


def _unavailable(server: EmulatorServer, job_id: str, pool: str) -> None:
    """A burst of 503s on every operation, then the job succeeds."""
    server.backend.add_fault(scenarios.error(503, times=6))
    until = time.monotonic() + 60
    while server.backend.faults.pending() and time.monotonic() < until:
        time.sleep(0.01)
    server.backend.set_status(job_id, "Succeeded", hold=True)


#: What a ``waiting:`` step does to the job once its wait has polled it a few times.
ACTIONS = {"delete": _delete, "unavailable": _unavailable}


def while_waiting(server: EmulatorServer, action: str) -> threading.Thread:
    """Hold the next job ``Running`` as soon as it exists; once its wait has read it
    (GetJob or ListJobs) a few more times, do ``ACTIONS[action]``."""

    def watch() -> None:
        until = time.monotonic() + 120
        while not server.backend.jobs() and time.monotonic() < until:
            time.sleep(0.005)
        [job] = server.backend.jobs()
        server.backend.set_status(job["jobId"], "Running", hold=True)
        reads = server.backend.count("GetJob") + server.backend.count("ListJobs")
        while server.backend.count("GetJob") + server.backend.count("ListJobs") < reads + 3:
            time.sleep(0.005)
        ACTIONS[action](server, job["jobId"], job["resourcePoolId"])

    thread = threading.Thread(target=watch, name=f"runs-driver-{action}", daemon=True)
    thread.start()
    return thread


def shorten_waits() -> None:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.operators import _submit

    AIHCHook.sleep = staticmethod(lambda seconds: None)  # type: ignore[assignment]
    _submit.JobSubmitter.__init__.__kwdefaults__["sleep"] = lambda seconds: None
    _submit.LOOKUP_DELAY_SECONDS = 0.0


def load_dags(folder: str) -> Any:
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 2.11
        from airflow.models.dagbag import DagBag

    sys.path.insert(0, folder)
    bag = DagBag(folder)
    if bag.import_errors:
        raise RuntimeError(f"DAG import errors: {bag.import_errors}")
    write_dags_on_airflow_3_0(bag)
    return bag


def write_dags_on_airflow_3_0(bag: Any) -> None:
    """Write the DAGs to the DB as the DAG processor does, on Airflow 3.0 only.

    From 3.1, ``dag.test()`` does it itself; 3.0's does not, so a task's outlet asset is
    never activated and the task fails (``AirflowInactiveAssetInInletOrOutletException``).
    """
    from airflow import __version__

    if not __version__.startswith("3.0."):
        return
    from airflow.dag_processing.bundles.manager import DagBundlesManager

    DagBundlesManager().sync_bundles_to_db()
    bag.sync_to_db("dags-folder", None)


def new_run(dag: Any, conf: dict[str, Any] | None) -> Any:
    """One DAG run with the run conf ``conf`` (params it overrides); on Airflow 3 without
    a logical date."""
    if AIRFLOW_V_3_0_PLUS:
        return dag.test(logical_date=None, run_conf=conf)
    return dag.test(run_conf=conf)


def clear(dag: Any, run: Any) -> None:
    """Clear every task instance of ``run`` the way the UI's Clear does."""
    from airflow import settings
    from airflow.models.taskinstance import clear_task_instances

    session = settings.Session()
    tis = run.get_task_instances(session=session)
    if AIRFLOW_V_3_0_PLUS:
        clear_task_instances(tis, session)
    else:  # the task instance note's user (ab_user) must be mapped for the flush
        import airflow.providers.fab.auth_manager.models  # noqa: F401

        clear_task_instances(tis, session, dag=dag)
    session.commit()


def drive(dag: Any, run: Any) -> Any:
    """Schedule and run ``run`` until it ends, as ``dag.test()``'s loop does."""
    from airflow import settings
    from airflow.utils import timezone
    from airflow.utils.state import DagRunState, TaskInstanceState

    session = settings.Session()
    run = session.merge(run)
    run.dag = scheduler_dag(dag, run, session)
    run.state, run.start_date = DagRunState.RUNNING, timezone.utcnow()
    session.commit()
    while run.state == DagRunState.RUNNING:
        session.expire_all()
        schedulable, _ = run.update_state(session=session)
        for ti in schedulable:
            if ti.state != TaskInstanceState.UP_FOR_RESCHEDULE:
                ti.try_number += 1
            ti.state = TaskInstanceState.SCHEDULED
        session.commit()
        for ti in run.get_task_instances(session=session):
            if ti.state == TaskInstanceState.SCHEDULED:
                try:
                    run_task(dag, ti, session)
                except Exception:  # the try failed: its state says so, as in dag.test()
                    traceback.print_exc()
    return run


def scheduler_dag(dag: Any, run: Any, session: Any) -> Any:
    """The DAG the scheduler works with: the serialized one on Airflow 3."""
    if not AIRFLOW_V_3_0_PLUS:
        return dag
    from airflow.models.dagbag import DBDagBag

    return DBDagBag().get_dag_for_run(dag_run=run, session=session)


def run_task(dag: Any, ti: Any, session: Any) -> None:
    task = dag.task_dict[ti.task_id]
    if AIRFLOW_V_3_0_PLUS:
        from airflow.sdk.definitions.dag import _run_task

        _run_task(ti=ti, task=task, run_triggerer=True)
    else:
        from airflow.models.dag import _run_task

        ti.task = task
        _run_task(ti=ti, inline_trigger=True, session=session)


def describe(run: Any) -> dict[str, Any]:
    from airflow import settings

    session = settings.Session()
    session.expire_all()
    run = session.merge(run)
    return {
        "run_id": run.run_id,
        "state": str(getattr(run.state, "value", run.state)),
        "logical_date": str(run.logical_date) if run.logical_date else None,
        "tis": sorted(
            (
                ti.task_id,
                ti.map_index,
                str(getattr(ti.state, "value", ti.state)),
                ti.try_number,
                ti.max_tries,
            )
            for ti in run.get_task_instances(session=session)
        ),
    }


def run_case(dag: Any, steps: list[str], server: EmulatorServer) -> dict[str, Any]:
    server.backend.reset()
    runs: list[dict[str, Any]] = []
    last, error, conf = None, None, None
    try:
        for step in steps:
            if step == "service":
                conf = retraining_conf()
                continue
            if step.startswith("fault:"):
                server.backend.add_fault(*FAULTS[step.split(":", 1)[1]])
                continue
            if step.startswith("waiting:"):
                while_waiting(server, step.split(":", 1)[1])
                continue
            if step == "run":
                last = new_run(dag, conf)
            else:
                clear(dag, last)
                last = drive(dag, last)
            runs.append(
                {
                    "step": step,
                    **describe(last),
                    "jobs": server.backend.jobs(),
                    "counts": server.backend.counts(),  # so far: each run's are the difference
                    "models": server.backend.models(),
                    "services": server.backend.services(),
                }
            )
    except BaseException as err:  # reported, never hidden
        error = "".join(traceback.format_exception(err))
    answered_503 = sum(server.backend.count(op, 503) for op in server.backend.counts())
    records = server.backend.requests
    return {
        "runs": runs,
        "error": error,
        "counts": server.backend.counts(),
        "answered_503": answered_503,
        # v2 is one path with an ``action`` query; v1 has a path per resource
        "spoke_only_v2": bool(records) and all(r.action and r.path == "/" for r in records),
    }


def main() -> None:
    folder, case_set, results = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    server = EmulatorServer().start()
    v2 = {"api_version": "v2"} if case_set == "examples_v2" else {}
    os.environ["AIRFLOW_CONN_AIHC_DEFAULT"] = server.connection(max_retries=0, **v2).json
    shorten_waits()
    bag = load_dags(folder)
    cases = {
        "examples": {
            dag_id: (dag_id, ["run", "run"])
            for dag_id in EXAMPLES
            if dag_id not in V2_ONLY_EXAMPLES
        },
        "examples_v2": {dag_id: (dag_id, V2_STEPS.get(dag_id, ["run"])) for dag_id in EXAMPLES},
    }.get(case_set, SERIES)
    for case_id, (dag_id, steps) in cases.items():
        started = time.monotonic()
        result = run_case(bag.get_dag(dag_id), steps, server)
        result.update(id=case_id, seconds=round(time.monotonic() - started, 2))
        with results.open("a", encoding="utf-8") as out:
            out.write(json.dumps(result, default=str) + "\n")
        print(f"[runs-driver] {case_id}: {[r['state'] for r in result['runs']]}", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
