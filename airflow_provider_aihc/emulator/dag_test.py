"""Run a DAG of yours against the emulator, in your own tests (docs/testing.md).

::

    from airflow_provider_aihc.emulator.dag_test import run_dag

    def test_nightly_retraining(aihc_emulator):
        run = run_dag("dags/", "nightly_ranker_finetune", conf={"lr": 0.001})
        assert run.state == "success"
        assert run.xcom("finetune", "metrics")["val_loss"] < 9
        assert aihc_emulator.backend.count("CreateJob") == 1

The same code on Airflow 2.11 and 3.x: the DAG folder is loaded as the DAG processor loads
it (an import error fails the test, naming the file), and the DAG is run in this process
with Airflow's own ``dag.test()`` (deferrable tasks' triggers run inline), against the
connection the ``aihc_emulator`` fixture points ``aihc_default`` at.  It needs Airflow's
metadata database: :func:`run_dag` migrates it once per process (``airflow db migrate``,
the SQLite file of ``AIRFLOW_HOME``), as ``airflow dags test`` needs it too.

Set ``retries=0`` on the tasks of a failure test (``default_args``): a task that retries
after a scripted job failure creates a fresh job, which succeeds, after ``retry_delay``.

Imports Airflow only: nothing of the provider's client.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

__all__ = ["DagTestRun", "load_dag", "run_dag"]

_MIGRATED: list[bool] = []


@dataclass
class DagTestRun:
    """One finished run of :func:`run_dag`.

    :param dag_run: Airflow's ``DagRun`` (its ``run_id``, ``conf``, ...).
    :param state: ``success`` or ``failed``.
    :param task_states: each task's end state (mapped tasks: of their last index).
    """

    dag_run: Any
    state: str
    task_states: dict[str, str | None] = field(default_factory=dict)

    def xcom(self, task_id: str, key: str = "return_value", map_index: int = -1) -> Any:
        """The XCom ``key`` a task of this run pushed (``None`` when it pushed none).

        The operator pushes ``return_value`` (the job id), ``job_id``, ``job_name``,
        ``resource_pool_id``, ``job_queue``, and when it waits ``result``, ``metrics``
        and ``job_summary``.
        """
        run = self.dag_run
        try:  # Airflow 3
            from airflow.models.xcom import XComModel

            query = XComModel.get_many(
                run_id=run.run_id, key=key, dag_ids=run.dag_id, task_ids=task_id,
                map_indexes=map_index,
            )  # fmt: skip
            from airflow.utils.session import create_session

            with create_session() as session:
                row = session.scalars(query).first()
                return None if row is None else XComModel.deserialize_value(row)
        except ImportError:  # Airflow 2.11
            from airflow.models.xcom import XCom

            return XCom.get_one(
                run_id=run.run_id, key=key, dag_id=run.dag_id, task_id=task_id,
                map_index=map_index,
            )  # fmt: skip


def migrate_db_once() -> None:
    """``airflow db migrate`` in a subprocess, once per process (idempotent, ~10-30 s)."""
    if _MIGRATED:
        return
    subprocess.run(
        [sys.executable, "-m", "airflow", "db", "migrate"],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    _MIGRATED.append(True)


def load_dag(dag_folder: str | Path, dag_id: str) -> Any:
    """The DAG ``dag_id`` of ``dag_folder``, loaded as the DAG processor loads it.

    :raises RuntimeError: a file of the folder does not import (its error), or no such DAG.
    """
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 2.11 and 3.0
        from airflow.models.dagbag import DagBag  # type: ignore[no-redef]
    folder = str(dag_folder)
    if folder not in sys.path:  # the folder's own modules, as the DAG processor has them
        sys.path.insert(0, folder)
    bag = DagBag(folder)
    if bag.import_errors:
        errors = "\n".join(f"{path}: {error}" for path, error in bag.import_errors.items())
        raise RuntimeError(f"DAG files that do not import:\n{errors}")
    dag = bag.get_dag(dag_id)
    if dag is None:
        raise RuntimeError(f"no DAG {dag_id!r} in {folder}; found {sorted(bag.dag_ids)}")
    _write_dags_on_airflow_3_0(bag)
    return dag


def _write_dags_on_airflow_3_0(bag: Any) -> None:
    """Write the DAGs to the DB as the DAG processor does, on Airflow 3.0 only (from 3.1,
    ``dag.test()`` does it; 3.0's does not, and an outlet asset is then never active)."""
    from airflow import __version__

    if not __version__.startswith("3.0."):
        return
    from airflow.dag_processing.bundles.manager import DagBundlesManager

    DagBundlesManager().sync_bundles_to_db()  # type: ignore[no-untyped-call]
    bag.sync_to_db("dags-folder", None)


def run_dag(
    dag_folder: str | Path, dag_id: str, *, conf: Mapping[str, Any] | None = None
) -> DagTestRun:
    """Run the DAG ``dag_id`` of ``dag_folder`` once, to its end, in this process.

    :param conf: the run's ``conf`` (validated against the DAG's ``params``).
    :returns: the run; it does not raise when a task fails: assert its :attr:`state`.
    """
    from airflow import __version__

    migrate_db_once()
    from airflow import settings

    # Airflow 3 runs a DAG of a configured bundle: the folder is the dags folder meanwhile
    # (the default bundle's path is settings.DAGS_FOLDER).
    folder = str(Path(dag_folder).resolve())
    with (
        mock.patch.dict(os.environ, {"AIRFLOW__CORE__DAGS_FOLDER": folder}),
        mock.patch.object(settings, "DAGS_FOLDER", folder),
    ):
        dag = load_dag(dag_folder, dag_id)
        if int(__version__.split(".")[0]) >= 3:
            run = dag.test(run_conf=dict(conf or {}), logical_date=None)
        else:
            run = dag.test(run_conf=dict(conf or {}))
    states = {ti.task_id: _text(ti.state) for ti in run.get_task_instances()}
    return DagTestRun(run, _text(run.state) or "", states)


def _text(state: Any) -> str | None:
    """A state's value (``success``), whether an enum member or a string."""
    return None if state is None else str(getattr(state, "value", state))
