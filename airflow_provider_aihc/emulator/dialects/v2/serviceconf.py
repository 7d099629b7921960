"""``ServiceConf``, the body of ``CreateService`` and ``ModifyService``, checked as Baidu
describes it.  No machine-readable definition exists (bce-openapi-meta has no service
action); the rules are the union of what the two clients say, so that both run unchanged:

* bce-python-sdk 0.9.79 ``modules/service/service_model.py`` (docstrings: ``name``
  ``^[a-z][a-z0-9-]*[a-z0-9]$`` ≤50 L425, ``workloadType`` ``""``/``fed`` L427,
  ``instanceCount`` ≥0, containers 1–10, ``cpus``/``memory`` >0, ``acceleratorCount`` ≥0,
  ``canaryStrategy`` percent "不能同时为0" L335-354, ``volumeType`` ``pfs|hostpath|emptydir``
  L65-68, ``resourcePoolType`` ``""|serverless|public`` L20-44);
* bce-sdk-go ``services/aihc/inference/v2/models.go`` (every field, zero values included,
  sent by the Go client: D12; volume types ``pfs, hostpath, cfs, dataset, cds, bos``
  L427-437; ``networkType`` ``""|aiGateway`` L487-494);
* DOC ``Imb4uf20u`` (the request template; required ``name``, ``resourcePool``,
  ``containers``, ``instanceCount``, ``acceleratorType``).

Lenient where the clients differ: a field may be ``null`` or its zero value (GOI sends
every field); ``canaryStrategy`` with both values 0 is read as unset (GOI sends a zero
``DeployConf`` when the caller sets none; the default then applies: ``state/services.py``).
"""

from __future__ import annotations

import re
from typing import Any

from airflow_provider_aihc.emulator.state.errors import invalid_param

from .definitions import NAME_RULE

CONTAINER_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
WORKLOAD_TYPES = ("", "fed")
POOL_TYPES = ("", "serverless", "public")
VOLUME_TYPES = ("pfs", "hostpath", "emptydir", "cfs", "dataset", "cds", "bos")
NETWORK_TYPES = ("", "aiGateway")
IMAGE_TYPES = (0, 1, 2)
MAX_CONTAINERS = 10


def check_conf(conf: Any) -> dict[str, Any]:
    """The body as a ``ServiceConf``; ``400 InvalidParam`` naming the first bad field."""
    if not isinstance(conf, dict):
        raise invalid_param("the body must be a ServiceConf object")
    name = conf.get("name")
    if not isinstance(name, str) or not NAME_RULE.match(name):
        raise invalid_param(
            "name must be 1-50 lowercase letters, digits and '-', starting with a letter and "
            f"ending with a letter or digit; got {name!r}"
        )
    if not isinstance(conf.get("acceleratorType"), str):
        raise invalid_param("acceleratorType is required (a string such as 'A100')")
    _number(conf.get("instanceCount"), "instanceCount", 0, required=True)
    _choice(conf.get("workloadType") or "", WORKLOAD_TYPES, "workloadType")
    pool = conf.get("resourcePool")
    if not isinstance(pool, dict) or not pool.get("resourcePoolId"):
        raise invalid_param("resourcePool.resourcePoolId is required")
    _choice(pool.get("resourcePoolType") or "", POOL_TYPES, "resourcePool.resourcePoolType")
    containers = conf.get("containers")
    if not isinstance(containers, list) or not 1 <= len(containers) <= MAX_CONTAINERS:
        raise invalid_param(f"containers must be a list of 1 to {MAX_CONTAINERS} containers")
    for index, container in enumerate(containers):
        _container(container, f"containers[{index}]")
    for index, volume in enumerate(((conf.get("storage") or {}).get("volumns")) or []):
        _volume(volume, f"storage.volumns[{index}]")
    strategy = (conf.get("deploy") or {}).get("canaryStrategy") or {}
    for key in ("maxSurge", "maxUnavailable"):
        _number(strategy.get(key), f"deploy.canaryStrategy.{key}", 0, high=100)
    access = conf.get("access") or {}
    _choice(access.get("networkType") or "", NETWORK_TYPES, "access.networkType")
    if conf.get("workloadType") == "fed":
        _number((conf.get("misc") or {}).get("fedPodsPerIns"), "misc.fedPodsPerIns", 2, True)
    return conf


def _container(container: Any, where: str) -> None:
    if not isinstance(container, dict):
        raise invalid_param(f"{where} must be an object")
    name = container.get("name")
    if not isinstance(name, str) or not CONTAINER_NAME.match(name):
        raise invalid_param(f"{where}.name must be a DNS label of at most 63 characters")
    _number(container.get("cpus"), f"{where}.cpus", 1, required=True)
    _number(container.get("memory"), f"{where}.memory", 1, required=True)
    _number(container.get("acceleratorCount"), f"{where}.acceleratorCount", 0, required=True)
    image = container.get("image")
    if not isinstance(image, dict) or not image.get("imageUrl"):
        raise invalid_param(f"{where}.image.imageUrl is required")
    if image.get("imageType") is not None:
        _choice(image["imageType"], IMAGE_TYPES, f"{where}.image.imageType")
    for index, port in enumerate(container.get("ports") or []):
        if not isinstance(port, dict):
            raise invalid_param(f"{where}.ports[{index}] must be an object")
        _number(port.get("port"), f"{where}.ports[{index}].port", 1, required=True)


def _volume(volume: Any, where: str) -> None:
    if not isinstance(volume, dict):
        raise invalid_param(f"{where} must be an object")
    if not NAME_RULE.match(str(volume.get("volumnName") or "")):
        raise invalid_param(f"{where}.volumnName must match ^[a-z][a-z0-9-]*[a-z0-9]$")
    _choice(volume.get("volumeType"), VOLUME_TYPES, f"{where}.volumeType")


def _number(
    value: Any, name: str, low: int, required: bool = False, high: int | None = None
) -> None:
    if value is None:
        if required:
            raise invalid_param(f"{name} is required")
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_param(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"{low} to {high}" if high is not None else f"at least {low}"
        raise invalid_param(f"{name} must be {bound}, got {value}")


def _choice(value: Any, allowed: tuple[Any, ...], name: str) -> None:
    if value not in allowed:
        shown = ", ".join(repr(a) for a in allowed)
        raise invalid_param(f"{name} must be one of {shown}, got {value!r}")
