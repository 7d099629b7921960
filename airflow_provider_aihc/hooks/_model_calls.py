"""The model-registry, dataset and online-service calls, declared once (v2 only).

These actions exist only in the v2 action API: each is
``<method> /?action=<Action>&<query>`` with header ``version: v2`` and, for the creates and
modifies, a JSON body (bce-python-sdk 0.9.79 ``baidubce/services/aihc/base/
aihc_base_client.py:79-86``; bce-sdk-go ``services/aihc/inference/v2/service.go:15``).
Their ``Action`` has ``shape="plain"``: the v2 dialect sends the declared query and body as
they are.  ``v1=False``: a v1 connection refuses them before anything is sent, naming the
``api_version`` setting.

None of the creating or changing calls is retried by the transport (``retryable=False``):
no model, dataset or modify action takes an idempotency token, and ``CreateService``'s
token has undocumented semantics (``docs/fidelity.md``), so a lost answer is resolved by
the caller's lookup, not by sending again.

Request facts, per action (Q = query, B = body):

* models: bce-openapi-meta ``schema/aihc/CreateModel.json:1-86`` (B ``name``,
  ``modelFormat``, ``initVersionEntry``, ...), ``CreateModelVersion.json:6-43`` (Q
  ``modelId``; B ``storageBucket``, ``storagePath``, ``source``, ``modelMetrics``,
  ``description``), ``DescribeModels.json:6-24`` (Q ``keyword``, ``pageNumber``,
  ``pageSize``), ``DescribeModelVersions.json:6-18``, ``DescribeModelVersion.json:6-12``,
  ``DeleteModelVersion.json:6-12`` (Q ``modelId``, ``versionId``);
* datasets: ``CreateDataset.json:6-130`` (B ``name``, ``storageType``, ``storageInstance``,
  ``importFormat``, ``visibilityScope``, ``initVersionEntry``), ``CreateDatasetVersion.json:
  6-31`` (Q ``datasetId``; B ``storagePath``, ``mountPath``, ``description``),
  ``DescribeDatasets.json:6-42``, ``DescribeDatasetVersions.json:6-18``;
* services (no META definition; doc pages ``Imb4uf20u``, ``Zmb4v974k``, ``4mb4v7wn5``,
  bce-python-sdk ``modules/service/service_client.py``, bce-sdk-go ``inference/v2/service.go``):
  ``CreateService`` (Q ``clientToken``; B the whole ``ServiceConf``, L120-164),
  ``DescribeServices`` (Q ``pageNumber``, ``pageSize``, L26-65), ``DescribeService`` (Q
  ``serviceId``, L67-91), ``ModifyService`` (Q ``serviceId``, ``description``; B the
  ``ServiceConf``, L197-240), ``ModifyServiceReplicas`` (Q ``serviceId``,
  ``instanceCount``, L242-274), ``DeleteService`` (Q ``serviceId``, L166-195),
  ``DescribeServiceChangelogs`` (Q ``serviceId``, ``changeType``, ``pageNumber``,
  ``pageSize``, L485-531).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from airflow_provider_aihc.hooks._endpoint import Action, Call, Endpoint
from airflow_provider_aihc.models.registry import (
    Created,
    DatasetPage,
    DatasetVersionPage,
    Done,
    ModelDetail,
    ModelPage,
    ModelVersionPage,
)
from airflow_provider_aihc.models.service import (
    ChangelogPage,
    CreatedService,
    ServiceDetail,
    ServicePage,
)

T = TypeVar("T")
PAGE = (("page_number", "pageNumber"), ("page_size", "pageSize"))


def _action(name: str, method: str, *query: tuple[str, str], retryable: bool) -> Endpoint:
    """A v2-only ``plain`` action: ``query`` is ``(call attribute, query argument)``."""
    return Endpoint(
        name, method, "", retryable=retryable, query=query, v1=False,
        v2=Action(name, shape="plain"),
    )  # fmt: skip


def _read(name: str, *query: tuple[str, str]) -> Endpoint:
    return _action(name, "GET", *query, retryable=True)


def _write(name: str, *query: tuple[str, str]) -> Endpoint:
    return _action(name, "POST", *query, retryable=False)


@dataclass(frozen=True, slots=True)
class _WithBody(Call[T]):
    """A call whose body is given whole (wire form)."""

    body: dict[str, Any]

    def payload(self) -> Any:
        return self.body


# -- datasets ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DescribeDatasets(Call[DatasetPage]):
    """One page of the datasets whose name matches ``keyword`` (a fuzzy match: "模糊匹配")."""

    endpoint = _read("DescribeDatasets", ("keyword", "keyword"), *PAGE)
    model = DatasetPage
    keyword: str | None
    page_number: int
    page_size: int


@dataclass(frozen=True, slots=True)
class CreateDataset(_WithBody[Created]):
    """CreateDataset: a new dataset with its first version."""

    endpoint = _write("CreateDataset")
    model = Created


@dataclass(frozen=True, slots=True)
class DescribeDatasetVersions(Call[DatasetVersionPage]):
    """One page of a dataset's versions."""

    endpoint = _read("DescribeDatasetVersions", ("dataset_id", "datasetId"), *PAGE)
    model = DatasetVersionPage
    dataset_id: str
    page_number: int
    page_size: int


