"""DAG parse cost: a DAG file with our operator and sensor against the same with EmptyOperators.

Usage::

    python bench/bench_parse.py [--quick]

Each measurement is one fresh interpreter that first imports what every DAG file pays for
anyway (``DAG`` from ``airflow.sdk`` and EmptyOperator's module on Airflow 3; ``DAG`` from
``airflow`` and ``airflow.operators.empty`` on 2.11), then times, with ``time.perf_counter``, the
execution of one DAG file as a module (``importlib`` spec, loader, ``exec_module``, as the
DAG processor loads files): ``bench/dags/parse_aihc.py`` (one ``AIHCCreateJobOperator``,
one ``AIHCJobSensor`` watching its ``.output``) or ``bench/dags/parse_empty.py`` (the same
two-task shape with ``EmptyOperator``). What is timed therefore includes every import the
DAG file adds on top of that floor, ours and Airflow's.

Rounds run the two files back to back in alternating order; the figures are medians over
the rounds and the ratio is the median of the per-round ratios, so that load from other
processes affects both alike. Each child also reports the modules the DAG file added to
``sys.modules``; the run fails (exit status 1) when one of them is pydantic, requests,
httpx, or our hook or models, which a DAG file must not import.

``--quick`` runs 1 round (two processes), for CI.
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
from dataclasses import dataclass
from pathlib import Path

from _common import BENCH_DIR, REPO_ROOT, child_env

DAGS = BENCH_DIR / "dags"
OURS = DAGS / "parse_aihc.py"
BASELINE = DAGS / "parse_empty.py"
GOAL_RATIO = 1.5
#: Top-level packages and our modules a DAG file must not pull in.
FORBIDDEN = (
    "pydantic",
    "requests",
    "httpx",
    "airflow_provider_aihc.hooks",
    "airflow_provider_aihc.models",
)

CHILD = r"""
import importlib.util, json, sys, time
t0 = time.perf_counter()
try:
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.empty import EmptyOperator
except ImportError:  # Airflow 2.11
    from airflow import DAG
    from airflow.operators.empty import EmptyOperator
floor = time.perf_counter() - t0
before = set(sys.modules)
t1, c1 = time.perf_counter(), time.process_time()
spec = importlib.util.spec_from_file_location("bench_parse_dag", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
parse, cpu = time.perf_counter() - t1, time.process_time() - c1
new = sorted(set(sys.modules) - before - {spec.name})
print("--bench-result--" + json.dumps(
    {"floor": floor, "parse": parse, "cpu": cpu, "new": new, "tasks": sorted(module.dag.task_ids)}
))
"""


@dataclass(frozen=True)
class Parse:
    floor: float
    parse: float
    cpu: float
    new_modules: list[str]
    tasks: list[str]


def parse_once(dag_file: Path, env: dict[str, str]) -> Parse:
    """Parse ``dag_file`` in a fresh interpreter (see the module docstring)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(dag_file)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=120,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("--bench-result--"))
    data = json.loads(line.removeprefix("--bench-result--"))
    return Parse(data["floor"], data["parse"], data["cpu"], data["new"], data["tasks"])


def forbidden(modules: list[str]) -> list[str]:
    """The modules in ``modules`` that a DAG file must not import."""
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def summary(runs: list[Parse], field: str) -> tuple[float, float]:
    """Median and minimum of ``field`` over ``runs``, in milliseconds."""
    values = [getattr(p, field) * 1e3 for p in runs]
    return statistics.median(values), min(values)


def paired_ratio(ours: list[Parse], base: list[Parse], field: str) -> float:
    """The median of the per-round ratios ours/baseline."""
    pairs = zip(ours, base, strict=True)
    return statistics.median(getattr(o, field) / getattr(b, field) for o, b in pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 round, for CI")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 21)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 21)

    import airflow

    ours: list[Parse] = []
    base: list[Parse] = []
    with tempfile.TemporaryDirectory(prefix="aihc-bench-parse-") as home:
        env = child_env(home)
        if not args.quick:  # warm the page cache and the bytecode cache
            parse_once(BASELINE, env)
            parse_once(OURS, env)
        for i in range(rounds):
            if i % 2:
                ours.append(parse_once(OURS, env))
                base.append(parse_once(BASELINE, env))
            else:
                base.append(parse_once(BASELINE, env))
                ours.append(parse_once(OURS, env))

    wall_ratio = paired_ratio(ours, base, "parse")
    cpu_ratio = paired_ratio(ours, base, "cpu")
    floor_ms = statistics.median(p.floor for p in ours + base) * 1e3
    added = ours[-1].new_modules
    own = [m for m in added if m.startswith("airflow_provider_aihc")]
    others = [m for m in added if not m.startswith("airflow_provider_aihc")]
    extra = sorted(set(others) - set(base[-1].new_modules))
    bad = sorted({m for p in ours for m in forbidden(p.new_modules)})

    print(
        f"Airflow {airflow.__version__}, Python {platform.python_version()} on "
        f"{platform.machine()}, {os.cpu_count()} CPUs; {rounds} rounds, one fresh process "
        "per parse"
    )
    print(f"Floor paid before the DAG file (DAG + EmptyOperator import): {floor_ms:.0f} ms\n")
    print(
        "| DAG file (2 tasks) | wall, median (ms) | wall, min (ms) | CPU, median (ms) "
        "| modules added |"
    )
    print("|---|---:|---:|---:|---:|")
    for label, runs in (
        ("AIHCCreateJobOperator + AIHCJobSensor", ours),
        ("EmptyOperator x2 (baseline)", base),
    ):
        wall, low = summary(runs, "parse")
        cpu, _ = summary(runs, "cpu")
        print(f"| {label} | {wall:.1f} | {low:.1f} | {cpu:.1f} | {len(runs[-1].new_modules)} |")
    print(f"| ours/EmptyOperator | {wall_ratio:.2f}x | | {cpu_ratio:.2f}x | |")
    print(f"\nOur modules the DAG file imports ({len(own)}): {', '.join(own)}")
    print(f"Airflow modules it adds beyond the baseline's: {', '.join(extra) or '-'}")
    print(
        "pydantic / requests / httpx / our hook / our models imported: "
        + (", ".join(bad) if bad else "none")
    )
    wall_delta = summary(ours, "parse")[0] - summary(base, "parse")[0]
    verdict = "met" if wall_ratio <= GOAL_RATIO else "NOT met"
    print(
        f"\nGoal wall time within {GOAL_RATIO}x of EmptyOperator: {verdict} "
        f"({wall_ratio:.2f}x, {wall_delta:+.1f} ms per DAG file; CPU {cpu_ratio:.2f}x)."
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
