"""v2 model and dataset actions: ``/?action=CreateModel`` … (header ``version: v2``).

Requests are checked against Baidu's definitions (:mod:`.definitions`, bce-openapi-meta);
answers use the field names of Baidu's generated clients, which are the only typed ones
(baiducloud-go-sdk ``services/aihc/model_model.go:3-15``, ``model_model_version_entry.go:3-10``,
``model_dataset.go:3-19``, ``model_dataset_version_entry.go:3-9`` and the
``describe_*_response`` models; baiducloud-python-sdk-aihc 0.0.4 the same):

* creates answer ``{id}`` (the new model, dataset or version);
* ``DescribeModel`` the model with ``versionEntry`` (its latest version: bce-sdk-java
  ``DescribeModelResponse.java`` "最新版本的详细信息"), ``DescribeModelVersion`` the model
  with the requested one; neither has ``latestVersion*``;
* ``DescribeDataset`` the dataset with ``latestVersionId``, ``latestVersion`` and
  ``latestVersionEntry``; ``DescribeDatasetVersion`` the dataset with ``versionEntry``;
* lists ``{totalCount, models|datasets|versions}``; every one when ``pageSize`` is absent
  or empty (META "没传默认返回全部"); ``pageNumber`` 1 by default;
* ``createdAt``/``updatedAt`` strings (GG ``*string``), ISO UTC here (the format is
  invented); deletes and modifies answer ``{requestId}`` (bce-sdk-go
  ``api/v2/dataset.go:63-80``; for models inferred).

Invented: the ids, the version labels, ``permission`` ``rw`` (the caller owns what it
made), ``ownerName`` equal to ``owner``, ``initSource`` the first version's ``source``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow_provider_aihc.emulator.dialects.call import Call, Handler, Route
from airflow_provider_aihc.emulator.dialects.common import iso
from airflow_provider_aihc.emulator.state.catalog import Catalog, Entry, Version

from . import definitions

MODEL_FIELDS = ("modelFormat", "description", "visibilityScope")
MODEL_VERSION_FIELDS = (
    "source",
    "storageBucket",
    "storagePath",
    "modelMetrics",
    "description",
)
DATASET_FIELDS = (
    "storageType",
    "storageInstance",
    "importFormat",
    "description",
    "visibilityScope",
    "visibilityUser",
    "visibilityGroup",
)
DATASET_VERSION_FIELDS = ("description", "storagePath", "mountPath")


def _args(c: Call, action: str) -> dict[str, Any]:
    """The body, held to the action's definition together with the query."""
    body = c.fields() if ACTIONS[action].method == "POST" else {}
    definitions.check(action, c.query, body)
    return body


def _pick(source: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: source[name] for name in names if source.get(name) is not None}


def _page_size(c: Call) -> int | None:
    return c.optional_int("pageSize")


# ---- rendering ------------------------------------------------------------------------------


def _owner(entry: Entry) -> dict[str, Any]:
    owner = entry.attrs.get("owner") or entry.creator
    return {"owner": owner, "ownerName": owner}


def _times(entry: Entry) -> dict[str, Any]:
    return {"createdAt": iso(entry.created_at), "updatedAt": iso(entry.updated_at)}


def model_version(version: Version) -> dict[str, Any]:
    """A ``ModelVersionEntry`` (GG's seven fields; ``createdAt``, ``createUser`` as bce-sdk-java
    adds them, D18)."""
    return {
        "id": version.version_id,
        "version": version.label,
        "source": version.attrs.get("source", ""),
        "storageBucket": version.attrs.get("storageBucket", ""),
        "storagePath": version.attrs.get("storagePath", ""),
        "modelMetrics": version.attrs.get("modelMetrics", ""),
        "description": version.attrs.get("description", ""),
        "createdAt": iso(version.created_at),
        "createUser": version.creator,
    }


def _model_base(entry: Entry) -> dict[str, Any]:
    first = entry.versions[0] if entry.versions else None
    return {
        "id": entry.entry_id,
        "name": entry.name,
        "initSource": first.attrs.get("source", "") if first else "",
        "modelFormat": entry.attrs.get("modelFormat", ""),
        "description": entry.attrs.get("description", ""),
        "visibilityScope": entry.attrs.get("visibilityScope", "ONLY_OWNER"),
        **_owner(entry),
        **_times(entry),
    }


def model_item(entry: Entry) -> dict[str, Any]:
    """A ``Model`` of ``DescribeModels``."""
    latest = entry.latest
    return {
        **_model_base(entry),
        "latestVersion": latest.label if latest else "",
        "latestVersionId": latest.version_id if latest else "",
    }


