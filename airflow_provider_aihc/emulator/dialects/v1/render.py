"""Wire shapes of the v1 dialect: JobInfo with ``podList`` (bce-sdk-go ``api/v1/aiJob.go``),
pools and queues (``resource/client.go``), logs; events are :mod:`.dialects.common`'s.

Each pod's ``podStatus.status`` is ``READY`` while the job runs (the aihc CLI counts
``READY`` pods); a failure's reason also appears as the pods' ``reason``.  Pool and queue
field names follow the doc table plus what the aihc CLI 1.1.1 reads (``resourcepool.py``,
``resourcepool_queue.py``): a pool's ``metadata{id, name, createdAt}``, ``spec{region,
associatedPfsId, associatedCpromIds}``, ``status{phase, gpuCount{used, total},
nodeCount{used, total}}``; a queue's ``name``, ``createdTime``,
``capability``/``deserved``/``allocated`` maps and ``description``.  Those maps are
``ResourceList``, ``map[string]string`` in bce-sdk-go ``services/aihc/api/v1/queue.go``
(quantities as strings, as Kubernetes writes them); the aihc CLI reads them with ``int()``,
which takes either, so the Go SDK's type decides.
"""

from __future__ import annotations

import zlib
from typing import Any

from airflow_provider_aihc.emulator.dialects.common import iso
from airflow_provider_aihc.emulator.dialects.tools import gpu_details
from airflow_provider_aihc.emulator.state.jobs import CREATED, Job
from airflow_provider_aihc.emulator.state.pods import (
    JOB_NAME_LABEL,
    NAMESPACE,
    PodRef,
    all_labels,
    is_placed,
    node_name,
    pod_envs,
    pod_ip,
    pod_reason,
    pod_status,
    pods_of,
)
from airflow_provider_aihc.emulator.state.pools import (
    CREATED_AT,
    K8S_VERSION,
    PARENT_QUEUE,
    POOL_DESCRIPTION,
    POOL_PHASE,
    PREEMPTABLE,
    QUEUE_STATE,
    QUEUE_TYPE,
    RECLAIMABLE,
    Pool,
    PoolUsage,
    Queue,
)
from airflow_provider_aihc.emulator.state.samples import queue_quota


def job_info(job: Job, with_pods: bool) -> dict[str, Any]:
    """JobInfo; ``with_pods`` adds ``podList`` (get, not list)."""
    request = job.request
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
        "enableRDMA": bool(request.enable_rdma),
        "hostNetwork": bool(request.host_network),
        "privileged": bool(request.privileged),
        "datasources": request.datasources or [],
        "labels": all_labels(job),
        "priority": job.priority,
        "enableFaultTolerance": request.fault_tolerance,
        "customFaultTolerancePattern": list(request.fault_tolerance_patterns),
        "faultToleranceArgs": request.fault_tolerance_args or "",
        "enableBccl": request.enable_bccl,
        "enableBcclStatus": "enabled" if request.enable_bccl else "",
        "enableBcclErrorReason": "",
        "k8sUID": job.k8s_uid,
        "k8sNamespace": NAMESPACE,
    }
    if with_pods:
        pods = [pod_info(job, pod) for pod in pods_of(job)]
        info["podList"] = {"listMeta": {"totalItems": len(pods)}, "pods": pods}
    return info


def pod_info(job: Job, pod: PodRef) -> dict[str, Any]:
    """One entry of ``podList.pods``."""
    phase, status = pod_status(job)
    placed = is_placed(job)
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
        "envs": pod_envs(job, pod),
        "finishedAt": iso(job.finished_at),
        "reason": pod_reason(job),
    }


def job_ref(job: Job) -> dict[str, Any]:
    """``{jobId, jobName}``: what create, stop and delete answer.

    Stop too: bce-sdk-go's stop answer has ``jobId`` only (``api/v1/aiJob.go:287-289``),
    but the ``aihc`` CLI 1.1.1 reads ``result.jobName`` from it (``aihc_cli_py/job.py:361``)
    and fails without it, so the server evidently sends it (docs/fidelity.md).
    """
    return {"jobId": job.job_id, "jobName": job.name}


def pool_info(pool: Pool, used: PoolUsage) -> dict[str, Any]:
    """The wire form of a pool (list item and ``GetResourcePool``'s ``resourcePool``)."""
    short = f"{zlib.crc32(pool.pool_id.encode()):08x}"
    return {
        "metadata": {
            "id": pool.pool_id,
            "name": pool.name,
            "createdAt": CREATED_AT,
            "updatedAt": CREATED_AT,
        },
        "spec": {
            "region": pool.region,
            "k8sVersion": K8S_VERSION,
            "associatedPfsId": f"pfs-{short}",
            "associatedCpromIds": [f"cprom-{short}"],
            "description": POOL_DESCRIPTION,
        },
        "status": {
            "phase": POOL_PHASE,
            "gpuCount": {"total": pool.nodes * pool.gpus_per_node, "used": used.gpus_used},
            "nodeCount": {"total": pool.nodes, "used": used.nodes_used},
            "gpuDetail": gpu_details(pool, used),
        },
    }


def queue_info(pool: Pool, queue: Queue, held: dict[str, int]) -> dict[str, Any]:
    """The wire form of a queue (list item and ``GetQueue``'s ``queue``)."""
    offered = {name: str(count) for name, count in queue_quota(pool, queue).items()}
    info: dict[str, Any] = {
        "name": queue.name,
        "queueType": QUEUE_TYPE,
        "state": QUEUE_STATE,
        "capability": offered,
        "deserved": dict(offered),
        "allocated": {name: str(held.get(name, 0)) for name in offered},
        "createdTime": CREATED_AT,
        "description": queue.description,
        "parentQueue": PARENT_QUEUE,
        "reclaimable": RECLAIMABLE,
        "preemptable": PREEMPTABLE,
    }
    if queue.queue_id:
        info["queueId"] = queue.queue_id
    return info
