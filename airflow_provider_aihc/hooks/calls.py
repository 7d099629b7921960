"""Every AIHC endpoint the provider calls, declared once.

Each class is one call: its :class:`~airflow_provider_aihc.hooks._endpoint.Endpoint`
(the operation, the v1 method and path, the v2 action, what it needs, its query
arguments), the model that reads its answer, and its values as fields.  The hook's
public methods build one and send it (:meth:`AIHCHook.send`, :meth:`AIHCHook.asend`);
the watch flows yield them and their drivers send them the same way.  A read of the same
endpoint into another model is a subclass that names only that model.

Endpoints (v1: bce-sdk-go ``services/aihc/resource/client.go``; v2: bce-openapi-meta
``schema/aihc/*.json``): CreateJob ``POST /api/v1/aijobs``,
ListJobs ``GET /api/v1/aijobs``, GetJob ``GET /api/v1/aijobs/{id}``, StopJob ``POST
…/{id}/stop``, DeleteJob ``DELETE …/{id}``, UpdateJob ``PUT …/{id}``, GetJobEvents
``GET …/{id}/events``, GetPodLogs ``GET …/{id}/pods/{pod}/logs``, GetPodEvents ``GET
…/{id}/pods/{pod}/events``, and the resource pool and queue reads; every job call names
its resource pool (query ``resourcePoolId``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from airflow_provider_aihc.hooks._endpoint import (
    JOB,
    POD,
    POOL,
    POOL_ID,
    QUEUE,
    QUEUE_NAME,
    Action,
    Call,
    Endpoint,
)
from airflow_provider_aihc.hooks.dialects import LIST_FILTERS
from airflow_provider_aihc.models.job import (
    CreateJobResult,
    DeleteJobResult,
    JobBrief,
    JobEvents,
    JobInfo,
    JobList,
    JobStatusItem,
    JobStatusPage,
    JobStatusPageFromJson,
    JobSummaryList,
    PodLogs,
    StopJobResult,
)
from airflow_provider_aihc.models.job_tools import (
    BatchStopResult,
    JobMetrics,
    JobNodes,
    JobWebterminal,
    PoolNodePage,
)
from airflow_provider_aihc.models.pool import Queue, QueueList, ResourcePool, ResourcePoolList

T = TypeVar("T")

JOBS = "/api/v1/aijobs"
POOLS = "/api/v1/resourcepools"
#: What a call that addresses one job needs: its pool, its id and its queue (the queue id is
#: required on managed pools: ``hooks/_endpoint.py`` ``MANAGED_POOLS``; v2 sends ``queueID`` on
#: every single-job action, required by bce-openapi-meta ``schema/aihc/StopJob.json:12-17``
#: and the other single-job actions' definitions).
ONE_JOB = (POOL, JOB, QUEUE)
PAGE = (("page_no", "pageNo"), ("page_size", "pageSize"))


@dataclass(frozen=True, slots=True)
class CreateJob(Call[CreateJobResult]):
    """CreateJob: sent exactly once (a lost answer is the caller's to resolve)."""

    endpoint = Endpoint(
        "CreateJob", "POST", JOBS, retryable=False, needs=(POOL,),
        query=(("client_token", "clientToken"),), v2=Action("CreateJob", shape="create"),
    )  # fmt: skip
    model = CreateJobResult
    body: dict[str, Any]
    pool: str | None = None
    queue_id: str | None = None
    client_token: str | None = None

    def payload(self) -> Any:
        return self.body


@dataclass(frozen=True, slots=True)
class ListJobsCall(Call[T]):
    """ListJobs: one page of a pool's jobs (the filters v1 cannot send are dropped there).

    A ``queue`` is sent as ``queueID`` too unless ``queue_id`` says otherwise, as Baidu's v1
    client sends its one queue twice (bce-sdk-go ``services/aihc/resource/client.go:477-478``)
    and v2 wants the body's ``queue`` "保持和queueID一致" on managed pools (bce-openapi-meta
    ``i18n/zh-CN/aihc/DescribeJobs.json:4-5``): a managed pool's list needs it.
    """

    endpoint = Endpoint(
        "ListJobs", "GET", JOBS, needs=(POOL, QUEUE),
        query=(("queue", "queue"), ("order_by", "orderBy"), ("order", "order"),
               ("keyword", "keyword"), ("status", "status"), *PAGE),
        v1_drops=LIST_FILTERS, v2=Action("DescribeJobs", shape="list", answer="jobs"),
    )  # fmt: skip
    pool: str | None
    page_no: int
    page_size: int
    queue: str | None = None
    order_by: str | None = None
    order: str | None = None
    keyword: str | None = None
    status: str | None = None
    queue_id: str | None = None

    def __post_init__(self) -> None:
        if self.queue_id is None and self.queue and self.queue != "all":
            object.__setattr__(self, "queue_id", self.queue)


class ListJobs(ListJobsCall[JobList]):
    """A ListJobs page of whole jobs."""

    __slots__ = ()
    model = JobList


class ListJobSummaries(ListJobsCall[JobSummaryList]):
    """A ListJobs page read as summaries (id, name, status, labels, creation time)."""

    __slots__ = ()
    model = JobSummaryList


class ListJobStatuses(ListJobsCall[JobStatusPage]):
    """A ListJobs page read as status items, as the pool watcher reads it."""

    __slots__ = ()
    model = JobStatusPage
    envelope_model = JobStatusPageFromJson


@dataclass(frozen=True, slots=True)
class JobCall(Call[T]):
    """A call that addresses one job of a pool (its pod calls name the pod second)."""

    job_id: str
    pool: str | None = None
    queue_id: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class GetJobCall(JobCall[T]):
    """GetJob: one job, with its pods."""

    endpoint = Endpoint(
        "GetJob", "GET", JOBS + "/{job_id}", needs=ONE_JOB,
        v2=Action("DescribeJob", fixed=(("needDetail", True),), answer="job"),
    )  # fmt: skip


class GetJobBrief(GetJobCall[JobBrief]):
    """GetJob read as a :class:`~airflow_provider_aihc.models.job.JobBrief`: status, pods
    and reasons, as a poll needs them."""

    __slots__ = ()
    model = JobBrief


class GetJob(GetJobCall[JobInfo]):
    """GetJob read whole (:class:`~airflow_provider_aihc.models.job.JobInfo`): times,
    replicas, resources and the pods' restart counts, for the job summary."""

    __slots__ = ()
    model = JobInfo


class GetJobStatusItem(GetJobCall[JobStatusItem]):
    """GetJob read as a list item (the brief plus the creation time)."""

    __slots__ = ()
    model = JobStatusItem


@dataclass(frozen=True, slots=True)
class StopJob(JobCall[StopJobResult]):
    """StopJob (AIHC has no suspend; a stopped job ends)."""

    endpoint = Endpoint(
        "StopJob", "POST", JOBS + "/{job_id}/stop", needs=ONE_JOB, v2=Action("StopJob")
    )
    model = StopJobResult


@dataclass(frozen=True, slots=True)
class DeleteJob(JobCall[DeleteJobResult]):
    """DeleteJob: the job's record."""

    endpoint = Endpoint(
        "DeleteJob", "DELETE", JOBS + "/{job_id}", needs=ONE_JOB, v2=Action("DeleteJob")
    )
    model = DeleteJobResult


@dataclass(frozen=True, slots=True)
class UpdateJob(JobCall[StopJobResult]):
    """UpdateJob: a queued job's priority."""

    endpoint = Endpoint(
        "UpdateJob", "PUT", JOBS + "/{job_id}", needs=ONE_JOB, v2=Action("ModifyJob")
    )
    model = StopJobResult
    priority: str = field(kw_only=True)

    def payload(self) -> Any:
        return {"priority": self.priority}


@dataclass(frozen=True, slots=True)
class GetJobEvents(JobCall[JobEvents]):
    """GetJobEvents: where a failed job's reason is when its pods give none."""

    endpoint = Endpoint(
        "GetJobEvents", "GET", JOBS + "/{job_id}/events", needs=ONE_JOB,
        query=(("job_framework", "jobFramework"), ("start_time", "startTime"),
               ("end_time", "endTime")),
        v2=Action("DescribeJobEvents", fields=("startTime", "endTime")),
    )  # fmt: skip
    model = JobEvents
    job_framework: str = "PyTorchJob"
    start_time: str | None = None
    end_time: str | None = None


@dataclass(frozen=True, slots=True)
class GetPodLogs(Call[PodLogs]):
    """GetPodLogs: ``marker=None`` reads the tail, ``""`` the log from its first line.

    A read from the first line sends neither ``marker`` nor ``maxLines``: the first request
    sends no marker ("第一次请求不写 marker 参数") and without ``maxLines`` AIHC answers the
    pod's whole log ("未设置则返回 Pod 从启动以来的所有日志"; bce-openapi-meta
    ``i18n/zh-CN/aihc/DescribeJobLogs.json:10,12``), while ``maxLines`` alone asks for the
    newest lines (the ``aihc`` CLI's ``--tail``, ``aihc_cli_py/job.py:406``).  So the first
    page is the whole log (from ``start_time`` when set), whatever ``max_lines`` says; the
    pages after it, from its ``nextMarker``, hold at most ``max_lines`` lines.

    ``start_time``/``end_time`` (epoch seconds) keep the lines written in that window:
    ``startTime`` is in Baidu's v1 GetPodLogs reference (cloud.baidu.com/doc/AIHC),
    ``endTime`` is what bce-sdk-go sends (``services/aihc/resource/client.go``) and v2's
    DescribeJobLogs takes (bce-openapi-meta ``schema/aihc/DescribeJobLogs.json``).
    """

    endpoint = Endpoint(
        "GetPodLogs", "GET", JOBS + "/{job_id}/pods/{pod_name}/logs", needs=(*ONE_JOB, POD),
        query=(("start_time", "startTime"), ("end_time", "endTime"),
               ("max_lines", "maxLines"), ("marker", "marker")),
        # Every argument is a String (bce-openapi-meta schema/aihc/DescribeJobLogs.json).
        v2=Action("DescribeJobLogs", fields=("startTime", "endTime", "maxLines", "marker")),
    )  # fmt: skip
    model = PodLogs
    job_id: str
    pod_name: str
    pool: str | None = None
    marker: str | None = None
    max_lines: int | None = None
    #: Only lines written at or after this (epoch seconds); ``None``: all.
    start_time: int | None = None
    #: Only lines written at or before this (epoch seconds); ``None``: up to now.
    end_time: int | None = None
    queue_id: str | None = field(default=None, kw_only=True)

    def params(self) -> list[tuple[str, str | None]]:
        """As declared; a read from the first line (``marker=""``) without ``maxLines``
        (no ``marker`` on the first request: bce-openapi-meta
        ``i18n/zh-CN/aihc/DescribeJobLogs.json:12``, "第一次请求不写 marker 参数")."""
        sent = list(Call.params(self))
        if self.marker == "":
            sent = [(name, value) for name, value in sent if name != "maxLines"]
        return sent


@dataclass(frozen=True, slots=True)
class GetPodEvents(Call[JobEvents]):
    """GetPodEvents: the events of one pod."""

    endpoint = Endpoint(
        "GetPodEvents", "GET", JOBS + "/{job_id}/pods/{pod_name}/events",
        needs=(*ONE_JOB, POD), query=(("job_framework", "jobFramework"),),
        v2=Action("DescribePodEvents"),
    )  # fmt: skip
    model = JobEvents
    job_id: str
    pod_name: str
    pool: str | None = None
    job_framework: str = "PyTorchJob"
    queue_id: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class ListResourcePools(Call[ResourcePoolList]):
    """ListResourcePools: one page of the pools the credentials see (v2: the common ones;
    the managed pool is addressed as ``aihc-serverless``)."""

    endpoint = Endpoint(
        "ListResourcePools", "GET", POOLS, query=PAGE,
        v2=Action("DescribeResourcePools", query=True, paged=True,
                  fixed=(("resourcePoolType", "common"),), answer="pools"),
    )  # fmt: skip
    model = ResourcePoolList
    page_no: int
    page_size: int


@dataclass(frozen=True, slots=True)
class GetResourcePool(Call[ResourcePool]):
    """GetResourcePool."""

    endpoint = Endpoint(
        "GetResourcePool", "GET", POOLS + "/{pool_id}", needs=(POOL_ID,),
        v2=Action("DescribeResourcePool", query=True, ids=((POOL_ID, "resourcePoolId"),),
                  answer="pool"),
    )  # fmt: skip
    model = ResourcePool
    pool_id: str


@dataclass(frozen=True, slots=True)
class ListQueues(Call[QueueList]):
    """ListQueues: one page of a pool's queues."""

    endpoint = Endpoint(
        "ListQueues", "GET", POOLS + "/{pool_id}/queue", needs=(POOL_ID,), query=PAGE,
        v2=Action("DescribeQueues", query=True, paged=True, ids=((POOL_ID, "resourcePoolId"),),
                  answer="queues"),
    )  # fmt: skip
    model = QueueList
    pool_id: str
    page_no: int
    page_size: int


@dataclass(frozen=True, slots=True)
class GetQueue(Call[Queue]):
    """GetQueue: one queue of a pool."""

    endpoint = Endpoint(
        "GetQueue", "GET", POOLS + "/{pool_id}/queue/{queue_name}",
        needs=(POOL_ID, QUEUE_NAME),
        v2=Action("DescribeQueue", query=True, ids=((QUEUE_NAME, "queueId"),), answer="queue"),
    )  # fmt: skip
    model = Queue
    pool_id: str
    queue_name: str


# -- the job tools: metrics, nodes, the web terminal, batch stop, a pool's nodes -------------
# v1: bce-sdk-go services/aihc/resource/client.go (GetTaskMetrics :410-431, GetWebSSHUrl
# :433-459, GetJobNodesList :305-326, ListNodeByResourcePoolID :100-119; no batch stop);
# v2: bce-openapi-meta schema/aihc/DescribeJobMetrics.json, DescribeJobWebterminal.json,
# DescribeJobNodes.json, BatchStopTrainingTasksV2.json (no action lists a pool's nodes,
# nor does bce-sdk-go services/aihc/v2/resourcepool/client.go).  The v1 client sends no
# queueID on metrics and nodes; the provider sends it on managed pools only, where the v2
# definitions require it (DescribeJobMetrics.json:12-16) and the emulator refuses without.


@dataclass(frozen=True, slots=True)
class GetJobMetrics(JobCall[JobMetrics]):
    """GetJobMetrics: one metric's samples over a time range (every argument a String:
    v1 client.go:421-427, v2 DescribeJobMetrics.json:18-52)."""

    endpoint = Endpoint(
        "GetJobMetrics", "GET", JOBS + "/{job_id}/metrics", needs=ONE_JOB,
        query=(("start_time", "startTime"), ("end_time", "endTime"),
               ("time_step", "timeStep"), ("rate_interval", "rateInterval"),
               ("metric_type", "metricType")),
        v2=Action("DescribeJobMetrics",
                  fields=("startTime", "endTime", "timeStep", "metricType", "rateInterval")),
    )  # fmt: skip
    model = JobMetrics
    metric_type: str = field(default="GpuUsage", kw_only=True)
    start_time: str | None = field(default=None, kw_only=True)
    end_time: str | None = field(default=None, kw_only=True)
    time_step: str | None = field(default=None, kw_only=True)
    rate_interval: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class GetJobWebterminal(Call[JobWebterminal]):
    """GetJobWebterminal: a pod's terminal URL (v1 sends ``podName`` in the path and the
    query: client.go:450-455; v2 in the body, required: DescribeJobWebterminal.json:24-28)."""

    endpoint = Endpoint(
        "GetJobWebterminal", "GET", JOBS + "/{job_id}/pods/{pod_name}/webterminal",
        needs=(*ONE_JOB, POD),
        query=(("pod_name", "podName"), ("ping_timeout", "pingTimeoutSecond"),
               ("handshake_timeout", "handshakeTimeoutSecond")),
        v2=Action("DescribeJobWebterminal",
                  fields=("handshakeTimeoutSecond", "pingTimeoutSecond")),
    )  # fmt: skip
    model = JobWebterminal
    job_id: str
    pod_name: str
    pool: str | None = None
    ping_timeout: int | None = None
    handshake_timeout: int | None = None
    queue_id: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class GetJobNodes(JobCall[JobNodes]):
    """GetJobNodes: the nodes a job's pods run on."""

    endpoint = Endpoint(
        "GetJobNodes", "GET", JOBS + "/{job_id}/nodes", needs=ONE_JOB,
        v2=Action("DescribeJobNodes"),
    )  # fmt: skip
    model = JobNodes


@dataclass(frozen=True, slots=True)
class StopJobs(Call[BatchStopResult]):
    """BatchStopJobs (v2 only): the jobs of one queue, ``jobList: [{jobId}]``
    (BatchStopTrainingTasksV2.json:4, :18-29)."""

    endpoint = Endpoint(
        "BatchStopJobs", "POST", "", needs=(POOL, QUEUE), v1=False,
        v2=Action("BatchStopJobs", shape="batch"),
    )  # fmt: skip
    model = BatchStopResult
    job_ids: tuple[str, ...]
    pool: str | None = None
    queue_id: str | None = field(default=None, kw_only=True)

    def payload(self) -> Any:
        return {"jobList": [{"jobId": job_id} for job_id in self.job_ids]}


@dataclass(frozen=True, slots=True)
class ListPoolNodes(Call[PoolNodePage]):
    """ListPoolNodes (v1 only): one page of a pool's nodes (client.go:100-119)."""

    endpoint = Endpoint(
        "ListPoolNodes", "GET", POOLS + "/{pool_id}/nodes", needs=(POOL_ID,),
        query=(("order_by", "orderBy"), ("order", "order"), *PAGE),
    )  # fmt: skip
    model = PoolNodePage
    pool_id: str
    page_no: int
    page_size: int
    order_by: str | None = None
    order: str | None = None
