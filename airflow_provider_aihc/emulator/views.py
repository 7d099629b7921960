"""Wire shapes of a job: JobInfo with ``podList`` (aihc-api §3.4), events, pods.

Times: jobs use ISO UTC (``2024-07-16T08:33:43Z``, ``finishedAt`` ``""`` until the end);
events use ``2024-07-15 16:52:50 +0000 UTC``.  Pods are ``<name>-master-0`` and
``<name>-worker-{i}`` for ``i < replicas - 1``; each pod's ``podStatus.status`` is
``READY`` while the job runs (the aihc CLI counts ``READY`` pods).  A job event is
written for every status change; a failure is a ``Warning`` whose message carries the
reason, which also appears as the pods' ``reason``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from .jobs import (
    CREATED,
    FAILED,
    MANUAL_TERMINATION,
    RUNNING,
    SCHEDULED,
    STOPPED,
    SUCCEEDED,
    Job,
)
from .trainlog import PodContext

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
EVENT_TIME_FORMAT = "%Y-%m-%d %H:%M:%S +0000 UTC"
NAMESPACE = "default"
PLATFORM_LABEL_PREFIX = "aijob.cce.baidubce.com/"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"

#: Job status -> (podPhase, status) of its pods.
_POD_STATUS = {
    CREATED: ("Pending", "Pending"),
    SCHEDULED: ("Pending", "ContainerCreating"),
    RUNNING: ("Running", "READY"),
    SUCCEEDED: ("Succeeded", "Completed"),
    FAILED: ("Failed", "Error"),
    MANUAL_TERMINATION: ("Failed", "Terminated"),
    STOPPED: ("Failed", "Terminated"),
}


@lru_cache(maxsize=4096)
def iso(ts: float | None) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` of epoch seconds, ``""`` for ``None``."""
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts, tz=UTC).strftime(ISO_FORMAT)


@lru_cache(maxsize=4096)
def event_time(ts: float) -> str:
    """``YYYY-MM-DD HH:MM:SS +0000 UTC`` of epoch seconds."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime(EVENT_TIME_FORMAT)


@dataclass(frozen=True)
class PodRef:
    """One pod of a job: its name, rank and replica type."""

    name: str
    rank: int
    replica_type: str


def pods_of(job: Job) -> list[PodRef]:
    """The job's pods: one master, ``replicas - 1`` workers."""
    name = job.name
    pods = [PodRef(f"{name}-master-0", 0, "master")]
    pods.extend(
        PodRef(f"{name}-worker-{i}", i + 1, "worker") for i in range(job.request.replicas - 1)
    )
    return pods


def find_pod(job: Job, pod_name: str) -> PodRef | None:
    """The pod of that name, if the job has one."""
    return next((p for p in pods_of(job) if p.name == pod_name), None)


def user_id(access_key_id: str) -> str:
    """The id of the user an access key belongs to, as the ``ai-user-id`` label shows it.

    The platform labels a job with its creator's user id (aihc-api §3.2); each emulator
    access key is its own user, whose id is derived from the key (the format of real ids
    is inferred: 32 hex digits, like an IAM user id).
    """
    return _digest(access_key_id, 16)


def all_labels(job: Job) -> list[dict[str, str]]:
    """The user's labels plus those the platform adds (``aijob.cce.baidubce.com/*``)."""
    platform = {
        "create-from-aihcp-api": "true",
        "ai-user-id": user_id(job.creator),
        "ai-user-name": job.creator,
        "openapi-jobid": job.job_id,
    }
    user = [dict(label) for label in job.request.labels]
    return user + [{"key": PLATFORM_LABEL_PREFIX + k, "value": v} for k, v in platform.items()]


