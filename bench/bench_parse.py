"""DAG parse cost: DAG files using our operators and decorators against the same shapes
with Airflow's own.

Usage::

    python bench/bench_parse.py [--quick] [--rounds N]

Each measurement is one fresh interpreter that first imports what the DAG processor pays
for every DAG file anyway (``bench/parse_floor.py``: ``DAG`` and EmptyOperator's module,
and the operator-link and sensor base modules that its serialization of any DAG imports
right after the parse; on Airflow 3 frozen, as the processor freezes its heap), then
times, with ``time.perf_counter`` (wall) and ``time.process_time`` (CPU), the execution of
one DAG file as a module (``importlib`` spec, loader, ``exec_module``, as the DAG
processor loads files).  Two pairs:

* ``bench/dags/parse_aihc.py`` (one ``AIHCCreateJobOperator``, one ``AIHCJobSensor``
  watching its ``.output``) against ``bench/dags/parse_empty.py`` (two ``EmptyOperator``);
  goal: within 1.15x, wall and CPU;
* ``bench/dags/parse_decorators.py`` (one ``@task.aihc``, one ``@task.aihc_python``,
  imported from ``airflow_provider_aihc.decorators``) against ``bench/dags/parse_taskflow.py``
  (two ``@task``); goal: within 1.2x.  Their floor also has ``@task`` itself.  (Written as
  ``airflow.sdk.task.aihc``, a first use also pays for Airflow's discovery of the
  providers' decorators, Airflow's cost for any provider's decorator, not measured here.)

What is timed therefore includes every import the DAG file adds on top of that floor, ours
and Airflow's.  Rounds run the four files back to back in alternating order; the figures
are medians over the rounds and the ratio is the median of the per-round ratios, so that
load from other processes affects both alike (the load average is printed: wall times on
a busy machine are mostly waiting, CPU times much less so).  Each child also reports the
modules the DAG file added to ``sys.modules``, listed here; the run fails (exit status 1)
when one of them is pydantic, requests, httpx, aiohttp, or our hook or models, which a DAG
file must not import.  ``tests/unit/test_parse_imports.py`` holds the list itself.

``--quick`` runs 1 round (four processes), for CI.  ``--against REV`` also parses
``parse_aihc.py`` with the package as it was at git revision ``REV`` (``git archive``, a
temporary folder), in the same rounds, and prints it beside ours: a figure from another
day had another machine and another floor (issue 37's "1.26x before the last round").
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

from _common import BENCH_DIR, REPO_ROOT, child_env, package_at

DAGS = BENCH_DIR / "dags"
OURS = DAGS / "parse_aihc.py"
BASELINE = DAGS / "parse_empty.py"


@dataclass(frozen=True)
class Pair:
    """A DAG file of ours, its baseline of Airflow's own, and the goal ratio."""

    label: str
    ours: Path
    base: Path
    base_label: str
    goal: float


#: DAG files whose floor also has ``@task`` (the decorator machinery every TaskFlow DAG
#: file loads), so that each pair is measured from the same floor.
FLOORS = {"parse_decorators.py": "taskflow", "parse_taskflow.py": "taskflow"}

PAIRS = (
    Pair("AIHCCreateJobOperator + AIHCJobSensor", OURS, BASELINE, "EmptyOperator x2", 1.15),
    Pair(
        "@task.aihc + @task.aihc_python",
        DAGS / "parse_decorators.py",
        DAGS / "parse_taskflow.py",
        "@task x2",
        1.2,
    ),
)
#: Top-level packages and our modules a DAG file must not pull in.
FORBIDDEN = (
    "pydantic",
    "requests",
    "httpx",
    "aiohttp",
    "airflow_provider_aihc.hooks",
    "airflow_provider_aihc.models",
)

