"""v2 online-service actions (header ``version: v2``; no pool or queue in the query).

No machine-readable definition exists; the requests follow DOC (``Imb4uf20u`` CreateService,
``Zmb4v974k`` ModifyService, ``4mb4v7wn5`` DescribeService), bce-python-sdk 0.9.79
``modules/service/service_client.py`` and bce-sdk-go ``services/aihc/inference/v2``; the
answers are bce-sdk-go's structs (``models.go``), the only typed ones.
Accepted as either client sends it: empty paging values (``pageNumber=``: bce-python-sdk
``service_client.py:52-56``), ``description=`` (``:232-233``), ``True`` (bce-python-sdk) or
``true`` (bce-sdk-go ``pod.go:45-49``), a bare or empty ``clientToken`` meaning no token
(bce-sdk-go ``service.go:17``).

``UpgradeService`` (bce-python-sdk ``service_client.py:276-311`` only, its doc link a
placeholder; not in bce-sdk-go ``util.go:26-39``) is not served: it is an unknown
action.  Invented and flagged: ``briefStat.status`` (``state/choices.py``), the access
addresses, ``creator`` ``openapi`` only as DOC's example shows it (here: the caller's key).
"""

from __future__ import annotations

from typing import Any

from airflow_provider_aihc.emulator.dialects.call import Call, Handler, Route
from airflow_provider_aihc.emulator.state.errors import invalid_param
from airflow_provider_aihc.emulator.state.services import Change, Instance, Service

from .serviceconf import check_conf

#: ``changeType`` values (PY ``service_client.py:501``: 1 创建, 2 更新, 3 扩缩容, 4 流量接入变更).
CHANGE_TYPES = (1, 2, 3, 4)
ORDERS = ("asc", "desc")
SERVICE_ORDER_BY = ("createdAt",)
DEFAULT_PAGE_SIZE = 10
INTERNAL_IP = "10.0.0.10"  # invented
EXTERNAL_IP = "106.12.0.10"  # invented


def _service_id(c: Call) -> str:
    value = c.query.get("serviceId")
    if not value:
        raise invalid_param("serviceId is required")
    return value


def _flag(c: Call, name: str) -> bool:
    """A boolean query value: ``true``/``false`` in any case (GOI lowercase, PY ``True``)."""
    value = (c.query.get(name) or "").lower()
    if value not in ("true", "false"):
        raise invalid_param(f"{name} is required: true or false, got {c.query.get(name)!r}")
    return value == "true"


def _paging(c: Call) -> tuple[int, int, bool]:
    order = c.query.get("order") or "desc"
    if order not in ORDERS:
        raise invalid_param(f"order must be one of asc, desc, got {order!r}")
    order_by = c.query.get("orderBy") or "createdAt"
    if order_by not in SERVICE_ORDER_BY:
        raise invalid_param(f"orderBy must be createdAt, got {order_by!r}")
    page_no = c.int_param("pageNumber", 1)
    page_size = c.int_param("pageSize", DEFAULT_PAGE_SIZE)
    if page_no < 1 or page_size < 1:
        raise invalid_param("pageNumber and pageSize must be at least 1")
    return page_no, page_size, order == "desc"


# ---- rendering ------------------------------------------------------------------------------


def brief_stat(service: Service) -> dict[str, Any]:
    """``ServiceBriefStat`` (``models.go:307-313``)."""
    reasons = [i.stuck for i in service.instances if i.stuck]
    return {
        "status": service.status_code(),
        "availableIns": service.ready_count(),
        "totalIns": len(service.instances),
        "hazard": bool(reasons),
        "reason": reasons[0] if reasons else "",
    }


def instance_info(instance: Instance) -> dict[str, Any]:
    """``InsInfo`` (``models.go:241-269``); a held-back instance shows its reason on the
    pod and its containers, ``Pending`` (``Running`` but not ready for ``CrashLoopBackOff``,
    as Kubernetes shows them: inferred)."""
    created = int(instance.created_at)
    crash = instance.stuck == "CrashLoopBackOff"
    phase = "Running" if instance.ready or crash else "Pending"
    container_state = "Running" if instance.ready else "Waiting"
    reason = instance.stuck or ("" if instance.ready else "ContainerCreating")
    ready_containers = len(instance.containers) if instance.ready else 0
    return {
        "instanceId": instance.instance_id,
        "containers": [
            {
                "containerId": f"{instance.instance_id}-{index}",
                "container": container,
                "status": {
                    "containerStatus": container_state,
                    "createdAt": created,
                    "reason": reason,
                },
            }
            for index, container in enumerate(instance.containers)
        ],
        "status": {
            "blocked": instance.blocked,
            "status": phase,
            "createdAt": created,
            "availableContainers": ready_containers,
            "totalContainers": len(instance.containers),
            "podIP": "10.1.0.2",
            "nodeIP": "192.168.0.2",
            "reason": instance.stuck,
        },
        "hazard": bool(instance.stuck),
    }


