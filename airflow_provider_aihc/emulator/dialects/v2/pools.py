"""Wire shapes of v2's pool and queue actions, as bce-sdk-go defines them
(``services/aihc/v2/api/resourcepool.go:92-136``, ``services/aihc/v2/api/queue.go:35-89``):
``DescribeResourcePool`` and ``DescribeQueue`` answer the pool or queue flat, the list
actions ``{totalCount, resourcePools}`` and ``{totalCount, queues}``.

Built from the state's pools and queues (``state/pools.py``), as the v1 dialect's are.
Quantities are ``ResourceAmount`` strings (``milliCPUcores``, ``memoryGi``,
``acceleratorCardList[{acceleratorCount, acceleratorType}]``: ``resourcepool.go:304-307``).
A queue's quota names its pool's cards (``state/samples.py`` ``queue_quota``).  Inferred: a
card's ``acceleratorType`` being the resource name a job asks for
(``baidu.com/a800_80g_cgpu``), a pool's ``type`` (``common`` for self-managed,
``dedicatedV2`` for managed, the ``resourcePoolType`` filter values), a self-managed
queue's ``queueId`` equal to its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_aihc.emulator.state.pools import (
    CREATED_AT,
    K8S_VERSION,
    PARENT_QUEUE,
    POOL_DESCRIPTION,
    POOL_PHASE,
    PREEMPTABLE,
    QUEUE_STATE,
    QUEUE_TYPE,
    RECLAIMABLE,
    Pool,
    PoolUsage,
    Queue,
)
from airflow_provider_aihc.emulator.state.samples import queue_quota

MANAGED_POOL_TYPE = "dedicatedV2"
#: The ``resourcePoolType`` values (bce-sdk-go ``services/aihc/v2/api/resourcepool.go:59-65``).
POOL_TYPES = ("common", MANAGED_POOL_TYPE, "bhcmp")
#: The BHCMP pool's id (bce-sdk-go ``services/aihc/resource/client.go:21``).
BHCMP_POOL_ID = "aihc-bhcmp"
#: The v1 quantity names that are not accelerators.
_PLAIN = ("cpu", "memory")


def pool_type(pool: Pool) -> str:
    """``bhcmp`` for a managed pool ``aihc-bhcmp``, ``dedicatedV2`` for another managed
    pool, else ``common``."""
    if not pool.serverless:
        return "common"
    return "bhcmp" if pool.pool_id == BHCMP_POOL_ID else MANAGED_POOL_TYPE


def flat_pool(pool: Pool, used: PoolUsage) -> dict[str, Any]:
    """A v2 ``ResourcePool``."""
    del used
    return {
        "resourcePoolId": pool.pool_id,
        "type": pool_type(pool),
        "name": pool.name,
        "region": pool.region,
        "description": POOL_DESCRIPTION,
        "createdAt": CREATED_AT,
        "updatedAt": CREATED_AT,
        "phase": POOL_PHASE,
        "k8sVersion": K8S_VERSION,
        "nodeNum": pool.nodes,
    }


def queue_spec(pool: Pool, queue: Queue, held: dict[str, int]) -> dict[str, Any]:
    """A v2 ``QueueSpec``."""
    offered = queue_quota(pool, queue)
    return {
        "queueId": queue.queue_id or queue.name,
        "queueName": queue.name,
        "description": queue.description,
        "queueType": QUEUE_TYPE,
        "resourcePoolId": pool.pool_id,
        "createdAt": CREATED_AT,
        "parentQueue": PARENT_QUEUE,
        "opened": QUEUE_STATE == "Open",
        "reclaimable": RECLAIMABLE,
        "preemptable": PREEMPTABLE,
        "capability": _amount(offered),
        "deserved": _amount(dict(offered)),
        "allocated": _amount({name: held.get(name, 0) for name in offered}),
    }


def _amount(quantities: Mapping[str, Any]) -> dict[str, Any]:
    """A ``ResourceAmount``: CPU in milli-cores, memory in GiB, every other quantity a card."""
    return {
        "milliCPUcores": str(int(quantities.get("cpu", 0)) * 1000),
        "memoryGi": str(quantities.get("memory", 0)),
        "acceleratorCardList": [
            {"acceleratorCount": str(count), "acceleratorType": name}
            for name, count in quantities.items()
            if name not in _PLAIN
        ],
    }
