"""A deferred wait under ``airflow dags test`` / ``dag.test()`` reads a connection stored in
the metadata DB (``airflow connections add``, the UI), as the task before it does.

Found walking the quick start: on Airflow 3.3.2, ``dag.test()`` runs a trigger in line with
an in-process supervisor whose comms have no ``asend``, so Airflow's async connection
lookup finds nothing in the DB and the ``wait`` task failed with "The conn_id
`aihc_default` isn't defined" while ``train`` had used that very connection.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_provider_aihc.emulator.dag_test import migrate_db_once, run_dag
from airflow_provider_aihc.emulator.server import EmulatorServer

pytestmark = pytest.mark.dagrun

CONN_ID = "aihc_stored_in_db"

DAG = f"""
from datetime import datetime

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG

with DAG("db_connection", schedule=None, start_date=datetime(2025, 1, 1),
         default_args={{"retries": 0}}):
    train = AIHCCreateJobOperator(
        task_id="train", aihc_conn_id="{CONN_ID}", image="registry.baidubce.com/aihc/pytorch:2.1",
        command="python train.py",
    )
    AIHCJobSensor(
        task_id="wait", aihc_conn_id="{CONN_ID}", job_id=train.output, deferrable=True,
        poke_interval=0.1,
    )
"""


@pytest.fixture
def stored_connection(aihc_emulator: EmulatorServer) -> Iterator[str]:
    """The emulator's connection as a row of the metadata DB only (no environment variable)."""
    from airflow.models import Connection
    from airflow.utils.session import create_session

    migrate_db_once()
    with create_session() as session:
        session.query(Connection).filter(Connection.conn_id == CONN_ID).delete()
        session.add(Connection(conn_id=CONN_ID, uri=aihc_emulator.connection().uri))
    try:
        yield CONN_ID
    finally:
        with create_session() as session:
            session.query(Connection).filter(Connection.conn_id == CONN_ID).delete()


def test_a_deferred_wait_reads_a_connection_stored_in_the_metadata_db(
    aihc_emulator: EmulatorServer, stored_connection: str, tmp_path: Path
) -> None:
    (tmp_path / "db_connection.py").write_text(textwrap.dedent(DAG))

    run = run_dag(tmp_path, "db_connection")

    assert run.task_states == {"train": "success", "wait": "success"}, run.task_states
    assert run.state == "success"
    assert aihc_emulator.backend.count("CreateJob") == 1
