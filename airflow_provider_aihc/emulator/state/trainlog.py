"""Plausible, deterministic training logs and their paging (``GET …/pods/{pod}/logs``).

A job's log is a list of small :class:`LogEntry` records (time, kind, index), appended
as the job runs; the text is rendered only when asked for, per pod, from the job's name,
the pod's rank and the index, so the same entry always reads the same.  A line carries
its own timestamp (``2024-07-16T08:33:43.512Z …``, like ``kubectl logs --timestamps``).

Paging (the marker is an opaque offset into the pod's lines; its shape is inferred):

* without ``marker``: the newest ``maxLines`` lines (all when unset or 0), as the aihc
  CLI's ``--tail`` expects, and ``nextMarker`` pointing after the last line;
* with ``marker`` (empty = from the first line): the next ``maxLines`` lines from there,
  and ``nextMarker`` after the last one returned, so a client that always sends the
  ``nextMarker`` it got never sees a line twice;
* ``startTime``/``endTime`` (unix seconds) keep only the lines written in that window;
* ``chunk`` lines are joined (``\\n``) into one record of ``logs``; 0 (default) = one record.

A job that succeeds prints, before its closing lines, Megatron's validation line
(``lm loss value: …``) and, on rank 0, one result line ``AIHC_RESULT {json}`` (the
checkpoint path, the last iteration and the final loss), which the provider's
``result_marker`` and ``metrics`` read; an ``Output`` script replaces both with its own
lines and result, and may add many filler lines dated across the run.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from .errors import invalid_param

TRAIN_ITERS = 20000
LOG_INTERVAL = 10
GLOBAL_BATCH = 256
SEQ_LENGTH = 4096
#: Iteration lines stop growing past this many per job (a held job polled forever).
MAX_ITERATION_LINES = 20000
_MARKER_PREFIX = "lm1-"

START = "start"
ITERATION = "iter"
DONE = "done"
FAIL = "fail"
STOP = "stop"
OUTPUT = "out"
FILLER = "fill"
RESULT = "result"
RESULT_MARKER = "AIHC_RESULT "

_START_LINES = (
    "[AIHC] container pytorch of pod {pod} started on node {node}",
    "INFO:torch.distributed.run:WORLD_SIZE={world} RANK={rank} "
    "MASTER_ADDR={master} MASTER_PORT=23456",
    "{pod}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:{ip}<0>",
    "{pod}:{pid}:{pid} [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/RoCE [1]mlx5_2:1/RoCE ; "
    "OOB eth0:{ip}<0>",
    "{pod}:{pid}:{pid} [0] NCCL INFO NCCL version 2.18.5+cuda12.2",
    "{pod}:{pid}:{pid} [0] NCCL INFO comm 0x7f3a2c000b60 rank {rank} nranks {world} "
    "cudaDev 0 busId 18000 - Init COMPLETE",
    "> building GPT2BPETokenizer tokenizer ...",
    " > padded vocab (size: 50257) with 175 dummy tokens (new size: 50432)",
    "> initialized tensor model parallel with size 1",
    "> initialized pipeline model parallel with size 1",
    " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 6738415616",
    "training ...",
)
_DONE_LINES = (
    "[after training is done] saving checkpoint at iteration {it} to "
    "/mnt/cluster/checkpoints/{name}",
    "  successfully saved checkpoint at iteration {it} to /mnt/cluster/checkpoints/{name}",
    "[AIHC] training process exited with code 0",
)
_FAIL_LINES = (
    "Traceback (most recent call last):",
    '  File "/workspace/Megatron-LM/pretrain_gpt.py", line 229, in <module>',
    "    pretrain(train_valid_test_datasets_provider, model_provider, forward_step)",
    "RuntimeError: {reason}",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) "
    "local_rank: 0 (pid: {pid}) of binary: /usr/bin/python",
    "[AIHC] training process exited with code 1: {reason}",
)
_STOP_LINES = (
    "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, "
    "shutting down workers",
    "[AIHC] job stopped by user at iteration {it}",
)
_END_LINES = {DONE: _DONE_LINES, FAIL: _FAIL_LINES, STOP: _STOP_LINES}


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One line of a job's log, before rendering.

    :param ts: when it was written, epoch seconds.
    :param kind: ``start``, ``iter``, ``done``, ``fail`` or ``stop``.
    :param n: the iteration-line number for ``iter``, else the index in its template list.
    """

    ts: float
    kind: str
    n: int