def _status(service: Service) -> dict[str, Any]:
    """``ServiceStatus`` (``models.go:289-305``)."""
    access = service.conf.get("access") or {}
    ports = [
        {
            "name": p.get("name", ""),
            "containerPort": p.get("port", 0),
            "servicePort": p.get("port", 0),
        }
        for container in service.conf.get("containers") or []
        for p in container.get("ports") or []
    ]
    return {
        "accessIPs": {
            "internal": INTERNAL_IP,
            "external": (access.get("eip") or EXTERNAL_IP) if access.get("publicAccess") else "",
        },
        "accessPorts": ports,
        "blbShortId": f"lb-{service.service_id[2:10]}",
        "briefStat": brief_stat(service),
    }


def service_details(service: Service) -> dict[str, Any]:
    """``ServiceDetailsResult`` (``models.go:94-102``; DOC ``4mb4v7wn5``)."""
    return {
        "service": service.conf,
        "status": _status(service),
        "instances": [instance_info(i) for i in service.instances],
        "creator": service.creator,
        "createdAt": int(service.created_at),
        "updatedAt": int(service.updated_at),
    }


def service_brief(service: Service) -> dict[str, Any]:
    """``ServiceBriefInfo`` (``models.go:315-337``)."""
    conf = service.conf
    pool = conf.get("resourcePool") or {}
    first = (conf.get("containers") or [{}])[0]
    return {
        "id": service.service_id,
        "name": service.name,
        "resourcePoolId": pool.get("resourcePoolId", ""),
        "resourcePoolName": pool.get("resourcePoolName", ""),
        "queueName": pool.get("queueName", ""),
        "region": "bj",
        "publicAccess": bool((conf.get("access") or {}).get("publicAccess")),
        "networkType": (conf.get("access") or {}).get("networkType", ""),
        "creator": service.creator,
        "createdAt": int(service.created_at),
        "updatedAt": int(service.updated_at),
        "resourcePoolType": pool.get("resourcePoolType", ""),
        "hpa": conf.get("hpa") or {},
        "resourceSpec": {
            "cpus": first.get("cpus", 0),
            "memory": first.get("memory", 0),
            "acceleratorCount": first.get("acceleratorCount", 0),
            "acceleratorType": conf.get("acceleratorType", ""),
        },
        "workloadType": conf.get("workloadType") or "",
    }


def change_record(change: Change) -> dict[str, Any]:
    """``ServiceChangeRecord`` (``models.go:280-287``)."""
    return {
        "changeId": change.change_id,
        "prev": change.prev,
        "changeType": change.change_type,
        "description": change.description,
        "creator": change.creator,
        "createdAt": int(change.created_at),
    }


# ---- handlers -------------------------------------------------------------------------------


def _create(c: Call) -> dict[str, Any]:
    conf = check_conf(c.json())
    token = c.query.get("clientToken") or ""
    service, _ = c.state.services.create(conf, token, c.access_key_id)
    return {"serviceId": service.service_id}


def _list(c: Call) -> dict[str, Any]:
    page_no, page_size, newest_first = _paging(c)
    page = c.state.services.page(
        service_brief, newest_first=newest_first, page_no=page_no, page_size=page_size
    )
    return {
        "services": page.items,
        "totalCount": page.total,
        "pageNumber": page_no,
        "pageSize": page_size,
        "orderBy": "createdAt",
        "order": "desc" if newest_first else "asc",
    }


def _describe(c: Call) -> dict[str, Any]:
    return c.state.services.poll(_service_id(c), service_details)


def _status_of(c: Call) -> dict[str, Any]:
    """``{service: {<id>: ServiceBriefStat}}`` (GOI ``models.go:85-88``: a map; keyed by
    id and every service when ``serviceId`` is absent, inferred: GOI sends it only when
    set, ``service.go:71-97``)."""
    service_id = c.query.get("serviceId")
    if service_id:
        stats = [c.state.services.poll(service_id, lambda s: (s.service_id, brief_stat(s)))]
    else:
        stats = c.state.services.poll_all(lambda s: (s.service_id, brief_stat(s)))
    return {"service": dict(stats)}


