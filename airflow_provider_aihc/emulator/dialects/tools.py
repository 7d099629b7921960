"""The job tools both dialects serve: metrics, the web terminal, a pool's nodes and cards.

Each parses its arguments (v1 from the query, v2 from the body: ``args``), validates them
as Baidu's definitions say, and reads the state; the dialect renders the answer.
Validation: ``jobId`` and ``metricType`` required, ``metricType`` one of the documented
values (bce-openapi-meta ``schema/aihc/DescribeJobMetrics.json:18-46``,
``i18n/zh-CN/aihc/DescribeJobMetrics.json:9``); ``podName`` required,
``pingTimeoutSecond`` 1 to 3600 and ``handshakeTimeoutSecond`` at least 1
(``DescribeJobWebterminal.json:24-40``, zh-CN ``:7-8``); v1 is held to the same rules
(bce-sdk-go's v1 client refuses only an empty job, pool or pod before sending:
``resource/client.go:411-416``, ``:434-445``).  Inferred (no source says): times
as epoch seconds or ``YYYY-MM-DDTHH:MM:SSZ``, ``timeStep``/``rateInterval`` as seconds or a
Go duration (``30s``, ``5m``, ``1h``), the terminal's URL form, a terminal served for any
pod of the job.  A node's ``gpuType`` is its card's model from the resource name
(``baidu.com/a800_80g_cgpu``: ``A800``), inferred: the aihc CLI shows a descriptor's model
by its own table (``aihc_cli_py/resourcepool_queue.py:8-24``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from airflow_provider_aihc.emulator.dialects.call import Call, parse_time
from airflow_provider_aihc.emulator.state.errors import invalid_param, not_found
from airflow_provider_aihc.emulator.state.jobs import Job
from airflow_provider_aihc.emulator.state.pods import find_pod
from airflow_provider_aihc.emulator.state.pools import Pool, PoolUsage
from airflow_provider_aihc.emulator.state.samples import (
    DEFAULT_STEP,
    METRIC_TYPES,
    Node,
    Sample,
    gpu_detail,
    metric_series,
    pool_nodes,
)

#: Where the emulator's terminals claim to be.
TERMINAL_URL = "wss://webterminal.aihc-emulator.invalid/{pool}/{job}/{pod}"
_DURATION = re.compile(r"^(\d+)([smh]?)$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600}
#: Reads one argument as text (v2 refuses a JSON number where a String is defined).
Arg = Callable[[str], str | None]


def require(value: str | None, name: str) -> str:
    if not value:
        raise invalid_param(f"{name} is required")
    return value


def _seconds(name: str, value: str | None, default: int) -> int:
    if not value:
        return default
    match = _DURATION.match(value)
    if match is None or int(match.group(1)) < 1:
        raise invalid_param(f"{name} must be seconds or a duration like 30s, 5m, 1h; got {value!r}")
    return int(match.group(1)) * _UNIT[match.group(2)]


def metrics(c: Call, arg: Arg, queue_id: str | None) -> tuple[str, str, dict[str, list[Sample]]]:
    """``(jobId, metricType, samples by pod)`` of a metrics request."""
    job_id = require(arg("jobId"), "jobId")
    metric_type = require(arg("metricType"), "metricType")
    if metric_type not in METRIC_TYPES:
        raise invalid_param(
            f"metricType must be one of {', '.join(METRIC_TYPES)}, got {metric_type!r}"
        )
    start, end = parse_time("startTime", arg("startTime")), parse_time("endTime", arg("endTime"))
    step = _seconds("timeStep", arg("timeStep"), DEFAULT_STEP)
    _seconds("rateInterval", arg("rateInterval"), DEFAULT_STEP)
    now = c.state.clock()

    def series(job: Job) -> dict[str, list[Sample]]:
        return metric_series(job, metric_type, now, start, end, step)

    return job_id, metric_type, c.state.get_job(c.pool_id, job_id, series, queue_id=queue_id)


def webterminal(c: Call, arg: Arg, queue_id: str | None) -> str:
    """The terminal URL of a request's pod."""
    job_id = require(arg("jobId"), "jobId")
    pod_name = require(arg("podName"), "podName")
    _bounded("pingTimeoutSecond", arg("pingTimeoutSecond"), 3600)
    _bounded("handshakeTimeoutSecond", arg("handshakeTimeoutSecond"), None)

    def url(job: Job) -> str:
        if find_pod(job, pod_name) is None:
            raise not_found("PodNotFound", f"pod {pod_name!r} not found in job {job_id!r}")
        return TERMINAL_URL.format(pool=c.pool_id, job=job_id, pod=pod_name)

    return c.state.get_job(c.pool_id, job_id, url, queue_id=queue_id)


def _bounded(name: str, value: str | None, high: int | None) -> None:
    if value is None or value == "":
        return
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1 or (high is not None and number > high):
        bounds = f"1 to {high}" if high is not None else "at least 1"
        raise invalid_param(f"{name} must be whole seconds, {bounds}; got {value!r}")


def sample(item: Sample) -> dict[str, Any]:
    """``{time, value}`` (``Metric``: ``time`` a string, ``value`` a whole number)."""
    return {"time": _iso(item.at), "value": item.value}


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def nodes(c: Call, pool_id: str) -> list[dict[str, Any]]:
    """The pool's nodes as bce-sdk-go's v1 ``Node`` (``api/v1/resourcePool.go:105-124``)."""
    return [_node(n) for n in c.state.get_pool(pool_id, pool_nodes)]


def _node(node: Node) -> dict[str, Any]:
    return {
        "nodeName": node.name,
        "instanceId": node.instance_id,
        "instanceName": f"aihc-emulator-{node.instance_id}",
        "statusPhase": "Ready",
        "chargingType": "Postpaid",
        "gpuType": gpu_type(node.descriptor),
        "gpuDescriptor": node.descriptor,
        "gpuTotal": node.gpus,
        "gpuAllocated": node.gpus_allocated,
        "cpuTotal": 128,
        "cpuAllocated": 16 * node.gpus_allocated,
        "memoryTotal": 1024 * 2**30,
        "memoryAllocated": 128 * 2**30 * node.gpus_allocated,
        "zone": "zoneA",
        "region": node.region,
        "intervention": "",
        "createdAt": "2024-07-01T08:00:00Z",
    }


def gpu_type(descriptor: str) -> str:
    """A card's model from its resource name: ``baidu.com/a800_80g_cgpu`` is ``A800``."""
    return descriptor.rpartition("/")[2].split("_")[0].upper()


def gpu_details(pool: Pool, used: PoolUsage) -> list[dict[str, Any]]:
    """A v1 pool's ``status.gpuDetail``: ``[{gpuDescriptor, total, used}]`` per card kind
    (bce-sdk-go ``services/aihc/api/v1/resourcePool.go:57``, ``:69-73``)."""
    return [
        {"gpuDescriptor": cards.descriptor, "total": cards.total, "used": cards.used}
        for cards in gpu_detail(pool, used)
    ]


def path_and_query(c: Call) -> Arg:
    """A v1 argument: the path's ``jobId``/``podName``, else the query's."""
    return lambda name: c.params.get(name) or c.query.get(name)