CHILD = r"""
import importlib.util, json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[3])
import parse_floor
del sys.path[0]
parse_floor.pay(sys.argv[2])
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
    floor = FLOORS.get(dag_file.name, "operators")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(dag_file), floor, str(BENCH_DIR)],
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


def added_modules(dag_file: Path) -> list[str]:
    """The modules ``dag_file`` adds to ``sys.modules`` beyond the floor (one parse)."""
    with tempfile.TemporaryDirectory(prefix="aihc-bench-parse-") as home:
        return parse_once(dag_file, child_env(home)).new_modules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 round, for CI")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 21)")
    parser.add_argument(
        "--against",
        metavar="REV",
        default=None,
        help="also parse parse_aihc.py with the package as it was at git REV",
    )
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 21)

    import airflow

    files = [f for pair in PAIRS for f in (pair.ours, pair.base)]
    runs: dict[Path, list[Parse]] = {f: [] for f in files}
    earlier: list[Parse] = []  # parse_aihc.py with the package at --against
    load_before = os.getloadavg()
    with (
        tempfile.TemporaryDirectory(prefix="aihc-bench-parse-") as home,
        tempfile.TemporaryDirectory(prefix="aihc-bench-tree-") as tree,
    ):
        env = child_env(home)
        earlier_env = child_env(home, package_at(args.against, tree)) if args.against else None
        if not args.quick:  # warm the page cache and the bytecode cache
            for dag_file in files:
                parse_once(dag_file, env)
            if earlier_env is not None:
                parse_once(OURS, earlier_env)
        for i in range(rounds):
            for dag_file in files if i % 2 == 0 else files[::-1]:
                runs[dag_file].append(parse_once(dag_file, env))
            if earlier_env is not None:
                earlier.append(parse_once(OURS, earlier_env))
    load_after = os.getloadavg()

    print(
        f"Airflow {airflow.__version__}, Python {platform.python_version()} on "
        f"{platform.machine()}, {os.cpu_count()} CPUs; {rounds} rounds, one fresh process "
        f"per parse; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    )
    floor_ms = statistics.median(p.floor for r in runs.values() for p in r) * 1e3
    print(f"Floor paid before the DAG file (bench/parse_floor.py): {floor_ms:.0f} ms\n")
    print(
        "| DAG file (2 tasks) | wall, median (ms) | wall, min (ms) | CPU, median (ms) "
        "| modules added |"
    )
    print("|---|---:|---:|---:|---:|")
    verdicts = []
    bad: set[str] = set()
    for pair in PAIRS:
        ours, base = runs[pair.ours], runs[pair.base]
        for label, measured in ((pair.label, ours), (f"{pair.base_label} (baseline)", base)):
            wall, low = summary(measured, "parse")
            cpu, _ = summary(measured, "cpu")
            print(
                f"| {label} | {wall:.1f} | {low:.1f} | {cpu:.1f} "
                f"| {len(measured[-1].new_modules)} |"
            )
        wall_ratio = paired_ratio(ours, base, "parse")
        cpu_ratio = paired_ratio(ours, base, "cpu")
        print(f"| ours/{pair.base_label} | {wall_ratio:.2f}x | | {cpu_ratio:.2f}x | |")
        met = "met" if max(wall_ratio, cpu_ratio) <= pair.goal else "NOT met"
        delta = summary(ours, "parse")[0] - summary(base, "parse")[0]
        verdicts.append(
            f"Goal {pair.label} within {pair.goal}x of {pair.base_label} (wall and CPU): "
            f"{met} (wall {wall_ratio:.2f}x, {delta:+.1f} ms; CPU {cpu_ratio:.2f}x)."
        )
        bad |= {m for p in ours for m in forbidden(p.new_modules)}
    if earlier:
        wall, low = summary(earlier, "parse")
        cpu, _ = summary(earlier, "cpu")
        print(f"\nThe package at {args.against}, same rounds (parse_aihc.py):\n")
        print(
            "| DAG file | wall, median (ms) | wall, min (ms) | CPU, median (ms) | modules added |"
        )
        print("|---|---:|---:|---:|---:|")
        print(f"| {PAIRS[0].label} | {wall:.1f} | {low:.1f} | {cpu:.1f} "
              f"| {len(earlier[-1].new_modules)} |")  # fmt: skip
        for label, ours, base in (
            (f"ours/{args.against}", runs[OURS], earlier),
            (f"{args.against}/{PAIRS[0].base_label}", earlier, runs[BASELINE]),
        ):
            wall_ratio, cpu_ratio = (paired_ratio(ours, base, f) for f in ("parse", "cpu"))
            print(f"| {label} | {wall_ratio:.2f}x | | {cpu_ratio:.2f}x | |")
    for pair in PAIRS:
        added = runs[pair.ours][-1].new_modules
        own = [m for m in added if m.startswith("airflow_provider_aihc")]
        extra = sorted(set(added) - set(runs[pair.base][-1].new_modules) - set(own))
        print(f"\n{pair.ours.name}: our modules ({len(own)}): {', '.join(own)}")
        print(f"{pair.ours.name}: Airflow's beyond {pair.base.name}'s: {', '.join(extra) or '-'}")
    print(
        "\npydantic / requests / httpx / aiohttp / our hook / our models imported: "
        + (", ".join(sorted(bad)) if bad else "none")
    )
    print("\n" + "\n".join(verdicts))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
