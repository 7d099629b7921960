"""Lenient models of AIHC's resource-pool and queue answers (bce-sdk-go
``services/aihc/resource/client.go``; v2: ``services/aihc/v2/api/resourcepool.go``, ``queue.go``).

``GET /api/v1/resourcepools[/{id}]`` and ``GET /api/v1/resourcepools/{id}/queue[/{name}]``;
fields follow bce-sdk-go ``services/aihc/api/v1``.  Unknown fields are kept.

The accelerator names a pool or queue offers (what a job's ``resources[].name`` may ask
for) come from: a v1 pool's ``status.gpuDetail[].gpuDescriptor`` ("GPU/NPU 资源描述符",
bce-sdk-go ``services/aihc/api/v1/resourcePool.go:57``, ``:69-73``); a v1 queue's
``capability`` keys (``ResourceList``, a map of resource name to quantity: ``api/v1/queue.go:55``,
``:81``; the aihc CLI 1.1.1 reads GPU names such as ``baidu.com/a800_80g_cgpu`` from them,
``aihc_cli_py/resourcepool_queue.py:8-24``, ``:136-147``); a v2 queue's
``capability.acceleratorCardList[].acceleratorType`` (``services/aihc/v2/api/queue.go:71``,
``:85-89``), read into the same map (``hooks/dialects/v2_answers.py``).  That
``acceleratorType`` is the resource name a job asks for is inferred: no source says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import AliasChoices, Field, model_validator

from airflow_provider_aihc.models._base import _ResponseModel
from airflow_provider_aihc.models._lenient import EMPTY_LIST_OK as _EMPTY_OK
from airflow_provider_aihc.models._lenient import EMPTY_OBJECT_OK as _OBJECT_OK
from airflow_provider_aihc.models._lenient import Int, Quantities, Str, Timestamp

__all__ = [
    "MANAGED_POOL_TYPES",
    "GpuDetail",
    "Queue",
    "QueueList",
    "ResourcePool",
    "ResourcePoolList",
    "ResourcePoolMetadata",
    "ResourcePoolSpec",
    "ResourcePoolStatus",
    "UsageCount",
    "is_accelerator",
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


def is_accelerator(name: str) -> bool:
    """Whether a resource name is an accelerator's: an extended (domain-prefixed) name
    other than the RDMA NICs' (``baidu.com/a800_80g_cgpu``, ``nvidia.com/gpu``, a Kunlun
    XPU's), not ``cpu``, ``memory``, ``sharedMemory`` or ``rdma/hca``."""
    return "/" in name and not name.startswith("rdma/")


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


class GpuDetail(_ResponseModel):
    """One kind of accelerator card of a v1 pool (bce-sdk-go ``api/v1/resourcePool.go:69-73``)."""

    gpu_descriptor: Str = ""
    """The card's resource descriptor, the name a job's ``resources`` asks for
    (``baidu.com/a800_80g_cgpu``)."""
    total: Int = 0
    """How many such cards the pool has."""
    used: Int = 0
    """How many are allocated."""


class ResourcePoolStatus(_ResponseModel):
    """State of a resource pool."""

    phase: Str = ""
    """Pool phase: ``pending``, ``running``, ``deleting``, ..."""
    gpu_detail: Annotated[list[GpuDetail], _EMPTY_OK] = Field(default_factory=list)
    """Its cards by kind (v1 only; ``api/v1/resourcePool.go:57``)."""
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

    @property
    def accelerators(self) -> tuple[str, ...]:
        """The accelerator names the pool's nodes offer (``status.gpuDetail``), in order;
        empty when AIHC did not say (a v2 pool carries no cards: read its queue)."""
        names = (detail.gpu_descriptor for detail in self.status.gpu_detail)
        return tuple(dict.fromkeys(name for name in names if name))


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
    queue_id: Str = Field(
        default="",
        validation_alias=AliasChoices("queueId", "queueID", "queue_id"),
        serialization_alias="queueId",
    )
    """Queue id, ``aihcq-…``: what a managed pool's jobs put in ``queue`` (v2 ``queueId``,
    bce-sdk-go ``services/aihc/v2/api/queue.go:50``; v1 defines none, ``""`` there)."""
    state: Str = ""
    """``Open`` or ``Close``."""
    queue_type: Str = ""
    """``Regular``, ``Elastic`` or ``Physical``."""
    parent_queue: Str = ""
    """Parent queue (``root`` by default)."""
    capability: Quantities = Field(default_factory=dict)
    """Resource quota: the most the queue may use, resource name to quantity.  v1 sends
    strings (``ResourceList`` is ``map[string]string`` in bce-sdk-go
    ``services/aihc/api/v1/queue.go``), v2 a ``ResourceAmount`` read as the same map: a
    number is read as a number on both, any other quantity (``"8Gi"``) kept as written."""
    allocated: Quantities = Field(default_factory=dict)
    """Resources in use, in the same form."""
    children: Annotated[list[Queue], _EMPTY_OK] = Field(default_factory=list)
    """Child queues (on managed pools, the submittable ones)."""

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: object) -> object:
        """Accept get-queue's ``{"queue": {...}}`` as well as the queue itself."""
        return _unwrap(data, "queue", "name")

    @property
    def accelerators(self) -> tuple[str, ...]:
        """The accelerator names of the queue's quota (``capability``), in order: the
        resource names its jobs may ask for beside CPU and memory (told by
        :func:`is_accelerator`)."""
        return tuple(str(name) for name in self.capability if is_accelerator(str(name)))


class QueueList(_ResponseModel):
    """Result of list-queues."""

    queues: Annotated[list[Queue], _EMPTY_OK] = Field(default_factory=list)
    """The queues."""
    total: Int = 0
    """Number of queues."""
