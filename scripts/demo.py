"""``make demo``: the TaskFlow retraining DAG, run by a real Airflow against a local AIHC
that really runs the training.

Starts the emulator with ``--execute`` (each replica of a job is a local process; a secret
made for this run, never the documented default, handed over in its environment, never on
its command line, which every user of the machine can read) on a free port, points ``aihc_default``
at it through an environment variable, runs ``airflow dags test aihc_taskflow_retraining``
in an Airflow home inside the project, stops the emulator, and prints what happened,
checked against the emulator's own record: the DAG succeeded; one job, two replicas,
``Succeeded``; its loss fell line by line in the task log; every line the job wrote was
streamed; the return value and the metrics reached ``evaluate`` through XCom; the job
summary came after the job's last line.  Exits non-zero on any failure.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / ".airflow"
DAG_ID = "aihc_taskflow_retraining"
LOGICAL_DATE = "2025-06-02"
LOSS = re.compile(r"\d{3}Z epoch +\d+ loss=([0-9.]+)")
TRAINED = re.compile(r"Trained model: (\{.*?\}); metrics read from the job's log: (\{.*?\})")
BIN = Path(sys.executable).parent


def main() -> int:
    started = time.monotonic()
    env = _airflow_env()
    _migrate_once(env)
    secret = secrets.token_urlsafe(24)
    emulator = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "airflow_provider_aihc.emulator",
            "--port",
            "0",
            "--execute",
            "--execute-timeout",
            "120",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "AIHC_EMULATOR_SECRET_ACCESS_KEY": secret},
    )
    try:
        url = _emulator_url(emulator)
        print(f"demo: AIHC emulator at {url}", flush=True)
        from airflow_provider_aihc.emulator.connection import connection_to

        env["AIRFLOW_CONN_AIHC_DEFAULT"] = connection_to(url, secret_access_key=secret).json
        print(f"demo: airflow dags test {DAG_ID} {LOGICAL_DATE} (log: {HOME / 'demo.log'})")
        run = subprocess.run(
            [str(BIN / "airflow"), "dags", "test", DAG_ID, LOGICAL_DATE],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        output = run.stdout + run.stderr
        (HOME / "demo.log").write_text(output)
        state = _get_json(f"{url}/_emulator/state")
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)
    return _summarise(run.returncode, output, state, time.monotonic() - started)


def _airflow_env() -> dict[str, str]:
    HOME.mkdir(exist_ok=True)
    return {
        **os.environ,
        "AIRFLOW_HOME": str(HOME),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{HOME / 'airflow.db'}",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags_examples"),
        "AIHC_EXAMPLE_POLL_SECONDS": "1",
    }


def _migrate_once(env: dict[str, str]) -> None:
    import airflow

    stamp = HOME / f".migrated-{airflow.__version__}"
    if stamp.exists():
        return
    print("demo: creating the Airflow metadata DB (first run only)", flush=True)
    subprocess.run(
        [str(BIN / "airflow"), "db", "migrate"], env=env, check=True, capture_output=True
    )
    stamp.touch()


def _emulator_url(emulator: subprocess.Popen[str]) -> str:
    assert emulator.stdout is not None
    line = emulator.stdout.readline()
    match = re.search(r"listening on (http://\S+)", line)
    if not match:
        raise SystemExit(f"demo: the emulator did not start: {line!r}")
    return match.group(1)


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def _summarise(returncode: int, output: str, state: dict, elapsed: float) -> int:
    jobs = state.get("jobs", [])
    job = jobs[0] if len(jobs) == 1 else None
    dag_ok = returncode == 0 and "state=success" in output
    losses = [float(value) for value in LOSS.findall(output)]
    falling = len(losses) >= 10 and losses[-1] < losses[0] / 10
    trained = TRAINED.search(output)
    model, metrics = (
        (_literal(trained.group(1)), _literal(trained.group(2))) if trained else ({}, {})
    )
    summary_at = output.rfind("summary: Succeeded")
    summary_last = summary_at > output.rfind("epoch ") > 0
    seen: list[str] = []
    for first, after in re.findall(r"AIHC job \S+(?: is (\w+)|: \w+ → (\w+))", output):
        status = first or after
        if not seen or seen[-1] != status:
            seen.append(status)
    # Each emulator log line starts with its own millisecond timestamp.
    streamed = len(re.findall(r"\] +\d{4}-\d\d-\d\dT[\d:]{8}\.\d{3}Z ", output))
    print()
    print("=" * 72)
    print(f"DAG run        : {'success' if dag_ok else 'FAILED'} ({DAG_ID}, {LOGICAL_DATE})")
    replicas = job["body"]["jobSpec"]["replicas"] if job else "?"
    if job:
        print(f"AIHC job       : {job['jobId']} ({job['name']}, {replicas} replicas, run locally)")
        print(f"final status   : {job['status']} (emulator record)")
    else:
        print(f"AIHC jobs      : {len(jobs)} (expected exactly 1)")
    print(f"statuses seen  : {' → '.join(seen) or '-'} (as the sensor and trigger logged them)")
    written = job["logLines"] if job else "?"
    print(f"log lines      : {streamed} streamed into the task log; the job wrote {written}")
    texts = [f"{loss:.4f}" for loss in losses]
    shown = " → ".join([*texts[:3], "…", *texts[-2:]] if len(texts) > 5 else texts) or "-"
    print(
        f"loss           : {shown} ({len(losses)} lines, {'falling' if falling else 'NOT falling'})"
    )
    print(f"return value   : {model or '-'} (rank 0's, through XCom to evaluate)")
    print(f"metrics        : {metrics or '-'} (XCom metrics, read from the job's log)")
    summary = _job_summary(output)
    if summary:
        print(
            f"job summary    : queued {summary['queue_seconds']} s, ran {summary['run_seconds']}"
            f" s, {summary['replicas']} x {summary['accelerators_per_replica']} = "
            f"{(summary['accelerator_seconds'] or 0) / 3600:.4f} GPU-hours, "
            f"{summary['restarts']} restarts (XCom job_summary)"
        )
        where = "after the job's last line" if summary_last else "BEFORE the job's last line"
        print(f"summary line   : {where} in the task log")
    else:
        print("job summary    : not found in the task log")
    print(f"API requests   : {json.dumps(state.get('requests', {}), sort_keys=True)}")
    print(f"time taken     : {elapsed:.1f} s")
    print("=" * 72)
    ok = dag_ok and job is not None and job["status"] == "Succeeded" and streamed == written
    ok = ok and replicas == 2 and falling and summary_last
    ok = ok and model.get("replicas") == 2 and model.get("loss") == metrics.get("loss")
    ok = ok and bool(summary and summary["metrics"])
    if not ok:
        print(output[-4000:], file=sys.stderr)
        print("demo: FAILED (full log above and in .airflow/demo.log)", file=sys.stderr)
    return 0 if ok else 1


def _literal(text: str) -> dict:
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return {}
    return value if isinstance(value, dict) else {}


def _job_summary(output: str) -> dict | None:
    """The sensor's one summary line: ``AIHC job … summary: …; {json}``."""
    found = re.findall(r"AIHC job \S+ summary: .*? GPU-hours; (\{.*\})", output)
    return json.loads(found[-1]) if found else None


if __name__ == "__main__":
    sys.exit(main())