def _modify(c: Call) -> dict[str, Any]:
    service_id = _service_id(c)
    conf = check_conf(c.json())
    description = c.query.get("description") or ""
    c.state.services.modify(service_id, conf, description, c.access_key_id)
    return {"serviceId": service_id}


def _replicas(c: Call) -> dict[str, Any]:
    service_id = _service_id(c)
    count = c.optional_int("instanceCount")
    if count is None or count < 0:
        raise invalid_param("instanceCount is required: an integer of at least 0")
    c.state.services.scale(service_id, count, c.access_key_id)
    return {}


def _delete(c: Call) -> dict[str, Any]:
    c.state.services.delete(_service_id(c))
    return {}


def _pods(c: Call) -> dict[str, Any]:
    return c.state.services.poll(
        _service_id(c), lambda s: {"pods": [instance_info(i) for i in s.instances]}
    )


def _pod_groups(c: Call) -> dict[str, Any]:
    """``ListPodGroupsResult`` (``models.go:222-239``): one group per instance, the instance
    its master (inferred for ``workloadType ""``; ``fed`` groups are not modelled)."""

    def render(service: Service) -> dict[str, Any]:
        pool = service.conf.get("resourcePool") or {}
        return {
            "resourcePoolId": pool.get("resourcePoolId", ""),
            "resourcePoolName": pool.get("resourcePoolName", ""),
            "queueName": pool.get("queueName", ""),
            "servicePodGroups": [
                {
                    "id": i.instance_id,
                    "masters": [instance_info(i)],
                    "workers": [],
                    "status": instance_info(i)["status"]["status"],
                    "blocked": i.blocked,
                    "createdAt": int(i.created_at),
                    "availablePods": int(i.ready),
                    "totalPods": 1,
                }
                for i in service.instances
            ],
        }

    return c.state.services.poll(_service_id(c), render)


def _instance_id(c: Call) -> str:
    value = c.query.get("instanceId")
    if not value:
        raise invalid_param("instanceId is required")
    return value


def _block(c: Call) -> dict[str, Any]:
    service_id = _service_id(c)
    c.state.services.block(service_id, _instance_id(c), _flag(c, "block"))
    return {}


def _delete_pod(c: Call) -> dict[str, Any]:
    c.state.services.delete_instance(_service_id(c), _instance_id(c))
    return {}


def _net_config(c: Call) -> dict[str, Any]:
    service_id = _service_id(c)
    public = _flag(c, "publicAccess")
    c.state.services.set_access(service_id, public, c.query.get("eip"), c.access_key_id)
    return {}


def _changelogs(c: Call) -> dict[str, Any]:
    service_id = _service_id(c)
    change_type = c.optional_int("changeType")
    if change_type is not None and change_type not in CHANGE_TYPES:
        raise invalid_param(f"changeType must be one of 1, 2, 3, 4, got {change_type}")
    page_no, page_size, newest_first = _paging(c)
    page = c.state.services.change_page(
        service_id,
        change_record,
        change_type=change_type,
        newest_first=newest_first,
        page_no=page_no,
        page_size=page_size,
    )
    return {
        "totalCount": page.total,
        "changeLogs": page.items,
        "pageNumber": page_no,
        "pageSize": page_size,
        "orderBy": "createdAt",
        "order": "desc" if newest_first else "asc",
    }


def _changelog(c: Call) -> dict[str, Any]:
    change_id = c.query.get("changeId")
    if not change_id:
        raise invalid_param("changeId is required")
    return c.state.services.change(change_id, change_record)


_POST: dict[str, Handler] = {
    "CreateService": _create,
    "ModifyService": _modify,
    "ModifyServiceReplicas": _replicas,
    "DeleteService": _delete,
    "DisableServicePod": _block,
    "DeleteServicePod": _delete_pod,
    "ModifyServiceNetConfig": _net_config,
}
_GET: dict[str, Handler] = {
    "DescribeServices": _list,
    "DescribeService": _describe,
    "DescribeServiceStatus": _status_of,
    "DescribeServicePods": _pods,
    "DescribeServicePodGroups": _pod_groups,
    "DescribeServiceChangelogs": _changelogs,
    "DescribeServiceChangelog": _changelog,
}

#: action -> route (methods: PY ``service_client.py`` and GOI ``service.go``/``pod.go``).
ACTIONS: dict[str, Route] = {
    **{a: Route("POST", "/", a, h, "flat", a) for a, h in _POST.items()},
    **{a: Route("GET", "/", a, h, "flat", a) for a, h in _GET.items()},
}