def dataset_version(version: Version) -> dict[str, Any]:
    """A ``DatasetVersionEntry``."""
    return {
        "id": version.version_id,
        "version": version.label,
        "description": version.attrs.get("description", ""),
        "storagePath": version.attrs.get("storagePath", ""),
        "mountPath": version.attrs.get("mountPath", ""),
        "createUser": version.creator,
        "createdAt": iso(version.created_at),
    }


def _dataset_base(entry: Entry) -> dict[str, Any]:
    return {
        "id": entry.entry_id,
        "name": entry.name,
        "storageType": entry.attrs.get("storageType", ""),
        "storageInstance": entry.attrs.get("storageInstance", ""),
        "importFormat": entry.attrs.get("importFormat", ""),
        "description": entry.attrs.get("description", ""),
        "visibilityScope": entry.attrs.get("visibilityScope", ""),
        "visibilityUser": entry.attrs.get("visibilityUser") or [],
        "visibilityGroup": entry.attrs.get("visibilityGroup") or [],
        "permission": "rw",
        **_owner(entry),
        **_times(entry),
    }


def dataset_item(entry: Entry) -> dict[str, Any]:
    """A ``Dataset`` of ``DescribeDatasets``."""
    latest = entry.latest
    return {
        **_dataset_base(entry),
        "latestVersionId": latest.version_id if latest else "",
        "latestVersion": latest.label if latest else "",
    }


# ---- models ---------------------------------------------------------------------------------


def _create_model(c: Call) -> dict[str, Any]:
    body = _args(c, "CreateModel")
    first = definitions.strings("initVersionEntry", body.get("initVersionEntry"))
    definitions.metrics_text("initVersionEntry.modelMetrics", first.get("modelMetrics"))
    attrs = {**_pick(body, MODEL_FIELDS), **_pick(body, ("owner",))}
    entry = c.state.models.create(
        body["name"],
        attrs,
        _pick(first, MODEL_VERSION_FIELDS) if body.get("initVersionEntry") is not None else None,
        c.access_key_id,
    )
    return {"id": entry.entry_id}


def _create_model_version(c: Call) -> dict[str, Any]:
    body = _args(c, "CreateModelVersion")
    definitions.metrics_text("modelMetrics", body.get("modelMetrics"))
    version = c.state.models.add_version(
        c.query["modelId"], _pick(body, MODEL_VERSION_FIELDS), c.access_key_id
    )
    return {"id": version.version_id}


def _describe_model(c: Call) -> dict[str, Any]:
    _args(c, "DescribeModel")

    def render(entry: Entry) -> dict[str, Any]:
        latest = entry.latest
        return {**_model_base(entry), "versionEntry": model_version(latest) if latest else None}

    return c.state.models.read(c.query["modelId"], render)


def _describe_model_version(c: Call) -> dict[str, Any]:
    _args(c, "DescribeModelVersion")
    return _entry_with_version(c, c.state.models, "modelId", _model_base, model_version)


def _entry_with_version(
    c: Call,
    catalog: Catalog,
    id_param: str,
    base: Callable[[Entry], dict[str, Any]],
    version: Callable[[Version], dict[str, Any]],
) -> dict[str, Any]:
    def render(entry: Entry) -> dict[str, Any]:
        found = entry.version(c.query["versionId"], catalog.kind)
        return {**base(entry), "versionEntry": version(found)}

    return catalog.read(c.query[id_param], render)


def _describe_models(c: Call) -> dict[str, Any]:
    _args(c, "DescribeModels")
    keyword = c.query.get("keyword") or ""
    page = c.state.models.page(
        model_item,
        wanted=lambda e: keyword in e.name,
        page_no=c.int_param("pageNumber", 1),
        page_size=_page_size(c),
    )
    return {"totalCount": page.total, "models": page.items}


def _describe_model_versions(c: Call) -> dict[str, Any]:
    _args(c, "DescribeModelVersions")
    page = c.state.models.version_page(
        c.query["modelId"],
        model_version,
        page_no=c.int_param("pageNumber", 1),
        page_size=_page_size(c),
    )
    return {"totalCount": page.total, "versions": page.items}


def _modify_model(c: Call) -> dict[str, Any]:
    body = _args(c, "ModifyModel")
    c.state.models.modify(c.query["modelId"], _pick(body, ("description",)), body["name"])
    return {}


def _delete_model(c: Call) -> dict[str, Any]:
    _args(c, "DeleteModel")
    c.state.models.delete(c.query["modelId"])
    return {}


def _delete_model_version(c: Call) -> dict[str, Any]:
    _args(c, "DeleteModelVersion")
    c.state.models.delete_version(c.query["modelId"], c.query["versionId"])
    return {}


