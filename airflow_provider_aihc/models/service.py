"""Lenient models of AIHC's online-service answers (v2 action API).

Only bce-sdk-go types these answers (``services/aihc/inference/v2/models.go``; the field
names below are its JSON tags): ``DescribeServices``
``{services: [ServiceBriefInfo], totalCount}`` (L63-79, L315-331), ``DescribeService``
``{service: ServiceConf, status: ServiceStatus, instances: [InsInfo], createdAt}``
(L94-102; the doc page ``4mb4v7wn5`` shows the same), ``ServiceBriefStat`` (L307-313),
``InsInfo``/``InsStatus`` (L241-269), ``DescribeServiceChangelogs`` (L149-166, L280-287),
``CreateService`` ``{serviceId}`` (L58-61).  The live configuration is kept as the plain
mapping AIHC answered (``ServiceDetail.service``): the operators compare it with the one
they want, and a field AIHC adds later must not be lost in between.

``briefStat.status`` is an integer whose meaning no source publishes: it is read and shown,
never decided on (``docs/service_lifecycle.md``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field

from airflow_provider_aihc.models._base import _ResponseModel
from airflow_provider_aihc.models._lenient import EMPTY_LIST_OK as _EMPTY_OK
from airflow_provider_aihc.models._lenient import EMPTY_OBJECT_OK as _OBJECT_OK
from airflow_provider_aihc.models._lenient import AnyMap, Flag, Int, Str

__all__ = [
    "Changelog",
    "ChangelogPage",
    "ContainerState",
    "CreatedService",
    "Instance",
    "InstanceStatus",
    "ServiceBrief",
    "ServiceBriefStat",
    "ServiceDetail",
    "ServicePage",
    "ServiceStatus",
]


class CreatedService(_ResponseModel):
    """``CreateService``'s answer."""

    service_id: Str = ""


class ServiceBrief(_ResponseModel):
    """``ServiceBriefInfo``: one service of a ``DescribeServices`` page (its id is ``id``:
    GOI ``models.go:316``; bce-sdk-python's sample reads ``services[0].id``)."""

    id: Str = ""
    name: Str = ""
    resource_pool_id: Str = ""
    queue_name: Str = ""


class ServicePage(_ResponseModel):
    """A page of ``DescribeServices``."""

    total_count: Int = Field(default=0, validation_alias=AliasChoices("totalCount", "total"))
    services: Annotated[list[ServiceBrief], _EMPTY_OK] = Field(default_factory=list)


class ServiceBriefStat(_ResponseModel):
    """``ServiceBriefStat``: instance counts, a hazard flag and reason, an opaque status."""

    status: Int = 0
    """Unpublished meaning: logged, never decided on."""
    available_ins: Int = 0
    total_ins: Int = 0
    hazard: Flag = False
    reason: Str = ""


class ServiceStatus(_ResponseModel):
    """``ServiceStatus``: the network status and the brief statistics."""

    brief_stat: Annotated[ServiceBriefStat, _OBJECT_OK] = Field(default_factory=ServiceBriefStat)
    access_ips: AnyMap = Field(default_factory=dict, validation_alias="accessIPs")


class ContainerState(_ResponseModel):
    """A container's ``status``: ``containerStatus`` and its ``reason``."""

    container_status: Str = ""
    reason: Str = ""


class _Container(_ResponseModel):
    container_id: Str = ""
    status: Annotated[ContainerState, _OBJECT_OK] = Field(default_factory=ContainerState)


class InstanceStatus(_ResponseModel):
    """``InsStatus``: the pod-like phase (``"Running"`` in the doc's example), its reason
    ("pod 级别的异常信息"), traffic blocking and container counts."""

    status: Str = ""
    reason: Str = ""
    blocked: Flag = False
    available_containers: Int = 0
    total_containers: Int = 0


class Instance(_ResponseModel):
    """``InsInfo``: one instance (pod) of a service."""

    instance_id: Str = Field(default="", validation_alias=AliasChoices("instanceId", "InstanceId"))
    status: Annotated[InstanceStatus, _OBJECT_OK] = Field(default_factory=InstanceStatus)
    containers: Annotated[list[_Container], _EMPTY_OK] = Field(default_factory=list)
    hazard: Flag = False

    def reasons(self) -> list[str]:
        """The instance's and its containers' non-empty reasons."""
        found = [self.status.reason] + [c.status.reason for c in self.containers]
        return [reason for reason in found if reason]


class ServiceDetail(_ResponseModel):
    """``DescribeService``: the live configuration, its status and its instances."""

    service: AnyMap = Field(default_factory=dict)
    """The live ``ServiceConf``, as AIHC answered it."""
    status: Annotated[ServiceStatus, _OBJECT_OK] = Field(default_factory=ServiceStatus)
    instances: Annotated[list[Instance], _EMPTY_OK] = Field(default_factory=list)


class Changelog(_ResponseModel):
    """One record of ``DescribeServiceChangelogs`` (``changeType`` 1 create, 2 update,
    3 scale, 4 traffic: bce-sdk-python ``service_client.py:485-531``)."""

    change_id: Str = ""
    prev: Str = ""
    change_type: Int = 0
    description: Str = ""
    created_at: Int = 0


class ChangelogPage(_ResponseModel):
    """A page of ``DescribeServiceChangelogs``."""

    total_count: Int = Field(default=0, validation_alias=AliasChoices("totalCount", "total"))
    change_logs: Annotated[list[Changelog], _EMPTY_OK] = Field(
        default_factory=list, validation_alias=AliasChoices("changeLogs", "changelogs")
    )
