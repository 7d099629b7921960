"""Triggerer scale: N ``AIHCJobTrigger`` s in one event loop against a standalone emulator.

Usage::

    python bench/bench_triggerer.py [--quick] [--triggers N] [--with-logs] [--profile FILE]
        [--against REV]

Three processes, as in a deployment:

* **the emulator**, ``python -m airflow_provider_aihc.emulator --port 0``. Jobs never move
  on their own (one status lasts 10^9 s) but their logs grow by one line per second while
  they run;
* **the trigger process**, this script with ``--child``: it imports what a triggerer has
  loaded (Airflow with its ``TriggerRunner``'s module, our trigger, hook and models,
  aiohttp); in one asyncio event loop it runs one trigger of the kind measured to its
  event on a job already ``Succeeded`` (what the first trigger of a triggerer loads and
  sets up once, reported as its own figure, not spread over every trigger's RSS), notes
  its RSS, then creates the triggers as Airflow's ``TriggerRunner`` does (one a turn of
  the loop) and drives every trigger's
  ``run()`` to its first event, plus a 10 ms ticker that measures its own lateness
  (event-loop lag) and a 1 s sampler of CPU time (``time.process_time``) and RSS. The
  ticker and sampler run alone for 5 s first: that idle loop's CPU is taken off the
  run's to give the triggers' own (a 10 ms ticker alone costs 0.9-2.5% of a core here
  from one process to the next, as wide as a 2% goal: 5 s, not 2, since 2026-12-07).
  The triggers share their pool's watcher (``watch/watcher.py``); a poll is one job read
  by one watcher round. The connection comes from ``AIRFLOW_CONN_AIHC_DEFAULT``
  (``aget_connection``). New TCP connections are counted by wrapping
  ``BaseEventLoop.create_connection``;
* **the driver** (this script): creates N jobs through the API and sets them ``Running``
  (control API), starts the trigger process, and at staggered moments (spread evenly over
  60-120 s after the triggers start, in random order) sets each job ``Succeeded`` through
  ``POST /_emulator/jobs/{id}/status``, noting the time just before the call: the delay
  from then to the job's event is measured, never assumed. It also samples the emulator's
  CPU (``/proc/<pid>/stat``) and the established connections to it (``/proc/net/tcp``).

CPU is reported as the median over the poll cycles in which every trigger is alive (from
one poll interval after the start to the first finish: five 10 s cycles in the full run),
and over the whole run. HTTP requests are the emulator's own counters over the run; the
load average of the machine is printed beside the figures.

Two baselines. **The per-job floor**, measured in the same run (a second trigger process
against a fresh emulator, same jobs, same schedule): the design the watcher replaced at
its cheapest, one coroutine per job that wakes on the same 0.1 s grid and sends one GET
per poll on one aiohttp session of 16 connections, with headers signed once up front,
and only decodes the answer and reads its status (``--no-floor`` skips it). **The
Databricks provider's** ``DatabricksExecutionTrigger``, measured earlier on this machine
by the same method without the ticker (1,000 runs, 10 s poll): its figures are constants
here.

``--quick``: 50 triggers, 1 s poll, finishes 3-5 s after the start (about 20 s in all).
``--with-logs`` repeats the run with ``stream_logs=True``. ``--profile FILE`` runs the
trigger process under cProfile and writes its stats to FILE (CPU figures then include the
profiler's overhead). ``--gc-freeze`` (a diagnostic) calls ``gc.freeze()`` in the trigger
process after its imports, to tell garbage-collector pauses from the triggers' own work.
``--against REV`` also runs the package as it was at git revision ``REV`` (``git
archive``, in a temporary folder; the emulator and the driver stay the working tree's)
and prints both side by side with their ratios: a figure written down on another day came
from another machine and another version of this benchmark (issue 37's "1.66% before the
last round" reads 3.7-4.6% here, with its own tree), so a change is judged against
its earlier tree measured in the same run.  The trigger process needs only names every
tree with ``watch/watcher.py`` has (checked over every commit since c5214ab; run on
c5214ab and HEAD).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _common import BENCH_DIR, REPO_ROOT, Emulator, child_env, package_at, tcp_connections_to

if TYPE_CHECKING:  # the driver's only: the trigger process may run an older tree (--against)
    from airflow_provider_aihc.emulator.client import EmulatorClient

POOL = "cce-emulator0"
#: How long the ticker and sampler run alone before the triggers start.
IDLE_SECONDS = 5.0
MARK = "--bench-trigger--"

#: DatabricksExecutionTrigger, 1,000 runs, 10 s poll, measured on this machine earlier.
BASELINE = {
    "cpu_percent": 7.0,
    "cpu_per_cycle": 0.70,
    "peak_rss_mb": 157.5,
    "rss_per_trigger_kb": 35.7,
    "connections": 1000,
    "requests_per_job": 11.3,
    "delay_median": 5.2,
    "delay_p99": 10.0,
    "lag_max": 0.40,
}
#: The goals at 1,000 triggers (10 s poll): issue 37 asks for its 10,000 goals at 1,000
#: too; where issue 13's were stricter (CPU, 0.5%) they stay.  At 10,000: ``GOALS_10K``.
GOALS = {
    "cpu_net_percent": 0.5,
    "rss_per_trigger_kb": 8.0,
    "connections": 16,
    "lag_max": 0.100,
    "requests_per_job_poll": 0.05,
    "log_requests_per_job_poll": 1.0,
}
GOALS_10K = {"cpu_net_percent": 2.0, "rss_per_trigger_kb": 8.0}


@dataclass
class Config:
    """What the trigger process is told (as JSON in a file)."""

    url: str
    job_ids: list[str]
    poll_interval: float
    stream_logs: bool
    profile: str | None
    gc_freeze: bool = False
    floor: bool = False
    #: Airflow's own ``DateTimeTrigger`` instead of ours, each firing when its job is set
    #: ``Succeeded`` (:func:`flip_offsets`): what any deferred task costs the triggerer.
    airflow_floor: bool = False
    finish: tuple[float, float] = (60.0, 120.0)
    #: A job already ``Succeeded``: one trigger of the kind measured is run on it to its
    #: event before RSS is noted (:func:`child_main`), so that what the first trigger of a
    #: triggerer loads once is not counted as every trigger's.
    warm_job_id: str = ""


def flip_offsets(job_ids: list[str], finish: tuple[float, float]) -> list[tuple[float, str]]:
    """When each job is set ``Succeeded``, in seconds after the triggers start: spread
    evenly over ``finish``, in a fixed random order; sorted by time."""
    n = len(job_ids)
    offsets = [finish[0] + (finish[1] - finish[0]) * i / max(1, n - 1) for i in range(n)]
    random.Random(7).shuffle(offsets)
    return sorted(zip(offsets, job_ids, strict=True))


def date_time_trigger() -> Any:
    """Airflow's ``DateTimeTrigger`` (the standard provider's on 3.x, core's on 2.11)."""
    try:
        from airflow.providers.standard.triggers.temporal import DateTimeTrigger
    except ImportError:
        from airflow.triggers.temporal import DateTimeTrigger  # type: ignore[no-redef]
    return DateTimeTrigger


