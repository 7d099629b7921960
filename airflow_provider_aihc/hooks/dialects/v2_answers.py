"""v2 answers read into the v1 forms the models parse: a JobItem (the spec under ``Job`` or
``jobSpec``, flat pods, the timeline's times), flat pools and queues.

Shapes from Baidu's generated v2 clients (baiducloud-go-sdk ``services/aihc/model_*.go``,
baiducloud-python-sdk-aihc ``models/*.py``) and bce-sdk-go's v2 pool and queue client
(``services/aihc/v2/api/*.go``); where the docs' examples differ (``jobId``/``jobSpec``),
both are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: v1 JobInfo fields a v2 JobItem keeps inside its spec.
SPEC_FIELDS = ("image", "replicas", "resources", "envs", "enableRDMA", "hostNetwork", "privileged")


def _v1_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    """A flat v2 ``Pod`` (baiducloud-go-sdk ``services/aihc/model_pod.go:4-14``: ``name``,
    ``status``, ``restartCount``, ...) in the v1 ``podList.pods`` form the models read."""
    if "objectMeta" in pod:
        return dict(pod)
    v1 = dict(pod)
    v1["objectMeta"] = {"name": pod.get("name", ""), "creationTimestamp": pod.get("creationAt")}
    v1["podStatus"] = {"status": pod.get("status", "")}
    return v1


def job_info(item: Mapping[str, Any]) -> dict[str, Any]:
    """A v2 JobItem in v1 JobInfo form (fields v1 reads at the top level or in podList)."""
    info = dict(item)
    info.setdefault("jobId", item.get("jobid", ""))
    info.setdefault("jobFramework", item.get("jobType", ""))
    # The generated clients keep the spec under ``Job`` (baiducloud-go-sdk
    # services/aihc/model_job_item.go:11; baiducloud-python-sdk-aihc models/job_item.py);
    # Baidu's reference page example under ``jobSpec`` (cloud.baidu.com/doc/AIHC): both are read.
    spec = item.get("Job", item.get("jobSpec"))
    if isinstance(spec, dict) and not _is_spec(spec):
        spec = next((s for s in spec.values() if isinstance(s, dict)), {})  # a role map
    if isinstance(spec, dict):
        info.update({k: spec[k] for k in SPEC_FIELDS if k in spec and k not in item})
    pods = item.get("pods")
    if isinstance(pods, list):
        flat = [_v1_pod(p) for p in pods if isinstance(p, dict)]
        info["podList"] = {"listMeta": {"totalItems": len(flat)}, "pods": flat}
    info.update(
        {k: v for k, v in _timeline_times(item.get("jobTimeLine")).items() if k not in item}
    )
    return info


def _timeline_times(timeline: object) -> dict[str, Any]:
    """``runningAt``/``scheduledAt`` from a JobItem's ``jobTimeLine`` (aihc-gen
    ``models/job_item.py``: ``[{conditionType, conditionMessage, time}]``), which v2 has in
    place of v1's fields.  That ``conditionType`` holds the status names (``Running``) is
    inferred: no source lists its values; the first entry of each wins."""
    times: dict[str, Any] = {}
    for entry in timeline if isinstance(timeline, list) else []:
        if not isinstance(entry, dict):
            continue
        key = {"running": "runningAt", "scheduled": "scheduledAt"}.get(
            str(entry.get("conditionType", "")).lower()
        )
        if key and entry.get("time") and key not in times:
            times[key] = entry["time"]
    return times


def _is_spec(spec: Mapping[str, Any]) -> bool:
    """Whether ``spec`` is one JobSpec rather than a map of roles to JobSpecs."""
    return any(key in spec for key in SPEC_FIELDS)


def v1_pool(pool: Mapping[str, Any]) -> dict[str, Any]:
    """A flat v2 ``ResourcePool`` (bce-sdk-go ``services/aihc/v2/api/resourcepool.go:111-136``)
    in the v1 ``{metadata, spec, status}`` form; a v1-shaped pool is kept."""
    if "metadata" in pool or "resourcePool" in pool:
        return dict(pool)
    return {
        "metadata": {
            "id": pool.get("resourcePoolId", ""),
            "name": pool.get("name", ""),
            "createdAt": pool.get("createdAt"),
            "updatedAt": pool.get("updatedAt"),
        },
        "type": pool.get("type", ""),
        "spec": {
            "region": pool.get("region", ""),
            "k8sVersion": pool.get("k8sVersion", ""),
            "description": pool.get("description", ""),
        },
        "status": {"phase": pool.get("phase", ""), "nodeCount": {"total": pool.get("nodeNum", 0)}},
    }


def v1_queue(queue: Mapping[str, Any]) -> dict[str, Any]:
    """A v2 ``QueueSpec`` (bce-sdk-go ``services/aihc/v2/api/queue.go:48-89``) in the v1 queue
    form: ``queueName`` as ``name``, ``opened`` as ``state``, each ``ResourceAmount`` as a
    map of quantities (CPU cores, GiB, cards by type); a v1-shaped queue is kept."""
    if "queueName" not in queue:
        return dict(queue)
    v1 = {k: v for k, v in queue.items() if k not in ("capability", "deserved", "allocated")}
    v1["name"] = queue["queueName"]
    v1["state"] = "Open" if queue.get("opened") else "Close"
    for key in ("capability", "deserved", "allocated"):
        amount = queue.get(key)
        if isinstance(amount, dict):
            v1[key] = _quantities(amount)
    children = queue.get("children")
    if isinstance(children, list):
        v1["children"] = [v1_queue(c) for c in children if isinstance(c, dict)]
    return v1


def _quantities(amount: Mapping[str, Any]) -> dict[str, Any]:
    """``{milliCPUcores, memoryGi, acceleratorCardList}`` (strings) as ``{cpu, memory, <card>}``."""
    quantities: dict[str, Any] = {}
    if amount.get("milliCPUcores") not in (None, ""):
        quantities["cpu"] = _number(amount["milliCPUcores"]) / 1000
    if amount.get("memoryGi") not in (None, ""):
        quantities["memory"] = _number(amount["memoryGi"])
    for card in amount.get("acceleratorCardList") or []:
        if isinstance(card, dict) and card.get("acceleratorType"):
            quantities[str(card["acceleratorType"])] = _number(card.get("acceleratorCount", 0))
    return quantities


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return int(number) if number.is_integer() else number
