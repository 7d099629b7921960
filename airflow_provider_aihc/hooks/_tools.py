"""The job tools of :class:`~airflow_provider_aihc.hooks.aihc.AIHCHook`: a job's metrics,
its nodes, a pod's web terminal, stopping several jobs at once, and a pool's nodes.

Each method is one declared call (``hooks/calls.py``) checked here first: a value Baidu's
definitions do not allow fails naming the argument and what it takes, before any request.
Where only one API generation defines the operation (batch stop: v2; a pool's nodes: v1),
the other dialect refuses it before sending, naming the operation and the ``api_version``
that has it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks import calls
from airflow_provider_aihc.hooks._calling import CallingHook
from airflow_provider_aihc.hooks.dialects import check_path_id
from airflow_provider_aihc.models.job_tools import (
    BatchStopResult,
    JobMetrics,
    JobNodes,
    JobWebterminal,
    PoolNode,
)

#: ``metricType`` values (bce-openapi-meta ``i18n/zh-CN/aihc/DescribeJobMetrics.json:9``).
METRIC_TYPES = (
    "GpuUsage", "GpuMemoryUsage", "CpuUsage", "MemoryUsage", "DiskReadRate", "DiskWriteRate",
    "RDMASendDataRate", "RDMARecvDataRate", "PCIESendDataRate", "PCIERecvDataRate",
    "NVLinkSendDataRate", "NVLinkRecvDataRate", "GpuTemperature", "GpuPowerUsage",
    "GpuPipeTensorUsage", "RDMAHealth", "RDMASendErrorRate", "RDMARecvErrorRate",
    "RDMASendPacketsRate", "RDMARecvPacketsRate", "CpuTime", "MemoryAllocation",
)  # fmt: skip
#: ``pingTimeoutSecond`` bounds, ``handshakeTimeoutSecond``'s least value
#: (``i18n/zh-CN/aihc/DescribeJobWebterminal.json:7-8``).
PING_TIMEOUT_RANGE = (1, 3600)
HANDSHAKE_TIMEOUT_MIN = 1

Time = str | int | datetime


class JobToolsHook(CallingHook):
    """The job tools over :class:`CallingHook`'s senders (public through ``AIHCHook``)."""

    def get_job_metrics(
        self,
        job_id: str,
        metric_type: str,
        resource_pool_id: str | None = None,
        *,
        start_time: Time | None = None,
        end_time: Time | None = None,
        time_step: str | None = None,
        rate_interval: str | None = None,
        queue_id: str | None = None,
    ) -> JobMetrics:
        """One metric of a job over a time range (``.points`` are its samples).

        :param metric_type: one of :data:`METRIC_TYPES`, e.g. ``GpuUsage``,
            ``GpuMemoryUsage`` (percentages) or ``RDMASendDataRate`` (bytes/s).
        :param start_time: from when (epoch seconds, an aware datetime, or the string AIHC
            takes); AIHC's default is the job's start.
        :param end_time: until when; AIHC's default is now, or the end of an ended job.
        :param time_step: the interval between samples (AIHC's default: 5 minutes).
        :param rate_interval: the window a rate is computed over (default 5 minutes).
        :param queue_id: the job's queue id, which a managed pool needs.
        """
        return self.send(
            _metrics(job_id, metric_type, resource_pool_id, start_time, end_time,
                     time_step, rate_interval, queue_id)
        )  # fmt: skip

    async def aget_job_metrics(
        self,
        job_id: str,
        metric_type: str,
        resource_pool_id: str | None = None,
        *,
        start_time: Time | None = None,
        end_time: Time | None = None,
        time_step: str | None = None,
        rate_interval: str | None = None,
        queue_id: str | None = None,
    ) -> JobMetrics:
        """Async :meth:`get_job_metrics`, for a trigger or watcher that samples a job."""
        return await self.asend(
            _metrics(job_id, metric_type, resource_pool_id, start_time, end_time,
                     time_step, rate_interval, queue_id)
        )  # fmt: skip

    def get_job_webterminal(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        ping_timeout: int | None = None,
        handshake_timeout: int | None = None,
        queue_id: str | None = None,
    ) -> JobWebterminal:
        """The URL of a web terminal into one pod of a running job.

        :param pod_name: the pod (``JobInfo.pods``), required.
        :param ping_timeout: seconds without a heartbeat before the terminal closes,
            1 to 3600 (AIHC's default: 900).
        :param handshake_timeout: seconds to open the connection in, at least 1 (default 30).
        """
        check_path_id("pod_name", pod_name)
        _check_range("ping_timeout", ping_timeout, *PING_TIMEOUT_RANGE)
        _check_range("handshake_timeout", handshake_timeout, HANDSHAKE_TIMEOUT_MIN, None)
        return self.send(
            calls.GetJobWebterminal(job_id, pod_name, resource_pool_id, ping_timeout,
                                    handshake_timeout, queue_id=queue_id)
        )  # fmt: skip

    def get_job_nodes(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobNodes:
        """The nodes a job's pods run on (none before it is scheduled)."""
        return self.send(calls.GetJobNodes(job_id, resource_pool_id, queue_id=queue_id))

    async def aget_job_nodes(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobNodes:
        """Async :meth:`get_job_nodes`."""
        return await self.asend(calls.GetJobNodes(job_id, resource_pool_id, queue_id=queue_id))

    def stop_jobs(
        self,
        job_ids: Iterable[str],
        resource_pool_id: str | None = None,
        *,
        queue_id: str | None = None,
    ) -> BatchStopResult:
        """Stop several jobs of one queue in one request (``api_version`` v2 only: v1
        defines no batch stop); each job's outcome is in the result, a failure is not
        raised.

        :param job_ids: the jobs, at least one, each once.
        :param queue_id: their queue (its id on a managed pool, its name otherwise).
        """
        return self.send(_batch(job_ids, resource_pool_id, queue_id))

    async def astop_jobs(
        self,
        job_ids: Iterable[str],
        resource_pool_id: str | None = None,
        *,
        queue_id: str | None = None,
    ) -> BatchStopResult:
        """Async :meth:`stop_jobs`."""
        return await self.asend(_batch(job_ids, resource_pool_id, queue_id))

    def list_pool_nodes(
        self,
        resource_pool_id: str | None = None,
        *,
        order_by: str | None = None,
        order: str | None = None,
    ) -> list[PoolNode]:
        """Every node of a resource pool, all pages (``api_version`` v1 only: no v2 action
        lists a pool's nodes).

        :param order_by: the field AIHC sorts by, as its console names it.
        :param order: ``asc`` or ``desc``.
        """
        if order not in (None, "asc", "desc"):
            raise AIHCConfigError(f"order must be one of asc, desc; got {order!r}")
        pool_id = self.resource_pool(resource_pool_id)
        nodes: list[PoolNode] = []
        for page_no in range(1, self.list_max_pages + 1):
            page = self.send(
                calls.ListPoolNodes(pool_id, page_no, self.list_page_size, order_by, order)
            )
            nodes.extend(page.nodes)
            if not page.nodes or len(nodes) >= page.total:
                break
        return nodes


def _metrics(
    job_id: str,
    metric_type: str,
    pool: str | None,
    start_time: Time | None,
    end_time: Time | None,
    time_step: str | None,
    rate_interval: str | None,
    queue_id: str | None,
) -> calls.GetJobMetrics:
    if metric_type not in METRIC_TYPES:
        raise AIHCConfigError(
            f"metric_type must be one of {', '.join(METRIC_TYPES)}; got {metric_type!r}"
        )
    return calls.GetJobMetrics(
        job_id, pool, metric_type=metric_type, start_time=_time("start_time", start_time),
        end_time=_time("end_time", end_time), time_step=time_step,
        rate_interval=rate_interval, queue_id=queue_id,
    )  # fmt: skip


def _time(name: str, value: Time | None) -> str | None:
    """A time as the String the definitions type it: epoch seconds."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise AIHCConfigError(f"{name} must be an aware datetime (with a tzinfo)")
        return str(int(value.timestamp()))
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AIHCConfigError(f"{name} must be epoch seconds (>= 0), got {value!r}")
    return str(value)


def _check_range(name: str, value: int | None, low: int, high: int | None) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        bounds = f"{low} to {high}" if high is not None else f"at least {low}"
        raise AIHCConfigError(f"{name} must be whole seconds, {bounds}; got {value!r}")


def _batch(job_ids: Iterable[str], pool: str | None, queue_id: str | None) -> calls.StopJobs:
    ids = tuple(job_ids) if not isinstance(job_ids, str) else (job_ids,)
    if not ids:
        raise AIHCConfigError("job_ids must name at least one job")
    for job_id in ids:
        check_path_id("job_ids", job_id)
    if len(set(ids)) != len(ids):  # "非空且唯一": BatchStopTrainingTasksV2.json (zh-CN) :6
        raise AIHCConfigError(f"job_ids must name each job once; got {list(ids)!r}")
    return calls.StopJobs(ids, pool, queue_id=queue_id)
