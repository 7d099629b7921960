"""Real DAG runs: ``airflow dags test`` in a subprocess against an in-process emulator.

The emulator (the package's ``aihc_emulator`` fixture) sets ``AIRFLOW_CONN_AIHC_DEFAULT``
in this process's environment, which the subprocess inherits.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from e2e_paths import AIRFLOW, DAGS_DIR

#: A hang guard for one ``airflow dags test`` (an example took over 300 s at a load
#: average of 15 on two cores); below the ``dagrun`` tests' pytest timeout (900 s).
DAG_RUN_TIMEOUT = 600


@dataclass(frozen=True)
class DagRun:
    """What one ``airflow dags test`` printed, and whether the run succeeded."""

    returncode: int
    output: str

    @property
    def succeeded(self) -> bool:
        return self.returncode == 0 and "state=success" in self.output

    def count(self, text: str) -> int:
        return self.output.count(text)


@pytest.fixture(scope="session")
def airflow_db() -> None:
    """Migrate the session's SQLite metadata DB once."""
    subprocess.run(
        [AIRFLOW, "db", "migrate"], check=True, capture_output=True, text=True, timeout=300
    )


RunDag = Callable[..., DagRun]


@pytest.fixture
def run_dag(airflow_db: None) -> RunDag:
    """Run a DAG with ``airflow dags test`` and return its output.

    Call as ``run_dag(dag_id, dags_folder=DAGS_DIR, conf=None, env=None)``.
    """

    def run(
        dag_id: str,
        *,
        dags_folder: Path = DAGS_DIR,
        conf: str | None = None,
        env: dict[str, str] | None = None,
    ) -> DagRun:
        command = [AIRFLOW, "dags", "test", dag_id]
        if conf:
            command += ["--conf", conf]
        environ = {
            **os.environ,
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder),
            "PYTHONFAULTHANDLER": "1",  # a hung run's SIGABRT prints every thread's stack
            **(env or {}),
        }
        with subprocess.Popen(
            command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as process:
            try:
                output, _ = process.communicate(timeout=DAG_RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGABRT)
                try:
                    output, _ = process.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    output, _ = process.communicate()
                pytest.fail(
                    f"airflow dags test {dag_id} hung for {DAG_RUN_TIMEOUT} s; its last output "
                    f"and its threads' stacks:\n{output[-12000:]}",
                    pytrace=False,
                )
        return DagRun(process.returncode, output)

    return run
