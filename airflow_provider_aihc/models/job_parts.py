"""Lenient models of the parts of a job answer: its spec's resources, environment, labels
and datasources, and its pods (the leniency rules are :mod:`.job`'s)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from airflow_provider_aihc.models._base import _ResponseModel
from airflow_provider_aihc.models._lenient import EMPTY_LIST_OK as _EMPTY_OK
from airflow_provider_aihc.models._lenient import EMPTY_OBJECT_OK as _OBJECT_OK
from airflow_provider_aihc.models._lenient import AnyMap, Int, Number, Str, StrMap, Timestamp

__all__ = [
    "JobDatasource",
    "JobEnv",
    "JobLabel",
    "JobResource",
    "ListMeta",
    "ObjectMeta",
    "Pod",
    "PodList",
    "PodStatus",
]


class JobResource(_ResponseModel):
    """A resource a job's replicas request."""

    name: Str = ""
    """Resource name, e.g. ``baidu.com/a800_80g_cgpu`` or ``cpu``."""
    quantity: Number = 0
    """Amount per replica."""


class JobEnv(_ResponseModel):
    """An environment variable of a job or pod."""

    name: Str = ""
    """Variable name."""
    value: Str = ""
    """Variable value."""


class JobLabel(_ResponseModel):
    """A job label (AIHC's own ``aijob.cce.baidubce.com/*`` labels included)."""

    key: Str = ""
    """Label key."""
    value: Str = ""
    """Label value."""


class JobDatasource(_ResponseModel):
    """A volume mounted into the job."""

    type: Str = ""
    """Source type, e.g. ``pfs``."""
    name: Str = ""
    """Source name (a PFS id for ``pfs``)."""
    mount_path: Str = ""
    """Path inside the container."""
    source_path: Str = ""
    """Path inside the source."""
    options: AnyMap = Field(default_factory=dict)
    """Mount options as sent."""


class ObjectMeta(_ResponseModel):
    """Kubernetes metadata of a pod."""

    name: Str = ""
    """Pod name, e.g. ``<job name>-master-0``."""
    namespace: Str = ""
    """Kubernetes namespace."""
    labels: StrMap = Field(default_factory=dict)
    """Kubernetes labels."""
    annotations: StrMap = Field(default_factory=dict)
    """Kubernetes annotations."""
    creation_timestamp: Timestamp = None
    """When the pod was created."""


class PodStatus(_ResponseModel):
    """A pod's state."""

    pod_phase: Str = ""
    """Kubernetes pod phase: ``Pending``, ``Running``, ``Succeeded``, ``Failed``, ``Unknown``."""
    status: Str = ""
    """AIHC's pod status, e.g. ``READY``."""


class Pod(_ResponseModel):
    """One pod (replica) of a job."""

    pod_ip: Str = Field(default="", validation_alias="PodIP", serialization_alias="PodIP")
    """Pod IP address."""
    node_name: Str = ""
    """Node the pod runs on."""
    object_meta: Annotated[ObjectMeta, _OBJECT_OK] = Field(default_factory=ObjectMeta)
    """Kubernetes metadata (name, namespace, labels)."""
    pod_status: Annotated[PodStatus, _OBJECT_OK] = Field(default_factory=PodStatus)
    """Pod state."""
    replica_type: Str = ""
    """Replica role, e.g. ``master`` or ``worker``."""
    restart_count: Int = 0
    """How often the pod's containers restarted."""
    envs: Annotated[list[JobEnv], _EMPTY_OK] = Field(default_factory=list)
    """Environment of the pod, including AIHC's injected variables."""
    finished_at: Timestamp = None
    """When the pod ended; ``None`` while it runs."""
    reason: Str = ""
    """Why the pod ended or failed, when AIHC says."""


class ListMeta(_ResponseModel):
    """Paging metadata of a pod list."""

    total_items: Int = 0
    """Number of pods."""


class PodList(_ResponseModel):
    """A job's pods (``podList`` of the get-job result)."""

    list_meta: Annotated[ListMeta, _OBJECT_OK] = Field(default_factory=ListMeta)
    """Paging metadata."""
    pods: Annotated[list[Pod], _EMPTY_OK] = Field(default_factory=list)
    """The pods."""
