"""Submit overhead: ``AIHCCreateJobOperator.execute()`` against a bare signed ``requests.post``.

Usage::

    python bench/bench_submit.py [--quick] [--profile]

Both sides send the same create to an in-process emulator (``EmulatorServer``, jobs never
move): the operator as a worker runs it (a new operator and hook per repetition, its
connection read from ``AIRFLOW_CONN_AIHC_DEFAULT``, a fresh task identity so every execute
really creates), and the baseline as the shortest correct client could: sign with our
``sign()`` (same headers, same signed set) and ``requests.post`` the JSON the operator sent,
under a new name. The figure is the time from the start of ``execute()`` (or of the
baseline's signing) to the ``CreateJob`` request *arriving* at the emulator: the emulator
backend's ``submit`` (behind both dialects' create) is wrapped to note the time, after the
HTTP parse, the signature check and the body's validation, which both sides pass alike.

``execute()`` sends a ``ListJobs`` before the create: AIHC has no idempotency token for
jobs, so the operator looks for a job an earlier try of this task instance created (its
labels) and adopts it rather than create a second GPU job. That lookup is timed apart, and
the figure is also given without it. Because ListJobs cannot filter by label, the v1 lookup
reads *every page* of the pool, so a second pass repeats the operator after filling the
pool with ``--pool-jobs`` jobs of other tasks (1,000 by default), alternating the
connection's ``api_version`` between ``v1`` and ``v2`` (whose lookup asks DescribeJobs
for the task instance's names only: its ``keyword`` filter); otherwise the pool is emptied
between rounds (untimed), so that every lookup reads one empty page.

Warm: in one process, after one untimed execute (imports done), rounds alternate which
side goes first; medians over rounds, and the ratio is the median of per-round ratios.
Cold: a fresh interpreter per repetition that has imported Airflow and our operator
module (a worker that has just parsed the DAG file), so ``execute()`` also pays for the
lazy imports of our hook, models, pydantic and requests; the baseline child pays for
importing requests and our signer. Arrival times cross the process boundary with
``time.time()`` (one machine, one clock).

``--quick`` runs 3 warm rounds, 1 cold round and 200 pool jobs, for CI. ``--profile`` adds
a cProfile of 20 warm executes (top functions by cumulative time).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from _common import BENCH_DIR, REPO_ROOT, airflow_env, child_env

sys.path.insert(0, str(REPO_ROOT))

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_RESOURCE_POOL_ID,
    DEFAULT_SECRET_ACCESS_KEY,
    EmulatorServer,
    Progression,
)

GOAL_RATIO = 1.2
POOL = DEFAULT_RESOURCE_POOL_ID
IMAGE = "registry.baidubce.com/aihc-aiak/aiak-megatron:ubuntu20.04-cu11.8-torch1.14.0-py38"
OPERATOR_KWARGS: dict[str, Any] = {
    "task_id": "train",
    "image": IMAGE,
    "command": "python -m trainer --epochs 1",
    "job_resources": {"baidu.com/a800_80g_cgpu": 8},
    "envs": {"NCCL_DEBUG": "INFO"},
    "labels": {"team": "nlp"},
}


class FakeTI:
    """The parts of a task instance ``execute()`` reads: identity and ``xcom_push``."""

    def __init__(self, run_id: str) -> None:
        self.dag_id = "bench_submit"
        self.task_id = "train"
        self.run_id = run_id
        self.map_index = -1
        self.try_number = 1
        self.xcom: dict[str, Any] = {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.xcom[key] = value


class ArrivalProbe:
    """Notes when each request reaches the emulator's state (``time.time()``)."""

    def __init__(self, server: EmulatorServer) -> None:
        self.state = server.backend.state
        self.arrivals: list[tuple[str, float]] = []
        self.last_create_body: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._wrap("submit", "CreateJob")  # both dialects' creates end there
        self._wrap("list_jobs", "ListJobs")

    def _wrap(self, method: str, operation: str) -> None:
        original: Callable[..., Any] = getattr(self.state, method)

        def probe(*args: Any, **kwargs: Any) -> Any:
            now = time.time()
            with self._lock:
                self.arrivals.append((operation, now))
            return original(*args, **kwargs)

        setattr(self.state, method, probe)

    def take(self) -> list[tuple[str, float]]:
        with self._lock:
            arrivals, self.arrivals = self.arrivals, []
        return arrivals


@dataclass
class Sample:
    """One timed submit, seconds from its start."""

    to_create: float
    lookups: list[float] = field(default_factory=list)
    lookup_client: float = 0.0
    total: float = 0.0


def connection_json(url: str, api_version: str = "v1") -> str:
    from airflow_provider_aihc.emulator.connection import connection_to

    return connection_to(url, api_version=api_version).json


