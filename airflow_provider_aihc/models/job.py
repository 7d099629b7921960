"""Lenient models of AIHC v1 responses (the ``result`` of each call: bce-sdk-go
``services/aihc/api/v1/aiJob.go``).

A status poll must not crash because AIHC added a field, left one out, or sent ``null``
where Go's ``omitempty`` usually sends nothing.  So every field has a default; unknown
fields are kept (``extra="allow"``); ``null`` lists and maps become empty; an empty or
unparseable timestamp (``"finishedAt": ""`` until a job ends) becomes ``None``; and
``status`` stays a plain string, so a status AIHC adds later still parses (compare it
through :mod:`airflow_provider_aihc.models.status`).  Only :class:`CreateJobResult`
requires a field, ``jobId``: without it a create cannot be tracked.

The parts of a job (spec parts, pods) live in :mod:`.job_parts`, the resource-pool and queue
models in :mod:`.pool`; both are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Protocol

from pydantic import (
    AliasChoices,
    AwareDatetime,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
)

from airflow_provider_aihc.models import status as _status
from airflow_provider_aihc.models._base import _ResponseModel, _WireModel
from airflow_provider_aihc.models._lenient import EMPTY_LIST_OK as _EMPTY_OK
from airflow_provider_aihc.models._lenient import EMPTY_OBJECT_OK as _OBJECT_OK
from airflow_provider_aihc.models._lenient import (
    Flag,
    Int,
    OptionalFlag,
    OptionalInt,
    Str,
    Strs,
    Timestamp,
    parse_timestamp,
)
from airflow_provider_aihc.models.job_parts import (
    JobDatasource,
    JobEnv,
    JobLabel,
    JobResource,
    ListMeta,
    ObjectMeta,
    Pod,
    PodList,
    PodStatus,
)
from airflow_provider_aihc.models.pool import (
    Queue,
    QueueList,
    ResourcePool,
    ResourcePoolList,
    ResourcePoolMetadata,
    ResourcePoolSpec,
    ResourcePoolStatus,
    UsageCount,
)

__all__ = [
    "CreateJobResult",
    "DeleteJobResult",
    "JobBrief",
    "JobDatasource",
    "JobEnv",
    "JobEvent",
    "JobEvents",
    "JobInfo",
    "JobLabel",
    "JobList",
    "JobResource",
    "JobStatusItem",
    "JobStatusPage",
    "JobSummary",
    "JobSummaryList",
    "ListMeta",
    "ObjectMeta",
    "Pod",
    "PodList",
    "PodLogs",
    "PodStatus",
    "Queue",
    "QueueList",
    "ResourcePool",
    "ResourcePoolList",
    "ResourcePoolMetadata",
    "ResourcePoolSpec",
    "ResourcePoolStatus",
    "StopJobResult",
    "UsageCount",
    "parse_timestamp",
]


class _PodLike(Protocol):
    """A pod as the status rules read it."""

    @property
    def object_meta(self) -> _MetaLike: ...
    @property
    def reason(self) -> str: ...


class _MetaLike(Protocol):
    """A pod's metadata as the status rules read it."""

    @property
    def name(self) -> str: ...


class _JobState:
    """What a job's status means, for :class:`JobInfo` and :class:`JobBrief` alike."""

    if TYPE_CHECKING:
        status: str

    def _pods(self) -> Sequence[_PodLike]:
        raise NotImplementedError

    @property
    def pod_names(self) -> list[str]:
        """Names of the job's pods (empty for list items, which carry no pods)."""
        return [pod.object_meta.name for pod in self._pods() if pod.object_meta.name]

    @property
    def job_status(self) -> _status.JobStatus | None:
        """The status as a :class:`~.status.JobStatus`; ``None`` when unknown or empty."""
        return _status.parse_status(self.status)

    @property
    def is_terminal(self) -> bool:
        """Whether the job has ended (see :func:`~.status.is_terminal`)."""
        return _status.is_terminal(self.status)

    @property
    def is_successful(self) -> bool:
        """Whether the job ended successfully (see :func:`~.status.is_successful`)."""
        return _status.is_successful(self.status)

    @property
    def failure_reason(self) -> str | None:
        """The first non-empty pod ``reason``, or ``None``."""
        return next((p.reason.strip() for p in self._pods() if p.reason.strip()), None)


