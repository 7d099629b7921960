"""A job's pods, nodes, addresses and platform labels: what every dialect renders.

Pods are ``<name>-master-0`` and ``<name>-worker-{i}`` for ``i < replicas - 1``; each pod's
status while the job runs is ``READY`` (the aihc CLI counts ``READY`` pods).  Node names and
pod IPs are stable digests of the job id and the rank.  The platform labels a job with its
creator's user id (Baidu's v1 job examples).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

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

NAMESPACE = "default"
PLATFORM_LABEL_PREFIX = "aijob.cce.baidubce.com/"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
MASTER_PORT = "23456"

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


def pod_status(job: Job) -> tuple[str, str]:
    """``(podPhase, status)`` of the job's pods in its current status."""
    return _POD_STATUS.get(job.status, ("Unknown", "Unknown"))


def is_placed(job: Job) -> bool:
    """Whether the job's pods are on nodes (it has been scheduled)."""
    return job.scheduled_at is not None


def pod_envs(job: Job, pod: PodRef) -> list[dict[str, str]]:
    """The pod's environment: the job's, then the distributed-training variables."""
    return [
        *job.request.envs,
        {"name": "MASTER_ADDR", "value": f"{job.name}-master-0"},
        {"name": "MASTER_PORT", "value": MASTER_PORT},
        {"name": "WORLD_SIZE", "value": str(job.request.replicas)},
        {"name": "RANK", "value": str(pod.rank)},
    ]


def pod_reason(job: Job) -> str:
    """The pods' ``reason``: the job's failure reason, else empty."""
    return job.reason if job.status == FAILED else ""


def user_id(access_key_id: str) -> str:
    """The id of the user an access key belongs to, as the ``ai-user-id`` label shows it.

    The platform labels a job with its creator's user id (Baidu's v1 job examples); each emulator
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


def node_name(job: Job, pod: PodRef) -> str:
    """A stable node address for the pod."""
    h = int(_digest(f"{job.job_id}/node/{pod.rank}", 4), 16)
    return f"192.168.{(h >> 8) & 0xFF}.{h & 0xFF}"


def pod_ip(job: Job, pod: PodRef) -> str:
    """A stable pod IP."""
    h = int(_digest(f"{job.job_id}/ip/{pod.rank}", 6), 16)
    return f"10.{(h >> 16) & 0xFF}.{(h >> 8) & 0xFF}.{h & 0xFF}"


def _digest(text: str, size: int) -> str:
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()
