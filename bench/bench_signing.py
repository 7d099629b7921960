"""Benchmark our ``bce-auth-v1`` signer against bce-python-sdk 0.9.79's.

Usage::

    python bench/bench_signing.py [--quick]

For each of three requests it first checks that both signers produce the same
``Authorization`` (exit status 1 if not), then times them: signatures per second from the
median of several rounds of N calls. Each round runs both signers back to back and the ratio
is the median of the per-round ratios, so that load from other processes affects both alike.

It then times a fresh interpreter importing each signer: ``python -X importtime -c ...`` with
``time.perf_counter`` around the import inside the child, the median of several processes.
The same is repeated without ``-X importtime`` (whose own bookkeeping inflates the figure),
and the modules the import loads are counted from the ``-X importtime`` report.

What is timed is the same work on both sides: from the raw path, params and headers to the
``Authorization`` value. For the SDK that is ``normalize_string(path, False)`` followed by
``sign()``, since our ``sign()`` encodes the path itself; the bytes header dict and the
credentials object are built once outside the loop, as the SDK's own client holds them.

Each timed call signs a timestamp one second after the last one's, on both sides: our
signer keeps the signing key of the current second (a triggerer signs a hundred requests a
second with one key), which a loop over one timestamp would flatter.  It also remembers
the encoded form of strings it has seen (hosts, pools, content types repeat from request
to request); the "caches emptied" column clears both caches before every call, the cost of
a request whose every string is new.

``--quick`` uses small counts so that CI can run it in a few seconds.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from airflow_provider_aihc.auth.signer import _encode, sign, signing_key  # noqa: E402

AK = "0b0f67dfb88244b289b72b142befad0c"
SK = "bad522c2126a4618a8125f4b6cf6356f"
OUR_MODULE = "airflow_provider_aihc.auth.signer"
SDK_MODULE = "baidubce.auth.bce_v1_signer"


@dataclass(frozen=True)
class Request:
    name: str
    method: str
    path: str
    params: list[tuple[str, str | None]]
    headers: list[tuple[str, str]]
    timestamp: int


REQUESTS = (
    Request(
        name="v1 create (POST)",
        method="POST",
        path="/api/v1/aijobs",
        params=[("resourcePoolId", "cce-1uji3ib5")],
        headers=[
            ("Content-Type", "application/json"),
            ("User-Agent", "airflow-provider-aihc/0.1.0"),
            ("Host", "aihc.bj.baidubce.com"),
            ("Content-Length", "412"),
            ("x-bce-date", "2024-07-16T08:33:43Z"),
        ],
        timestamp=1721118823,
    ),
    Request(
        name="get job (GET)",
        method="GET",
        path="/api/v1/aijobs/pytorchjob-19d38d07-3e04-49ef-8428-d792881fc5fa",
        params=[("resourcePoolId", "cce-6zwnp4zf")],
        headers=[
            ("Host", "aihc.bj.baidubce.com"),
            ("Content-Length", "0"),
            ("Content-Type", "application/json"),
            ("x-bce-date", "2024-07-16T17:20:04Z"),
        ],
        timestamp=1721150404,
    ),
    Request(
        name="20 params, 10 headers",
        method="GET",
        path="/api/v1/aijobs/训练任务 01/logs",
        params=[
            ("resourcePoolId", "cce-1uji3ib5"),
            ("queueID", "aihcq-z4v1apdppzwy"),
            ("pageNo", "2"),
            ("pageSize", "50"),
            ("orderBy", "createdAt"),
            ("order", "desc"),
            ("keyword", "llama 3/70b+lora"),
            ("status", "Running"),
            ("startTime", "2024-07-16T00:00:00Z"),
            ("endTime", "2024-07-17T00:00:00Z"),
            ("podName", "pytorchjob-19d38d07-master-0"),
            ("container", "pytorch"),
            ("lines", "500"),
            ("follow", "false"),
            ("filter", "level=ERROR&source=stderr"),
            ("owner", "team a"),
            ("tag", "实验"),
            ("cursor", ""),
            ("marker", None),
            ("region", "bj"),
        ],
        headers=[
            ("Host", "aihc.bj.baidubce.com"),
            ("Content-Type", "application/json; charset=utf-8"),
            ("Content-Length", "0"),
            ("x-bce-date", "2024-07-16T08:33:43Z"),
            ("x-bce-request-id", "7f3c1a2e-0000-4e7e-9d7b-2a8f2c1b9e10"),
            ("x-bce-security-token", "ZjkyZDQ2YmE0MjQ5NDE2YjgzNmFmODNkNDJiNmZlNzR8AAAAAOQBAAA="),
            ("X-Bce-Client-Token", "airflow-dag-train-2024-07-16"),
            ("User-Agent", "airflow-provider-aihc/0.1.0"),
            ("Accept", "application/json"),
            ("X-API-Version", "v2"),
        ],
        timestamp=1721118823,
    ),
)


def our_signer(request: Request, *, fixed: bool = False, cold: bool = False) -> Callable[[], str]:
    """Our signer; each call a second later than the last unless ``fixed`` (our signer keeps
    the signing key of a second, which a timed loop of one timestamp would flatter).
    ``cold`` empties its caches (signing keys, encoded strings) before every call."""
    stamps = itertools.repeat(request.timestamp) if fixed else itertools.count(request.timestamp)
    clear = (_encode.cache_clear, signing_key.cache_clear) if cold else ()

    def call() -> str:
        for cache_clear in clear:
            cache_clear()
        return sign(
            access_key_id=AK,
            secret_access_key=SK,
            method=request.method,
            path=request.path,
            params=request.params,
            headers=request.headers,
            timestamp=next(stamps),
        ).authorization

    return call


def sdk_signer(request: Request, *, fixed: bool = False) -> Callable[[], str]:
    from baidubce import utils
    from baidubce.auth import bce_v1_signer
    from baidubce.auth.bce_credentials import BceCredentials

    credentials = BceCredentials(AK, SK)
    method = request.method.encode()
    headers = {name.encode(): value.encode() for name, value in request.headers}
    params = dict(request.params)
    stamps = itertools.repeat(request.timestamp) if fixed else itertools.count(request.timestamp)

    def call() -> str:
        path = utils.normalize_string(request.path, False)
        result: bytes = bce_v1_signer.sign(
            credentials, method, path, headers, params, timestamp=next(stamps)
        )
        return result.decode()

    return call


def rates(
    ours: Callable[[], object], sdk: Callable[[], object], number: int, repeat: int
) -> tuple[float, float, float]:
    """Calls per second of each, and their ratio, as medians over ``repeat`` rounds.

    Each round times ``number`` calls of ours, then ``number`` of the SDK's, so that both
    see the same machine load; the ratio is the median of the per-round ratios.
    """
    ours_timer, sdk_timer = timeit.Timer(ours), timeit.Timer(sdk)
    ours_times, sdk_times = [], []
    for _ in range(repeat):
        ours_times.append(ours_timer.timeit(number))
        sdk_times.append(sdk_timer.timeit(number))
    ratio = statistics.median(s / o for o, s in zip(ours_times, sdk_times, strict=True))
    return number / statistics.median(ours_times), number / statistics.median(sdk_times), ratio


def import_seconds(module: str, processes: int, *, importtime: bool) -> tuple[float, int]:
    """Median wall time of importing ``module`` in a fresh interpreter, and modules loaded."""
    code = (
        "import sys, time\n"
        "sys.stderr.write('--bench-mark--\\n')\n"
        "t0 = time.perf_counter()\n"
        f"import {module}\n"
        "print(time.perf_counter() - t0)\n"
    )
    flags = ["-X", "importtime"] if importtime else []
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    walls: list[float] = []
    loaded: list[int] = []
    for _ in range(processes):
        done = subprocess.run(
            [sys.executable, *flags, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO_ROOT,
            env=env,
        )
        walls.append(float(done.stdout.strip().splitlines()[-1]))
        after_mark = done.stderr.split("--bench-mark--\n", 1)[1]
        loaded.append(sum(line.startswith("import time:") for line in after_mark.splitlines()))
    return statistics.median(walls), int(statistics.median(loaded))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts, for CI")
    args = parser.parse_args(argv)
    number, repeat, processes = (300, 3, 3) if args.quick else (2000, 15, 11)

    for request in REQUESTS:
        ours_value = our_signer(request, fixed=True)()
        sdk_value = sdk_signer(request, fixed=True)()
        if ours_value != sdk_value:
            print(f"MISMATCH on {request.name}:\n  ours: {ours_value}\n  sdk:  {sdk_value}")
            return 1
    signers = [(r, our_signer(r), our_signer(r, cold=True), sdk_signer(r)) for r in REQUESTS]

    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"{repeat} repeats x {number} calls, {processes} fresh processes per import"
    )
    print("Authorization identical on all requests.\n")
    print("| Request | ours (sig/s) | SDK (sig/s) | ours/SDK | ours, caches emptied | /SDK |")
    print("|---|---:|---:|---:|---:|---:|")
    ratios = []
    for request, ours, cold, sdk in signers:
        ours_rate, sdk_rate, ratio = rates(ours, sdk, number, repeat)
        cold_rate, _, cold_ratio = rates(cold, sdk, number, repeat)
        ratios.append(ratio)
        print(
            f"| {request.name} | {ours_rate:,.0f} | {sdk_rate:,.0f} | {ratio:.2f}x "
            f"| {cold_rate:,.0f} | {cold_ratio:.2f}x |"
        )

    print("\n| Import (fresh process) | -X importtime (ms) | plain (ms) | modules loaded |")
    print("|---|---:|---:|---:|")
    walls = {}
    for module in (OUR_MODULE, SDK_MODULE):
        traced, loaded = import_seconds(module, processes, importtime=True)
        plain, _ = import_seconds(module, processes, importtime=False)
        walls[module] = (traced, plain)
        print(f"| `import {module}` | {traced * 1e3:.1f} | {plain * 1e3:.1f} | {loaded} |")
    (our_traced, our_plain), (sdk_traced, sdk_plain) = walls[OUR_MODULE], walls[SDK_MODULE]
    print(f"| SDK/ours | {sdk_traced / our_traced:.1f}x | {sdk_plain / our_plain:.1f}x | |")

    slowest = min(ratios)
    verdict = "met" if slowest >= 2 else "NOT met"
    print(f"\nGoal ours/SDK >= 2x on every request: {verdict} (lowest {slowest:.2f}x).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