def job_info(job: Job, with_pods: bool) -> dict[str, Any]:
    """JobInfo; ``with_pods`` adds ``podList`` (get, not list)."""
    body = job.request.body
    spec = body.get("jobSpec") or {}
    info: dict[str, Any] = {
        "jobId": job.job_id,
        "name": job.name,
        "resourcePoolId": job.pool_id,
        "queue": job.request.queue,
        "jobFramework": job.request.framework,
        "status": job.status,
        "createdAt": iso(job.created_at),
        "scheduledAt": iso(job.scheduled_at),
        "runningAt": iso(job.running_at),
        "finishedAt": iso(job.finished_at),
        "queueingSequence": job.seq if job.status == CREATED else 0,
        "command": job.request.command,
        "image": job.request.image,
        "replicas": job.request.replicas,
        "resources": job.request.resources,
        "envs": job.request.envs,
        "enableRDMA": bool(spec.get("enableRDMA")),
        "hostNetwork": bool(spec.get("hostNetwork")),
        "privileged": bool(spec.get("privileged")),
        "datasources": body.get("datasources") or [],
        "labels": all_labels(job),
        "priority": job.priority,
        "enableFaultTolerance": bool(body.get("faultTolerance")),
        "customFaultTolerancePattern": _ft_patterns(body),
        "faultToleranceArgs": body.get("faultToleranceArgs") or "",
        "enableBccl": bool(body.get("enableBccl")),
        "enableBcclStatus": "enabled" if body.get("enableBccl") else "",
        "enableBcclErrorReason": "",
        "k8sUID": job.k8s_uid,
        "k8sNamespace": NAMESPACE,
    }
    if with_pods:
        pods = [pod_info(job, pod) for pod in pods_of(job)]
        info["podList"] = {"listMeta": {"totalItems": len(pods)}, "pods": pods}
    return info


def pod_context(job: Job, pod: PodRef) -> PodContext:
    """What the pod's log lines are rendered from."""
    return PodContext(
        job_name=job.name,
        pod=pod.name,
        rank=pod.rank,
        world_size=job.request.replicas,
        master=f"{job.name}-master-0",
        node=node_name(job, pod),
        ip=pod_ip(job, pod),
        reason=job.reason,
    )


def pod_info(job: Job, pod: PodRef) -> dict[str, Any]:
    """One entry of ``podList.pods``."""
    phase, status = _POD_STATUS.get(job.status, ("Unknown", "Unknown"))
    placed = job.scheduled_at is not None
    envs = [
        *job.request.envs,
        {"name": "MASTER_ADDR", "value": f"{job.name}-master-0"},
        {"name": "MASTER_PORT", "value": "23456"},
        {"name": "WORLD_SIZE", "value": str(job.request.replicas)},
        {"name": "RANK", "value": str(pod.rank)},
    ]
    return {
        "PodIP": pod_ip(job, pod) if placed else "",
        "nodeName": node_name(job, pod) if placed else "",
        "objectMeta": {
            "name": pod.name,
            "namespace": NAMESPACE,
            "creationTimestamp": iso(job.created_at),
            "labels": {
                JOB_NAME_LABEL: job.name,
                "training.kubeflow.org/replica-type": pod.replica_type,
                "training.kubeflow.org/replica-index": str(max(pod.rank - 1, 0)),
            },
        },
        "podStatus": {"podPhase": phase, "status": status},
        "replicaType": pod.replica_type,
        "restartCount": 0,
        "envs": envs,
        "finishedAt": iso(job.finished_at),
        "reason": job.reason if job.status == FAILED else "",
    }


def job_events(
    job: Job, start: float | None = None, end: float | None = None
) -> list[dict[str, Any]]:
    """One event per status change in ``[start, end]`` (epoch seconds), oldest first."""
    kind = job.request.framework
    events = []
    for status, at, reason in job.history:
        if not _in_window(at, start, end):
            continue
        etype, message = _job_event_text(kind, job.name, status, reason)
        events.append(_event(status, message, etype, at))
    return events


