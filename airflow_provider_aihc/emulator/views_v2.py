"""Wire shapes of the v2 dialect: JobItem (aihc-api §10; aihc-gen ``models/job_item.py``;
docs ``Kmayvejf0``), built from the same job the v1 views read.

Documented: ``jobId``, ``name``, ``status``, ``jobType``, ``resourcePoolId``, ``queue``,
``jobSpec``, ``command``, ``createdAt``, ``finishedAt``, ``labels``, ``priority``,
``enableBcclStatus``, ``jobTimeLine[{conditionType, conditionMessage, time}]``, and
``pods`` when ``needDetail`` is set.  Inferred: ``queueId`` (the queue's id in a managed
pool, its name in a self-managed one), the times in the v1 ISO form, the pods in the v1
``podList.pods`` item form, a timeline entry per status change.
"""

from __future__ import annotations

from typing import Any

from . import views
from .jobs import Job

#: JobSpec fields echoed in a JobItem (``command`` is top level in v2).
_SPEC_FIELDS = ("imageConfig", "enableRDMA", "hostNetwork", "privileged")
#: Top-level create fields echoed when they were sent.
_ECHOED = (
    "datasources",
    "faultTolerance",
    "faultToleranceArgs",
    "retentionPeriod",
    "tensorboardConfig",
    "alertConfig",
)


def job_item(job: Job, need_detail: bool) -> dict[str, Any]:
    """A JobItem; ``need_detail`` adds ``pods`` (DescribeJob with ``needDetail``)."""
    body = job.request.body
    item: dict[str, Any] = {
        "jobId": job.job_id,
        "name": job.name,
        "status": job.status,
        "jobType": job.request.framework,
        "resourcePoolId": job.pool_id,
        "queue": job.request.queue,
        "queueId": job.request.queue,
        "command": job.request.command,
        "jobSpec": job_spec(job),
        "createdAt": views.iso(job.created_at),
        "finishedAt": views.iso(job.finished_at),
        "labels": views.all_labels(job),
        "priority": job.priority,
        "enableBccl": bool(body.get("enableBccl")),
        "enableBcclStatus": "enabled" if body.get("enableBccl") else "",
        "jobTimeLine": [
            {"conditionType": status, "conditionMessage": reason, "time": views.iso(at)}
            for status, at, reason in job.history
        ],
    }
    item.update({key: body[key] for key in _ECHOED if body.get(key) is not None})
    if need_detail:
        item["pods"] = [views.pod_info(job, pod) for pod in views.pods_of(job)]
    return item


def job_spec(job: Job) -> dict[str, Any]:
    """The job's spec as sent (a TFJob's role map), else rebuilt from what v1 keeps."""
    sent = job.request.body.get("jobSpec")
    if job.request.framework == "TFJob" and isinstance(sent, dict):
        return sent
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