class JobInfo(_ResponseModel, _JobState):
    """A training job as get-job and list-jobs return it (bce-sdk-go ``api/v1/aiJob.go``
    ``OpenAPIGetJobResponseResult``)."""

    job_id: Str = ""
    """Job id, e.g. ``pytorchjob-<uuid>``; opaque."""
    name: Str = ""
    """Job name."""
    resource_pool_id: Str = ""
    """Resource pool id."""
    queue: Str = ""
    """Queue name."""
    queue_id: Str = Field(
        default="",
        validation_alias=AliasChoices("queueId", "queueID", "queue_id"),
        serialization_alias="queueId",
    )
    """Queue id (managed pools; v2 spelling); empty in most v1 answers."""
    job_framework: Str = ""
    """``PyTorchJob`` or ``MPIJob``."""
    status: Str = ""
    """Raw status string; see :mod:`airflow_provider_aihc.models.status`."""
    created_at: Timestamp = None
    """When the job was created."""
    scheduled_at: Timestamp = None
    """When its pods were scheduled."""
    running_at: Timestamp = None
    """When it started running."""
    finished_at: Timestamp = None
    """When it ended; ``None`` (``""`` on the wire) while it is active."""
    queueing_sequence: OptionalInt = None
    """Position in the queue while waiting."""
    command: Str = ""
    """Command the replicas run."""
    image: Str = ""
    """Container image."""
    replicas: Int = 0
    """Number of replicas."""
    resources: Annotated[list[JobResource], _EMPTY_OK] = Field(default_factory=list)
    """Resources per replica."""
    envs: Annotated[list[JobEnv], _EMPTY_OK] = Field(default_factory=list)
    """Environment variables."""
    enable_rdma: Flag = Field(
        default=False, validation_alias="enableRDMA", serialization_alias="enableRDMA"
    )
    """Whether RDMA is on."""
    host_network: Flag = False
    """Whether pods use the host network."""
    privileged: OptionalFlag = None
    """Whether containers run privileged (``None`` when AIHC omits it)."""
    datasources: Annotated[list[JobDatasource], _EMPTY_OK] = Field(default_factory=list)
    """Mounted volumes."""
    labels: Annotated[list[JobLabel], _EMPTY_OK] = Field(default_factory=list)
    """Labels, AIHC's own included."""
    priority: Str = ""
    """``high``, ``normal`` or ``low``."""
    enable_fault_tolerance: Flag = False
    """Whether fault tolerance is on."""
    custom_fault_tolerance_pattern: Strs = Field(default_factory=list)
    """Log patterns that count as a fault."""
    fault_tolerance_args: Str = ""
    """Fault tolerance flags, when given that way."""
    enable_bccl: Flag = False
    """Whether BCCL injection was requested."""
    enable_bccl_status: Str = ""
    """Outcome of the BCCL injection."""
    enable_bccl_error_reason: Str = ""
    """Why BCCL injection failed."""
    k8s_uid: Str = Field(default="", validation_alias="k8sUID", serialization_alias="k8sUID")
    """UID of the Kubernetes job object."""
    k8s_namespace: Str = Field(
        default="", validation_alias="k8sNamespace", serialization_alias="k8sNamespace"
    )
    """Kubernetes namespace of the job."""
    pod_list: Annotated[PodList | None, BeforeValidator(lambda value: value or None)] = None
    """The job's pods (get-job only; ``None`` in list items)."""

    @property
    def labels_dict(self) -> dict[str, str]:
        """Labels as a ``{key: value}`` dict (the last one wins on a repeated key)."""
        return {label.key: label.value for label in self.labels}

    def _pods(self) -> Sequence[Pod]:
        return self.pod_list.pods if self.pod_list else []


class _BriefModel(_WireModel):
    """A model that reads only the fields it names (the rest is not even looked at)."""

    model_config = ConfigDict(extra="ignore")


class _BriefMeta(_BriefModel):
    """A pod's name."""

    name: Str = ""
    """The pod's name."""


class _BriefPod(_BriefModel):
    """A pod's name and why it ended."""

    object_meta: Annotated[_BriefMeta, _OBJECT_OK] = Field(default_factory=_BriefMeta)
    """Its metadata: the name only."""
    reason: Str = ""
    """Why the pod ended or failed, when AIHC says."""


class _BriefPodList(_BriefModel):
    """A job's pods, briefly."""

    pods: Annotated[list[_BriefPod], _EMPTY_OK] = Field(default_factory=list)
    """The pods."""


class JobBrief(_BriefModel, _JobState):
    """The part of a get-job result that a status poll reads: a tenth of the cost of
    validating the whole :class:`JobInfo`, with the same lenient field rules."""

    job_id: Str = ""
    """Id of the job."""
    resource_pool_id: Str = ""
    """Pool of the job."""
    job_framework: Str = ""
    """``PyTorchJob``; needed to read a failed job's events."""
    status: Str = ""
    """The job's status (see :class:`~.status.JobStatus`)."""
    enable_fault_tolerance: Flag = False
    """Whether AIHC may restart the job after a failure."""
    created_at: Timestamp = None
    """When the job was created (where its time in the queue starts)."""
    queue: Str = ""
    """Its queue (named when the job waited in it too long)."""
    pod_list: Annotated[_BriefPodList | None, BeforeValidator(lambda value: value or None)] = None
    """The pods: names and reasons only."""

    def _pods(self) -> Sequence[_BriefPod]:
        return self.pod_list.pods if self.pod_list else []


class JobStatusItem(JobBrief):
    """A list-jobs item (or a get-job result) as the triggerer's status watcher reads it:
    :class:`JobBrief`, whose creation time tells how deep in the pages it is."""


class JobStatusPage(_BriefModel):
    """One page of list-jobs, read as :class:`JobStatusItem` items."""

    total: Int = 0
    """Number of jobs across all pages."""
    jobs: Annotated[list[JobStatusItem], _EMPTY_OK] = Field(default_factory=list)
    """Jobs on this page."""