def pod_events(
    job: Job, pod: PodRef, start: float | None = None, end: float | None = None
) -> list[dict[str, Any]]:
    """Kubernetes-style events of one pod, derived from the job's status changes."""
    image = job.request.image
    events: list[dict[str, Any]] = []
    for status, at, reason in job.history:
        if not _in_window(at, start, end):
            continue
        for etype, ereason, message in _pod_event_texts(job, pod, status, reason, image):
            events.append(_event(ereason, message, etype, at))
    return events


def job_state(job: Job) -> dict[str, Any]:
    """The emulator's own view of a job (control API, test helpers)."""
    return {
        "jobId": job.job_id,
        "name": job.name,
        "resourcePoolId": job.pool_id,
        "queue": job.request.queue,
        "status": job.status,
        "reason": job.reason,
        "priority": job.priority,
        "labels": {label["key"]: label["value"] for label in all_labels(job)},
        "createdAt": iso(job.created_at),
        "finishedAt": iso(job.finished_at),
        "polls": job.gets,
        "logLines": job.runner.line_count() if job.runner else len(job.log.entries),
        "body": job.request.body,
    }


def node_name(job: Job, pod: PodRef) -> str:
    """A stable node address for the pod."""
    h = int(_digest(f"{job.job_id}/node/{pod.rank}", 4), 16)
    return f"192.168.{(h >> 8) & 0xFF}.{h & 0xFF}"


def pod_ip(job: Job, pod: PodRef) -> str:
    """A stable pod IP."""
    h = int(_digest(f"{job.job_id}/ip/{pod.rank}", 6), 16)
    return f"10.{(h >> 16) & 0xFF}.{(h >> 8) & 0xFF}.{h & 0xFF}"


def _event(reason: str, message: str, etype: str, at: float) -> dict[str, Any]:
    stamp = event_time(at)
    return {
        "reason": reason,
        "message": message,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": etype,
    }


def _in_window(ts: float, start: float | None, end: float | None) -> bool:
    return (start is None or ts >= start) and (end is None or ts <= end)


def _job_event_text(kind: str, name: str, status: str, reason: str) -> tuple[str, str]:
    texts = {
        CREATED: f"{kind} {name} is created.",
        SCHEDULED: f"{kind} {name} is scheduled: all pods are bound to nodes.",
        RUNNING: f"{kind} {name} is running.",
        SUCCEEDED: f"{kind} {name} is successfully completed.",
        MANUAL_TERMINATION: f"{kind} {name} is stopped by user.",
    }
    if status == FAILED:
        return "Warning", f"{kind} {name} is failed: {reason or 'training process failed'}"
    if status in texts:
        return "Normal", texts[status]
    return "Warning", reason or f"{kind} {name} status changed to {status}."


def _pod_event_texts(
    job: Job, pod: PodRef, status: str, reason: str, image: str
) -> list[tuple[str, str, str]]:
    if status == SCHEDULED:
        return [
            (
                "Normal",
                "Scheduled",
                f"Successfully assigned {NAMESPACE}/{pod.name} to {node_name(job, pod)}",
            ),
            ("Normal", "Pulling", f'Pulling image "{image}"'),
        ]
    if status == RUNNING:
        return [
            ("Normal", "Pulled", f'Successfully pulled image "{image}"'),
            ("Normal", "Created", "Created container pytorch"),
            ("Normal", "Started", "Started container pytorch"),
        ]
    if status == FAILED:
        return [("Warning", "Failed", f"Error: {reason or 'container exited with code 1'}")]
    if status in (MANUAL_TERMINATION, STOPPED):
        return [("Normal", "Killing", "Stopping container pytorch")]
    return []


def _ft_patterns(body: dict[str, Any]) -> list[Any]:
    config = body.get("faultToleranceConfig")
    if isinstance(config, dict):
        return list(config.get("customFaultTolerancePattern") or [])
    return []


def _digest(text: str, size: int) -> str:
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()
