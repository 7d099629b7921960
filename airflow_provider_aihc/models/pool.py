"""Lenient models of AIHC's resource-pool and queue answers (bce-sdk-go
``services/aihc/resource/client.go``; v2: ``services/aihc/v2/api/resourcepool.go``, ``queue.go``).

``GET /api/v1/resourcepools[/{id}]`` and ``GET /api/v1/resourcepools/{id}/queue[/{name}]``;
fields follow bce-sdk-go ``services/aihc/api/v1``.  Unknown fields are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import AliasChoices, Field, model_validator

from airflow_provider_aihc.models._base import _ResponseModel
from airflow_provider_aihc.models._lenient import EMPTY_LIST_OK as _EMPTY_OK
from airflow_provider_aihc.models._lenient import EMPTY_OBJECT_OK as _OBJECT_OK
from airflow_provider_aihc.models._lenient import AnyMap, Int, Str, Timestamp

__all__ = [
    "MANAGED_POOL_TYPES",
    "Queue",
    "QueueList",
    "ResourcePool",
    "ResourcePoolList",
    "ResourcePoolMetadata",
    "ResourcePoolSpec",
    "ResourcePoolStatus",
    "UsageCount",
]


#: The v2 pool ``type`` values of managed pools, whose job calls need the queue's id:
#: ``dedicatedV2`` ("托管资源池v2") and ``bhcmp`` (bce-sdk-go
#: ``services/aihc/v2/api/resourcepool.go:59-65``; ``common`` is a self-managed pool).
MANAGED_POOL_TYPES = frozenset({"dedicatedV2", "bhcmp"})


def _unwrap(data: object, wrapper: str, own_key: str) -> object:
    """``data[wrapper]`` when ``data`` is only a wrapper around the object, else ``data``."""
    if isinstance(data, Mapping) and isinstance(data.get(wrapper), Mapping) and own_key not in data:
        return data[wrapper]
    return data


class ResourcePoolMetadata(_ResponseModel):
    """Identity of a resource pool."""

    id: Str = ""
    """Pool id (the CCE cluster id, e.g. ``cce-1uji3ib5``)."""
    name: Str = ""
    """Pool name."""
    created_at: Timestamp = None
    """When the pool was created."""


class ResourcePoolSpec(_ResponseModel):
    """Properties of a resource pool."""

    region: Str = ""
    """Region, e.g. ``bj``."""
    description: Str = ""
    """Free-text description."""


class UsageCount(_ResponseModel):
    """A total and how much of it is in use."""

    total: Int = 0
    """How many there are."""
    used: Int = 0
    """How many are allocated."""


class ResourcePoolStatus(_ResponseModel):
    """State of a resource pool."""

    phase: Str = ""
    """Pool phase: ``pending``, ``running``, ``deleting``, ..."""
    gpu_count: Annotated[UsageCount, _OBJECT_OK] = Field(default_factory=UsageCount)
    """Accelerator cards (GPU, Kunlun, Ascend): total and allocated."""
    node_count: Annotated[UsageCount, _OBJECT_OK] = Field(default_factory=UsageCount)
    """Nodes: total and fully allocated."""


class ResourcePool(_ResponseModel):
    """A resource pool."""

    metadata: Annotated[ResourcePoolMetadata, _OBJECT_OK] = Field(
        default_factory=ResourcePoolMetadata
    )
    """Identity."""
    spec: Annotated[ResourcePoolSpec, _OBJECT_OK] = Field(default_factory=ResourcePoolSpec)
    """Properties."""
    status: Annotated[ResourcePoolStatus, _OBJECT_OK] = Field(default_factory=ResourcePoolStatus)
    """State."""
    type: Str = ""
    """v2 only: ``common`` (self-managed), ``dedicatedV2`` or ``bhcmp`` (managed); v1 pools
    carry no type (bce-sdk-go ``services/aihc/v2/api/resourcepool.go:116``)."""

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: object) -> object:
        """Accept get-resource-pool's ``{"resourcePool": {...}}`` as well as the pool itself."""
        return _unwrap(data, "resourcePool", "metadata")

    @property
    def pool_id(self) -> str:
        """The pool id (``metadata.id``)."""
        return self.metadata.id

    @property
    def managed(self) -> bool:
        """Whether AIHC reports the pool as managed (:data:`MANAGED_POOL_TYPES`)."""
        return self.type in MANAGED_POOL_TYPES


class ResourcePoolList(_ResponseModel):
    """Result of list-resource-pools."""

    resource_pools: Annotated[list[ResourcePool], _EMPTY_OK] = Field(default_factory=list)
    """The pools."""
    total_count: Int = Field(
        default=0,
        validation_alias=AliasChoices("totalCount", "total", "total_count"),
        serialization_alias="totalCount",
    )
    """Number of pools (the docs say ``totalCount``, bce-sdk-go reads ``total``)."""


class Queue(_ResponseModel):
    """A queue of a resource pool."""

    name: Str = ""
    """Queue name (what a self-managed pool's jobs put in ``queue``)."""
    state: Str = ""
    """``Open`` or ``Close``."""
    queue_type: Str = ""
    """``Regular``, ``Elastic`` or ``Physical``."""
    parent_queue: Str = ""
    """Parent queue (``root`` by default)."""
    capability: AnyMap = Field(default_factory=dict)
    """Resource quota: the most the queue may use."""
    allocated: AnyMap = Field(default_factory=dict)
    """Resources in use."""
    children: Annotated[list[Queue], _EMPTY_OK] = Field(default_factory=list)
    """Child queues (on managed pools, the submittable ones)."""

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: object) -> object:
        """Accept get-queue's ``{"queue": {...}}`` as well as the queue itself."""
        return _unwrap(data, "queue", "name")


class QueueList(_ResponseModel):
    """Result of list-queues."""

    queues: Annotated[list[Queue], _EMPTY_OK] = Field(default_factory=list)
    """The queues."""
    total: Int = 0
    """Number of queues."""