class _PlainStatusItem(JobStatusItem):
    """:class:`JobStatusItem` as AIHC sends it (bce-sdk-go ``aiJob.go:13-45``: plain Go
    ``string`` and ``bool`` fields, an ISO 8601 ``createdAt`` with its zone), read by
    pydantic alone: the lenient types' validators, eight Python calls an item, were a third
    of a page's reading (issue #37).  Anything else (a ``null``, a number for a string, a
    Go ``time.String()``, a time without its zone) fails it, and the page is read by the
    lenient :class:`JobStatusPage` instead, to the same values."""

    job_id: StrictStr = ""
    """Id of the job."""
    resource_pool_id: StrictStr = ""
    """Pool of the job."""
    job_framework: StrictStr = ""
    """``PyTorchJob``; needed to read a failed job's events."""
    status: StrictStr = ""
    """The job's status (see :class:`~.status.JobStatus`)."""
    enable_fault_tolerance: StrictBool = False
    """Whether AIHC may restart the job after a failure."""
    created_at: Annotated[AwareDatetime | None, Field(strict=True)] = None
    """When the job was created (where its time in the queue starts)."""
    queue: StrictStr = ""
    """Its queue (named when the job waited in it too long)."""


class JobStatusPageFromJson(JobStatusPage):
    """:class:`JobStatusPage` read straight from an answer's bytes (pydantic's JSON reader),
    its items as AIHC sends them (:class:`_PlainStatusItem`): without the lenient ``null``
    rule on ``jobs``, whose validator would be handed the whole list built as dicts and
    lists first, twice the cost of a page.  A page it cannot read (``"jobs": null``, an
    item with a ``null`` or a number for a string) is read by :class:`JobStatusPage`
    instead (:attr:`~airflow_provider_aihc.hooks._endpoint.Call.envelope_model`)."""

    jobs: list[_PlainStatusItem] = Field(default_factory=list)  # type: ignore[assignment]
    """Jobs on this page."""


class JobSummary(JobStatusItem):
    """A list-jobs item as the operator's exactly-once lookup reads it: :class:`JobBrief`
    plus the name, labels and creation time (list items carry no pods)."""

    name: Str = ""
    """Name of the job."""
    labels: Annotated[list[JobLabel], _EMPTY_OK] = Field(default_factory=list)
    """The job's labels."""

    @property
    def labels_dict(self) -> dict[str, str]:
        """Labels as a ``{key: value}`` dict (the last one wins on a repeated key)."""
        return {label.key: label.value for label in self.labels}


class JobSummaryList(_BriefModel):
    """One page of list-jobs, read as :class:`JobSummary` items."""

    total: Int = 0
    """Number of jobs across all pages."""
    jobs: Annotated[list[JobSummary], _EMPTY_OK] = Field(default_factory=list)
    """Jobs on this page."""


class CreateJobResult(_ResponseModel):
    """Result of create-job."""

    job_id: Annotated[str, Field(min_length=1)]
    """Id of the new job; required."""
    job_name: Str = ""
    """Its name (the example answer's name differs from the request's)."""


class StopJobResult(_ResponseModel):
    """Result of stop-job."""

    job_id: Str = ""
    """The stopped job's id."""
    job_name: Str | None = None
    """Its name; the documented answer omits it."""


class DeleteJobResult(_ResponseModel):
    """Result of delete-job."""

    job_id: Str = ""
    """The deleted job's id."""
    job_name: Str | None = None
    """Its name."""


class JobList(_ResponseModel):
    """One page of list-jobs."""

    total: Int = 0
    """Number of jobs across all pages."""
    jobs: Annotated[list[JobInfo], _EMPTY_OK] = Field(default_factory=list)
    """Jobs on this page."""
    page_no: OptionalInt = None
    """Page number, 1-based."""
    page_size: OptionalInt = None
    """Page size."""
    order_by: Str = ""
    """``createdAt`` or ``finishedAt``."""
    order: Str = ""
    """``asc`` or ``desc``."""


class JobEvent(_ResponseModel):
    """A Kubernetes event of a job or pod."""

    reason: Str = ""
    """Short reason, e.g. ``FailedScheduling``."""
    message: Str = ""
    """Human-readable message."""
    first_timestamp: Timestamp = None
    """First occurrence."""
    last_timestamp: Timestamp = None
    """Latest occurrence."""
    count: Int = 0
    """How many times it occurred."""
    type: Str = ""
    """``Normal`` or ``Warning``."""


class JobEvents(_ResponseModel):
    """Result of job-events and pod-events (the one unwrapped answer)."""

    events: Annotated[list[JobEvent], _EMPTY_OK] = Field(default_factory=list)
    """The events."""
    total: Int = 0
    """Number of events."""


class PodLogs(_ResponseModel):
    """Result of pod-logs."""

    job_id: Str = ""
    """The job."""
    pod_name: Str = ""
    """The pod."""
    logs: Strs = Field(default_factory=list)
    """Log records (lines, or chunks of lines when ``chunk`` was set)."""
    next_marker: Str | None = None
    """Marker for the next page, when AIHC pages the logs."""