@dataclass(frozen=True, slots=True)
class PodContext:
    """What a pod's lines are rendered from."""

    job_name: str
    pod: str
    rank: int
    world_size: int
    master: str
    node: str
    ip: str
    reason: str


@dataclass(slots=True)
class TrainLog:
    """The append-only log of one job, shared by its pods (each renders its own rank)."""

    entries: list[LogEntry] = field(default_factory=list)
    iterations: int = 0
    #: Lines an ``Output`` script prints at the end of a successful run (every rank);
    #: ``None``: the validation line.
    output: list[str] | None = None
    #: The JSON text after the marker on rank 0; ``None``: the default result; ``""``: none.
    result: str | None = None
    #: Filler lines printed across the run before the output (``Output.filler_lines``).
    filler: int = 0

    def start(self, ts: float) -> None:
        """Write the start-up lines (distributed init, NCCL, model build)."""
        self.entries.extend(LogEntry(ts, START, i) for i in range(len(_START_LINES)))

    def step(self, ts: float, count: int) -> None:
        """Write ``count`` iteration lines stamped ``ts`` (up to the cap)."""
        count = min(count, MAX_ITERATION_LINES - self.iterations)
        for _ in range(max(count, 0)):
            self.iterations += 1
            self.entries.append(LogEntry(ts, ITERATION, self.iterations))

    def end(self, ts: float, kind: str, started: float | None = None) -> None:
        """Write the closing lines: ``done`` (success), ``fail`` (traceback) or ``stop``;
        a success first prints its filler (dated from ``started`` to ``ts``), its output
        lines and its result."""
        if kind == DONE:
            begin = ts if started is None else started
            step = (ts - begin) / self.filler if self.filler else 0.0
            self.entries.extend(LogEntry(begin + k * step, FILLER, k) for k in range(self.filler))
            count = 1 if self.output is None else len(self.output)
            self.entries.extend(LogEntry(ts, OUTPUT, i) for i in range(count))
            if self.result != "":
                self.entries.append(LogEntry(ts, RESULT, 0))
        self.entries.extend(LogEntry(ts, kind, i) for i in range(len(_END_LINES[kind])))


def render(entry: LogEntry, pod: PodContext, iterations: int, log: TrainLog | None = None) -> str:
    """The text of one line for one pod, with its timestamp in front.

    :param entry: the line.
    :param pod: the pod it is read from.
    :param iterations: iteration lines written so far (end lines name the last one).
    """
    stamp = datetime.fromtimestamp(entry.ts, tz=UTC)
    prefix = stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
    return f"{prefix} {_text(entry, pod, iterations, log)}"


def _text(entry: LogEntry, pod: PodContext, iterations: int, log: TrainLog | None) -> str:
    if entry.kind == ITERATION:
        return iteration_line(pod.job_name, entry.n)
    if entry.kind in (OUTPUT, FILLER, RESULT):
        return _output_text(entry, pod, iterations, log or TrainLog())
    template = _START_LINES[entry.n] if entry.kind == START else _END_LINES[entry.kind][entry.n]
    return template.format(
        pod=pod.pod,
        node=pod.node,
        ip=pod.ip,
        rank=pod.rank,
        world=pod.world_size,
        master=pod.master,
        pid=1000 + pod.rank,
        name=pod.job_name,
        reason=pod.reason or "training process failed",
        it=iterations * LOG_INTERVAL,
    )


def _output_text(entry: LogEntry, pod: PodContext, iterations: int, log: TrainLog) -> str:
    if entry.kind == FILLER:
        return f"[rank {pod.rank}] step log {entry.n}: all-reduce ok"
    if entry.kind == OUTPUT:
        if log.output is not None:
            return log.output[entry.n]
        loss = final_loss(pod.job_name, iterations)
        return (
            f"validation loss at iteration {iterations * LOG_INTERVAL} | lm loss value: "
            f"{loss:.6E} | lm loss PPL: {math.exp(loss):.6E} |"
        )
    if pod.rank != 0:
        return f"[rank {pod.rank}] finished"
    if log.result is not None:
        return f"INFO:train:{RESULT_MARKER}{log.result}"
    result = {
        "checkpoint": f"/mnt/cluster/checkpoints/{pod.job_name}",
        "iteration": iterations * LOG_INTERVAL,
        "loss": round(final_loss(pod.job_name, iterations), 6),
    }
    return f"INFO:train:{RESULT_MARKER}{json.dumps(result, sort_keys=True)}"


