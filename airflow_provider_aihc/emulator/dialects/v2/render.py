"""Wire shapes of the v2 dialect: JobItem and Pod as Baidu's generated v2 clients define
them (baiducloud-go-sdk ``services/aihc/model_job_item.go``, ``model_pod.go``;
baiducloud-python-sdk-aihc 0.0.4 ``models/job_item.py``, ``models/pod.py``), built from
the same state objects the v1 dialect renders (never from v1's answers).

From those models: ``jobid``, ``name``, ``status``, ``jobType``, ``resourcePoolId``,
``queue``, the replica spec under ``Job`` (``image``, ``imageConfig``, ``replicas``,
``resources``, ``envs``, ``enableRDMA``, ``hostNetwork``), ``createdAt``, ``finishedAt``,
``datasources``, ``labels``, ``priority``, ``enableBccl``, ``enableBcclStatus`` (``success``,
``failed`` or ``unknown``: baiducloud-java-sdk ``models/JobItem.java:80``),
``faultToleranceArgs``, ``jobTimeLine[{conditionType, conditionMessage, time}]`` (not in
list items: ``JobItem.java:110``), and with ``needDetail`` the flat ``pods`` and
``historyPods`` (``PodIP``, ``nodeName``, ``creationAt``, ``uid``, ``name``, ``status``,
``replicaType``, ``restartCount``, ``envs``, ``finishedAt``, ``reason``).  The docs'
examples spell ``jobId``/``jobSpec`` instead (cloud.baidu.com/doc/AIHC); the provider reads
both, the emulator answers as the generated clients do.  Inferred: the times in the v1 ISO form, a
pod's ``status`` as v1's ``podStatus.status``, a timeline entry per status change, a
TFJob's or RayJob's ``Job`` as the role map it was sent as.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_aihc.emulator.dialects.common import iso
from airflow_provider_aihc.emulator.state.jobs import Job
from airflow_provider_aihc.emulator.state.pods import (
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


def job_item(job: Job, need_detail: bool) -> dict[str, Any]:
    """A JobItem; ``need_detail`` (DescribeJob) adds ``pods``, ``historyPods`` and the
    timeline, which list items do not carry."""
    request = job.request
    item: dict[str, Any] = {
        "jobid": job.job_id,
        "name": job.name,
        "status": job.status,
        "jobType": job.request.framework,
        "resourcePoolId": job.pool_id,
        "queue": job.request.queue,
        "Job": job_spec(job),
        "createdAt": iso(job.created_at),
        "finishedAt": iso(job.finished_at),
        "labels": all_labels(job),
        "priority": job.priority,
        "enableBccl": request.enable_bccl,
        "enableFaultTolerance": request.fault_tolerance,
    }
    if request.enable_bccl:
        item["enableBcclStatus"] = "success"
    # Top-level create fields a JobItem echoes when they were sent.
    if request.datasources is not None:
        item["datasources"] = request.datasources
    if request.fault_tolerance_args is not None:
        item["faultToleranceArgs"] = request.fault_tolerance_args
    if need_detail:
        item["jobTimeLine"] = [
            {"conditionType": status, "conditionMessage": reason, "time": iso(at)}
            for status, at, reason in job.history
        ]
        item["pods"] = [pod(job, ref) for ref in pods_of(job)]
        item["historyPods"] = []
    return item


def pod(job: Job, ref: PodRef) -> dict[str, Any]:
    """A flat v2 ``Pod``; its ``status`` is what v1 calls ``podStatus.status``."""
    placed = is_placed(job)
    return {
        "PodIP": pod_ip(job, ref) if placed else "",
        "nodeName": node_name(job, ref) if placed else "",
        "creationAt": iso(job.created_at),
        "uid": f"{job.job_id}-{ref.rank}",
        "name": ref.name,
        "status": pod_status(job)[1],
        "replicaType": ref.replica_type,
        "restartCount": 0,
        "envs": pod_envs(job, ref),
        "finishedAt": iso(job.finished_at),
        "reason": pod_reason(job),
    }


def job_spec(job: Job) -> dict[str, Any]:
    """The job's spec as sent (a TFJob's role map), else rebuilt from what v1 keeps."""
    request = job.request
    if request.roles is not None:
        return _masked_roles(request.roles)
    spec: dict[str, Any] = {
        "image": job.request.image,
        "replicas": job.request.replicas,
        "resources": job.request.resources,
        "envs": job.request.envs,
    }
    sent = {  # the JobSpec fields a JobItem's ``Job`` echoes when they were sent
        "imageConfig": request.image_config,
        "enableRDMA": request.enable_rdma,
        "hostNetwork": request.host_network,
    }
    spec.update({key: value for key, value in sent.items() if value is not None})
    if isinstance(spec.get("imageConfig"), dict):
        spec["imageConfig"] = {**spec["imageConfig"], "password": "******"}
    return spec


def _masked_roles(roles: dict[str, Any]) -> dict[str, Any]:
    """A role map as sent, registry passwords masked as in a single spec."""
    masked: dict[str, Any] = {}
    for role, spec in roles.items():
        config = spec.get("imageConfig") if isinstance(spec, dict) else None
        if isinstance(config, dict):
            spec = {**spec, "imageConfig": {**config, "password": "******"}}
        masked[role] = spec
    return masked
