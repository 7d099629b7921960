"""Every benchmark runs in ``--quick`` mode, so that none of them can rot unnoticed.

Their figures are not checked (they depend on the machine); the run must succeed and print
its table and its verdict.  The one exception is ``bench_costs.py --check``: the
triggerer's costs as counts and same-run ratios, against the committed
``bench/baseline.json`` (written by ``make bench``), failing past their tolerance.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"


def run_quick(name: str, timeout: float, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH_DIR / f"{name}.py"), "--quick", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=BENCH_DIR.parent,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_signing() -> None:
    out = run_quick("bench_signing", 60)
    assert "Authorization identical on all requests." in out
    assert "Goal ours/SDK >= 2x" in out


def test_parse() -> None:
    out = run_quick("bench_parse", 120)
    assert "| ours/EmptyOperator x2 |" in out
    assert "| ours/@task x2 |" in out
    assert "our hook / our models imported: none" in out
    assert "within 1.15x of EmptyOperator x2 (wall and CPU)" in out
    assert "within 1.2x of @task x2 (wall and CPU)" in out


def test_submit() -> None:
    out = run_quick("bench_submit", 120)
    assert "| bare signed `requests.post` (baseline) |" in out
    assert "ListJobs requests per execute" in out
    assert "Goal execute() within 1.2x" in out


def test_results() -> None:
    out = run_quick("bench_results", 300)
    assert "| values at the end |" in out
    assert "| a metric before it all |" in out


def test_triggerer() -> None:
    # --against HEAD: the committed package extracted and measured as a same-run baseline
    # (HEAD is in every clone; older trees were checked by hand, docs/benchmarks.md).
    out = run_quick("bench_triggerer", 200, "--against", "HEAD")
    assert "Events: 50/50 success" in out
    assert "| TCP connections opened |" in out
    assert "50/50 finished" in out  # the per-job floor run, the same-run baseline
    assert "| CPU the triggers cost, % of a core (run less idle loop) |" in out
    assert "| HTTP requests per job per poll |" in out
    assert "### The package at HEAD, same run" in out
    assert "HEAD: 50/50 events, its package imported from " in out
    measured = out.split("HEAD: 50/50 events, its package imported from ")[1].split(";")[0]
    assert "aihc-bench-tree-" in measured  # the extracted tree, not the working one


def test_triggerer_costs_have_not_regressed() -> None:
    """Objects, bytes and cyclic garbage per trigger, requests and log reads per poll, and
    CPU per poll as a ratio to the same-run floor: none past its tolerance."""
    out = run_quick("bench_costs", 600, "--check")  # up to three runs
    assert "No figure regressed past its tolerance." in out or "No baseline for" in out


def test_run_all_runs_every_benchmark() -> None:
    sys.path.insert(0, str(BENCH_DIR))
    try:
        import run_all
    finally:
        sys.path.remove(str(BENCH_DIR))
    scripts = {path.stem for path in BENCH_DIR.glob("bench_*.py")}
    assert set(run_all.SCRIPTS) == scripts
    assert set(run_all.TIMEOUTS) == scripts