def final_loss(seed: str, iterations: int) -> float:
    """The validation loss a job that ran ``iterations`` logged intervals reports."""
    it = max(iterations, 1) * LOG_INTERVAL
    return 2.05 + 8.4 * math.exp(-it / 600.0) + 0.02 * _noise(seed, -1)


def iteration_line(seed: str, n: int) -> str:
    """Megatron's per-interval line for the ``n``-th logged interval; loss falls with ``n``."""
    it = n * LOG_INTERVAL
    noise = _noise(seed, n)
    loss = 2.1 + 8.4 * math.exp(-it / 600.0) + 0.05 * noise
    lr = 1.0e-4 * min(1.0, it / 500.0) if it < 500 else 1.0e-4 * (1 - it / (2 * TRAIN_ITERS))
    ms = 1250.0 + 40.0 * noise
    tokens = int(GLOBAL_BATCH * SEQ_LENGTH / (ms / 1000.0))
    return (
        f"iteration {it:>8d}/{TRAIN_ITERS:>8d} | consumed samples: {it * GLOBAL_BATCH:>12d} "
        f"| elapsed time per iteration (ms): {ms:.1f} | learning rate: {lr:.3E} "
        f"| global batch size: {GLOBAL_BATCH:>5d} | lm loss: {loss:.6E} | loss scale: 1.0 "
        f"| grad norm: {0.8 + 0.1 * abs(noise):.3f} | tokens/s: {tokens} |"
    )


def _noise(seed: str, n: int) -> float:
    digest = hashlib.blake2b(f"{seed}:{n}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") / 0xFFFFFFFF * 2 - 1


def encode_marker(offset: int) -> str:
    """The opaque ``nextMarker`` for a line offset."""
    return f"{_MARKER_PREFIX}{offset:x}"


def decode_marker(marker: str) -> int:
    """The line offset of a marker; an empty marker means the first line."""
    if not marker:
        return 0
    if not marker.startswith(_MARKER_PREFIX):
        raise invalid_param(f"invalid marker {marker!r}")
    try:
        offset = int(marker[len(_MARKER_PREFIX) :], 16)
    except ValueError:
        raise invalid_param(f"invalid marker {marker!r}") from None
    if offset < 0:
        raise invalid_param(f"invalid marker {marker!r}")
    return offset


def select(
    entries: Sequence[LogEntry],
    *,
    start_time: float | None,
    end_time: float | None,
    max_lines: int | None,
    marker: str | None,
) -> tuple[list[LogEntry], int]:
    """Pick the lines of one page and the offset the next page starts at (module docstring).

    :param entries: every line of the log, oldest first.
    :param start_time: keep lines written at or after this (epoch seconds).
    :param end_time: keep lines written at or before this (epoch seconds).
    :param max_lines: at most this many lines; ``None`` or 0 = no limit.
    :param marker: ``None`` for the tail, else the marker to continue from.
    """
    limit = max_lines if max_lines and max_lines > 0 else None
    if marker is None:
        picked = [e for e in entries if _in_window(e, start_time, end_time)]
        return (picked[-limit:] if limit else picked), len(entries)
    offset = min(decode_marker(marker), len(entries))
    picked = []
    while offset < len(entries) and (limit is None or len(picked) < limit):
        entry = entries[offset]
        if end_time is not None and entry.ts > end_time:
            break
        if start_time is None or entry.ts >= start_time:
            picked.append(entry)
        offset += 1
    return picked, offset


def chunked(lines: Sequence[str], chunk: int) -> list[str]:
    """Join lines into records of ``chunk`` lines; ``chunk`` <= 0 gives one record."""
    if not lines:
        return []
    if chunk <= 0:
        return ["\n".join(lines)]
    return ["\n".join(lines[i : i + chunk]) for i in range(0, len(lines), chunk)]


def _in_window(entry: LogEntry, start_time: float | None, end_time: float | None) -> bool:
    if start_time is not None and entry.ts < start_time:
        return False
    return end_time is None or entry.ts <= end_time