# ---- datasets -------------------------------------------------------------------------------


def _create_dataset(c: Call) -> dict[str, Any]:
    body = _args(c, "CreateDataset")
    first = definitions.strings("initVersionEntry", body["initVersionEntry"])
    attrs = {**_pick(body, DATASET_FIELDS), **_pick(body, ("owner",))}
    entry = c.state.datasets.create(
        body["name"], attrs, _pick(first, DATASET_VERSION_FIELDS), c.access_key_id
    )
    return {"id": entry.entry_id}


def _create_dataset_version(c: Call) -> dict[str, Any]:
    body = _args(c, "CreateDatasetVersion")
    version = c.state.datasets.add_version(
        c.query["datasetId"], _pick(body, DATASET_VERSION_FIELDS), c.access_key_id
    )
    return {"id": version.version_id}


def _describe_dataset(c: Call) -> dict[str, Any]:
    _args(c, "DescribeDataset")

    def render(entry: Entry) -> dict[str, Any]:
        latest = entry.latest
        entry_view = dataset_version(latest) if latest else None
        return {**dataset_item(entry), "latestVersionEntry": entry_view}

    return c.state.datasets.read(c.query["datasetId"], render)


def _describe_dataset_version(c: Call) -> dict[str, Any]:
    _args(c, "DescribeDatasetVersion")
    return _entry_with_version(c, c.state.datasets, "datasetId", _dataset_base, dataset_version)


def _describe_datasets(c: Call) -> dict[str, Any]:
    _args(c, "DescribeDatasets")
    keyword = c.query.get("keyword") or ""
    storage_type = c.query.get("storageType") or None
    import_format = c.query.get("importFormat") or None
    instances = {i for i in (c.query.get("storageInstances") or "").split(",") if i}

    def wanted(entry: Entry) -> bool:
        return (
            keyword in entry.name
            and storage_type in (None, entry.attrs.get("storageType"))
            and import_format in (None, entry.attrs.get("importFormat"))
            and (not instances or entry.attrs.get("storageInstance") in instances)
        )

    page = c.state.datasets.page(
        dataset_item,
        wanted=wanted,
        page_no=c.int_param("pageNumber", 1),
        page_size=_page_size(c),
    )
    return {"totalCount": page.total, "datasets": page.items}


def _describe_dataset_versions(c: Call) -> dict[str, Any]:
    _args(c, "DescribeDatasetVersions")
    page = c.state.datasets.version_page(
        c.query["datasetId"],
        dataset_version,
        page_no=c.int_param("pageNumber", 1),
        page_size=_page_size(c),
    )
    return {"totalCount": page.total, "versions": page.items}


def _modify_dataset(c: Call) -> dict[str, Any]:
    body = _args(c, "ModifyDataset")
    attrs = _pick(body, ("description", "visibilityScope", "visibilityUser", "visibilityGroup"))
    c.state.datasets.modify(c.query["datasetId"], attrs, body.get("name") or None)
    return {}


def _delete_dataset(c: Call) -> dict[str, Any]:
    _args(c, "DeleteDataset")
    c.state.datasets.delete(c.query["datasetId"])
    return {}


def _delete_dataset_version(c: Call) -> dict[str, Any]:
    _args(c, "DeleteDatasetVersion")
    c.state.datasets.delete_version(c.query["datasetId"], c.query["versionId"])
    return {}


_HANDLERS: dict[str, Handler] = {
    "CreateModel": _create_model,
    "CreateModelVersion": _create_model_version,
    "DescribeModel": _describe_model,
    "DescribeModelVersion": _describe_model_version,
    "DescribeModels": _describe_models,
    "DescribeModelVersions": _describe_model_versions,
    "ModifyModel": _modify_model,
    "DeleteModel": _delete_model,
    "DeleteModelVersion": _delete_model_version,
    "CreateDataset": _create_dataset,
    "CreateDatasetVersion": _create_dataset_version,
    "DescribeDataset": _describe_dataset,
    "DescribeDatasetVersion": _describe_dataset_version,
    "DescribeDatasets": _describe_datasets,
    "DescribeDatasetVersions": _describe_dataset_versions,
    "ModifyDataset": _modify_dataset,
    "DeleteDataset": _delete_dataset,
    "DeleteDatasetVersion": _delete_dataset_version,
}

#: action -> route; the method is the definition's, the operation the action's own name.
ACTIONS: dict[str, Route] = {
    action: Route(definitions.ACTIONS[action][0], "/", action, handler, "flat", action)
    for action, handler in _HANDLERS.items()
}
