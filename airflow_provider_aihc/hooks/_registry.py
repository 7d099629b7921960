"""The model-registry, dataset and online-service methods of
:class:`~airflow_provider_aihc.hooks.aihc.AIHCHook` (``api_version`` v2 only).

Each method is one declared call of ``hooks/_model_calls.py`` (the lists read every page:
Baidu's definitions say a list without ``pageSize`` answers everything, bce-openapi-meta
``i18n/zh-CN/aihc/DescribeModels.json:5``; its Python client asks for 10 a page,
bce-python-sdk 0.9.79 ``modules/model/model_client.py:26``; so an adopting lookup must
page to the end).  :meth:`RegistryHook.require_v2` refuses a v1 connection before anything
is sent, naming the ``api_version`` setting; the v1 dialect refuses these calls too, as a backstop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks import _model_calls as mc
from airflow_provider_aihc.hooks._endpoint import Call
from airflow_provider_aihc.hooks._tools import JobToolsHook
from airflow_provider_aihc.hooks.dialects import check_path_id
from airflow_provider_aihc.models.registry import (
    Dataset,
    DatasetVersion,
    Done,
    Model,
    ModelDetail,
    ModelVersion,
)
from airflow_provider_aihc.models.service import Changelog, ServiceBrief, ServiceDetail

P = TypeVar("P")


class RegistryHook(JobToolsHook):
    """Datasets, models and online services over :class:`CallingHook`'s senders."""

    def require_v2(self, what: str) -> None:
        """Refuse a connection whose ``api_version`` is not v2, before any request.

        :param what: what needs v2, for the message (an operator or method name).
        :raises AIHCConfigError: naming the connection and its ``api_version`` extra.
        """
        version = self.config.api_version
        if version != "v2":
            raise AIHCConfigError(
                f"{what} uses AIHC's model, dataset and service actions, which only the v2 "
                f"action API has: set the extra 'api_version' of connection "
                f"{self.aihc_conn_id!r} to 'v2' (it is {version!r}); nothing was sent"
            )

    def _pages(self, make: Callable[[int, int], Call[P]], items: str) -> list[Any]:
        """Every item of a paged list (``items`` names the page's list)."""
        found: list[Any] = []
        for page_number in range(1, self.list_max_pages + 1):
            page = self.send(make(page_number, self.list_page_size))
            batch = getattr(page, items)
            found.extend(batch)
            if not batch or len(found) >= page.total_count:  # type: ignore[attr-defined]
                break
        return found

    # -- datasets -----------------------------------------------------------------------------

    def list_datasets(self, keyword: str | None = None) -> list[Dataset]:
        """Every dataset whose name matches ``keyword`` (AIHC matches fuzzily: callers
        that want one name compare it exactly)."""
        return self._pages(lambda n, s: mc.DescribeDatasets(keyword, n, s), "datasets")

    def create_dataset(self, body: Mapping[str, Any]) -> str:
        """Create a dataset (wire-form ``CreateDataset`` body); its id. Sent once."""
        return self.send(mc.CreateDataset(dict(body))).id

    def list_dataset_versions(self, dataset_id: str) -> list[DatasetVersion]:
        """Every version of a dataset."""
        check_path_id("dataset_id", dataset_id)
        return self._pages(lambda n, s: mc.DescribeDatasetVersions(dataset_id, n, s), "versions")

    def create_dataset_version(
        self, dataset_id: str, storage_path: str, mount_path: str, description: str | None = None
    ) -> str:
        """Create a version of a dataset; its id. Sent once (no token exists for it)."""
        check_path_id("dataset_id", dataset_id)
        body = {"storagePath": storage_path, "mountPath": mount_path, "description": description}
        sent = {k: v for k, v in body.items() if v is not None}
        return self.send(mc.CreateDatasetVersion(sent, dataset_id)).id

    # -- models -------------------------------------------------------------------------------

    def list_models(self, keyword: str | None = None) -> list[Model]:
        """Every model whose name matches ``keyword`` (fuzzily)."""
        return self._pages(lambda n, s: mc.DescribeModels(keyword, n, s), "models")

    def create_model(self, body: Mapping[str, Any]) -> str:
        """Create a model (wire-form ``CreateModel`` body, with ``initVersionEntry``); its
        id. Sent once."""
        return self.send(mc.CreateModel(dict(body))).id

    def list_model_versions(self, model_id: str) -> list[ModelVersion]:
        """Every version of a model."""
        check_path_id("model_id", model_id)
        return self._pages(lambda n, s: mc.DescribeModelVersions(model_id, n, s), "versions")

    def get_model_version(self, model_id: str, version_id: str) -> ModelDetail:
        """One version of a model (``.version_entry``)."""
        check_path_id("model_id", model_id)
        check_path_id("version_id", version_id)
        return self.send(mc.DescribeModelVersion(model_id, version_id))

    def create_model_version(self, model_id: str, body: Mapping[str, Any]) -> str:
        """Create a version of a model (wire-form body); its id. Sent once."""
        check_path_id("model_id", model_id)
        return self.send(mc.CreateModelVersion(dict(body), model_id)).id

    def delete_model_version(self, model_id: str, version_id: str) -> Done:
        """Delete one version of a model."""
        check_path_id("model_id", model_id)
        check_path_id("version_id", version_id)
        return self.send(mc.DeleteModelVersion(model_id, version_id))

    # -- services -----------------------------------------------------------------------------

    def list_services(self) -> list[ServiceBrief]:
        """Every service (AIHC has no name filter)."""
        return self._pages(lambda n, s: mc.DescribeServices(n, s), "services")

    def create_service(self, conf: Mapping[str, Any], client_token: str | None = None) -> str:
        """Create an online service from a wire-form ``ServiceConf``; its id. Sent once."""
        return self.send(mc.CreateService(dict(conf), client_token)).service_id

    def get_service(self, service_id: str) -> ServiceDetail:
        """A service's live configuration, status and instances."""
        return self.send(mc.DescribeService(check_path_id("service_id", service_id)))

    async def aget_service(self, service_id: str) -> ServiceDetail:
        """Async :meth:`get_service`, for the trigger."""
        return await self.asend(mc.DescribeService(check_path_id("service_id", service_id)))

    def modify_service(
        self, service_id: str, conf: Mapping[str, Any], description: str | None = None
    ) -> Done:
        """Roll a service to a whole ``ServiceConf``. Sent once (no token exists for it)."""
        check_path_id("service_id", service_id)
        return self.send(mc.ModifyService(dict(conf), service_id, description))

    async def amodify_service(
        self, service_id: str, conf: Mapping[str, Any], description: str | None = None
    ) -> Done:
        """Async :meth:`modify_service` (the trigger's revert)."""
        check_path_id("service_id", service_id)
        return await self.asend(mc.ModifyService(dict(conf), service_id, description))

    def scale_service(self, service_id: str, instance_count: int) -> Done:
        """Set a service's instance count (absolute, so sending it twice is harmless)."""
        check_path_id("service_id", service_id)
        if isinstance(instance_count, bool) or not isinstance(instance_count, int):
            raise AIHCConfigError(f"instance_count must be a whole number; got {instance_count!r}")
        if instance_count < 0:
            raise AIHCConfigError(f"instance_count must be at least 0; got {instance_count!r}")
        return self.send(mc.ModifyServiceReplicas(service_id, instance_count))

    def delete_service(self, service_id: str) -> Done:
        """Delete a service."""
        return self.send(mc.DeleteService(check_path_id("service_id", service_id)))

    def list_service_changelogs(
        self, service_id: str, change_type: int | None = None
    ) -> list[Changelog]:
        """Every changelog record of a service (``change_type`` 2: updates)."""
        check_path_id("service_id", service_id)
        return self._pages(
            lambda n, s: mc.DescribeServiceChangelogs(service_id, n, s, change_type),
            "change_logs",
        )
