"""Lenient models of AIHC's model-registry and dataset answers (v2 action API).

Field names are those of Baidu's generated v2 clients, which type these answers:
baiducloud-go-sdk ``services/aihc/model_model.go:3-15``
(``Model``), ``model_model_version_entry.go:3-10`` (``ModelVersionEntry``),
``model_describe_models_response.go:7-8`` and ``model_describe_model_versions_response.go:7-8``
(``{totalCount, models|versions}``), ``model_dataset.go:3-19`` (``Dataset``),
``model_dataset_version_entry.go:3-9`` (``DatasetVersionEntry``),
``model_describe_datasets_response.go:7-8``, ``model_describe_dataset_versions_response.go:7-8``;
a create answers ``{id}`` (``model_create_model_response.go:7``,
``model_create_model_version_response.go:7``, ``model_create_dataset_version_response.go:7``).
``createdAt`` of these families is a String (GG ``*string``).  Unknown fields are kept.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field

from airflow_provider_aihc.models._base import _ResponseModel
from airflow_provider_aihc.models._lenient import EMPTY_LIST_OK as _EMPTY_OK
from airflow_provider_aihc.models._lenient import EMPTY_OBJECT_OK as _OBJECT_OK
from airflow_provider_aihc.models._lenient import Int, Str

__all__ = [
    "Created",
    "Dataset",
    "DatasetPage",
    "DatasetVersion",
    "DatasetVersionPage",
    "Done",
    "Model",
    "ModelDetail",
    "ModelPage",
    "ModelVersion",
    "ModelVersionPage",
]

_TOTAL = Field(default=0, validation_alias=AliasChoices("totalCount", "total_count", "total"))


class Created(_ResponseModel):
    """A create's answer: the new object's ``id``."""

    id: Str = ""
    """The id AIHC gave it."""


class Done(_ResponseModel):
    """An answer that carries nothing but its ``requestId`` (deletes, modifies)."""

    request_id: Str = ""
    """AIHC's id of the request."""


class DatasetVersion(_ResponseModel):
    """``DatasetVersionEntry``: one version of a dataset."""

    id: Str = ""
    version: Str = ""
    description: Str = ""
    storage_path: Str = ""
    """Where the version's files are (PFS or BOS path)."""
    mount_path: Str = ""
    """Where a job or service mounts it by default."""
    create_user: Str = ""


class Dataset(_ResponseModel):
    """``Dataset``: one dataset (its latest version, when described alone)."""

    id: Str = ""
    name: Str = ""
    storage_type: Str = ""
    storage_instance: Str = ""
    import_format: Str = ""
    description: Str = ""
    latest_version_id: Str = ""
    latest_version: Str = ""


class DatasetPage(_ResponseModel):
    """A page of ``DescribeDatasets``."""

    total_count: Int = _TOTAL
    datasets: Annotated[list[Dataset], _EMPTY_OK] = Field(default_factory=list)


class DatasetVersionPage(_ResponseModel):
    """A page of ``DescribeDatasetVersions``."""

    total_count: Int = _TOTAL
    versions: Annotated[list[DatasetVersion], _EMPTY_OK] = Field(default_factory=list)


class ModelVersion(_ResponseModel):
    """``ModelVersionEntry``: one version of a model."""

    id: Str = ""
    version: Str = ""
    source: Str = ""
    storage_bucket: Str = ""
    storage_path: Str = ""
    model_metrics: Str = ""
    """The metrics as the JSON text they were registered with."""
    description: Str = ""


class Model(_ResponseModel):
    """``Model``: one model of a ``DescribeModels`` page."""

    id: Str = ""
    name: Str = ""
    model_format: Str = ""
    latest_version_id: Str = ""
    latest_version: Str = ""


class ModelDetail(Model):
    """``DescribeModel``/``DescribeModelVersion``: the model with one ``versionEntry``."""

    version_entry: Annotated[ModelVersion, _OBJECT_OK] = Field(default_factory=ModelVersion)


class ModelPage(_ResponseModel):
    """A page of ``DescribeModels``."""

    total_count: Int = _TOTAL
    models: Annotated[list[Model], _EMPTY_OK] = Field(default_factory=list)


class ModelVersionPage(_ResponseModel):
    """A page of ``DescribeModelVersions``."""

    total_count: Int = _TOTAL
    versions: Annotated[list[ModelVersion], _EMPTY_OK] = Field(default_factory=list)
