"""Reading a job's result and metrics: backwards from the log's end against the whole log.

Usage::

    python bench/bench_results.py [--lines 1000000] [--run-seconds 36000]

An in-process emulator (``EmulatorServer``, its clock faked) holds one succeeded job
whose master pod printed ``--lines`` filler lines spread evenly over ``--run-seconds`` of
running, then its metric lines and its ``AIHC_RESULT`` line (an ``Output`` script).  Over
real HTTP, in the same run:

* **ours**: :func:`airflow_provider_aihc.watch.summary.collect` (one GetJob, then the log
  read in time windows from ``finishedAt`` backwards, :mod:`~airflow_provider_aihc.watch.
  results`);
* **whole log**: what the examples did before: every line from the first, page by page
  (``AIHCHook.iter_pod_log_lines``, 5,000 lines a page, the same page size as ours), the
  last match of each regex kept.

Two cases: the values at the end (the usual one: a job prints its result last), and a
metric whose only match is before every filler line, which ours must find by reading
back through the whole log (never reporting it wrong or missing).  Per side: GetPodLogs
requests, wall time, and tracemalloc's peak of the process during the read (the emulator
runs in this process, so its rendering of each answer counts on both sides alike).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import airflow_env

for _key, _value in airflow_env(tempfile.mkdtemp(prefix="aihc-bench-results-")).items():
    os.environ.setdefault(_key, _value)

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID  # noqa: E402
from airflow_provider_aihc.emulator.server import EmulatorServer  # noqa: E402
from airflow_provider_aihc.emulator.state.jobs import Progression  # noqa: E402
from airflow_provider_aihc.emulator.steering import scenarios  # noqa: E402

POOL = DEFAULT_RESOURCE_POOL_ID
LINES = "validation | final loss: 1.875 | ppl: 6.52"
RESULT = json.dumps({"checkpoint": "/mnt/cluster/checkpoints/bench", "accuracy": 0.91})
AT_END = {"loss": r"final loss: (\S+)", "ppl": r"ppl: (\S+)"}
#: Only the iteration lines, printed before every filler line, match this one.
EARLY = {"iter_loss": r"\| lm loss: ([0-9.E+-]+)"}


class FakeClock:
    def __init__(self) -> None:
        self.now = time.time() - 48 * 3600

    def __call__(self) -> float:
        return self.now


class Quiet:
    def debug(self, msg: Any, *args: Any) -> None: ...
    def info(self, msg: Any, *args: Any) -> None: ...
    def warning(self, msg: Any, *args: Any) -> None: ...
    def error(self, msg: Any, *args: Any) -> None: ...


def make_job(server: EmulatorServer, clock: FakeClock, lines: int, run_seconds: float) -> str:
    from aihc_jobs import job_body

    from airflow_provider_aihc.hooks.aihc import AIHCHook

    server.backend.add_script(
        scenarios.Output(match="bench", lines=LINES, result=RESULT, filler_lines=lines)
    )
    job_id = AIHCHook().create_job(job_body("bench")).job_id
    server.backend.set_status(job_id, "Running", hold=True)
    for _ in range(3):  # a few iteration lines, as a real run starts with
        server.backend.poll(POOL, job_id)
    clock.now += run_seconds
    server.backend.set_status(job_id, "Succeeded", hold=True)
    return job_id


def ours(server: EmulatorServer, job_id: str, metrics: dict[str, str]) -> dict[str, Any]:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.watch import drive
    from airflow_provider_aihc.watch.results import OutputSpec
    from airflow_provider_aihc.watch.summary import collect

    spec = OutputSpec.build("AIHC_RESULT ", metrics)
    return measure(server, lambda: drive(collect(job_id, POOL, spec, None, Quiet()), AIHCHook()))


def whole_log(server: EmulatorServer, job_id: str, metrics: dict[str, str]) -> dict[str, Any]:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    def read() -> Any:
        hook = AIHCHook()
        pod = hook.get_job(job_id, POOL).pod_names[0]
        patterns = {name: re.compile(regex) for name, regex in metrics.items()}
        found: dict[str, str] = {}
        result = None
        for line in hook.iter_pod_log_lines(job_id, pod, POOL, page_lines=5000):
            if "AIHC_RESULT " in line:
                result = line.split("AIHC_RESULT ", 1)[1]
            for name, regex in patterns.items():
                if match := regex.search(line):
                    found[name] = match.group(1)
        return result, found

    return measure(server, read)


def measure(server: EmulatorServer, read: Any) -> dict[str, Any]:
    before = server.backend.count("GetPodLogs")
    tracemalloc.start()
    started = time.perf_counter()
    value = read()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "requests": server.backend.count("GetPodLogs") - before,
        "seconds": seconds,
        "peak_mib": peak / 2**20,
        "value": value,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--run-seconds", type=float, default=36_000.0)
    parser.add_argument("--quick", action="store_true", help="20,000 lines over an hour, for CI")
    args = parser.parse_args()
    if args.quick:
        args.lines, args.run_seconds = 20_000, 3_600.0
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

    clock = FakeClock()
    server = EmulatorServer(progression=Progression.manual(), clock=clock)
    server.start()
    os.environ["AIRFLOW_CONN_AIHC_DEFAULT"] = server.connection(max_retries=0).json
    try:
        job_id = make_job(server, clock, args.lines, args.run_seconds)
        print(f"bench_results: one job, {args.lines:,} filler lines over {args.run_seconds:,.0f} s")
        rows = []
        for case, metrics in (("values at the end", AT_END), ("a metric before it all", EARLY)):
            mine, theirs = ours(server, job_id, metrics), whole_log(server, job_id, metrics)
            _check(case, mine["value"][1], theirs["value"])
            rows.append((case, mine, theirs))
    finally:
        server.stop()
    print()
    print("| case | ours: requests / s / peak MiB | whole log: requests / s / peak MiB "
          "| ratio (requests, time) |")  # fmt: skip
    print("|---|---:|---:|---:|")
    for case, mine, theirs in rows:
        print(
            f"| {case} | {mine['requests']} / {mine['seconds']:.2f} / {mine['peak_mib']:.1f} "
            f"| {theirs['requests']} / {theirs['seconds']:.2f} / {theirs['peak_mib']:.1f} "
            f"| {mine['requests'] / theirs['requests']:.4f}, "
            f"{mine['seconds'] / theirs['seconds']:.4f} |"
        )
    return 0


def _check(case: str, outputs: Any, whole: tuple[str | None, dict[str, str]]) -> None:
    """Both sides found the same values (else the figure means nothing)."""
    result, found = whole
    expected = {name: _number(value) for name, value in found.items()}
    if outputs.metrics != expected:
        raise SystemExit(f"{case}: ours {outputs.metrics} != whole log {expected}")
    if result is not None and outputs.result != json.loads(result):
        raise SystemExit(f"{case}: result {outputs.result} != {result}")


def _number(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


if __name__ == "__main__":
    sys.exit(main())