@dataclass(frozen=True, slots=True)
class CreateDatasetVersion(_WithBody[Created]):
    """CreateDatasetVersion: a new version of ``dataset_id``."""

    endpoint = _write("CreateDatasetVersion", ("dataset_id", "datasetId"))
    model = Created
    dataset_id: str = ""


# -- models -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DescribeModels(Call[ModelPage]):
    """One page of the models whose name matches ``keyword`` (fuzzy)."""

    endpoint = _read("DescribeModels", ("keyword", "keyword"), *PAGE)
    model = ModelPage
    keyword: str | None
    page_number: int
    page_size: int


@dataclass(frozen=True, slots=True)
class CreateModel(_WithBody[Created]):
    """CreateModel: a new model with its first version (``initVersionEntry``)."""

    endpoint = _write("CreateModel")
    model = Created


@dataclass(frozen=True, slots=True)
class DescribeModelVersions(Call[ModelVersionPage]):
    """One page of a model's versions."""

    endpoint = _read("DescribeModelVersions", ("model_id", "modelId"), *PAGE)
    model = ModelVersionPage
    model_id: str
    page_number: int
    page_size: int


@dataclass(frozen=True, slots=True)
class DescribeModelVersion(Call[ModelDetail]):
    """One version of a model (its ``versionEntry``)."""

    endpoint = _read("DescribeModelVersion", ("model_id", "modelId"), ("version_id", "versionId"))
    model = ModelDetail
    model_id: str
    version_id: str


@dataclass(frozen=True, slots=True)
class CreateModelVersion(_WithBody[Created]):
    """CreateModelVersion: a new version of ``model_id``."""

    endpoint = _write("CreateModelVersion", ("model_id", "modelId"))
    model = Created
    model_id: str = ""


@dataclass(frozen=True, slots=True)
class DeleteModelVersion(Call[Done]):
    """DeleteModelVersion."""

    endpoint = _write("DeleteModelVersion", ("model_id", "modelId"), ("version_id", "versionId"))
    model = Done
    model_id: str
    version_id: str


# -- services ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DescribeServices(Call[ServicePage]):
    """One page of the services (no name filter exists: the caller matches names)."""

    endpoint = _read("DescribeServices", *PAGE)
    model = ServicePage
    page_number: int
    page_size: int


@dataclass(frozen=True, slots=True)
class CreateService(_WithBody[CreatedService]):
    """CreateService: the body is the whole ``ServiceConf``."""

    endpoint = _write("CreateService", ("client_token", "clientToken"))
    model = CreatedService
    client_token: str | None = None


@dataclass(frozen=True, slots=True)
class DescribeService(Call[ServiceDetail]):
    """One service: its live configuration, status and instances."""

    endpoint = _read("DescribeService", ("service_id", "serviceId"))
    model = ServiceDetail
    service_id: str


@dataclass(frozen=True, slots=True)
class ModifyService(_WithBody[Done]):
    """ModifyService: roll the service to the ``ServiceConf`` in the body."""

    endpoint = _write("ModifyService", ("service_id", "serviceId"), ("description", "description"))
    model = Done
    service_id: str = ""
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ModifyServiceReplicas(Call[Done]):
    """ModifyServiceReplicas: an absolute instance count."""

    endpoint = _write(
        "ModifyServiceReplicas", ("service_id", "serviceId"), ("instance_count", "instanceCount")
    )
    model = Done
    service_id: str
    instance_count: int


@dataclass(frozen=True, slots=True)
class DeleteService(Call[Done]):
    """DeleteService."""

    endpoint = _write("DeleteService", ("service_id", "serviceId"))
    model = Done
    service_id: str


@dataclass(frozen=True, slots=True)
class DescribeServiceChangelogs(Call[ChangelogPage]):
    """One page of a service's changelog."""

    endpoint = _read(
        "DescribeServiceChangelogs", ("service_id", "serviceId"), ("change_type", "changeType"),
        *PAGE,
    )  # fmt: skip
    model = ChangelogPage
    service_id: str
    page_number: int
    page_size: int
    change_type: int | None = None
