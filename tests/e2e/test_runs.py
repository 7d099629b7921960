"""Every kind of run a user makes, as real DAG runs against the emulator.

``runs_driver.py`` runs them in one Airflow process per set: each example DAG twice in a
row (on Airflow 3 without a logical date, as manual, API and asset-triggered runs are) on
v1 but the v2-only retraining example, every example once on v2 and the retraining twice,
and the test DAGs of ``dags/series.py`` through clears and retries with the try numbers
Airflow itself gives (``clear_task_instances``, then the scheduling loop of ``dag.test``).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from e2e_paths import DAGS_DIR, EXAMPLES_DIR
from example_service import V2_ONLY_EXAMPLES

from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

DRIVER = Path(__file__).with_name("runs_driver.py")
#: A hang guard for one driver (up to eight DAG runs): at a load average of 13-15 on two
#: cores a task took 30 s to start and the examples' driver passed 600 s.
DRIVER_TIMEOUT = 1200
#: The first test of a set waits for its driver (pytest-timeout's bound, tests/conftest.py).
pytestmark = [pytest.mark.dagrun, pytest.mark.timeout(DRIVER_TIMEOUT + 300)]


@dataclass(frozen=True)
class Results:
    """The driver's results by case id, and everything it printed."""

    cases: dict[str, dict[str, Any]]
    output: str

    def runs(self, case_id: str) -> list[dict[str, Any]]:
        case = self.cases.get(case_id)
        assert case, f"no result for {case_id}:\n{self.output[-4000:]}"
        assert case["error"] is None, case["error"]
        return case["runs"]


def _drive(folder: Path, case_set: str, tmp: Path) -> dict[str, Any]:
    """Run the driver for ``case_set``: its exit code, its results by case id, its output."""
    results = tmp / f"{case_set}.jsonl"
    env = {
        **os.environ,
        "AIRFLOW__CORE__DAGS_FOLDER": str(folder),
        "AIHC_EXAMPLE_POLL_SECONDS": "0.2",
    }
    done = subprocess.run(
        [sys.executable, str(DRIVER), str(folder), case_set, str(results)],
        env=env,
        capture_output=True,
        text=True,
        timeout=DRIVER_TIMEOUT,
        check=False,
    )
    cases = {}
    if results.exists():
        for line in results.read_text().splitlines():
            case = json.loads(line)
            cases[case["id"]] = case
    return {"code": done.returncode, "cases": cases, "output": done.stdout + done.stderr}


