"""Security review S4-2 through a real triggerer process's task log (issue #35).

A deferred wait copies its job's log in the triggerer, a process that never rendered the
task, so the job's env secrets were never registered with its masker: only the log
streamer's own masking (``watch/logs.py``, one GetJob for the job's ``envs``) hides them.
``tests/unit/triggers/test_trigger_job_secrets.py`` runs the trigger in the test's process
and ``tests/e2e/test_secrets_masked.py`` inline in ``airflow dags test``; here
``rel_triggerer.py`` runs the DAG ``rel_triggerer_log`` (``dags/triggerer_log.py``) with a
real ``airflow triggerer`` beside it, against an emulator that executes the job's command
(``echo ... $HF_TOKEN``: the token reaches the job only through its ``envs``), in an
``AIRFLOW_HOME`` of its own (a triggerer in the session's home would take the other tests'
deferred tasks).  Then what a user reads is checked: the trigger's task log file
(``<attempt>.log.trigger.<triggerer job id>.log``, on Airflow 2.11 and 3.x alike), the
task's log as the UI's log reader serves it, everything under the log directory, and the
triggerer's own output.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rel_plan import TRIGGERER_JOB_LINE as JOB_LINE
from rel_plan import TRIGGERER_TOKEN as TOKEN
from rel_support import FIGURES

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
#: The helper migrates a DB, starts a triggerer and runs the DAG: 35-75 s on two cores
#: (Airflow 3.3; 3 minutes at a load of 25, most of it the triggerer building its execution
#: API for the trigger's first XCom read), 35-60 s on 2.11.
HELPER_TIMEOUT = 600
MASKED = "***"
#: The job's two lines as the trigger copies them, the token masked.
COPIED = (f"{JOB_LINE} {MASKED}", f"env dump: HF_TOKEN={MASKED}")
TRIGGER_LOG = re.compile(r"attempt=(\d+)\.log\.trigger\.(\d+)\.log$")


@pytest.fixture(scope="module")
def triggerer_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``rel_triggerer.py``'s result, its home and its output."""
    home = tmp_path_factory.mktemp("triggerer-home")
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__DAGS_FOLDER": str(HERE / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        # The checkout's package, in the helper and in the triggerer it starts.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    env.pop("AIRFLOW_CONN_AIHC_DEFAULT", None)  # the helper points it at its own emulator
    result_file = home.parent / f"{home.name}-result.json"
    # A session of its own: a helper that hangs is killed with its triggerer.
    helper = subprocess.Popen(
        [sys.executable, str(HERE / "rel_triggerer.py"), str(result_file)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = helper.communicate(timeout=HELPER_TIMEOUT)
    finally:
        if helper.poll() is None:
            os.killpg(helper.pid, signal.SIGKILL)
            helper.wait()
    assert helper.returncode == 0, output[-6000:]
    result: dict[str, Any] = json.loads(result_file.read_text())
    result.update(home=home, output=output)
    FIGURES["triggerer log: helper run seconds"] += int(result["run_seconds"])
    return result


@pytest.mark.dagrun
def test_a_deferred_waits_job_token_is_masked_in_the_real_triggerers_task_log(
    triggerer_run: dict[str, Any],
) -> None:
    home: Path = triggerer_run["home"]
    output: str = triggerer_run["output"]
    assert triggerer_run["run_state"] == "success", output[-4000:]
    assert triggerer_run["jobs"] == [{"name": "s4-2-triggerer-log", "status": "Succeeded"}]
    assert triggerer_run["triggerer_exit"] == 0
    # The wait went to the real triggerer: no trigger ran inline in the DAG run's process.
    assert "running trigger in line" not in output

    # The trigger's task log: the file the triggerer process wrote for this try.
    [name] = triggerer_run["trigger_log_files"]
    match = TRIGGER_LOG.search(name)
    assert match, name
    assert int(match[1]) == triggerer_run["try_number"], name
    trigger_log = (home / name).read_text()
    for line in COPIED:
        assert line in trigger_log, trigger_log[-4000:]

    # The task's log as the UI's log reader serves it holds the trigger's copy.
    ui_log: str = triggerer_run["ui_log"]
    assert name.rsplit("/", 1)[-1] in ui_log  # the reader read the triggerer's file
    for line in COPIED:
        assert line in ui_log, ui_log[-4000:]

    # The token, nowhere: the log directory, the triggerer's output, the run's output.
    searched = {
        str(path.relative_to(home)): path.read_bytes().decode("latin-1")
        for path in [*(home / "logs").rglob("*"), home / "triggerer.out"]
        if path.is_file()
    }
    searched["the DAG run's output"] = output
    searched["the UI's log"] = ui_log
    leaks = [where for where, text in searched.items() if TOKEN in text]
    FIGURES["triggerer log: places searched"] += len(searched)
    assert not leaks, leaks
