"""Test session setup: an isolated Airflow home before anything imports Airflow."""

from __future__ import annotations

import os
import tempfile
from importlib.metadata import version
from pathlib import Path

_HOME = Path(tempfile.mkdtemp(prefix="aihc-airflow-home-"))
REPO_ROOT = Path(__file__).resolve().parent.parent
_OLDER_3 = ("3.0.", "3.1.", "3.2.")

os.environ["AIRFLOW_HOME"] = str(_HOME)
os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = f"sqlite:///{_HOME / 'airflow.db'}"
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(REPO_ROOT / "dags_examples")
os.environ["AIRFLOW__CORE__UNIT_TEST_MODE"] = "False"
os.environ.setdefault("AIRFLOW__LOGGING__LOGGING_LEVEL", "INFO")
# The test DAGs import helpers beside them (``_compat``, ``_recorder``). Airflow puts the
# DAGs folder on ``sys.path``, except 3.0.6's ``airflow dags test``: its every DAG file
# failed with "No module named '_compat'". Every Airflow this runs starts from here.
# On Airflow 3.0-3.2 each also builds its in-process execution API once, as 3.3 does
# (tests/airflow_site/sitecustomize.py): their ``airflow dags test`` built one per task.
_SITE = [REPO_ROOT / "tests" / "airflow_site"] if version("apache-airflow")[:4] in _OLDER_3 else []
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPO_ROOT / "tests" / "e2e" / "dags"), str(REPO_ROOT / "tests" / "reliability" / "dags")]
    + [str(path) for path in _SITE]
    + [path for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path]
)

import pytest  # noqa: E402  (after the environment above: nothing may import Airflow first)

#: pytest-timeout's bound for a test marked ``dagrun`` (pyproject's ``timeout`` for the
#: rest): a DAG run starts Airflow, migrates a DB and waits on the emulator's jobs, and on a
#: loaded two-core machine that can take minutes.
DAGRUN_TIMEOUT = 900
#: The matrix lane: node-id prefixes (a file, a test, a parametrized case), one a line.
MATRIX_LANE = REPO_ROOT / "tests" / "matrix_lane.txt"


def _matrix_lane() -> tuple[str, ...]:
    lines = (line.split("#")[0].strip() for line in MATRIX_LANE.read_text().splitlines())
    return tuple(line for line in lines if line)


def _whole_lane(config: pytest.Config, lane: tuple[str, ...]) -> bool:
    """Whether this run collected every file of the lane: the whole suite (no paths given,
    or ``tests``), or exactly the lane's files (what ``make test-matrix-*`` passes)."""
    args = {Path(arg.split("::")[0]).resolve() for arg in config.args}
    files = {(REPO_ROOT / entry.split("::")[0]).resolve() for entry in lane}
    return args == {REPO_ROOT / "tests"} or args == files


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the matrix lane's tests ``matrix``; give DAG runs their longer timeout.

    When the lane is what runs (``-m matrix``) and every test was collected, an entry of
    ``tests/matrix_lane.txt`` that selects nothing (a renamed file or test) stops the run:
    a lane that silently shrinks proves nothing on the combinations it is for."""
    lane = _matrix_lane()
    selected = dict.fromkeys(lane, 0)
    for item in items:
        for prefix in lane:
            if item.nodeid.startswith(prefix):
                selected[prefix] += 1
        if item.nodeid.startswith(lane):
            item.add_marker(pytest.mark.matrix)
        if item.get_closest_marker("dagrun") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(DAGRUN_TIMEOUT))
    if config.option.markexpr == "matrix" and _whole_lane(config, lane):
        empty = [prefix for prefix, count in selected.items() if not count]
        if empty:
            raise pytest.UsageError(
                f"{MATRIX_LANE.name}: these entries select no test (renamed or moved?): "
                + ", ".join(empty)
            )


def pytest_configure(config: pytest.Config) -> None:
    """One folder the run's pytest-xdist workers share (they inherit the environment of
    the process that starts them): ``tests/reliability`` leaves its driver's results there,
    ``tests/e2e/test_runs.py`` its drivers'."""
    if not os.environ.get("PYTEST_XDIST_WORKER") and "AIHC_TEST_SHARED_DIR" not in os.environ:
        os.environ["AIHC_TEST_SHARED_DIR"] = tempfile.mkdtemp(prefix="aihc-test-run-")
