"""What the monitoring of a job and of a pool shows: a job's metric samples per pod, a
pool's nodes, its cards by kind and its queues' quotas.  Domain objects only; the dialects
render them.

A metric is sampled every ``step`` seconds from the start of the range (default: the job's
start) to its end (default: now, or the job's end once it has ended), at most
:data:`MAX_SAMPLES` samples (the newest), the last at the end of the range.  A pod is busy while its
job runs: the ``*Usage`` metrics are then high percentages, the rates plausible bytes per
second, and all are ``0`` before the job runs and after it ends.  Values are whole numbers
(baiducloud-go-sdk ``services/aihc/model_metric.go:5`` types ``value`` as ``int32``) and
stable: the same job, pod and time always give the same sample.

A pool's accelerator cards are the accelerator names among the resource names its nodes
offer (``Pool.resources``: extended, domain-prefixed names but ``rdma/hca``); with several
kinds, node ``i`` carries kind ``i`` modulo their number, ``gpus_per_node`` of them.  A v1
pool shows them as ``status.gpuDetail[{gpuDescriptor, total, used}]`` (bce-sdk-go
``services/aihc/api/v1/resourcePool.go:57``, ``:69-73``).  A queue's quota names the pool's
cards, each with the queue's own quota for that name, else its whole GPU quota: what a
queue offers is what its pool's nodes have (v1 ``capability``, ``api/v1/queue.go:55``; v2
``acceleratorCardList``, ``services/aihc/v2/api/queue.go:71``, ``:85-89``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .jobs import Job
from .pods import pods_of
from .pools import DEFAULT_GPU, QUEUE_BASE, Pool, PoolUsage, Queue, is_card

#: ``metricType`` values, bce-openapi-meta ``i18n/zh-CN/aihc/DescribeJobMetrics.json:9``.
METRIC_TYPES = (
    "GpuUsage", "GpuMemoryUsage", "CpuUsage", "MemoryUsage", "DiskReadRate", "DiskWriteRate",
    "RDMASendDataRate", "RDMARecvDataRate", "PCIESendDataRate", "PCIERecvDataRate",
    "NVLinkSendDataRate", "NVLinkRecvDataRate", "GpuTemperature", "GpuPowerUsage",
    "GpuPipeTensorUsage", "RDMAHealth", "RDMASendErrorRate", "RDMARecvErrorRate",
    "RDMASendPacketsRate", "RDMARecvPacketsRate", "CpuTime", "MemoryAllocation",
)  # fmt: skip
#: ``timeStep``'s default, "默认值是 5 分钟" (``DescribeJobMetrics.json:8``).
DEFAULT_STEP = 300
MAX_SAMPLES = 1000
#: ``(low, high)`` of a busy pod's samples, by the kind of metric (the emulator's choice).
_BUSY = {"Usage": (70, 99), "Rate": (10**8, 4 * 10**9), "Temperature": (55, 80)}
_OTHER = (1, 100)


@dataclass(frozen=True)
class Sample:
    """One sample: epoch seconds and a whole value."""

    at: float
    value: int


def metric_series(
    job: Job, metric_type: str, now: float, start: float | None, end: float | None, step: int
) -> dict[str, list[Sample]]:
    """Each pod's samples of ``metric_type`` in the range, by pod name."""
    begin = start if start is not None else job.running_at or job.created_at
    until = end if end is not None else job.finished_at or now
    step = max(1, step)
    until = max(begin, until)
    # The newest samples when the range holds more than MAX_SAMPLES.
    begin = max(begin, until - (MAX_SAMPLES - 1) * step)
    times: list[float] = []
    at = begin
    while at < until:
        times.append(at)
        at += step
    times.append(until)
    return {
        pod.name: [Sample(t, _value(job, pod.name, metric_type, t)) for t in times]
        for pod in pods_of(job)
    }


def _value(job: Job, pod: str, metric_type: str, at: float) -> int:
    running = job.running_at is not None and job.running_at <= at
    if not running or (job.finished_at is not None and at > job.finished_at):
        return 0
    low, high = next((r for kind, r in _BUSY.items() if metric_type.endswith(kind)), _OTHER)
    digest = hashlib.sha256(f"{job.job_id}/{pod}/{metric_type}/{int(at)}".encode()).digest()
    return low + int.from_bytes(digest[:4], "big") % (high - low + 1)


@dataclass(frozen=True)
class Node:
    """One node of a pool.

    :param descriptor: the resource name of its cards (``baidu.com/a800_80g_cgpu``).
    """

    name: str
    instance_id: str
    gpus: int
    gpus_allocated: int
    region: str
    descriptor: str = DEFAULT_GPU


@dataclass(frozen=True)
class Cards:
    """A pool's cards of one kind: its resource name, how many, how many allocated."""

    descriptor: str
    total: int
    used: int


def pool_cards(pool: Pool) -> tuple[str, ...]:
    """The accelerator names among the resource names the pool's nodes offer, in order."""
    return tuple(name for name in pool.resources if is_card(name))


def pool_nodes(pool: Pool, used: PoolUsage) -> list[Node]:
    """The pool's nodes; the first ``used.nodes_used`` hold jobs (their GPUs allocated)."""
    kinds = pool_cards(pool)
    nodes = []
    for index in range(pool.nodes):
        name = f"192.168.{index // 250}.{10 + index % 250}"
        digest = hashlib.sha256(f"{pool.pool_id}/{index}".encode()).hexdigest()[:8]
        allocated = pool.gpus_per_node if index < used.nodes_used else 0
        gpus = pool.gpus_per_node if kinds else 0
        kind = kinds[index % len(kinds)] if kinds else ""
        nodes.append(Node(name, f"i-{digest}", gpus, min(allocated, gpus), pool.region, kind))
    return nodes


def gpu_detail(pool: Pool, used: PoolUsage) -> list[Cards]:
    """The pool's cards by kind, added up over its nodes (what a v1 pool's ``gpuDetail``
    shows)."""
    totals: dict[str, list[int]] = {kind: [0, 0] for kind in pool_cards(pool)}
    for node in pool_nodes(pool, used):
        if node.descriptor in totals:
            totals[node.descriptor][0] += node.gpus
            totals[node.descriptor][1] += node.gpus_allocated
    return [Cards(kind, total, allocated) for kind, (total, allocated) in totals.items()]


def queue_quota(pool: Pool, queue: Queue) -> dict[str, int]:
    """What the queue may use, by resource name: CPU, memory and each of its pool's cards
    (the queue's quota for that name, else its whole GPU quota)."""
    whole = sum(queue.gpus.values())
    return {**QUEUE_BASE, **{kind: queue.gpus.get(kind, whole) for kind in pool_cards(pool)}}