def _drive_once(folder: Path, case_set: str, factory: pytest.TempPathFactory) -> Results:
    """The driver's run of ``case_set``, once per test run however many workers ask.

    A session fixture runs once per pytest-xdist worker that asks for it: each driver had
    run on both workers (a matrix cell ran its v2 set twice). The first worker to ask runs
    it, under a lock in the run's shared folder (``AIHC_TEST_SHARED_DIR``,
    tests/conftest.py), and leaves what it got there, a failure too; the others wait for
    the lock and read that.
    """
    shared = Path(os.environ["AIHC_TEST_SHARED_DIR"])
    recorded = shared / f"runs-driver-{case_set}.json"
    with (shared / f"runs-driver-{case_set}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not recorded.exists():
            tmp = factory.mktemp(f"runs-{case_set}")
            recorded.write_text(json.dumps(_drive(folder, case_set, tmp)))
    run = json.loads(recorded.read_text())
    assert run["code"] == 0, run["output"][-4000:]
    return Results(run["cases"], run["output"])


@pytest.fixture(scope="session")
def example_runs(airflow_db: None, tmp_path_factory: pytest.TempPathFactory) -> Results:
    return _drive_once(EXAMPLES_DIR, "examples", tmp_path_factory)


@pytest.fixture(scope="session")
def example_runs_v2(airflow_db: None, tmp_path_factory: pytest.TempPathFactory) -> Results:
    return _drive_once(EXAMPLES_DIR, "examples_v2", tmp_path_factory)


@pytest.fixture(scope="session")
def series_runs(airflow_db: None, tmp_path_factory: pytest.TempPathFactory) -> Results:
    return _drive_once(DAGS_DIR, "series", tmp_path_factory)


def _train(run: dict[str, Any], task_id: str = "train") -> tuple[str, int, int]:
    """``(state, try_number, max_tries)`` of the run's task instance ``task_id``."""
    [(state, try_number, max_tries)] = [t[2:] for t in run["tis"] if t[0] == task_id]
    return state, try_number, max_tries


#: Jobs one run of each example creates.
EXAMPLE_JOBS = {
    "aihc_cleanup": 1,
    "aihc_hyperparameter_sweep": 3,
    "aihc_llama2_seed_job": 1,
    "aihc_scheduled_retraining": 1,
}
#: Runs of each example on v2 (runs_driver.V2_STEPS): the v2-only ones run twice there.
V2_RUNS = {"aihc_scheduled_retraining": 2}


@pytest.mark.parametrize("dag_id", sorted(set(EXAMPLE_JOBS) - set(V2_ONLY_EXAMPLES)))
def test_every_example_succeeds_twice_in_a_row_without_a_logical_date(
    example_runs: Results, dag_id: str
) -> None:
    """Regression: without ``ds`` the retraining and seed examples failed
    rendering their names, and a second run the same day asked for the name in use."""
    first, second = example_runs.runs(dag_id)

    assert [first["state"], second["state"]] == ["success", "success"]
    assert first["run_id"] != second["run_id"]
    if AIRFLOW_V_3_0_PLUS:
        assert first["logical_date"] is None
        assert second["logical_date"] is None
    assert example_runs.cases[dag_id]["counts"]["CreateJob"] == 2 * EXAMPLE_JOBS[dag_id]
    names = [job["name"] for job in second["jobs"]]  # the cleanup example deletes its job
    assert (
        len(names)
        == len(set(names))
        == (0 if dag_id == "aihc_cleanup" else 2 * EXAMPLE_JOBS[dag_id])
    )


@pytest.mark.parametrize("dag_id", sorted(EXAMPLE_JOBS))
def test_every_example_succeeds_on_a_v2_connection_speaking_only_v2(
    example_runs_v2: Results, dag_id: str
) -> None:
    """The examples, unchanged, on ``api_version: v2``: every request is a v2 action."""
    runs = example_runs_v2.runs(dag_id)
    jobs = V2_RUNS.get(dag_id, 1) * EXAMPLE_JOBS[dag_id]

    assert [run["state"] for run in runs] == ["success"] * V2_RUNS.get(dag_id, 1)
    run = runs[-1]
    case = example_runs_v2.cases[dag_id]
    assert case["spoke_only_v2"], case["counts"]
    assert case["counts"]["CreateJob"] == jobs
    if dag_id == "aihc_cleanup":
        assert run["jobs"] == []
        assert case["counts"]["DeleteJob"] == 1
    else:
        assert len(run["jobs"]) == jobs
        assert {job["status"] for job in run["jobs"]} == {"Succeeded"}
        assert all(job["jobId"].startswith("job-") for job in run["jobs"])


def test_the_retraining_example_keeps_each_run_apart_without_ds(example_runs_v2: Results) -> None:
    """Without ``ds`` each run of the data-aware retraining still writes its own checkpoints
    and registers its own model version (both paths come from the run id), reads the
    training-data asset's path, and rolls the service once, onto its own version."""
    first, second = example_runs_v2.runs("aihc_scheduled_retraining")
    outputs = []
    for job in second["jobs"]:  # the emulator's jobs after both runs: one each
        command = job["body"]["command"]  # v2: the command is the body's, not jobSpec's
        outputs.append(command.split("--output ")[1].split()[0])
        sources = [source.get("sourcePath") for source in job["body"]["datasources"]]
        assert "/datasets/clicks" in sources
    assert len(outputs) == 2
    assert outputs[0] != outputs[1]
    assert all(output.startswith("/mnt/checkpoints/") for output in outputs)
    # the example's RUN: the run id without ':' and '+'
    parts = [run["run_id"].replace(":", "-").replace("+", "-") for run in (first, second)]
    assert sorted(outputs) == sorted(f"/mnt/checkpoints/{part}" for part in parts)
    [model] = second["models"]
    assert sorted(version["storagePath"] for version in model["versions"]) == sorted(
        f"/clicks-ranker/{part}" for part in parts
    )
    # one roll per run (ModifyService so far), each onto its own run's version
    assert [run["counts"].get("ModifyService") for run in (first, second)] == [1, 2]
    for run, part in zip((first, second), parts, strict=True):
        [service] = run["services"]
        envs = service["conf"]["containers"][0]["envs"]
        assert envs["AIHC_MODEL_PATH"] == f"bos://clicks-models/clicks-ranker/{part}"


def test_a_task_without_a_job_logs_no_missing_link_xcom(
    example_runs: Results, series_runs: Results
) -> None:
    """Regression: ``ERROR XCom not found key=_link_AIHCJobLink``."""
    assert series_runs.runs("bad_priority")[0]["state"] == "failed"
    for output in (example_runs.output, series_runs.output):
        assert "_link_AIHCJobLink" not in output


def test_clearing_a_succeeded_task_trains_again(series_runs: Results) -> None:
    """Regression: the cleared task adopted the job that had succeeded."""
    first, cleared = series_runs.runs("clear_succeeded")

    assert _train(first) == ("success", 1, 2)
    assert _train(cleared) == ("success", 2, 3)  # max_tries = try_number + retries
    old, new = cleared["jobs"]
    assert new["name"] == f"{old['name']}-s2"
    assert (old["status"], new["status"]) == ("Succeeded", "Succeeded")
    assert new["labels"]["airflow-try-number"] == "2"
    assert series_runs.cases["clear_succeeded"]["counts"]["CreateJob"] == 2


def test_after_a_clear_a_retry_adopts_the_job_of_its_own_series(series_runs: Results) -> None:
    """Try 2 (the clear's) creates a job but loses the answer and cannot find it; try 3
    finds that job, not the older series' job, and creates nothing."""
    _first, cleared = series_runs.runs("clear_lost_answer")

    assert _train(cleared) == ("success", 3, 3)
    old, new = cleared["jobs"]
    assert new["name"] == f"{old['name']}-s2"
    assert series_runs.cases["clear_lost_answer"]["counts"]["CreateJob"] == 2
    assert "Adopting AIHC job" in series_runs.output


def test_bad_input_fails_at_the_first_try(series_runs: Results) -> None:
    """Regression: a bad priority failed validation retries + 1 times."""
    [run] = series_runs.runs("bad_priority")
    assert _train(run) == ("failed", 1, 2)
    assert series_runs.cases["bad_priority"]["counts"] == {}


def test_a_name_another_run_holds_fails_at_the_first_try(series_runs: Results) -> None:
    """Regression: the 409 was retried, 10 minutes for nothing."""
    first, second = series_runs.runs("name_taken")
    assert _train(first)[0] == "success"
    assert _train(second) == ("failed", 1, 2)
    assert "fixed-name" in series_runs.output
    assert "another task instance" in series_runs.output


def test_an_undefined_template_variable_fails_at_render_naming_the_field(
    series_runs: Results,
) -> None:
    """Regression: ``{{ ds_nodash }}`` without a logical date failed with
    jinja's UndefinedError after two retries."""
    [run] = series_runs.runs("undefined_template")
    assert _train(run) == ("failed", 1, 2)
    # Airflow 3 runs without a logical date have no ds_nodash (the issue's own case)
    missing = "ds_nodash" if AIRFLOW_V_3_0_PLUS else "no_such_value"
    assert f"name: template does not render: '{missing}' is undefined" in series_runs.output
    assert series_runs.cases["undefined_template"]["counts"] == {}


@pytest.mark.parametrize(
    ("case_id", "says"),
    [
        ("sensor_no_connection", "aihc_conn_id: connection 'aihc_nowhere' is not defined"),
        ("sensor_missing_xcom", "job_id: is 'None': the XCom it pulls is missing"),
    ],
)
def test_a_sensor_with_input_no_retry_fixes_fails_at_the_first_try(
    series_runs: Results, case_id: str, says: str
) -> None:
    """Regression: the sensor retried a missing connection (Airflow's own
    AirflowNotFoundException) and a job id pulled from a missing XCom (a 404 each poke)."""
    [run] = series_runs.runs(case_id)
    assert _train(run, "wait") == ("failed", 1, 2)
    assert says in series_runs.output
    assert series_runs.cases[case_id]["counts"] == {}


@pytest.mark.parametrize("case_id", ["sensor_missing_job", "sensor_missing_job_deferred"])
def test_a_sensor_on_a_job_that_does_not_exist_fails_at_the_first_try(
    series_runs: Results, case_id: str
) -> None:
    """Regression: a 404 for a well-formed job id became an error every try retried."""
    [run] = series_runs.runs(case_id)
    assert _train(run, "wait") == ("failed", 1, 2)
    assert "Could not watch AIHC job pytorchjob-nosuchjob" in series_runs.output
    assert "JobNotFound, HTTP 404, requestId" in series_runs.output


def test_a_job_deleted_while_the_deferred_create_waits_fails_at_the_first_try(
    series_runs: Results,
) -> None:
    """Regression: the trigger's ``error`` event for a deleted job was retried (and the
    retry created a new job)."""
    [run] = series_runs.runs("deleted_while_waiting")
    assert _train(run) == ("failed", 1, 2)
    assert series_runs.cases["deleted_while_waiting"]["counts"]["CreateJob"] == 1
    assert "not retried: a retry would be refused alike" in series_runs.output


def test_a_503_burst_while_the_deferred_create_waits_is_waited_through(
    series_runs: Results,
) -> None:
    """5xx answers during the wait keep today's behaviour: the wait polls on."""
    [run] = series_runs.runs("unavailable_while_waiting")
    assert _train(run) == ("success", 1, 2)
    case = series_runs.cases["unavailable_while_waiting"]
    assert case["counts"]["CreateJob"] == 1
    assert case["answered_503"] == 6
