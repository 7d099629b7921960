"""Lenient models of the answers of the job tools: metrics, nodes, the web terminal, batch
stop and a pool's nodes (``hooks/calls.py`` declares the calls).

Each reads every official shape of its answer, as the two dialects' clients define them:

* metrics: v1 ``{jobId, podMetrics: [{podName, metrics: [{time, value}]}]}`` (bce-sdk-go
  ``services/aihc/api/v1/aiJob.go:388-401``); v2 ``{jobId, metrics: {time, value}}``, one
  ``Metric`` (baiducloud-go-sdk ``services/aihc/model_describe_job_metrics_response.go:9``,
  ``model_metric.go:4-5``; baiducloud-python-sdk-aihc 0.0.4 reads it the same way).  A
  list under ``metrics`` is read too: the two official sources disagree on whether v2
  answers a series, and no live answer says which (unverified).
* nodes: v1 ``{jobId, nodeName: [...]}`` (``aiJob.go:296-299``); v2 ``{jobId, nodes}``
  (``model_describe_job_nodes_response.go:8-9``).
* web terminal: v1 ``{WebTerminalUrl}`` (``aiJob.go:415-417``); v2 ``{webTerminalUrl}``
  (``model_describe_job_webterminal_response.go:8``).
* batch stop (v2 only): ``StopBatchResult`` (``model_stop_batch_result.go:4-8``,
  ``model_job_result.go:4-6``), the transport having unwrapped its ``result``.
* a pool's nodes (v1 only): ``NodePage`` of ``Node`` (``services/aihc/api/v1/
  resourcePool.go:95-124``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BeforeValidator, Field

from airflow_provider_aihc.models._base import _ResponseModel
from airflow_provider_aihc.models._lenient import EMPTY_LIST_OK as _EMPTY_OK
from airflow_provider_aihc.models._lenient import Flag, Int, Number, Str, Strs, Timestamp

__all__ = [
    "BatchStopResult",
    "JobMetrics",
    "JobNodes",
    "JobStopOutcome",
    "JobWebterminal",
    "MetricPoint",
    "PodMetrics",
    "PoolNode",
    "PoolNodePage",
]


def _points(value: Any) -> Any:
    """One v2 ``Metric`` object, a list of them, or nothing: a list."""
    if value is None:
        return []
    return [value] if isinstance(value, dict) else value


class MetricPoint(_ResponseModel):
    """One sample of a metric."""

    time: Timestamp = None
    """When it was taken."""
    value: Number = 0
    """Its value (a percentage for the ``*Usage`` types, bytes/s for the ``*Rate`` ones)."""


class PodMetrics(_ResponseModel):
    """One pod's series (v1)."""

    pod_name: Str = ""
    """The pod."""
    metrics: Annotated[list[MetricPoint], _EMPTY_OK] = Field(default_factory=list)
    """Its samples, oldest first."""


class JobMetrics(_ResponseModel):
    """Result of job-metrics: per pod (v1), or the job's samples (v2)."""

    job_id: Str = ""
    """The job."""
    pod_metrics: Annotated[list[PodMetrics], _EMPTY_OK] = Field(default_factory=list)
    """Each pod's series (v1's answer)."""
    metrics: Annotated[list[MetricPoint], BeforeValidator(_points)] = Field(default_factory=list)
    """The job's samples (v2's answer: one ``Metric``, read as a list of one)."""

    @property
    def points(self) -> list[MetricPoint]:
        """Every sample of the answer: v2's, else every pod's in pod order."""
        return self.metrics or [p for pod in self.pod_metrics for p in pod.metrics]


class JobNodes(_ResponseModel):
    """Result of job-nodes: the nodes the job's pods run on."""

    job_id: Str = ""
    """The job."""
    nodes: Strs = Field(default_factory=list, validation_alias=AliasChoices("nodes", "nodeName"))
    """Node names (v1 ``nodeName``, v2 ``nodes``); empty before the job is scheduled."""


class JobWebterminal(_ResponseModel):
    """Result of job-webterminal."""

    web_terminal_url: Str = Field(
        default="",
        validation_alias=AliasChoices("webTerminalUrl", "WebTerminalUrl", "webTerminalURL"),
        serialization_alias="webTerminalUrl",
    )
    """The terminal's address (a ``wss://`` URL to open within its handshake timeout)."""


class JobStopOutcome(_ResponseModel):
    """One job of a batch stop."""

    job_id: Str = ""
    """The job."""
    success: Flag = False
    """Whether it was stopped."""
    error_msg: Str = ""
    """Why not."""


class BatchStopResult(_ResponseModel):
    """Result of batch-stop."""

    success_num: Int = 0
    """Jobs stopped."""
    failed_num: Int = 0
    """Jobs not stopped."""
    success: Flag = False
    """Whether every job was stopped."""
    success_list: Annotated[list[JobStopOutcome], _EMPTY_OK] = Field(default_factory=list)
    """The stopped jobs."""
    failed_list: Annotated[list[JobStopOutcome], _EMPTY_OK] = Field(default_factory=list)
    """The jobs not stopped, each with its reason."""


class PoolNode(_ResponseModel):
    """One node of a resource pool (v1 ``Node``)."""

    node_name: Str = ""
    """The CCE node name."""
    instance_id: Str = ""
    """The BCC instance's short id."""
    instance_name: Str = ""
    """The BCC instance's name."""
    status_phase: Str = ""
    """The node's state."""
    gpu_type: Str = Field(default="", validation_alias="gpuType", serialization_alias="gpuType")
    """The GPU (or NPU) type."""
    gpu_total: Int = Field(default=0, validation_alias="gpuTotal", serialization_alias="gpuTotal")
    """Its GPUs."""
    gpu_allocated: Int = Field(
        default=0, validation_alias="gpuAllocated", serialization_alias="gpuAllocated"
    )
    """Its GPUs allocated to jobs."""
    cpu_total: Int = Field(default=0, validation_alias="cpuTotal", serialization_alias="cpuTotal")
    """Its CPU cores."""
    memory_total: Int = 0
    """Its memory."""
    zone: Str = ""
    """Its availability zone."""
    region: Str = ""
    """Its region."""
    created_at: Timestamp = None
    """When it joined."""


class PoolNodePage(_ResponseModel):
    """One page of a pool's nodes."""

    nodes: Annotated[list[PoolNode], _EMPTY_OK] = Field(default_factory=list)
    """The nodes of this page."""
    total: Int = 0
    """Nodes across all pages."""
