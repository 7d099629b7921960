"""Where AIHC data lives, as OpenLineage datasets: one stable namespace per storage kind.

OpenLineage names a dataset by ``namespace`` (``scheme://authority``: the datasource) and
``name`` (the path within it), so that lineage joins across tools.  A job's datasource and
an Airflow asset that point at the same data get the same pair:

=================  ===============================================  ======================
storage            datasource (``type``, ``name``, ``sourcePath``)  asset URI
=================  ===============================================  ======================
PFS instance       ``pfs``, ``pfs-x``, ``/datasets/clicks``         ``pfs://pfs-x/datasets/clicks``
CFS instance       ``cfs``, ``cfs-x``, ``/data``                    ``cfs://cfs-x/data``
BOS bucket         ``bos``, ``bucket``, ``prefix/key``              ``bos://bucket/prefix/key``
AIHC dataset       ``dataset``, ``ds-x``, ``/v1``                   ``aihc-dataset://ds-x/v1``
pool node path     ``hostpath``, ``<volume>``, ``/data``            ``hostpath://<pool>/data``
=================  ===============================================  ======================

The namespace is ``<scheme>://<instance, bucket, dataset id or pool>``; the name is the path
(``/`` for a whole instance), except for BOS, whose name is the object key without a leading
``/``, as OpenLineage names S3 and GCS objects.  A host path is on whichever node of the pool
the job ran, so its authority is the resource pool.  ``emptydir`` is scratch space: no
dataset.  A kind not listed keeps its own name as the scheme (``rapidfs://<name>``).

Stdlib only: Airflow imports this module (through the provider's ``asset-uris``) whenever
an asset with one of these schemes is created, DAG parsing included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit

if TYPE_CHECKING:
    from airflow.providers.common.compat.openlineage.facet import Dataset

#: Datasource ``type`` (lowercased) → the scheme of its datasets' namespace.
SCHEMES: Mapping[str, str] = {
    "pfs": "pfs",
    "cfs": "cfs",
    "bos": "bos",
    "dataset": "aihc-dataset",
    "hostpath": "hostpath",
}
#: Asset URI schemes this provider registers (handler and OpenLineage converter).
ASSET_SCHEMES: tuple[str, ...] = tuple(sorted(set(SCHEMES.values())))
#: Datasource kinds that hold no data worth tracing.
SCRATCH_KINDS = frozenset({"emptydir"})
#: Schemes whose dataset name is an object key (no leading ``/``), as for ``s3``.
OBJECT_STORE_SCHEMES = frozenset({"bos"})


@dataclass(frozen=True, slots=True)
class Location:
    """An OpenLineage dataset identity.

    :param namespace: ``scheme://authority``, e.g. ``pfs://pfs-7xWeAt``.
    :param name: the path within it, e.g. ``/datasets/clicks``.
    """

    namespace: str
    name: str


def location(scheme: str, authority: str, path: str) -> Location:
    """The dataset at ``path`` of ``scheme://authority`` (trailing ``/`` dropped, as
    Airflow normalises asset URIs).

    :param scheme: ``pfs``, ``bos``, ...
    :param authority: instance id, bucket, dataset id or pool.
    :param path: path in it; ``""`` or ``/`` is the whole of it.
    """
    path = path.strip("/")
    name = path if scheme in OBJECT_STORE_SCHEMES else "/" + path
    return Location(f"{scheme}://{authority}", name)


def datasource_location(
    kind: str,
    name: str,
    source_path: str,
    options: Mapping[str, Any],
    resource_pool_id: str,
) -> Location | None:
    """The dataset a job's datasource mounts; ``None`` for scratch space.

    :param kind: the datasource's ``type`` (any case: AIHC spells ``hostPath`` too).
    :param name: its ``name``: the instance, bucket or dataset id.
    :param source_path: its ``sourcePath`` (``""`` when unset).
    :param options: its ``options`` (``hostPath`` names a host path's directory).
    :param resource_pool_id: the job's pool, the authority of host paths.
    """
    kind = kind.strip().lower()
    if kind in SCRATCH_KINDS:
        return None
    scheme = SCHEMES.get(kind, kind)
    if kind == "hostpath":
        return location(scheme, resource_pool_id, source_path or str(options.get("hostPath", "")))
    if kind == "bos" and (source_path.startswith("bos://") or not name):
        # No bucket in ``name``: it leads the source path, with or without ``bos://``.
        bucket, _, key = source_path.removeprefix("bos://").lstrip("/").partition("/")
        return location(scheme, bucket, key)
    return location(scheme, name, source_path)


def asset_location(uri: str) -> Location:
    """The dataset an asset URI such as ``pfs://pfs-x/datasets/clicks`` names.

    :param uri: the asset's URI.
    """
    parts = urlsplit(uri)
    return location(parts.scheme.lower(), parts.netloc, parts.path)


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """Airflow's URI handler for these schemes: the authority (instance, bucket, dataset
    or pool) must be given.

    :param uri: the split asset URI.
    :raises ValueError: naming the scheme and the expected form.
    """
    if not uri.netloc:
        raise ValueError(
            f"An asset URI with scheme {uri.scheme!r} must name its storage: "
            f"{uri.scheme}://<instance, bucket, dataset id or pool>/<path>"
        )
    return uri


def convert_asset_to_openlineage(asset: Any, lineage_context: Any) -> Dataset:
    """Airflow's asset → OpenLineage converter for these schemes.

    :param asset: an Airflow asset (dataset on 2.11) with one of :data:`ASSET_SCHEMES`.
    :param lineage_context: unused (Airflow passes the hook lineage context).
    """
    from airflow.providers.common.compat.openlineage.facet import Dataset

    found = asset_location(asset.uri)
    return Dataset(namespace=found.namespace, name=found.name)
