"""Run every benchmark, one after the other (``make bench``).

Usage::

    python bench/run_all.py [--quick] [--only NAME ...]

Each script runs in its own process with this interpreter; its output is printed as it
comes. ``--quick`` is passed through (small counts, for CI). The exit status is 1 when any
benchmark failed (a non-zero exit, e.g. signers that disagree or a DAG file that imports
pydantic); a goal not met is reported in the output, not as a failure.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
#: In the order they run; cheap ones first.
SCRIPTS = (
    "bench_signing",
    "bench_parse",
    "bench_submit",
    "bench_costs",
    "bench_results",
    "bench_triggerer",
)
#: Arguments a full run adds: the cost figures become the committed baseline that
#: ``make test``'s quick lane checks (``bench/baseline.json``).
FULL_ARGS = {"bench_costs": ["--write-baseline"]}
#: Seconds a benchmark may take before it is stopped (full mode; quick: a tenth).
TIMEOUTS = {
    "bench_signing": 300,
    "bench_parse": 900,
    "bench_submit": 900,
    "bench_costs": 1800,
    "bench_results": 2400,
    "bench_triggerer": 1200,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts, for CI")
    parser.add_argument("--only", nargs="+", choices=SCRIPTS, help="run only these")
    args = parser.parse_args(argv)

    failed: list[str] = []
    for name in args.only or SCRIPTS:
        print(f"\n## {name}{' --quick' if args.quick else ''}\n", flush=True)
        started = time.monotonic()
        timeout = TIMEOUTS[name] // (10 if args.quick else 1)
        command = [sys.executable, str(BENCH_DIR / f"{name}.py")]
        command += ["--quick"] if args.quick else FULL_ARGS.get(name, [])
        try:
            done = subprocess.run(command, timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"{name}: stopped after {timeout} s", flush=True)
            failed.append(name)
            continue
        print(f"\n({name}: {time.monotonic() - started:.0f} s)", flush=True)
        if done.returncode:
            failed.append(name)
    if failed:
        print(f"\nFailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
