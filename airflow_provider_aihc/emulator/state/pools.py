"""Resource pools and their queues, and what their jobs hold (no wire shapes: the dialects
render these, ``dialects/v1/render.py`` and ``dialects/v2/pools.py``).

``used``/``allocated`` are computed from the jobs that hold GPUs (``Scheduled`` and
``Running``).

A pool marked ``serverless`` (the managed ``aihc-serverless`` pool) wants a ``queueID``
query on every job call and names its queues by id (``aihcq-…``); a self-managed pool
takes the queue name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID

from .jobs import ACTIVE, Job

DEFAULT_RESOURCE_POOL_NAME = "emulator-pool"
SERVERLESS_POOL_ID = "aihc-serverless"
DEFAULT_GPU = "baidu.com/a800_80g_cgpu"
#: The resource names every emulator node offers, among those Baidu's clients name
#: (bce-python-sdk ``job_model.py``; the aihc CLI's ``resourcepool_queue.py``): CPU, memory
#: (GB), shared memory, RDMA NICs and one GPU model, the A800 80G.
NODE_RESOURCES = ("cpu", "memory", "sharedMemory", "rdma/hca", DEFAULT_GPU)
#: When the emulator's pools and queues claim to have been created.
CREATED_AT = "2024-07-01T08:00:00Z"
#: The Kubernetes version every pool claims.
K8S_VERSION = "1.26.9"
#: Every pool's description.
POOL_DESCRIPTION = "AIHC emulator pool"
#: Every pool's phase.
POOL_PHASE = "running"
#: What every queue is: elastic, open, a child of ``root``, reclaimable, not preemptable.
QUEUE_TYPE = "Elastic"
QUEUE_STATE = "Open"
PARENT_QUEUE = "root"
RECLAIMABLE = True
PREEMPTABLE = False
#: CPU and memory every queue offers, beside its GPUs.
QUEUE_BASE = {"cpu": 1024, "memory": 8192}


@dataclass(frozen=True)
class Queue:
    """A queue of a pool.

    :param name: the queue name (what a self-managed pool's jobs name in ``queue``).
    :param queue_id: the id (``aihcq-…``), what a serverless pool's jobs name.
    :param gpus: GPUs the queue may use, by resource name.
    :param description: free text shown by the CLI.
    """

    name: str
    queue_id: str = ""
    gpus: Mapping[str, int] = field(default_factory=lambda: {DEFAULT_GPU: 64})
    description: str = ""

    def answers_to(self, name_or_id: str) -> bool:
        """Whether a job's ``queue`` (or a ``queueID``) names this queue."""
        return name_or_id in (self.name, self.queue_id)


@dataclass(frozen=True)
class Pool:
    """A resource pool.

    :param pool_id: the id used in ``resourcePoolId``.
    :param name: the display name (the aihc CLI finds pools by name).
    :param queues: its queues.
    :param serverless: a managed pool: job calls need ``queueID``.
    :param region: e.g. ``cn-beijing``.
    :param nodes: node count.
    :param gpus_per_node: GPUs per node.
    :param resources: the resource names its nodes offer; a job asking for another is
        refused at create (``store.py``).
    """

    pool_id: str
    name: str
    queues: tuple[Queue, ...] = (Queue("default"),)
    serverless: bool = False
    region: str = "cn-beijing"
    nodes: int = 8
    gpus_per_node: int = 8
    resources: tuple[str, ...] = NODE_RESOURCES

    def queue(self, name_or_id: str) -> Queue | None:
        """The queue named (or identified) so, if any."""
        return next((q for q in self.queues if q.answers_to(name_or_id)), None)

    def lacks(self, resources: Iterable[Mapping[str, object]]) -> list[str]:
        """The names in a job's ``resources`` that the pool's nodes do not offer."""
        names = (str(resource.get("name")) for resource in resources)
        return [name for name in dict.fromkeys(names) if name not in self.resources]


def default_pools() -> tuple[Pool, ...]:
    """A self-managed pool ``cce-emulator0`` (queues ``default``, ``research``) and the
    managed ``aihc-serverless`` pool (queue ``aihcq-emulator0``, named ``default``)."""
    return (
        Pool(
            DEFAULT_RESOURCE_POOL_ID,
            DEFAULT_RESOURCE_POOL_NAME,
            queues=(
                Queue("default", description="emulator default queue"),
                Queue("research", gpus={DEFAULT_GPU: 16}, description="small queue"),
            ),
        ),
        Pool(
            SERVERLESS_POOL_ID,
            "aihc-serverless",
            queues=(Queue("default", queue_id="aihcq-emulator0"),),
            serverless=True,
            nodes=16,
        ),
    )


@dataclass(frozen=True)
class PoolUsage:
    """What a pool's jobs hold now: GPUs and nodes."""

    gpus_used: int
    nodes_used: int


def usage(pool: Pool, jobs: Iterable[Job]) -> PoolUsage:
    """What the pool's jobs that hold GPUs hold.

    :param pool: the pool.
    :param jobs: every job (those of this pool holding GPUs count as used).
    """
    active = _active(pool, jobs)
    gpus_used = sum(job.request.gpus for job in active)
    nodes_used = min(pool.nodes, sum(job.request.replicas for job in active))
    return PoolUsage(gpus_used, nodes_used)


def is_card(name: str) -> bool:
    """Whether a node resource name is an accelerator card's: an extended, domain-prefixed
    name (``baidu.com/a800_80g_cgpu``, a Kunlun XPU's) other than the RDMA NICs'
    (``rdma/hca``); ``cpu``, ``memory`` and ``sharedMemory`` are not."""
    return "/" in name and not name.startswith("rdma/")


def capability(queue: Queue) -> dict[str, int]:
    """What the queue may use, by resource name (CPU, memory and its GPUs)."""
    return {**QUEUE_BASE, **queue.gpus}


def allocated(pool: Pool, queue: Queue, jobs: Iterable[Job]) -> dict[str, int]:
    """What the queue's jobs that hold GPUs hold, for each resource of its capability.

    :param pool: the pool the queue belongs to.
    :param queue: the queue.
    :param jobs: every job (those in this queue holding GPUs count as allocated).
    """
    held: Counter[str] = Counter()
    for job in _active(pool, jobs):
        if queue.answers_to(job.request.queue):
            for resource in job.request.resources:
                name = str(resource.get("name"))
                if is_card(name):  # every accelerator kind
                    held[name] += _int(resource.get("quantity")) * job.request.replicas
    return {name: held.get(name, 0) for name in {**capability(queue), **held}}


def _active(pool: Pool, jobs: Iterable[Job]) -> list[Job]:
    return [j for j in jobs if j.pool_id == pool.pool_id and j.status in ACTIVE]


def _int(value: object) -> int:
    try:
        return int(float(str(value)))
    except ValueError:
        return 0
