"""What a job cost and produced, once its wait ended: the job summary, the result and the
metrics, handed to XCom, the task log, Airflow's ``Stats`` and lineage.

Every way of waiting (the create operator in the worker or deferred, the sensor poking,
rescheduled or deferred) ends in the worker with a :class:`~.event.JobEvent`; from there
:func:`collect` (one GetJob, then the log read backwards: :mod:`.results`) and
:func:`publish` are the same code for all five, so they push the same XComs.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.exceptions import AIHCError, AIHCResultError
from airflow_provider_aihc.watch.flow import Flow, GetJob, GetJobMetrics, Log, drive
from airflow_provider_aihc.watch.results import Outputs, OutputSpec, first_replica, read_outputs

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobInfo
    from airflow_provider_aihc.watch.event import JobEvent

XCOM_RESULT = "result"
XCOM_METRICS = "metrics"
XCOM_JOB_SUMMARY = "job_summary"
#: Prefix of the ``Stats`` names: ``aihc.job.queue_seconds``, ...
STATS_PREFIX = "aihc.job"
#: The event statuses of a job that ended on its own, whose outputs are read.
ENDED = ("success", "failed")
#: Nesting of a result walked at most when masking (deeper values are pushed as they are).
MAX_MASK_DEPTH = 64
#: The event statuses that have a summary: also a wait that timed out (the job was
#: stopped, or left running: its cost so far), a queue timeout included.
SUMMARIZED = (*ENDED, "timeout")
#: Resource names that are no accelerator: Kubernetes' own (unprefixed: ``cpu``,
#: ``memory``, AIHC's ``sharedMemory``) and RDMA NICs (``rdma/hca``).  Every other
#: domain-prefixed (extended) resource is one: ``baidu.com/a800_80g_cgpu``, a Kunlun XPU.
_NOT_ACCELERATOR_PREFIXES = ("rdma/",)
#: Summary fields sent to ``Stats`` as gauges (and the two durations as timers too).
STATS_GAUGES = ("queue_seconds", "run_seconds", "accelerator_seconds", "restarts", "replicas")


def summarize(
    job: JobInfo | None,
    job_id: str,
    outputs: Outputs,
    reason: str | None,
    gpu: tuple[float | None, float | None] = (None, None),
) -> dict[str, Any]:
    """The ``job_summary`` of an ended job; a time AIHC did not give is ``None``, and so
    is every number computed from it (never a made-up one).

    ``accelerators_per_replica`` counts the accelerators of one replica: every extended
    (domain-prefixed) resource but RDMA NICs, so GPUs (``baidu.com/a800_80g_cgpu``) and
    any other kind (a Kunlun XPU) alike; ``accelerator_seconds`` is replicas × their sum ×
    ``run_seconds``.  ``gpu_utilisation_mean``/``_max`` are ``gpu``
    (:func:`gpu_utilisation`: percent, from AIHC's job metrics), ``None`` when unread.
    """
    created = job.created_at if job else None
    running = job.running_at if job else None
    finished = job.finished_at if job else None
    accelerators = _accelerators(job)
    run_seconds = _seconds(running, finished)
    replicas = job.replicas if job else None
    per_replica = sum(accelerators.values())
    accelerator_seconds = (
        None
        if run_seconds is None or replicas is None
        else round(replicas * per_replica * run_seconds, 3)
    )
    pods = job.pod_list.pods if job and job.pod_list else []
    return {
        "job_id": job_id,
        "status": job.status if job else None,
        "reason": reason,
        "created_at": _iso(created),
        "running_at": _iso(running),
        "finished_at": _iso(finished),
        "queue_seconds": _seconds(created, running),
        "run_seconds": run_seconds,
        "replicas": replicas,
        "accelerators_per_replica": accelerators,
        "accelerator_seconds": accelerator_seconds,
        "restarts": sum(pod.restart_count for pod in pods) if job else None,
        "metrics": dict(outputs.metrics),
        "gpu_utilisation_mean": gpu[0],
        "gpu_utilisation_max": gpu[1],
    }


#: The most samples one GPU-utilisation read asks for: its ``timeStep`` grows with the
#: job's run so that one request covers it (bounded: one request per ended job).
GPU_MAX_SAMPLES = 300
#: The least ``timeStep`` asked for, in seconds (AIHC's default is 5 minutes).
GPU_MIN_STEP_SECONDS = 60


def gpu_utilisation(
    job_id: str, job: JobInfo, pool: str | None, log: Log, queue_id: str | None = None
) -> Flow[tuple[float | None, float | None]]:
    """Mean and max ``GpuUsage`` (percent) of a job's run, from one DescribeJobMetrics
    (v2) or job-metrics (v1) request over its run, read in both answer shapes (v1: each
    pod's series; v2: one sample or a series: ``models/job_tools.py``).  ``(None, None)``
    for a job that never ran or has no GPUs, or when the metrics cannot be read (logged).
    """
    started = job.running_at
    if started is None or not sum(_accelerators(job).values()):
        return None, None
    # Whole seconds within the run: a sample from before it started or after it ended
    # would count an idle GPU as the job's.  AIHC's times may be cut to whole seconds, so
    # the run began up to a second after the time it gives.
    begin = math.floor(started.timestamp()) + 1
    end = math.floor(job.finished_at.timestamp() if job.finished_at else time.time())
    if end < begin:
        return None, None  # ran for less than a second
    step = max(GPU_MIN_STEP_SECONDS, math.ceil((end - begin) / GPU_MAX_SAMPLES))
    answer = yield GetJobMetrics(
        job_id, job.resource_pool_id or pool, metric_type="GpuUsage",
        start_time=str(begin), end_time=str(end), time_step=str(step), queue_id=queue_id,
    )  # fmt: skip
    if isinstance(answer, AIHCError):
        log.warning("Could not read the GPU use of AIHC job %s (%s)", job_id, answer)
        return None, None
    values = [float(point.value) for point in answer.points]
    if not values:
        return None, None
    return round(sum(values) / len(values), 2), round(max(values), 2)


def collect(
    job_id: str,
    pool: str | None,
    spec: OutputSpec,
    reason: str | None,
    log: Log,
    queue_id: str | None = None,
) -> Flow[tuple[dict[str, Any], Outputs, JobInfo | None]]:
    """Read the ended job (one GetJob) and its first replica's log from the end backwards.

    A GetJob that fails gives a summary of ``None`` values (logged); a log that cannot be read
    gives no result and no metrics (logged); a result line that does not parse fails.

    :raises AIHCResultError: the result line does not parse, or is over the cap.
    """
    job = yield GetJob(job_id, pool, queue_id=queue_id)
    if isinstance(job, AIHCError):
        log.warning("Could not read AIHC job %s for its summary (%s)", job_id, job)
        return summarize(None, job_id, Outputs(), reason), Outputs(), None
    outputs = Outputs()
    pods = job.pod_list.pods if job.pod_list else []
    pod = first_replica([(p.object_meta.name, p.replica_type) for p in pods if p.object_meta.name])
    if spec.wanted and pod is None:
        log.warning("AIHC job %s has no pods: no result or metrics to read", job_id)
    elif spec.wanted and pod is not None:
        started = job.running_at or job.created_at
        ended = job.finished_at.timestamp() if job.finished_at else time.time()
        since = started.timestamp() if started else None
        try:
            outputs = yield from read_outputs(
                job_id,
                job.resource_pool_id or pool,
                pod,
                spec,
                since=since,
                until=ended,
                queue_id=queue_id,
            )
        except AIHCResultError:
            raise
        except AIHCError as err:
            log.warning("Could not read the log of AIHC pod %s for results (%s)", pod, err)
    gpu = yield from gpu_utilisation(job_id, job, pool, log, queue_id)
    return summarize(job, job_id, outputs, reason, gpu), outputs, job


def deliver(
    hook: AIHCHook,
    event: JobEvent,
    pool: str | None,
    spec: OutputSpec,
    context: Mapping[str, Any],
    log: Log,
    *,
    push: bool,
    queue_id: str | None = None,
    earlier_jobs: Sequence[str] = (),
) -> dict[str, Any] | None:
    """After a wait ended (the job's own end, or a timeout, ``queue_timeout`` included):
    :func:`collect` and :func:`publish`.  Nothing for a job that could not be watched.
    A timed-out job's log is not read for results.

    :param earlier_jobs: the ids of the try series' earlier jobs (a retry after a failed
        job made a fresh one): the summary's ``try_series`` and
        ``series_accelerator_seconds`` cover them too (one GetJob each).
    :return: the summary as pushed, or ``None``.
    :raises AIHCResultError: the succeeded job's result line does not parse or is too big.
    """
    if event.status not in SUMMARIZED:
        return None
    if event.status not in ENDED:
        spec = spec.without_outputs()
    try:
        flow = collect(event.job_id, pool, spec, event.reason, log, queue_id)
        summary, outputs, job = drive(flow, hook)
    except AIHCResultError as err:
        if event.status == "success":
            raise
        log.warning("AIHC job %s: %s", event.job_id, err)  # its failure is the news
        return None
    earlier = [
        drive(collect(job_id, pool, _NOTHING, None, log, queue_id), hook)[0]
        for job_id in earlier_jobs
    ]
    add_series(summary, earlier)
    return publish(context, summary, outputs, log, push=push, job=job)


#: What an earlier job of the series is read for: its times and resources, no log.
_NOTHING = OutputSpec(None, {})
#: The fields of each job in ``try_series``.
SERIES_FIELDS = ("job_id", "status", "queue_seconds", "run_seconds", "accelerator_seconds")


def add_series(summary: dict[str, Any], earlier: Sequence[Mapping[str, Any]]) -> None:
    """Add the try series to ``summary``: ``try_series`` (each job, oldest first, this one
    last) and ``series_accelerator_seconds`` (their sum; ``None`` when one is unknown)."""
    jobs = [*earlier, summary]
    summary["try_series"] = [{key: job.get(key) for key in SERIES_FIELDS} for job in jobs]
    costs: list[float | None] = [job.get("accelerator_seconds") for job in jobs]
    known = [cost for cost in costs if cost is not None]
    summary["series_accelerator_seconds"] = (
        round(sum(known), 3) if len(known) == len(costs) else None
    )


def publish(
    context: Mapping[str, Any],
    summary: dict[str, Any],
    outputs: Outputs,
    log: Log,
    *,
    push: bool,
    job: JobInfo | None,
) -> dict[str, Any]:
    """Mask what the job printed, push ``result`` (when found), ``metrics`` and
    ``job_summary``, log the one summary line, and send the numbers to ``Stats``.

    XCom values lose only the secrets registered with Airflow's masker, found by value
    (:func:`registered_secrets_masked`): they are data downstream tasks read, and Airflow's
    key-name rule would turn ``{"tokenizer": "s3://…"}`` into ``"***"`` (security review
    S4-10).  The log line and the returned summary (lineage) are redacted by both rules.

    :return: the summary as logged (redacted by value and by key name).
    """
    from airflow_provider_aihc.version_compat import redact

    ti = context.get("ti")
    if push and ti is not None:
        if outputs.found:
            ti.xcom_push(key=XCOM_RESULT, value=registered_secrets_masked(outputs.result))
        pushed = registered_secrets_masked(summary)
        ti.xcom_push(key=XCOM_METRICS, value=pushed["metrics"])
        ti.xcom_push(key=XCOM_JOB_SUMMARY, value=pushed)
    summary = redact(summary)
    log.info("%s", summary_line(summary))
    emit_stats(summary, context, job, log)
    return summary


def registered_secrets_masked(value: Any, depth: int = 0) -> Any:
    """``value`` with each string (at any depth of dicts and lists, keys kept) redacted by
    value only: every secret registered with Airflow's masker becomes ``***``, and no
    value is hidden for its key's name."""
    from airflow_provider_aihc.version_compat import redact

    if isinstance(value, str):
        return redact(value)
    if depth > MAX_MASK_DEPTH:
        return value
    if isinstance(value, Mapping):
        return {key: registered_secrets_masked(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [registered_secrets_masked(item, depth + 1) for item in value]
    return value


def summary_line(summary: Mapping[str, Any]) -> str:
    """The one line of the task log: GPU-hours first, then the summary as JSON."""
    seconds = summary.get("accelerator_seconds")
    hours = "unknown" if seconds is None else f"{seconds / 3600:.3f}"
    return (
        f"AIHC job {summary.get('job_id')} summary: {summary.get('status')}, "
        f"queued {_text(summary.get('queue_seconds'))} s, ran {_text(summary.get('run_seconds'))}"
        f" s, {hours} GPU-hours; {json.dumps(summary, sort_keys=True, default=str)}"
    )


def emit_stats(
    summary: Mapping[str, Any], context: Mapping[str, Any], job: JobInfo | None, log: Log
) -> None:
    """The summary's numbers as ``Stats`` gauges (and the durations as timers), tagged
    with the DAG, the task, the AIHC pool and the AIHC queue; missing numbers are not
    sent.  A metrics backend that fails never fails the task."""
    from datetime import timedelta

    from airflow_provider_aihc.version_compat import stats

    ti = context.get("ti")
    tags = {
        "dag_id": str(getattr(ti, "dag_id", "")),
        "task_id": str(getattr(ti, "task_id", "")),
        "pool": job.resource_pool_id if job else "",
        "queue": job.queue if job else "",
    }
    try:
        backend = stats()
        for name in STATS_GAUGES:
            value = summary.get(name)
            if isinstance(value, int | float):
                backend.gauge(f"{STATS_PREFIX}.{name}", value, tags=tags)
        for name in ("queue_seconds", "run_seconds"):
            value = summary.get(name)
            if isinstance(value, int | float):
                backend.timing(
                    f"{STATS_PREFIX}.{name[:-8]}_duration", timedelta(seconds=value), tags=tags
                )
        for metric, value in (summary.get("metrics") or {}).items():
            if isinstance(value, int | float):
                backend.gauge(f"{STATS_PREFIX}.metric.{metric}", value, tags=tags)
    except Exception as err:  # metrics are best effort
        log.warning("Could not send the AIHC job summary to Airflow's Stats (%s)", err)


def _accelerators(job: JobInfo | None) -> dict[str, float | int]:
    if job is None:
        return {}
    found: dict[str, float | int] = {}
    for resource in job.resources:
        name = resource.name
        if "/" in name and not name.startswith(_NOT_ACCELERATOR_PREFIXES):
            found[resource.name] = found.get(resource.name, 0) + resource.quantity
    return found


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, round((end - start).total_seconds(), 3))


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _text(value: object) -> str:
    return "?" if value is None else f"{value:.0f}" if isinstance(value, float) else str(value)
