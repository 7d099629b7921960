"""Wire shapes of v2's pool and queue actions, as bce-sdk-go defines them
(``services/aihc/v2/api/resourcepool.go:92-136``, ``services/aihc/v2/api/queue.go:35-89``):
``DescribeResourcePool`` and ``DescribeQueue`` answer the pool or queue flat, the list
actions ``{totalCount, resourcePools}`` and ``{totalCount, queues}``.

Built from the emulator's v1 wire forms of the same pool or queue (``pools.pool_info``,
``pools.queue_info``).  Quantities are ``ResourceAmount`` strings (``milliCPUcores``,
``memoryGi``, ``acceleratorCardList[{acceleratorCount, acceleratorType}]``:
``resourcepool.go:304-307``).  Inferred: a pool's ``type`` (``common`` for self-managed,
``dedicatedV2`` for managed, the ``resourcePoolType`` filter values), a self-managed
queue's ``queueId`` equal to its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The v1 quantity names that are not accelerators.
_PLAIN = ("cpu", "memory")


def flat_pool(v1: Mapping[str, Any], pool_type: str) -> dict[str, Any]:
    """A v2 ``ResourcePool`` from the v1 ``{metadata, spec, status}`` form."""
    meta, spec, status = v1["metadata"], v1["spec"], v1["status"]
    return {
        "resourcePoolId": meta["id"],
        "type": pool_type,
        "name": meta["name"],
        "region": spec["region"],
        "description": spec.get("description", ""),
        "createdAt": meta["createdAt"],
        "updatedAt": meta["updatedAt"],
        "phase": status["phase"],
        "k8sVersion": spec["k8sVersion"],
        "nodeNum": status["nodeCount"]["total"],
    }


def queue_spec(v1: Mapping[str, Any], pool_id: str) -> dict[str, Any]:
    """A v2 ``QueueSpec`` from the v1 queue form."""
    return {
        "queueId": v1.get("queueId") or v1["name"],
        "queueName": v1["name"],
        "description": v1.get("description", ""),
        "queueType": v1["queueType"],
        "resourcePoolId": pool_id,
        "createdAt": v1["createdTime"],
        "parentQueue": v1["parentQueue"],
        "opened": v1["state"] == "Open",
        "reclaimable": v1["reclaimable"],
        "preemptable": v1["preemptable"],
        "capability": _amount(v1["capability"]),
        "deserved": _amount(v1["deserved"]),
        "allocated": _amount(v1["allocated"]),
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
