"""Wire shapes of the v2 dialect: JobItem and Pod as Baidu's generated v2 clients define
them (baiducloud-go-sdk ``services/aihc/model_job_item.go``, ``model_pod.go``;
baiducloud-python-sdk-aihc 0.0.4 ``models/job_item.py``, ``models/pod.py``), built from
the same job the v1 views read.

From those models: ``jobid``, ``name``, ``status``, ``jobType``, ``resourcePoolId``,
``queue``, the replica spec under ``Job`` (``image``, ``imageConfig``, ``replicas``,
``resources``, ``envs``, ``enableRDMA``, ``hostNetwork``), ``createdAt``, ``finishedAt``,
``datasources``, ``labels``, ``priority``, ``enableBccl``, ``enableBcclStatus`` (``success``,
``failed`` or ``unknown``: baiducloud-java-sdk ``models/JobItem.java:80``),
``faultToleranceArgs``, ``jobTimeLine[{conditionType, conditionMessage, time}]`` (not in
list items: ``JobItem.java:110``), and with ``needDetail`` the flat ``pods`` and
``historyPods`` (``PodIP``, ``nodeName``, ``creationAt``, ``uid``, ``name``, ``status``,
``replicaType``, ``restartCount``, ``envs``, ``finishedAt``, ``reason``).  The docs'
examples spell ``jobId``/``jobSpec`` instead (aihc-api §3.3); the provider reads both, the
emulator answers as the generated clients do.  Inferred: the times in the v1 ISO form, a
pod's ``status`` as v1's ``podStatus.status``, a timeline entry per status change, a
TFJob's or RayJob's ``Job`` as the role map it was sent as.
"""

from __future__ import annotations

from typing import Any

from . import views
from .jobs import Job

#: JobSpec fields echoed in a JobItem's ``Job``.
_SPEC_FIELDS = ("imageConfig", "enableRDMA", "hostNetwork")
#: Top-level create fields a JobItem echoes when they were sent.
_ECHOED = ("datasources", "faultToleranceArgs")


def job_item(job: Job, need_detail: bool) -> dict[str, Any]:
    """A JobItem; ``need_detail`` (DescribeJob) adds ``pods``, ``historyPods`` and the
    timeline, which list items do not carry."""
    body = job.request.body
    item: dict[str, Any] = {
        "jobid": job.job_id,
        "name": job.name,
        "status": job.status,
        "jobType": job.request.framework,
        "resourcePoolId": job.pool_id,
        "queue": job.request.queue,
        "Job": job_spec(job),
        "createdAt": views.iso(job.created_at),
        "finishedAt": views.iso(job.finished_at),
        "labels": views.all_labels(job),
        "priority": job.priority,
        "enableBccl": bool(body.get("enableBccl")),
        "enableFaultTolerance": bool(body.get("faultTolerance")),
    }
    if body.get("enableBccl"):
        item["enableBcclStatus"] = "success"
    item.update({key: body[key] for key in _ECHOED if body.get(key) is not None})
    if need_detail:
        item["jobTimeLine"] = [
            {"conditionType": status, "conditionMessage": reason, "time": views.iso(at)}
            for status, at, reason in job.history
        ]
        item["pods"] = [pod(job, ref) for ref in views.pods_of(job)]
        item["historyPods"] = []
    return item


def pod(job: Job, ref: views.PodRef) -> dict[str, Any]:
    """A flat v2 ``Pod``, from the v1 ``podList.pods`` entry of the same pod."""
    v1 = views.pod_info(job, ref)
    meta, state = v1["objectMeta"], v1["podStatus"]
    return {
        "PodIP": v1["PodIP"],
        "nodeName": v1["nodeName"],
        "creationAt": meta["creationTimestamp"],
        "uid": f"{job.job_id}-{ref.rank}",
        "name": meta["name"],
        "status": state["status"],
        "replicaType": v1["replicaType"],
        "restartCount": v1["restartCount"],
        "envs": v1["envs"],
        "finishedAt": v1["finishedAt"],
        "reason": v1["reason"],
    }


def job_spec(job: Job) -> dict[str, Any]:
    """The job's spec as sent (a TFJob's role map), else rebuilt from what v1 keeps."""
    sent = job.request.body.get("jobSpec")
    if job.request.framework in ("TFJob", "RayJob") and isinstance(sent, dict):
        return _masked_roles(sent)
    spec: dict[str, Any] = {
        "image": job.request.image,
        "replicas": job.request.replicas,
        "resources": job.request.resources,
        "envs": job.request.envs,
    }
    if isinstance(sent, dict):
        spec.update({key: sent[key] for key in _SPEC_FIELDS if sent.get(key) is not None})
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