# -- the trigger process ---------------------------------------------------------------------


def read_status_kb(field: str) -> int:
    """``VmRSS``/``VmHWM`` of this process in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def emit(kind: str, payload: Any) -> None:
    sys.stdout.write(f"{MARK}{json.dumps({'kind': kind, 'data': payload})}\n")
    sys.stdout.flush()


def child_main(config_path: str) -> int:
    config = Config(**json.loads(Path(config_path).read_text()))
    # Everything a triggerer process has loaded before our triggers run.
    import aiohttp

    # The module that defines Airflow's TriggerRunner: a triggerer's runner process has it
    # (and the supervisor, comms and logging it imports, ~220 modules) loaded before any
    # trigger runs, so its memory is not a trigger's.
    import airflow.jobs.triggerer_job_runner  # noqa: F401
    import yarl

    # Only what every tree with watch/watcher.py has: --against runs older ones.
    import airflow_provider_aihc.hooks.aihc
    import airflow_provider_aihc.watch
    from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
    from airflow_provider_aihc.watch import first_poll_delay
    from airflow_provider_aihc.watch.flow import grid_sleep
    from airflow_provider_aihc.watch.watcher import PoolWatcher

    polls = {"count": 0}
    read_round = PoolWatcher.read_round

    async def counted_round(self: PoolWatcher) -> None:  # a round reads every job once
        polls["count"] += len(self.job_ids)
        await read_round(self)

    PoolWatcher.read_round = counted_round  # type: ignore[method-assign]

    gc_pauses: list[tuple[float, int, float]] = []
    gc_started = [0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            gc_pauses.append((time.time(), info["generation"], time.perf_counter() - gc_started[0]))

    gc.callbacks.append(on_gc)
    if config.gc_freeze:  # diagnostic: move the import-time heap out of the collector's way
        gc.collect()
        gc.freeze()

    connections = {"opened": 0}
    original = asyncio.base_events.BaseEventLoop.create_connection

    async def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        connections["opened"] += 1
        return await original(self, *args, **kwargs)

    asyncio.base_events.BaseEventLoop.create_connection = counting  # type: ignore[method-assign]

    async def run_all() -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        lags: list[float] = []
        spikes: list[tuple[float, float]] = []
        samples: list[tuple[float, float, int]] = []
        events: dict[str, tuple[float, str]] = {}

        async def ticker() -> None:
            while not stop.is_set():
                before = loop.time()
                await asyncio.sleep(0.010)
                lag = loop.time() - before - 0.010
                lags.append(lag)
                if lag > 0.020:
                    spikes.append((time.time(), lag))

        async def sampler() -> None:
            while not stop.is_set():
                samples.append((time.time(), time.process_time(), read_status_kb("VmRSS")))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1.0)

        async def watch(trigger: Any, job_id: str) -> None:
            if config.airflow_floor:
                async for _ in trigger.run():
                    events[job_id] = (time.time(), "success")
                    break
                return
            if config.floor:
                status = await floor_watch(trigger.job_id)
                events[trigger.job_id] = (time.time(), status)
                return
            async for event in trigger.run():
                events[trigger.job_id] = (time.time(), event.payload["status"])
                break

        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit_per_host=16, keepalive_timeout=120.0)
        )

        async def floor_watch(job_id: str) -> str:
            """The floor: the same wake-ups and one GET per poll on one aiohttp session of 16
            connections, signed once up front, the answer decoded by ``json`` and its
            status read, nothing else."""
            from airflow_provider_aihc.hooks import calls
            from airflow_provider_aihc.hooks._connection import ConnectionConfig
            from airflow_provider_aihc.hooks._endpoint import ApiRequest
            from airflow_provider_aihc.hooks._wire import prepare

            signed = prepare(
                ConnectionConfig(config.url, "aihc-emulator-ak", "aihc-emulator-sk"),
                ApiRequest(
                    calls.GetJobCall.endpoint,
                    f"/api/v1/aijobs/{job_id}",
                    (("resourcePoolId", POOL),),
                ),
                time.time(),
            )
            url = yarl.URL(config.url + signed.target, encoded=True)
            headers = {k: v for k, v in signed.headers.items() if k.lower() != "host"}
            await grid_sleep(first_poll_delay(job_id, config.poll_interval))
            while True:
                polls["count"] += 1
                async with session.get(url, headers=headers) as answer:
                    body = await answer.read()
                if json.loads(body)["result"]["status"] == "Succeeded":
                    return "success"
                await grid_sleep(config.poll_interval)

        async def create_triggers() -> list[asyncio.Task[None]]:
            """As Airflow's ``TriggerRunner.create_triggers`` (3.3.2,
            ``jobs/triggerer_job_runner.py:1329``): one trigger a turn of the loop, with
            ``await asyncio.sleep(0)`` before its class is looked up and again before it
            is built, its task created last. (Creating them all in one turn, as this
            benchmark did, ran every trigger's first step in one turn too: a stall of the
            benchmark's making, ~150 ms at 10,000.)"""
            started = []
            for job_id in config.job_ids:
                await asyncio.sleep(0)
                await asyncio.sleep(0)
                moment = start + offsets[job_id] if config.airflow_floor else start
                trigger = make_trigger(job_id, moment)
                started.append(asyncio.create_task(watch(trigger, job_id)))
            return started

        def make_trigger(job_id: str, moment: float) -> Any:
            """The trigger measured for ``job_id``; a ``DateTimeTrigger`` fires at ``moment``
            (the floor's watch does not use it)."""
            if config.airflow_floor:
                return date_time_trigger()(moment=datetime.fromtimestamp(moment, UTC))
            return AIHCJobTrigger(
                job_id=job_id,
                resource_pool_id=POOL,
                poll_interval=config.poll_interval,
                stream_logs=config.stream_logs,
            )

        # One trigger run to its event first, on a job already Succeeded: the modules,
        # connection and session the first trigger of a triggerer sets up are not every
        # trigger's memory (they are reported on their own, as "first trigger").
        rss_cold = read_status_kb("VmRSS")
        await watch(make_trigger(config.warm_job_id, time.time()), config.warm_job_id)
        events.clear()
        polls["count"] = 0  # connections opened: the triggerer's, the warm-up's included
        rss_before = read_status_kb("VmRSS")  # imports and the warm-up
        emit("warmed", {"rss_cold_kb": rss_cold})
        tasks = [asyncio.create_task(ticker()), asyncio.create_task(sampler())]
        await asyncio.sleep(IDLE_SECONDS)  # the idle loop: ticker and sampler alone
        idle = (samples[0], (time.time(), time.process_time(), read_status_kb("VmRSS")))
        idle_lags = list(lags)
        lags.clear()

        offsets = (  # each DateTimeTrigger fires when its job is set Succeeded
            {job_id: offset for offset, job_id in flip_offsets(config.job_ids, config.finish)}
            if config.airflow_floor
            else {}
        )
        spikes.clear()
        gc_pauses.clear()
        start = time.time()
        emit("start", {"start": start, "rss_before_kb": rss_before})
        await asyncio.gather(*await create_triggers())
        end = time.time()
        await session.close()
        samples.append((end, time.process_time(), read_status_kb("VmRSS")))
        stop.set()
        await asyncio.gather(*tasks)
        lags_sorted = sorted(lags)
        return {
            "start": start,
            "end": end,
            "events": events,
            "samples": samples,
            "idle": idle,
            "idle_lag_max": max(idle_lags, default=0.0),
            "lag_p99": lags_sorted[int(0.99 * (len(lags_sorted) - 1))] if lags_sorted else 0.0,
            "lag_max": lags_sorted[-1] if lags_sorted else 0.0,
            "ticks": len(lags_sorted),
            "rss_before_kb": rss_before,
            "rss_cold_kb": rss_cold,
            "rss_peak_kb": read_status_kb("VmHWM"),
            "connections_opened": connections["opened"],
            "polls": polls["count"],
            "spikes": sorted(spikes, key=lambda spike: -spike[1])[:10],
            "gc_pauses": gc_pauses,
            # Where the trigger's package came from (--against: the extracted tree).
            "package": str(Path(airflow_provider_aihc.__file__ or "").parents[1]),
        }

    if config.profile:
        import cProfile

        profiler = cProfile.Profile()
        result = profiler.runcall(asyncio.run, run_all())
        profiler.dump_stats(config.profile)
    else:
        result = asyncio.run(run_all())
    emit("result", result)
    return 0


# -- the driver ------------------------------------------------------------------------------


@dataclass
class Run:
    """The figures of one run."""

    triggers: int
    poll: float
    stream_logs: bool
    floor: bool
    cpu_percent: float
    cpu_net_percent: float
    cpu_per_cycle: float
    cpu_percent_all: float
    cpu_cycles: list[float]
    idle_cpu_percent: float
    #: RSS before the triggers start: the imports and the warm-up trigger.
    rss_before_mb: float
    #: What the first trigger (the warm-up) left in memory: modules loaded on first use,
    #: the connection, the shared session.  Once per triggerer, not per trigger.
    rss_first_trigger_mb: float
    peak_rss_mb: float
    rss_per_trigger_kb: float
    connections: int
    peak_established: int
    requests: dict[str, int]
    requests_per_job: float
    requests_per_job_poll: float
    log_requests_per_job_poll: float
    polls: int
    gc_max: float
    gc_full: int
    spikes: list[tuple[float, float]]
    spike_gcs: list[float]
    delay_median: float
    delay_p99: float
    delay_max: float
    lag_p99: float
    lag_max: float
    idle_lag_max: float
    emulator_cpu_percent: float
    events_ok: int
    duration: float
    #: The folder the trigger process imported ``airflow_provider_aihc`` from.
    package: str


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def gc_within(pauses: list[list[float]], at: float, lag: float) -> float:
    """The longest full (generation 2) collection that ended during the stall that ended
    at ``at`` and lasted ``lag`` (plus the 10 ms tick), in seconds; 0 when none did."""
    return max((p[2] for p in pauses if p[1] == 2 and at - lag - 0.011 <= p[0] <= at), default=0.0)


def cpu_between(samples: list[list[float]], t0: float, t1: float) -> float:
    """Fraction of one core used between the samples nearest ``t0`` and ``t1``."""
    first = min(samples, key=lambda s: abs(s[0] - t0))
    last = min(samples, key=lambda s: abs(s[0] - t1))
    if last[0] <= first[0]:
        return 0.0
    return (last[1] - first[1]) / (last[0] - first[0])


class ChildOutput:
    """Collects the trigger process's marked stdout lines in a thread (the pipe never fills)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.messages: dict[str, Any] = {}
        self.other_lines = 0
        self.warmed = threading.Event()
        self.ready = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(MARK):
                message = json.loads(line[len(MARK) :])
                self.messages[message["kind"]] = message["data"]
                if message["kind"] == "warmed":
                    self.warmed.set()
                if message["kind"] == "start":
                    self.ready.set()
            else:
                self.other_lines += 1

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def run_once(
    home: str,
    n: int,
    poll: float,
    finish: tuple[float, float],
    stream_logs: bool,
    profile: str | None,
    gc_freeze: bool = False,
    floor: bool = False,
    airflow_floor: bool = False,
    package: str | None = None,
) -> Run:
    """One trigger process against a fresh emulator, measured.

    :param package: the folder of another tree's ``airflow_provider_aihc`` for the trigger
        process (``--against``); the emulator and this driver always run the working tree's.
    """
    from airflow_provider_aihc.emulator.client import EmulatorClient
    from airflow_provider_aihc.emulator.connection import connection_to

    env = child_env(home)
    emulator = Emulator(
        env, "--seconds-per-status", "1e9", "--running-seconds", "1e9", "--log-level", "WARNING"
    )
    try:
        client = EmulatorClient(emulator.url)
        job_ids = [client.create_job(POOL, f"bench-trigger-{i}") for i in range(n)]
        for job_id in job_ids:
            client.control("POST", f"jobs/{job_id}/status", {"status": "Running"})
        warm_job_id = client.create_job(POOL, "bench-trigger-warm-up")
        client.control("POST", f"jobs/{warm_job_id}/status", {"status": "Succeeded"})

        config_path = Path(home) / "trigger-config.json"  # removed with the home
        config = Config(
            emulator.url, job_ids, poll, stream_logs, profile, gc_freeze, floor, airflow_floor,
            finish, warm_job_id,
        )  # fmt: skip
        config_path.write_text(json.dumps(asdict(config)))
        conn = connection_to(
            emulator.url,
            access_key_id=client.access_key_id,
            secret_access_key=client.secret_access_key,
            resource_pool_id=POOL,
        )
        child_env_ = child_env(
            home,
            package,
            AIRFLOW_CONN_AIHC_DEFAULT=conn.json,
            # DateTimeTrigger logs ~26 lines a trigger at INFO (each sleep): its floor is
            # what holding a deferred task costs, not that logging.
            AIRFLOW__LOGGING__LOGGING_LEVEL="WARNING" if airflow_floor else "INFO",
        )
        with tempfile.TemporaryFile("w+") as stderr:
            process = subprocess.Popen(
                [
                    sys.executable,
                    str(BENCH_DIR / "bench_triggerer.py"),
                    "--child",
                    str(config_path),
                ],
                cwd=REPO_ROOT,
                env=child_env_,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
            output = ChildOutput(process)
            try:
                # The warm-up's requests are not the run's: counted from after it (the
                # trigger process then idles for IDLE_SECONDS, sending nothing).
                warmed = output.warmed.wait(120 + 2 * poll)
                counts_before = client.request_counts()
                if not warmed or not output.ready.wait(120):
                    stderr.seek(0)
                    raise RuntimeError(f"trigger process did not start:\n{stderr.read()[-3000:]}")
                start = output.messages["start"]["start"]
                flips, peak, emu_cpu = drive_flips(client, emulator, job_ids, start, finish)
                process.wait(timeout=finish[1] + 10 * poll + 120)
                output.join(30)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait(10)
            if process.returncode != 0 or "result" not in output.messages:
                stderr.seek(0)
                raise RuntimeError(f"trigger process failed:\n{stderr.read()[-3000:]}")
        counts_after = client.request_counts()
        emu_cpu_end = emulator.cpu_seconds()
    finally:
        emulator.stop()
    result = output.messages["result"]
    return summarize(
        result, flips, counts_before, counts_after, peak, emu_cpu, emu_cpu_end, n, poll,
        finish, stream_logs, floor,
    )  # fmt: skip


def drive_flips(
    client: EmulatorClient,
    emulator: Emulator,
    job_ids: list[str],
    start: float,
    finish: tuple[float, float],
) -> tuple[dict[str, float], int, tuple[float, float]]:
    """Set each job ``Succeeded`` at its moment; sample connections once a second.

    Returns the flip times, the peak of established connections, and the emulator's CPU
    seconds and time at the start.
    """
    plan = flip_offsets(job_ids, finish)
    emu_start = (time.time(), emulator.cpu_seconds())
    flips: dict[str, float] = {}
    peak = 0
    next_sample = time.time()
    for offset, job_id in plan:
        due = start + offset
        while True:
            now = time.time()
            if now >= next_sample:
                peak = max(peak, tcp_connections_to(emulator.port))
                next_sample = now + 1.0
            if now >= due:
                break
            time.sleep(max(0.0, min(due, next_sample) - now))
        flips[job_id] = time.time()
        client.control("POST", f"jobs/{job_id}/status", {"status": "Succeeded"})
    return flips, peak, emu_start


def summarize(
    result: dict[str, Any],
    flips: dict[str, float],
    before: dict[str, int],
    after: dict[str, int],
    peak: int,
    emu_start: tuple[float, float],
    emu_cpu_end: float,
    n: int,
    poll: float,
    finish: tuple[float, float],
    stream_logs: bool,
    floor: bool,
) -> Run:
    start, end = result["start"], result["end"]
    samples = result["samples"]
    # Steady: every poll cycle in which all triggers are alive; the median cycle.
    cycles = [
        cpu_between(samples, t, t + poll)
        for t in (start + poll * k for k in range(1, int(finish[0] // poll)))
        if t + poll <= start + finish[0]
    ] or [cpu_between(samples, start, start + finish[0])]
    steady = statistics.median(cycles)
    whole = cpu_between(samples, start, end)
    (t0, c0, _), (t1, c1, _) = result["idle"]
    idle = (c1 - c0) / (t1 - t0)
    events = result["events"]
    delays = [events[job][0] - flips[job] for job in flips if job in events]
    requests = {op: after.get(op, 0) - before.get(op, 0) for op in after}
    requests = {op: count for op, count in requests.items() if count}
    trigger_requests = sum(requests.values())
    pauses = [p for p in result["gc_pauses"] if p[0] >= start]
    rss_before = result["rss_before_kb"]
    peak_rss = result["rss_peak_kb"]
    return Run(
        triggers=n,
        poll=poll,
        stream_logs=stream_logs,
        floor=floor,
        cpu_percent=100 * steady,
        cpu_net_percent=100 * (steady - idle),
        cpu_per_cycle=steady * poll,
        cpu_percent_all=100 * whole,
        cpu_cycles=[100 * c for c in cycles],
        idle_cpu_percent=100 * idle,
        rss_before_mb=rss_before / 1024,
        rss_first_trigger_mb=(rss_before - result["rss_cold_kb"]) / 1024,
        peak_rss_mb=peak_rss / 1024,
        rss_per_trigger_kb=(peak_rss - rss_before) / n,
        connections=result["connections_opened"],
        peak_established=peak,
        requests=requests,
        requests_per_job=trigger_requests / n,
        requests_per_job_poll=trigger_requests / result["polls"] if result["polls"] else 0.0,
        log_requests_per_job_poll=(
            requests.get("GetPodLogs", 0) / result["polls"] if result["polls"] else 0.0
        ),
        polls=result["polls"],
        gc_max=max((p[2] for p in pauses), default=0.0),
        gc_full=sum(1 for p in pauses if p[1] == 2),
        spikes=[(at - start, lag) for at, lag in result["spikes"]],
        spike_gcs=[gc_within(pauses, at, lag) for at, lag in result["spikes"]],
        delay_median=statistics.median(delays),
        delay_p99=percentile(delays, 0.99),
        delay_max=max(delays),
        lag_p99=result["lag_p99"],
        lag_max=result["lag_max"],
        idle_lag_max=result["idle_lag_max"],
        emulator_cpu_percent=100 * (emu_cpu_end - emu_start[1]) / (end - emu_start[0]),
        events_ok=sum(1 for _, status in events.values() if status == "success"),
        duration=end - start,
        package=result["package"],
    )


def _row(
    name: str,
    ours: str,
    floor: str = "",
    floor_ratio: float | None = None,
    theirs: str = "",
    ratio: float | None = None,
    goal: str = "",
    met: bool | None = None,
) -> str:
    cells = [
        name,
        ours,
        floor,
        f"{floor_ratio:.2f}x" if floor_ratio is not None else "",
        theirs,
        f"{ratio:.2f}x" if ratio is not None else "",
        goal,
        "" if met is None else ("yes" if met else "**no**"),
    ]
    return "| " + " | ".join(cells) + " |"


def _ratio(ours: float, base: float) -> float | None:
    return ours / base if base > 0 else None


def report(run: Run, floor: Run | None, with_baseline: bool) -> list[str]:
    """The table of one run, beside the floor (the per-job GET poller) measured in the
    same run and the Databricks figures when comparable."""
    b = BASELINE if with_baseline else {}
    f = floor
    goals = {**GOALS, **GOALS_10K} if run.triggers >= 10_000 else GOALS
    cpu_goal = goals["cpu_net_percent"]
    db_cpu = b.get("cpu_percent")
    lines = [
        "| Metric | AIHCJobTrigger | per-job floor (same run) | ours/floor "
        "| Databricks (earlier) | ours/Databricks | goal | met |",
        "|---|---:|---:|---:|---:|---:|---|---|",
        _row("CPU the triggers cost, % of a core (run less idle loop)",
             f"{run.cpu_net_percent:.2f}%", f"{f.cpu_net_percent:.2f}%" if f else "",
             _ratio(run.cpu_net_percent, f.cpu_net_percent) if f else None,
             f"{db_cpu}%" if db_cpu else "", run.cpu_net_percent / db_cpu if db_cpu else None,
             f"<= {cpu_goal:g}%", run.cpu_net_percent <= cpu_goal),
        _row("CPU of the run, % of a core (steady, idle loop included)",
             f"{run.cpu_percent:.2f}%", f"{f.cpu_percent:.2f}%" if f else "",
             _ratio(run.cpu_percent, f.cpu_percent) if f else None),
        _row("Idle loop (10 ms ticker + sampler), % of a core",
             f"{run.idle_cpu_percent:.2f}%", f"{f.idle_cpu_percent:.2f}%" if f else ""),
        _row("Peak RSS (MB)", f"{run.peak_rss_mb:.1f}", f"{f.peak_rss_mb:.1f}" if f else "",
             _ratio(run.peak_rss_mb, f.peak_rss_mb) if f else None,
             f"{b['peak_rss_mb']}" if b else ""),
        _row("RSS the first trigger left, once per triggerer (MB)",
             f"{run.rss_first_trigger_mb:.1f}", f"{f.rss_first_trigger_mb:.1f}" if f else ""),
        _row("RSS per trigger (KB)", f"{run.rss_per_trigger_kb:.1f}",
             f"{f.rss_per_trigger_kb:.1f}" if f else "", None,
             f"{b['rss_per_trigger_kb']}" if b else "", None,
             f"<= {goals['rss_per_trigger_kb']:.0f} KB",
             run.rss_per_trigger_kb <= goals["rss_per_trigger_kb"]),
        _row("TCP connections opened", f"{run.connections}", f"{f.connections}" if f else "",
             None, f"{b['connections']}" if b else "", None, f"<= {GOALS['connections']}",
             run.connections <= GOALS["connections"]),
        _row("HTTP requests per job (whole run)", f"{run.requests_per_job:.2f}",
             f"{f.requests_per_job:.1f}" if f else "", None,
             f"{b['requests_per_job']}" if b else ""),
        _row("HTTP requests per job per poll", f"{run.requests_per_job_poll:.3f}",
             f"{f.requests_per_job_poll:.2f}" if f else "", None, "", None,
             f"<= {GOALS['requests_per_job_poll']}",
             run.requests_per_job_poll <= GOALS["requests_per_job_poll"]),
    ]  # fmt: skip
    if run.stream_logs:
        per_poll = run.log_requests_per_job_poll
        met = per_poll <= 1.0 + 1e-9
        name = "GetPodLogs per running job per poll"
        lines.append(_row(name, f"{per_poll:.2f}", goal="<= 1", met=met))
    lines += [
        _row("Event delay after the flip, median (s)", f"{run.delay_median:.2f}",
             f"{f.delay_median:.2f}" if f else "", None, f"{b['delay_median']}" if b else ""),
        _row("Event delay after the flip, p99 (s)", f"{run.delay_p99:.2f}",
             f"{f.delay_p99:.2f}" if f else "", None, f"{b['delay_p99']}" if b else "", None,
             f"<= {run.poll + 1:g}", run.delay_p99 <= run.poll + 1),
        _row("Event-loop lag, p99 (ms)", f"{run.lag_p99 * 1e3:.1f}",
             f"{f.lag_p99 * 1e3:.1f}" if f else ""),
        _row("Event-loop lag, max (ms)", f"{run.lag_max * 1e3:.1f}",
             f"{f.lag_max * 1e3:.1f}" if f else "", None,
             f"{b['lag_max'] * 1e3:.0f}" if b else "", None,
             f"<= {GOALS['lag_max'] * 1e3:.0f}", run.lag_max <= GOALS["lag_max"]),
    ]  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 triggers, short times")
    parser.add_argument("--triggers", type=int, default=None, help="default 1000")
    parser.add_argument("--poll", type=float, default=None, help="poll interval, s (10)")
    parser.add_argument(
        "--finish", type=float, nargs=2, default=None, help="finish window, s (60 120)"
    )
    parser.add_argument("--with-logs", action="store_true", help="also run stream_logs=True")
    parser.add_argument("--profile", default=None, help="cProfile the trigger process")
    parser.add_argument(
        "--gc-freeze", action="store_true", help="diagnostic: gc.freeze() after imports"
    )
    parser.add_argument(
        "--no-floor", action="store_true", help="skip the floor run (the same-run baseline)"
    )
    parser.add_argument(
        "--airflow-floor",
        action="store_true",
        help="also run Airflow's DateTimeTrigger, one per job, as a same-run floor",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        default=None,
        help="also run the package as it was at git REV, as a same-run baseline",
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args.child)

    n = args.triggers or (50 if args.quick else 1000)
    poll = args.poll or (1.0 if args.quick else 10.0)
    finish = tuple(args.finish or ((3.0, 5.0) if args.quick else (60.0, 120.0)))
    import airflow

    load_before = os.getloadavg()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="aihc-bench-triggerer-") as home:
        modes = [False, True] if args.with_logs else [False]
        for stream_logs in modes:
            runs.append(run_once(home, n, poll, finish, stream_logs, args.profile, args.gc_freeze))
        floor = None
        if not args.no_floor:
            floor = run_once(home, n, poll, finish, False, None, args.gc_freeze, floor=True)
        airflow_floor = None
        if args.airflow_floor:
            airflow_floor = run_once(
                home, n, poll, finish, False, None, args.gc_freeze, airflow_floor=True
            )
        earlier = None
        if args.against:
            with tempfile.TemporaryDirectory(prefix="aihc-bench-tree-") as tree:
                package = package_at(args.against, tree)
                earlier = run_once(
                    home, n, poll, finish, False, None, args.gc_freeze, package=package
                )

    comparable = n == 1000 and poll == 10.0
    print(
        f"Airflow {airflow.__version__}, Python {platform.python_version()} on "
        f"{platform.machine()}, {os.cpu_count()} CPUs; {n} triggers, {poll:g} s poll, jobs "
        f"finishing {finish[0]:g}-{finish[1]:g} s after the start; load average (1, 5, "
        f"15 min) {', '.join(f'{x:.2f}' for x in load_before)} before the runs, "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} after"
    )
    failed = 0
    for run in runs:
        print(f"\n### stream_logs={run.stream_logs}\n")
        same_kind = floor if not run.stream_logs else None
        print("\n".join(report(run, same_kind, comparable and not run.stream_logs)))
        print(
            f"\nEvents: {run.events_ok}/{run.triggers} success in {run.duration:.0f} s. "
            f"Requests: {', '.join(f'{op} {count}' for op, count in sorted(run.requests.items()))}."
        )
        print(
            f"CPU per steady poll cycle: {', '.join(f'{c:.1f}%' for c in run.cpu_cycles)} "
            f"(median above); over the whole run {run.cpu_percent_all:.2f}%; the idle loop "
            f"(ticker + sampler alone) {run.idle_cpu_percent:.2f}%. RSS before the "
            f"triggers (imports, warm-up) {run.rss_before_mb:.1f} MB. Established "
            f"connections, peak: {run.peak_established}. Event delay max "
            f"{run.delay_max:.2f} s. Emulator process: {run.emulator_cpu_percent:.1f}% of a "
            f"core. Polls: {run.polls}. GC: {run.gc_full} full collections, longest pause "
            f"{run.gc_max * 1e3:.0f} ms."
        )
        print(f"Largest event-loop stalls: {largest_stalls(run, 5)}.")
        if same_kind is not None:
            f = same_kind
            print(
                f"Per-job floor run: {f.events_ok}/{f.triggers} finished, {f.polls} polls, "
                f"{f.gc_full} full collections, longest pause {f.gc_max * 1e3:.0f} ms."
            )
        failed += run.triggers - run.events_ok
    if floor is not None:
        failed += floor.triggers - floor.events_ok
    if airflow_floor is not None:
        print("\n".join(["", *airflow_floor_report(runs[0], airflow_floor)]))
        failed += airflow_floor.triggers - airflow_floor.events_ok
    if earlier is not None:
        print("\n".join(["", *against_report(runs[0], earlier, args.against)]))
        failed += earlier.triggers - earlier.events_ok
    return 1 if failed else 0


def against_report(run: Run, base: Run, revision: str) -> list[str]:
    """Ours beside the package as it was at ``revision`` (``--against``): the same
    benchmark, machine and load, so that a figure from another day (its machine, its
    version of this benchmark) is not what a change is judged by."""
    rows = [
        ("CPU the triggers cost, % of a core (run less idle loop)",
         run.cpu_net_percent, base.cpu_net_percent, ".2f"),
        ("Idle loop, % of a core", run.idle_cpu_percent, base.idle_cpu_percent, ".2f"),
        ("RSS per trigger (KB)", run.rss_per_trigger_kb, base.rss_per_trigger_kb, ".1f"),
        ("HTTP requests per job per poll", run.requests_per_job_poll,
         base.requests_per_job_poll, ".3f"),
        ("Event delay after the flip, p99 (s)", run.delay_p99, base.delay_p99, ".2f"),
        ("Event-loop lag, max (ms)", run.lag_max * 1e3, base.lag_max * 1e3, ".0f"),
        ("Longest collection (ms)", run.gc_max * 1e3, base.gc_max * 1e3, ".0f"),
        ("Full collections", run.gc_full, base.gc_full, "d"),
    ]  # fmt: skip
    lines = [
        f"### The package at {revision}, same run (same benchmark, machine and load)",
        "",
        f"| Metric | working tree | {revision} | ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, ours, theirs, spec in rows:
        ratio = _ratio(ours, theirs)
        shown = f"{ratio:.2f}x" if ratio is not None else ""
        lines.append(f"| {name} | {ours:{spec}} | {theirs:{spec}} | {shown} |")
    lines += [
        "",
        f"{revision}: {base.events_ok}/{base.triggers} events, its package imported from "
        f"{base.package}; largest stalls: {largest_stalls(base, 5)}.",
    ]
    return lines


def airflow_floor_report(run: Run, base: Run) -> list[str]:
    """Ours beside Airflow's ``DateTimeTrigger`` (same N, same schedule, same run): the
    heap, collections and stalls that any N deferred tasks bring to a triggerer."""

    return [
        f"### Airflow's DateTimeTrigger x {base.triggers}, same run (a floor: what holding",
        "### that many deferred tasks costs a triggerer)",
        "",
        "| Metric | AIHCJobTrigger | DateTimeTrigger | ours/theirs |",
        "|---|---:|---:|---:|",
        f"| Peak RSS (MB) | {run.peak_rss_mb:.1f} | {base.peak_rss_mb:.1f} "
        f"| {run.peak_rss_mb / base.peak_rss_mb:.2f}x |",
        f"| RSS per trigger (KB) | {run.rss_per_trigger_kb:.1f} | "
        f"{base.rss_per_trigger_kb:.1f} | |",
        f"| Full collections | {run.gc_full} | {base.gc_full} | |",
        f"| Longest collection (ms) | {run.gc_max * 1e3:.0f} | {base.gc_max * 1e3:.0f} "
        f"| {_ratio(run.gc_max, base.gc_max) or 0:.2f}x |",
        f"| Event-loop lag, max (ms) | {run.lag_max * 1e3:.0f} | {base.lag_max * 1e3:.0f} "
        f"| {_ratio(run.lag_max, base.lag_max) or 0:.2f}x |",
        f"| CPU of the run less idle loop (%) | {run.cpu_net_percent:.2f} "
        f"| {base.cpu_net_percent:.2f} | |",
        "",
        f"DateTimeTrigger: {base.events_ok}/{base.triggers} fired; largest stalls: "
        f"{largest_stalls(base, 5)}.",
    ]


def largest_stalls(run: Run, count: int) -> str:
    """The run's ``count`` longest event-loop stalls, each with the full collection in it."""
    return (
        ", ".join(
            f"{lag * 1e3:.0f} ms at +{at:.1f} s"
            + (f" (a full GC of {gc * 1e3:.0f} ms in it)" if gc else "")
            for (at, lag), gc in zip(run.spikes[:count], run.spike_gcs, strict=False)
        )
        or "-"
    )


if __name__ == "__main__":
    sys.exit(main())