def allow_execute_outside_runner() -> None:
    """``execute()`` outside a task runner warns (3.x) unless in test mode, as Airflow's
    own tests run it."""
    try:
        from airflow.sdk.bases.operator import ExecutorSafeguard
    except ImportError:  # Airflow 2.11
        from airflow.models.baseoperator import ExecutorSafeguard
    ExecutorSafeguard.test_mode = True


def run_operator(probe: ArrivalProbe, run_id: str) -> Sample:
    """One ``execute()`` with a new operator (and hook) for a new task instance."""
    from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

    operator = AIHCCreateJobOperator(**OPERATOR_KWARGS)
    hook = operator.hook  # a fresh hook; its connection is still read inside execute()
    list_jobs = hook.list_job_summaries  # the exactly-once lookup
    spent: list[float] = []

    def timed_list_jobs(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return list_jobs(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    hook.list_job_summaries = timed_list_jobs  # type: ignore[method-assign]
    create_job = hook.create_job

    def keep_body(request: Any, *args: Any, **kwargs: Any) -> Any:
        # The create body in v1 wire form, as the hook sends it: the baseline posts it.
        probe.last_create_body = request.model_dump(mode="json", exclude_none=True)
        return create_job(request, *args, **kwargs)

    hook.create_job = keep_body  # type: ignore[method-assign]
    ti = FakeTI(run_id)
    probe.take()
    start = time.time()
    operator.execute({"ti": ti})  # type: ignore[arg-type]
    end = time.time()
    return sample_from(probe.take(), start, end, sum(spent))


def sample_from(
    arrivals: list[tuple[str, float]], start: float, end: float, lookup_client: float = 0.0
) -> Sample:
    creates = [at for op, at in arrivals if op == "CreateJob"]
    if len(creates) != 1:
        raise RuntimeError(f"expected one CreateJob, the emulator saw {arrivals}")
    lookups = [at - start for op, at in arrivals if op == "ListJobs"]
    return Sample(creates[0] - start, lookups, lookup_client, end - start)


def bare_post(url: str, body: bytes) -> None:
    """Sign as the hook does and ``requests.post`` the body: the least a client can do."""
    import requests

    from airflow_provider_aihc.auth.signer import (
        format_timestamp,
        provider_signed_headers,
        sign,
    )

    now = time.time()
    host = url.split("://", 1)[1]
    headers = {
        "Host": host,
        "Content-Type": "application/json",
        "x-bce-date": format_timestamp(now),
    }
    signed = sign(
        access_key_id=DEFAULT_ACCESS_KEY_ID,
        secret_access_key=DEFAULT_SECRET_ACCESS_KEY,
        method="POST",
        path="/api/v1/aijobs",
        params=[("resourcePoolId", POOL)],
        headers=headers,
        timestamp=now,
        headers_to_sign=provider_signed_headers(headers),
    )
    headers["Authorization"] = signed.authorization
    response = requests.post(
        f"{url}{signed.canonical_uri}?{signed.canonical_query_string}",
        data=body,
        headers=headers,
        timeout=30,
        allow_redirects=False,
    )
    response.raise_for_status()


def bare_body(template: dict[str, Any], name: str) -> bytes:
    """The operator's create body under another name, encoded as the hook encodes it."""
    return json.dumps({**template, "name": name}, ensure_ascii=False).encode()


def run_bare(probe: ArrivalProbe, url: str, template: dict[str, Any], name: str) -> Sample:
    body = bare_body(template, name)
    probe.take()
    start = time.time()
    bare_post(url, body)
    end = time.time()
    return sample_from(probe.take(), start, end)


# -- cold: one fresh interpreter per repetition ----------------------------------------------

COLD_OPERATOR = r"""
import json, sys, time
try:
    import airflow.sdk
    from airflow.sdk.bases.operator import ExecutorSafeguard
except ImportError:
    import airflow
    from airflow.models.baseoperator import ExecutorSafeguard
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
sys.path.insert(0, sys.argv[1])
import bench_submit as b
ExecutorSafeguard.test_mode = True
operator = AIHCCreateJobOperator(**b.OPERATOR_KWARGS)
ti = b.FakeTI(sys.argv[2])
before = set(sys.modules)
start = time.time()
operator.execute({"ti": ti})
end = time.time()
new = set(sys.modules) - before
heavy = sorted({m.split(".")[0] for m in new} & {"pydantic", "requests", "httpx", "urllib3"})
result = {"start": start, "end": end, "new": len(new), "heavy": heavy}
print("--bench-result--" + json.dumps(result))
"""

COLD_BARE = r"""
import json, sys, time
try:
    import airflow.sdk
except ImportError:
    import airflow
sys.path.insert(0, sys.argv[1])
import bench_submit as b
body = sys.stdin.buffer.read()
before = set(sys.modules)
start = time.time()
b.bare_post(sys.argv[2], body)  # imports requests and our signer
end = time.time()
result = {"start": start, "end": end, "new": len(set(sys.modules) - before)}
print("--bench-result--" + json.dumps(result))
"""


def cold_child(code: str, args: list[str], url: str, stdin: bytes = b"") -> dict[str, Any]:
    env = child_env(os.environ["AIRFLOW_HOME"], AIRFLOW_CONN_AIHC_DEFAULT=connection_json(url))
    done = subprocess.run(
        [sys.executable, "-c", code, str(BENCH_DIR), *args],
        input=stdin,
        capture_output=True,
        check=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=120,
    )
    lines = done.stdout.decode().splitlines()
    line = next(x for x in lines if x.startswith("--bench-result--"))
    return dict(json.loads(line.removeprefix("--bench-result--")))


# -- reporting ------------------------------------------------------------------------------


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1e3


def ratios(ours: list[float], base: list[float]) -> float:
    return statistics.median(o / b for o, b in zip(ours, base, strict=True))


def profile(probe: ArrivalProbe, server: EmulatorServer, executes: int) -> str:
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(executes):
        run_operator(probe, f"profile-{i}")
        profiler.disable()
        empty_pool(server)
        profiler.enable()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
    stats.print_stats(45)
    return f"\ncProfile of {executes} warm executes, empty pool (cumulative):\n" + "\n".join(
        out.getvalue().splitlines()[:60]
    )


def empty_pool(server: EmulatorServer) -> None:
    """Delete every job (untimed), so that each round's lookup reads the same, empty pool."""
    for job in server.backend.jobs():
        server.backend.delete_job(POOL, job["jobId"])


def fill_pool(server: EmulatorServer, template: dict[str, Any], count: int) -> None:
    """Jobs of other tasks in the pool, created straight through the backend."""
    for i in range(count):
        server.backend.create_job(POOL, {**template, "name": f"other-job-{i}"})


def full_pool_rounds(
    probe: ArrivalProbe, url: str, rounds: int
) -> tuple[list[Sample], list[Sample]]:
    """Executes on the full pool, alternating ``api_version`` v1 and v2 (and which goes
    first); the connection is left on v1."""
    by_version: dict[str, list[Sample]] = {"v1": [], "v2": []}
    for i in range(rounds):
        for version in ("v1", "v2") if i % 2 == 0 else ("v2", "v1"):
            os.environ["AIRFLOW_CONN_AIHC_DEFAULT"] = connection_json(url, version)
            by_version[version].append(run_operator(probe, f"full-{version}-{i}"))
    os.environ["AIRFLOW_CONN_AIHC_DEFAULT"] = connection_json(url)
    return by_version["v1"], by_version["v2"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts, for CI")
    parser.add_argument("--profile", action="store_true", help="cProfile warm executes")
    parser.add_argument("--pool-jobs", type=int, default=None, help="jobs in the full pool")
    args = parser.parse_args(argv)
    rounds, cold_rounds, pool_rounds = (3, 1, 2) if args.quick else (25, 5, 7)
    pool_jobs = args.pool_jobs if args.pool_jobs is not None else (200 if args.quick else 1000)

    with tempfile.TemporaryDirectory(prefix="aihc-bench-submit-") as home:
        os.environ.update(airflow_env(home))  # children inherit it
        return measure(args, rounds, cold_rounds, pool_rounds, pool_jobs)


def measure(
    args: argparse.Namespace, rounds: int, cold_rounds: int, pool_rounds: int, pool_jobs: int
) -> int:
    import airflow
    import requests

    server = EmulatorServer(progression=Progression.manual()).start()
    try:
        os.environ["AIRFLOW_CONN_AIHC_DEFAULT"] = connection_json(server.url)
        allow_execute_outside_runner()
        probe = ArrivalProbe(server)
        run_operator(probe, "warmup")  # imports, first connection read
        assert probe.last_create_body is not None
        template = dict(probe.last_create_body)
        run_bare(probe, server.url, template, "bare-warmup")
        empty_pool(server)

        ours: list[Sample] = []
        base: list[Sample] = []
        for i in range(rounds):
            if i % 2:
                base.append(run_bare(probe, server.url, template, f"bare-{i}"))
                ours.append(run_operator(probe, f"run-{i}"))
            else:
                ours.append(run_operator(probe, f"run-{i}"))
                base.append(run_bare(probe, server.url, template, f"bare-{i}"))
            empty_pool(server)

        cold_ours: list[Sample] = []
        cold_base: list[Sample] = []
        cold_heavy: list[str] = []
        if cold_rounds and not args.quick:  # untimed: fills the bytecode cache
            cold_child(COLD_OPERATOR, ["cold-warmup"], server.url)
            cold_child(COLD_BARE, [server.url], server.url, bare_body(template, "bare-cold-w"))
            probe.take()
            empty_pool(server)
        for i in range(cold_rounds):
            result = cold_child(COLD_OPERATOR, [f"cold-{i}"], server.url)
            cold_heavy = result["heavy"]
            cold_ours.append(sample_from(probe.take(), result["start"], result["end"]))
            body = bare_body(template, f"bare-cold-{i}")
            result = cold_child(COLD_BARE, [server.url], server.url, stdin=body)
            cold_base.append(sample_from(probe.take(), result["start"], result["end"]))
            empty_pool(server)

        profiled = profile(probe, server, 20) if args.profile else ""
        jobs_before = len(server.backend.jobs())
        fill_pool(server, template, pool_jobs)
        in_pool = len(server.backend.jobs())
        full, full_v2 = full_pool_rounds(probe, server.url, pool_rounds)
    finally:
        server.stop()

    to_create = [s.to_create for s in ours]
    base_create = [s.to_create for s in base]
    without = [s.to_create - s.lookup_client for s in ours]
    first_list = [s.lookups[0] for s in ours]
    print(
        f"Airflow {airflow.__version__}, requests {requests.__version__}, Python "
        f"{platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"in-process emulator; {rounds} warm rounds, {cold_rounds} cold rounds"
    )
    print("(the pool is emptied between rounds: each lookup reads one empty page)\n")
    print("| From start to CreateJob arriving | median (ms) | ratio to bare |")
    print("|---|---:|---:|")
    print(f"| bare signed `requests.post` (baseline) | {ms(base_create):.1f} | 1.00x |")
    print(f"| `execute()`, warm | {ms(to_create):.1f} | {ratios(to_create, base_create):.2f}x |")
    print(
        f"| `execute()`, warm, without the ListJobs lookup | {ms(without):.1f} | "
        f"{ratios(without, base_create):.2f}x |"
    )
    cold_o = [s.to_create for s in cold_ours]
    cold_b = [s.to_create for s in cold_base]
    print(f"| bare, cold process (imports requests + signer) | {ms(cold_b):.1f} | 1.00x |")
    print(f"| `execute()`, cold process | {ms(cold_o):.1f} | {ratios(cold_o, cold_b):.2f}x |")
    full_create = [s.to_create for s in full]
    full_lists = statistics.median(len(s.lookups) for s in full)
    print(
        f"| `execute()`, warm, pool of {in_pool:,} jobs | {ms(full_create):.1f} | "
        f"{statistics.median(full_create) / statistics.median(base_create):.2f}x |"
    )
    v2_create = [s.to_create for s in full_v2]
    v2_ratio = statistics.median(v2_create) / statistics.median(base_create)
    print(
        f"| `execute()`, warm, pool of {in_pool:,} jobs, `api_version: v2` | "
        f"{ms(v2_create):.1f} | {v2_ratio:.2f}x |"
    )
    print("\nWhere `execute()` spends its time (warm medians):")
    print(f"* start -> ListJobs arrives: {ms(first_list):.1f} ms (identity, validation, sign)")
    lookup = ms([s.lookup_client for s in ours])
    print(f"* ListJobs round trip incl. parsing, client side: {lookup:.1f} ms")
    print(
        f"* ListJobs requests per execute: {statistics.median(len(s.lookups) for s in ours):.0f} "
        f"({jobs_before} jobs in the pool); {full_lists:.0f} with {in_pool:,} jobs "
        f"({ms([s.lookup_client for s in full]):.1f} ms)"
    )
    v1_lookup = [s.lookup_client for s in full]
    v2_lookup = [s.lookup_client for s in full_v2]
    print(
        f"* the lookup with {in_pool:,} jobs in the pool: v2 (DescribeJobs with `keyword`) "
        f"{ms(v2_lookup):.1f} ms in {statistics.median(len(s.lookups) for s in full_v2):.0f} "
        f"request(s), v1 {ms(v1_lookup):.1f} ms: ratio v2/v1 {ratios(v2_lookup, v1_lookup):.2f}x"
    )
    print(
        f"* start -> execute() returns: {ms([s.total for s in ours]):.1f} ms "
        f"(bare: {ms([s.total for s in base]):.1f} ms)"
    )
    print(f"* cold execute() imported: {', '.join(cold_heavy) or '-'}")
    if profiled:
        print(profiled)
    ratio = ratios(to_create, base_create)
    verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
    print(
        f"\nGoal execute() within {GOAL_RATIO}x of a bare post (warm): {verdict} "
        f"({ratio:.2f}x; {ratios(without, base_create):.2f}x without the lookup)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
