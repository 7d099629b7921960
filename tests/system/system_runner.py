"""The runner of the system tests: a DAG run against AIHC, watched, recorded, cleaned up.

Airflow's own providers ship their example DAGs as system tests (AIP-47): each
``example_*.py`` defines a DAG and ends with ``test_run = get_test_run(dag)``. Airflow's
``tests_common`` that provides ``get_test_run`` is not installed here, so this module is
our own runner of the same shape. The DAG runs with ``airflow dags test`` in a subprocess,
the way a user runs one, against

* a real AIHC region when the ``AIHC_SYSTEM_TEST_*`` variables are set **and**
  ``AIHC_SYSTEM_TEST_CONFIRM=spend`` says that real jobs may be paid for (:class:`Target`
  ``.from_env``), or
* the emulator otherwise (``make test``, which also drops every ``AIHC_SYSTEM_TEST_*``
  variable: the same code path, the target swapped).

The spend limit ``AIHC_SYSTEM_TEST_MAX_JOBS`` counts the jobs of every system-test process
running at once (``spend_ledger.py``), and a DAG is not started once it is reached.

While the DAG runs, the runner reads every job labelled with this session's run id: the
statuses it passes through and when, the fields AIHC's answer had, the console URL. It
stops and deletes every such job at the end, also when the run is interrupted (SIGINT,
SIGTERM, or the interpreter exiting), and writes what it saw to a report a user can send
back (:class:`Report`).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from spend_ledger import LEDGER_NAME, SpendLedger

ENV = "AIHC_SYSTEM_TEST_"
#: The value of ``AIHC_SYSTEM_TEST_CONFIRM`` that lets the tests create real, paid jobs.
CONFIRM = "spend"
CONN_ID = "aihc_system_test"
#: The same target in the v2 action API: models, datasets and services exist only there.
CONN_ID_V2 = "aihc_system_test_v2"
RUN_LABEL = "aihc-system-test"
SYSTEM_DIR = Path(__file__).resolve().parent
AIRFLOW = str(Path(sys.executable).with_name("airflow"))
REQUIRED = ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "POOL", "IMAGE")
DAG_RUN_TIMEOUT = 1800.0
TERMINAL = {"Succeeded", "Failed", "Stopped", "ManualTermination"}
ALREADY_DELETED = "already deleted (by the DAG's teardown)"
# The create operator's log lines naming its job (operators/_submit.py).
CREATED_LINE = re.compile(r"(?:Created AIHC job (\S+) \(([^)]*)\)|adopting AIHC job (\S+))")


class SystemTestConfigError(ValueError):
    """The ``AIHC_SYSTEM_TEST_*`` variables are incomplete or wrong."""


@dataclass(frozen=True)
class JobSettings:
    """What the example DAGs create: tiny jobs, CPU only unless told otherwise.

    Read from the environment in the pytest process and in the ``airflow dags test``
    subprocess alike, so both parse the same DAG.
    """

    run_id: str
    pool: str
    queue: str | None
    image: str
    command: str
    resources: dict[str, float]
    max_job_minutes: float
    poll_seconds: float

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> JobSettings:
        try:
            resources = json.loads(env.get(f"{ENV}RESOURCES", '{"cpu": 1}'))
            minutes = float(env.get(f"{ENV}MAX_JOB_MINUTES", "10"))
            poll = float(env.get(f"{ENV}POLL_SECONDS", "10"))
        except ValueError as exc:
            raise SystemTestConfigError(
                f'{ENV}RESOURCES must be a JSON object such as {{"cpu": 1}}, '
                f"{ENV}MAX_JOB_MINUTES and {ENV}POLL_SECONDS numbers: {exc}"
            ) from None
        if not isinstance(resources, dict) or minutes <= 0 or poll <= 0:
            raise SystemTestConfigError(
                f"{ENV}RESOURCES must be a JSON object, {ENV}MAX_JOB_MINUTES and "
                f"{ENV}POLL_SECONDS greater than 0"
            )
        return cls(
            run_id=env.get(f"{ENV}RUN_ID", "parse-only"),
            pool=env.get(f"{ENV}POOL", "cce-emulator0"),
            queue=env.get(f"{ENV}QUEUE") or None,
            image=env.get(f"{ENV}IMAGE", "registry.baidubce.com/aihc/busybox:latest"),
            command=env.get(f"{ENV}COMMAND", "echo aihc-system-test; sleep 20"),
            resources=resources,
            max_job_minutes=minutes,
            poll_seconds=poll,
        )

    @property
    def labels(self) -> dict[str, str]:
        """The label every job of this session carries, so cleanup finds them all."""
        return {RUN_LABEL: self.run_id}

    def job(self, command: str | None = None) -> dict[str, Any]:
        """The create operator's arguments for a tiny job of this session.

        :param command: what the job runs; ``AIHC_SYSTEM_TEST_COMMAND`` by default.
        """
        return {"aihc_conn_id": CONN_ID, "image": self.image, "command": command or self.command,
                "job_resources": self.resources, "resource_pool_id": self.pool,
                "job_queue": self.queue, "labels": self.labels}  # fmt: skip


@dataclass(frozen=True)
class Target:
    """Where the jobs go: a real region or the emulator. Never printed with its secret."""

    endpoint: str
    access_key_id: str
    secret_access_key: str = field(repr=False)
    region: str | None = None
    security_token: str | None = field(default=None, repr=False)
    api_version: str = "v1"
    max_jobs: int = 4
    real: bool = True
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Target | None:
        """The real region the variables name; ``None`` (the emulator) unless
        ``AIHC_SYSTEM_TEST_CONFIRM=spend`` says real jobs may be created: credentials once
        exported must not make every test run spend money."""
        confirm = env.get(f"{ENV}CONFIRM")
        if confirm is None:
            return None
        if confirm != CONFIRM:
            raise SystemTestConfigError(
                f"{ENV}CONFIRM must be {CONFIRM!r} to create real AIHC jobs, got {confirm!r}"
            )
        missing = [f"{ENV}{name}" for name in REQUIRED if not env.get(f"{ENV}{name}")]
        if not env.get(f"{ENV}REGION") and not env.get(f"{ENV}ENDPOINT"):
            missing.append(f"{ENV}REGION or {ENV}ENDPOINT")
        if missing:
            raise SystemTestConfigError(f"set {', '.join(missing)} to run against AIHC")
        api_version = env.get(f"{ENV}API_VERSION", "v1")
        if api_version not in ("v1", "v2"):
            raise SystemTestConfigError(f"{ENV}API_VERSION must be v1 or v2, got {api_version!r}")
        try:
            max_jobs = int(env.get(f"{ENV}MAX_JOBS", "4"))
        except ValueError:
            raise SystemTestConfigError(f"{ENV}MAX_JOBS must be a whole number") from None
        JobSettings.from_env(env)  # the job variables are checked before anything runs
        return cls(
            endpoint=env.get(f"{ENV}ENDPOINT", ""),
            access_key_id=env[f"{ENV}ACCESS_KEY_ID"],
            secret_access_key=env[f"{ENV}SECRET_ACCESS_KEY"],
            region=env.get(f"{ENV}REGION") or None,
            security_token=env.get(f"{ENV}STS_TOKEN") or None,
            api_version=api_version,
            max_jobs=max_jobs,
            env={
                k: v
                for k, v in env.items()
                if k.startswith(ENV) and "SECRET" not in k and "TOKEN" not in k
            },
        )

    def connection(self, api_version: str | None = None) -> str:
        """The ``aihc`` connection, as the ``AIRFLOW_CONN_*`` JSON a user would write.

        :param api_version: ``v1`` or ``v2``; the target's by default.
        """
        extra: dict[str, Any] = {"api_version": api_version or self.api_version}
        if self.region:
            extra["region"] = self.region
        if self.security_token:
            extra["security_token"] = self.security_token
        return json.dumps(
            {"conn_type": "aihc", "login": self.access_key_id,
             "password": self.secret_access_key, "host": self.endpoint, "extra": extra}
        )  # fmt: skip

    def describe(self) -> dict[str, Any]:
        """What the report says of the target: no key, secret or token."""
        return {"real": self.real, "endpoint": self.endpoint, "region": self.region,
                "api_version": self.api_version, "max_jobs": self.max_jobs}  # fmt: skip


@dataclass
class JobRecord:
    """One job as the runner saw it."""

    job_id: str
    name: str
    console_url: str
    statuses: list[dict[str, Any]] = field(default_factory=list)
    answer_fields: list[str] = field(default_factory=list)
    cleanup: list[str] = field(default_factory=list)

    def saw(self, status: str, at: float) -> None:
        """Record ``status`` when it is new, and say so (a run's progress on stdout)."""
        if not self.statuses or self.statuses[-1]["status"] != status:
            self.statuses.append({"status": status, "seconds": round(at, 1)})
            print(f"{SAW_LINE}{self.job_id}: {status} ({at:.1f} s)", flush=True)


#: How the runner's stdout says it saw a job reach a status.
SAW_LINE = "system run: AIHC job "


@dataclass
class Report:
    """What a session saw; written as JSON and Markdown after every DAG and at the end."""

    directory: Path
    target: dict[str, Any]
    run_id: str
    started: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    dags: list[dict[str, Any]] = field(default_factory=list)
    interrupted: str | None = None
    #: What the cleanup deleted besides jobs (services, model versions a DAG left).
    left_over: list[str] = field(default_factory=list)

    def write(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        data = asdict(self)
        data.pop("directory")
        data["versions"] = _versions()
        (self.directory / "report.json").write_text(json.dumps(data, indent=2) + "\n")
        (self.directory / "report.md").write_text(_markdown(data))
        return self.directory / "report.json"


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("airflow-provider-aihc", "apache-airflow")}


def _markdown(data: dict[str, Any]) -> str:
    lines = [f"# AIHC system test report ({data['started']})", "",
             f"Target: `{json.dumps(data['target'])}`  ", f"Versions: `{data['versions']}`  ",
             f"Interrupted: {data['interrupted'] or 'no'}  ",
             f"Left over, deleted by the runner: {'; '.join(data['left_over']) or 'nothing'}",
             ""]  # fmt: skip
    for dag in data["dags"]:
        lines += [f"## {dag['dag_id']}: {dag['outcome']} in {dag['seconds']} s", ""]
        for job in dag["jobs"]:
            seen = " → ".join(f"{s['status']} ({s['seconds']} s)" for s in job["statuses"])
            cleanup = "; ".join(job["cleanup"]) or "nothing left to do"
            lines += [f"- `{job['job_id']}` `{job['name']}`: {seen}",
                      f"  - console: {job['console_url']}",
                      f"  - answer fields: {', '.join(job['answer_fields'])}",
                      f"  - cleanup: {cleanup}"]  # fmt: skip
        lines.append("")
    return "\n".join(lines)


class SystemRun:
    """Runs the session's DAGs against one target; stops and deletes what they created."""

    def __init__(self, target: Target, report_dir: Path) -> None:
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        self.target = target
        self.run_id = f"st-{uuid.uuid4().hex[:10]}"
        self.settings = JobSettings.from_env({**target.env, f"{ENV}RUN_ID": self.run_id})
        self.report = Report(report_dir, target.describe(), self.run_id)
        self.jobs: dict[str, JobRecord] = {}
        self.created_after = datetime.now(UTC) - timedelta(minutes=10)
        self.ledger = SpendLedger(report_dir / LEDGER_NAME)
        self._recorded: set[str] = set()
        os.environ[f"AIRFLOW_CONN_{CONN_ID.upper()}"] = target.connection()
        os.environ[f"AIRFLOW_CONN_{CONN_ID_V2.upper()}"] = target.connection("v2")
        self.hook = AIHCHook(aihc_conn_id=CONN_ID)
        self._proc: subprocess.Popen[str] | None = None
        self._started = time.monotonic()
        self._previous: dict[int, Any] = {}
        # Off only in the runner's own test: a job no observation caught is still recorded.
        self.observe_while_running = True

    def __enter__(self) -> SystemRun:
        self.ledger.join()
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._interrupted)
        atexit.register(self.cleanup)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.cleanup()
        finally:
            self.ledger.leave()
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)
            atexit.unregister(self.cleanup)

    def _interrupted(self, signum: int, frame: object) -> None:
        self.report.interrupted = signal.Signals(signum).name
        raise KeyboardInterrupt(self.report.interrupted)

    def subprocess_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(ENV)}
        env.update(self.target.env)
        env[f"{ENV}RUN_ID"] = self.run_id
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SYSTEM_DIR), env.get("PYTHONPATH")]))
        return env

    def run_dag(self, dag_id: str, dag_file: str, *, creates_jobs: bool = True) -> None:
        """Run one DAG to its end; fail when it did not succeed or broke the spend limit.

        :param creates_jobs: whether the DAG creates jobs (the runner must have seen one).
        """
        spent = self.ledger.count()
        if spent >= self.target.max_jobs:
            raise RuntimeError(
                f"spend limit: the system-test processes running now created {spent} jobs, "
                f"{ENV}MAX_JOBS={self.target.max_jobs}: {dag_id} is not started"
            )
        entry: dict[str, Any] = {"dag_id": dag_id, "outcome": "running", "jobs": []}
        self.report.dags.append(entry)
        started, known = time.monotonic(), set(self.jobs)
        env = {**self.subprocess_env(), "AIRFLOW__CORE__DAGS_FOLDER": str(Path(dag_file).parent)}
        output, ok = "", False
        try:
            self._proc = subprocess.Popen(
                [AIRFLOW, "dags", "test", dag_id], env=env, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )  # fmt: skip
            output = self._watch(self._proc, deadline=started + DAG_RUN_TIMEOUT)
            ok = self._proc.returncode == 0 and "state=success" in output
            entry["outcome"] = "succeeded" if ok else f"failed (exit {self._proc.returncode})"
        except BaseException:
            entry["outcome"] = f"interrupted ({self.report.interrupted or 'error'})"
            raise
        finally:
            self._stop_subprocess()
            self.observe()
            self.record_created(output)
            self._record_spent()
            entry["seconds"] = round(time.monotonic() - started, 1)
            entry["jobs"] = [asdict(j) for j in self.jobs.values() if j.job_id not in known]
            self.report.write()
        assert ok, f"{dag_id} did not succeed:\n{output[-4000:]}"
        assert entry["jobs"] or not creates_jobs, (
            f"{dag_id} succeeded, but the runner saw none of its jobs"
        )

    def _watch(self, proc: subprocess.Popen[str], deadline: float) -> str:
        """Observe the jobs while the DAG runs; its output once it ends."""
        import threading

        chunks: list[str] = []
        assert proc.stdout is not None
        reader = threading.Thread(target=lambda: chunks.extend(proc.stdout or ()), daemon=True)
        reader.start()
        while proc.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the DAG run took longer than {DAG_RUN_TIMEOUT:.0f} s")
            if self.observe_while_running:
                self.observe()
                self._enforce_limits()
            time.sleep(min(self.settings.poll_seconds, 2.0))
        reader.join(timeout=30)
        return "".join(chunks)

    def observe(self) -> None:
        """Read every job of this session: its status now, its answer's fields."""
        from airflow_provider_aihc.exceptions import AIHCNotFoundError
        from airflow_provider_aihc.links.aihc import job_url

        now = time.monotonic() - self._started
        listed = self.hook.list_jobs(self.settings.pool, created_after=self.created_after)
        for item in listed:
            if item.labels_dict.get(RUN_LABEL) != self.run_id:
                continue
            record = self.jobs.get(item.job_id)
            if record is None:
                url = job_url(self.hook.config.base_url, item.job_id, self.settings.pool)
                record = self.jobs[item.job_id] = JobRecord(item.job_id, item.name, url)
            try:
                job = self.hook.get_job(item.job_id, self.settings.pool)
            except AIHCNotFoundError:  # deleted since the list (the DAG's own teardown)
                continue
            record.saw(job.status, now)
            fields = set(job.model_dump(by_alias=True, exclude_unset=True))
            record.answer_fields = sorted(fields | set(record.answer_fields))

    def record_created(self, output: str) -> None:
        """Record the jobs the run's log says it created that no observation caught.

        A job the DAG creates, stops and deletes between two observations (a second on the
        emulator, under load) is listed by nobody afterwards; the create operator's log line
        still names it, so the report and the cleanup know of it all the same.

        :param output: what ``airflow dags test`` printed.
        """
        from airflow_provider_aihc.exceptions import AIHCNotFoundError
        from airflow_provider_aihc.links.aihc import job_url

        for line in CREATED_LINE.finditer(output):
            job_id, name = line[1] or line[3], line[2]
            if job_id in self.jobs:
                continue
            url = job_url(self.hook.config.base_url, job_id, self.settings.pool)
            record = self.jobs[job_id] = JobRecord(job_id, name or "", url)
            try:
                job = self.hook.get_job(job_id, self.settings.pool)
            except AIHCNotFoundError:
                record.cleanup.append(ALREADY_DELETED)
                continue
            record.saw(job.status, time.monotonic() - self._started)
            record.answer_fields = sorted(job.model_dump(by_alias=True, exclude_unset=True))

    def _enforce_limits(self) -> None:
        """The spend limit: at most ``max_jobs`` jobs by every system-test process running
        now (the ledger), each stopped past its minutes."""
        spent = self._record_spent()
        if spent > self.target.max_jobs:
            raise RuntimeError(
                f"spend limit: the system-test processes running now created {spent} jobs, "
                f"more than {ENV}MAX_JOBS={self.target.max_jobs}"
            )
        budget = self.settings.max_job_minutes * 60
        for record in self.jobs.values():
            if not record.statuses:
                continue
            first, last = record.statuses[0], record.statuses[-1]
            if last["status"] not in TERMINAL and last["seconds"] - first["seconds"] > budget:
                self.hook.stop_job(record.job_id, self.settings.pool)
                record.cleanup.append(f"stopped: over {ENV}MAX_JOB_MINUTES")

    def _record_spent(self) -> int:
        """Add this process's new jobs to the ledger; the jobs of every process so far."""
        spent = self.ledger.record(set(self.jobs) - self._recorded)
        self._recorded |= set(self.jobs)
        return spent

    def _stop_subprocess(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)

    def _cleanup_services(self) -> None:
        """Delete this session's services and model versions (named after the session;
        ``example_aihc_service_loop``), whatever its teardowns did; the report says which."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        hook, prefix = AIHCHook(aihc_conn_id=CONN_ID_V2), f"{self.run_id}-"
        try:
            for service in hook.list_services():
                if service.name.startswith(prefix):
                    hook.delete_service(service.id)
                    self.report.left_over.append(f"service {service.id} deleted")
            for model in hook.list_models(prefix):
                if model.name.startswith(prefix):
                    for version in hook.list_model_versions(model.id):
                        hook.delete_model_version(model.id, version.id)
                        self.report.left_over.append(f"model version {version.id} deleted")
        except Exception as exc:  # the jobs are still cleaned up
            print(f"system tests: cleaning up services failed: {exc}", file=sys.stderr)

    def cleanup(self) -> None:
        """Stop and delete every job this session created; a second signal waits for it."""
        from airflow_provider_aihc.exceptions import AIHCNotFoundError

        handlers = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            self._stop_subprocess()
            try:
                self.observe()
            except Exception as exc:  # still clean up what was seen
                print(f"system tests: listing jobs for cleanup failed: {exc}", file=sys.stderr)
            for record in self.jobs.values():
                try:
                    job = self.hook.get_job(record.job_id, self.settings.pool)
                except AIHCNotFoundError:
                    if not record.cleanup or record.cleanup[-1] not in ("deleted", ALREADY_DELETED):
                        record.cleanup.append(ALREADY_DELETED)
                    continue
                if job.status not in TERMINAL:
                    self.hook.stop_job(record.job_id, self.settings.pool)
                    record.cleanup.append(f"stopped (was {job.status})")
                try:
                    self.hook.delete_job(record.job_id, self.settings.pool)
                    record.cleanup.append("deleted")
                except AIHCNotFoundError:
                    pass
            self._cleanup_services()
            for entry in self.report.dags:
                entry["jobs"] = [asdict(self.jobs[j["job_id"]]) for j in entry["jobs"]]
            self.report.write()
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)


def get_test_run(dag: Any, *, creates_jobs: bool = True) -> Callable[..., None]:
    """The pytest test of one example DAG: ``test_run = get_test_run(dag)``.

    :param dag: the example's DAG; its ``fileloc`` is the DAGs folder the run parses.
    :param creates_jobs: whether the DAG creates jobs (``False``: services, models only).
    """
    dag_id, dag_file = dag.dag_id, dag.fileloc

    def test_run(aihc_system: SystemRun) -> None:
        aihc_system.run_dag(dag_id, dag_file, creates_jobs=creates_jobs)

    test_run.__doc__ = f"Run {dag_id} end to end against the system-test target."
    return test_run


def main(argv: list[str]) -> int:
    """``python tests/system/system_runner.py EXAMPLE.py ...``: run examples without pytest.

    Against the region the ``AIHC_SYSTEM_TEST_*`` variables name, with
    ``AIHC_SYSTEM_TEST_CONFIRM=spend`` (each example's DAG id is
    its file name); the Airflow metadata DB must be migrated. Exits 130 when interrupted,
    after the cleanup.
    """
    target = Target.from_env()
    if target is None:
        print(
            f"set the {ENV}* variables and {ENV}CONFIRM={CONFIRM} (see docs/system-tests.md)",
            file=sys.stderr,
        )
        return 2
    report_dir = Path(os.environ.get(f"{ENV}REPORT_DIR", "build/system-tests"))
    try:
        with SystemRun(target, report_dir) as run:
            for path in argv:
                run.run_dag(Path(path).stem, path)
    except KeyboardInterrupt:
        print(f"interrupted; jobs cleaned up, report in {report_dir}", file=sys.stderr)
        return 130
    print(f"report: {report_dir / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
