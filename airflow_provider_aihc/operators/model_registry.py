"""Register a run's data as a dataset version and its trained model as a model version, once.

``api_version`` v2 only (these actions exist only in the action API).  AIHC actions used:
DescribeDatasets, CreateDataset, DescribeDatasetVersions, CreateDatasetVersion;
DescribeModels, CreateModel, DescribeModelVersions, CreateModelVersion, DeleteModelVersion.

Exactly once without a token (none of these actions takes one: bce-openapi-meta
``schema/aihc/*Model*.json``, ``*Dataset*.json``): before creating, the operator pages
through what exists and adopts what an earlier try made.  A dataset version is found by
its ``storagePath`` and ``mountPath``, a model version by its ``storageBucket`` and
``storagePath`` (the same files are the same version);
when several model versions share a path, the one whose description carries this task
instance's verifying tag (``operators/_service_identity.py``) is adopted.  A model or
dataset is found by its exact name; two with that name fail the task.  A create whose
answer was lost is never resent by the transport: the next try's lookup finds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from airflow_provider_aihc.version_compat import BaseOperator, Context

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

__all__ = [
    "AIHCCreateDatasetVersionOperator",
    "AIHCDeleteModelVersionOperator",
    "AIHCRegisterModelVersionOperator",
]

XCOM_DATASET_ID = "dataset_id"
XCOM_DATASET_VERSION_ID = "dataset_version_id"
XCOM_MODEL_ID = "model_id"
XCOM_MODEL_VERSION_ID = "model_version_id"
#: What a missing dataset is created with, unless ``create_dataset`` says otherwise
#: (``CreateDataset.json``: ``visibilityScope`` ALL_PEOPLE | ONLY_OWNER | USER_GROUP).
DATASET_DEFAULTS = {"visibilityScope": "ONLY_OWNER"}
CREATE_DATASET_KEYS = {
    "storage_type": "storageType",
    "storage_instance": "storageInstance",
    "import_format": "importFormat",
    "visibility_scope": "visibilityScope",
    "description": "description",
}
#: The keys CreateDataset requires that have no default here (``visibilityScope`` has one).
CREATE_DATASET_REQUIRED = ("storage_type", "storage_instance", "import_format")
#: The values CreateDataset allows (bce-openapi-meta ``schema/aihc/CreateDataset.json``:
#: ``storageType`` "可选项：PFS、BOS", ``importFormat`` "FILE：文件 FOLDER：文件夹",
#: ``visibilityScope`` ALL_PEOPLE | ONLY_OWNER | USER_GROUP).
CREATE_DATASET_CHOICES = {
    "storage_type": ("PFS", "BOS"),
    "import_format": ("FILE", "FOLDER"),
    "visibility_scope": ("ALL_PEOPLE", "ONLY_OWNER", "USER_GROUP"),
}


@dataclass(frozen=True)
class _Registered:
    """A version just created that its model's list does not show yet."""

    id: str
    version: str = ""


class _RegistryOperator(BaseOperator):
    """The connection and the v2 check shared by the registry operators."""

    ui_color = "#2468f2"

    def __init__(self, *, aihc_conn_id: str = "aihc_default", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.aihc_conn_id = aihc_conn_id

    @cached_property
    def hook(self) -> AIHCHook:
        """The AIHC hook of this task."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        return AIHCHook(aihc_conn_id=self.aihc_conn_id)

    def _one_by_name(self, kind: str, name: str, found: Sequence[Any]) -> str | None:
        exact = [item for item in found if item.name == name]
        if len(exact) > 1:
            from airflow_provider_aihc.exceptions import AIHCConfigError

            ids = ", ".join(item.id for item in exact)
            raise AIHCConfigError(
                f"{len(exact)} {kind}s are named {name!r} ({ids}): pass the {kind}'s id instead"
            )
        return exact[0].id if exact else None


def _create_dataset_problems(given: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What is wrong with a given ``create_dataset``, found before any request: whether the
    dataset exists is known only after a lookup, so a ``create_dataset`` that could not
    create it must fail before that lookup, not after.  An empty one is checked only when
    the dataset turns out to be missing (it may exist)."""
    if not given:
        return []
    unknown = sorted(set(given) - set(CREATE_DATASET_KEYS))
    if unknown:
        return [("create_dataset", f"unknown keys {unknown}; takes {sorted(CREATE_DATASET_KEYS)}")]
    problems = [
        (f"create_dataset.{key}", "is required to create a dataset")
        for key in CREATE_DATASET_REQUIRED
        if not given.get(key)
    ]
    for key, allowed in CREATE_DATASET_CHOICES.items():
        if key in given and given[key] not in allowed:
            choices = ", ".join(allowed)
            problem = f"must be one of {choices}; got {given[key]!r}"
            problems.append((f"create_dataset.{key}", problem))
    return problems


def _needs_one(
    id_value: str | None, name_value: str | None, id_field: str, name_field: str
) -> None:
    if bool(id_value) == bool(name_value):
        from airflow_provider_aihc.exceptions import AIHCValidationError

        raise AIHCValidationError(
            [(f"{id_field} / {name_field}", "give exactly one of them")], id_field.split("_")[0]
        )


class AIHCCreateDatasetVersionOperator(_RegistryOperator):
    """Register a run's data drop as a new version of an AIHC dataset, once.

    The same drop (the same ``storage_path`` and ``mount_path``) is the same version: a
    retry, or a run of the task that finds it, adopts it instead of registering it twice.
    A new drop must use a new path (e.g. one with ``{{ ds }}`` in it).  Returns
    ``{dataset_id, version_id, version, storage_path, mount_path, adopted}``; XCom keys
    ``dataset_id`` and ``dataset_version_id`` too.  ``api_version`` v2 only.

    .. seealso:: https://cloud.baidu.com/doc/AIHC/s/hmc09en7q (CreateDatasetVersion)

    :param dataset_name: the dataset, by its exact name; created when none has it (with
        ``create_dataset``) (templated).
    :param dataset_id: the dataset, by id (instead of ``dataset_name``) (templated).
    :param storage_path: where the version's files are (a PFS or BOS path) (templated).
    :param mount_path: where jobs and services mount it by default (templated).
    :param description: the version's description (templated).
    :param create_dataset: what a missing dataset is created with: ``storage_type``
        (``PFS`` | ``BOS``), ``storage_instance`` (the PFS or BOS instance id),
        ``import_format`` (``FILE`` | ``FOLDER``), ``visibility_scope`` (default
        ``ONLY_OWNER``) and ``description``; required when the dataset may not exist yet.
        A given one is checked whole before any request (its first three keys are
        required); without one, a missing dataset fails the task after the lookup that
        finds it missing, and nothing is created.
    :param aihc_conn_id: the ``aihc`` connection (``api_version`` v2).
    """

    template_fields: Sequence[str] = (
        "dataset_name", "dataset_id", "storage_path", "mount_path", "description",
    )  # fmt: skip

    def __init__(
        self,
        *,
        storage_path: str,
        mount_path: str,
        dataset_name: str | None = None,
        dataset_id: str | None = None,
        description: str | None = None,
        create_dataset: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.dataset_name = dataset_name
        self.dataset_id = dataset_id
        self.storage_path = storage_path
        self.mount_path = mount_path
        self.description = description
        self.create_dataset = dict(create_dataset or {})

    def _check(self) -> None:
        from airflow_provider_aihc.models.service_requests import check_name, raise_problems

        _needs_one(self.dataset_id, self.dataset_name, "dataset_id", "dataset_name")
        problems = check_name("dataset_name", self.dataset_name) if self.dataset_name else []
        for field in ("storage_path", "mount_path"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value.strip():
                problems.append((field, f"must be a non-empty path; got {value!r}"))
        problems += _create_dataset_problems(self.create_dataset)
        raise_problems(problems, "dataset version")

    def execute(self, context: Context) -> dict[str, Any]:
        self._check()
        hook = self.hook
        hook.require_v2(type(self).__name__)
        dataset_id = self.dataset_id or self._dataset_by_name(hook)
        created = dataset_id is None
        if dataset_id is None:  # created with this version as its initVersionEntry
            dataset_id = self._create_dataset(hook)
        version, adopted = self._find_version(hook, dataset_id), not created
        if version is None:
            version_id = hook.create_dataset_version(
                dataset_id, self.storage_path, self.mount_path, self.description
            )
            self.log.info("Registered version %s of AIHC dataset %s", version_id, dataset_id)
            version, adopted = self._find_version(hook, dataset_id), False
            found = {"id": version_id, "version": version.version if version else ""}
        else:
            if adopted:
                self.log.info(
                    "Adopted version %s of AIHC dataset %s (same storage and mount path)",
                    version.id, dataset_id,
                )  # fmt: skip
            found = {"id": version.id, "version": version.version}
        return self._push(context, dataset_id, found, adopted)

    def _dataset_by_name(self, hook: AIHCHook) -> str | None:
        assert self.dataset_name is not None
        return self._one_by_name(
            "dataset", self.dataset_name, hook.list_datasets(self.dataset_name)
        )

    def _create_dataset(self, hook: AIHCHook) -> str:
        from airflow_provider_aihc.exceptions import AIHCValidationError

        given = {CREATE_DATASET_KEYS[k]: v for k, v in self.create_dataset.items()}
        body: dict[str, Any] = {**DATASET_DEFAULTS, **given, "name": self.dataset_name}
        missing = [k for k in CREATE_DATASET_REQUIRED if not body.get(CREATE_DATASET_KEYS[k])]
        if missing:
            raise AIHCValidationError(
                [(f"create_dataset.{k}", f"is needed to create dataset {self.dataset_name!r}, "
                  "which does not exist") for k in missing], "dataset",
            )  # fmt: skip
        entry = {"storagePath": self.storage_path, "mountPath": self.mount_path}
        if self.description:
            entry["description"] = self.description
        body["initVersionEntry"] = entry
        dataset_id = hook.create_dataset(body)
        self.log.info("Created AIHC dataset %s (%s)", self.dataset_name, dataset_id)
        return dataset_id

    def _find_version(self, hook: AIHCHook, dataset_id: str) -> Any:
        for version in hook.list_dataset_versions(dataset_id):
            if version.storage_path == self.storage_path and version.mount_path == self.mount_path:
                return version
        return None

    def _push(
        self, context: Context, dataset_id: str, version: Mapping[str, str], adopted: bool
    ) -> dict[str, Any]:
        ti = context["ti"]
        ti.xcom_push(key=XCOM_DATASET_ID, value=dataset_id)
        ti.xcom_push(key=XCOM_DATASET_VERSION_ID, value=version["id"])
        return {
            "dataset_id": dataset_id,
            "version_id": version["id"],
            "version": version["version"],
            "storage_path": self.storage_path,
            "mount_path": self.mount_path,
            "adopted": adopted,
        }


class AIHCRegisterModelVersionOperator(_RegistryOperator):
    """Register a trained model as a new version of an AIHC model, once.

    The model is found by its exact ``model_name`` and created (with this version as its
    ``initVersionEntry``) when none has that name.  A version already registered from the
    same ``storage_bucket`` and ``storage_path`` is adopted, not registered again: a retry
    whose first ``CreateModelVersion`` answer was lost finds it.  Returns ``{model_id,
    version_id, version, storage_bucket, storage_path, adopted}``; XCom keys ``model_id``
    and ``model_version_id`` too.  ``api_version`` v2 only.

    .. seealso:: https://cloud.baidu.com/doc/AIHC/s/imc1fsm39 (CreateModelVersion)

    :param model_name: the model, by its exact name (templated).
    :param model_id: the model, by id (instead of ``model_name``) (templated).
    :param model_format: the model's format (``HuggingFace``, ``MegatronCore``, ...): needed
        to create a missing model (templated).
    :param storage_bucket: the BOS bucket of the model's files (templated).
    :param storage_path: the path of the model's files in it (templated).
    :param model_metrics: the version's metrics: a dict (e.g. a training task's
        ``metrics`` XCom), sent as Baidu's JSON string ``{"Results": [{"Metrics": …,
        "Dataset": {"DatasetId": dataset_version_id}}]}``; or that JSON text (templated).
    :param dataset_version_id: the dataset (version) the metrics were measured on, added to
        the metrics (templated).
    :param source: where the files came from (``UserUpload``: Baidu's only documented value).
    :param description: the version's description; a marker of this task instance is added
        after it, to tell this task's versions apart (templated).
    :param aihc_conn_id: the ``aihc`` connection (``api_version`` v2).
    """

    template_fields: Sequence[str] = (
        "model_name", "model_id", "model_format", "storage_bucket", "storage_path",
        "model_metrics", "dataset_version_id", "description",
    )  # fmt: skip
    template_fields_renderers: ClassVar[dict[str, str]] = {"model_metrics": "json"}

    def __init__(
        self,
        *,
        storage_bucket: str,
        storage_path: str,
        model_name: str | None = None,
        model_id: str | None = None,
        model_format: str | None = None,
        model_metrics: Mapping[str, Any] | str | None = None,
        dataset_version_id: str | None = None,
        source: str = "UserUpload",
        description: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.model_name = model_name
        self.model_id = model_id
        self.model_format = model_format
        self.storage_bucket = storage_bucket
        self.storage_path = storage_path
        self.model_metrics = model_metrics
        self.dataset_version_id = dataset_version_id
        self.source = source
        self.description = description

    def _entry(self, context: Context) -> dict[str, Any]:
        """The version's wire fields (checked; nothing sent yet)."""
        from airflow_provider_aihc.models.service_requests import (
            check_name,
            metrics_text,
            raise_problems,
        )
        from airflow_provider_aihc.operators._identity import TaskIdentity
        from airflow_provider_aihc.operators._service_identity import marked, marker

        _needs_one(self.model_id, self.model_name, "model_id", "model_name")
        problems = check_name("model_name", self.model_name) if self.model_name else []
        for field in ("storage_bucket", "storage_path", "source"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value.strip():
                problems.append((field, f"must be non-empty text; got {value!r}"))
        raise_problems(problems, "model version")
        metrics = metrics_text(self.model_metrics, self.dataset_version_id)
        self.hook.require_v2(type(self).__name__)
        identity = TaskIdentity.from_context(context)
        mark = marker(self.hook.config.secret_access_key, identity, self._subject)
        entry = {
            "source": self.source,
            "storageBucket": self.storage_bucket,
            "storagePath": self.storage_path,
            "modelMetrics": metrics,
            "description": marked(self.description, mark),
        }
        return {k: v for k, v in entry.items() if v is not None}

    @property
    def _subject(self) -> str:
        return f"{self.storage_bucket}/{self.storage_path}"

    def execute(self, context: Context) -> dict[str, Any]:
        entry = self._entry(context)
        hook = self.hook
        model_id = self.model_id
        if model_id is None:
            assert self.model_name is not None
            model_id = self._one_by_name(
                "model", self.model_name, hook.list_models(self.model_name)
            )
        if model_id is None:
            model_id = self._create_model(hook, entry)
            version, adopted = self._find_version(hook, model_id), False
        else:
            version, adopted = self._find_version(hook, model_id), True
            if version is None:
                version_id = hook.create_model_version(model_id, entry)
                self.log.info("Registered version %s of AIHC model %s", version_id, model_id)
                found = self._find_version(hook, model_id, version_id)
                version, adopted = found or _Registered(version_id), False
        if version is None:
            from airflow_provider_aihc.exceptions import AIHCError

            raise AIHCError(f"AIHC model {model_id} lists no version at {self._subject!r}")
        if adopted:
            self.log.info(
                "Adopted version %s of AIHC model %s (registered from %s before)",
                version.id, model_id, self._subject,
            )  # fmt: skip
        ti = context["ti"]
        ti.xcom_push(key=XCOM_MODEL_ID, value=model_id)
        ti.xcom_push(key=XCOM_MODEL_VERSION_ID, value=version.id)
        return {
            "model_id": model_id,
            "version_id": version.id,
            "version": version.version,
            "storage_bucket": self.storage_bucket,
            "storage_path": self.storage_path,
            "adopted": adopted,
        }

    def _create_model(self, hook: AIHCHook, entry: Mapping[str, Any]) -> str:
        from airflow_provider_aihc.exceptions import AIHCValidationError

        if not self.model_format:
            raise AIHCValidationError(
                [("model_format", f"is needed to create model {self.model_name!r}, which "
                  "does not exist (e.g. HuggingFace, MegatronCore)")], "model",
            )  # fmt: skip
        # initVersionEntry: required by bce-openapi-meta CreateModel.json:43-47 (bce-python-sdk
        # makes it optional).
        body = {"name": self.model_name, "modelFormat": self.model_format,
                "initVersionEntry": dict(entry)}  # fmt: skip
        model_id = hook.create_model(body)
        self.log.info("Created AIHC model %s (%s)", self.model_name, model_id)
        return model_id

    def _find_version(self, hook: AIHCHook, model_id: str, version_id: str | None = None) -> Any:
        """The version at this task's path: the one just created, the only one there, or
        the one whose marker verifies."""
        from airflow_provider_aihc.operators._service_identity import labels_in, verifies

        same = [
            v
            for v in hook.list_model_versions(model_id)
            if v.storage_bucket == self.storage_bucket and v.storage_path == self.storage_path
        ]
        if version_id is not None:
            return next((v for v in same if v.id == version_id), None)
        if len(same) <= 1:
            return same[0] if same else None
        secret = hook.config.secret_access_key
        return next(
            (v for v in same if verifies(secret, labels_in(v.description), self._subject)), None
        )


class AIHCDeleteModelVersionOperator(_RegistryOperator):
    """Delete one version of an AIHC model; a version already gone counts as deleted.

    :param model_id: the model (templated).
    :param version_id: the version (templated).
    :param aihc_conn_id: the ``aihc`` connection (``api_version`` v2).
    """

    template_fields: Sequence[str] = ("model_id", "version_id")

    def __init__(self, *, model_id: str, version_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model_id = model_id
        self.version_id = version_id

    def execute(self, context: Context) -> None:
        from airflow_provider_aihc.exceptions import AIHCNotFoundError

        self.hook.require_v2(type(self).__name__)
        try:
            self.hook.delete_model_version(self.model_id, self.version_id)
        except AIHCNotFoundError:
            self.log.info(
                "AIHC model version %s/%s is already gone", self.model_id, self.version_id
            )
        else:
            self.log.info("Deleted AIHC model version %s/%s", self.model_id, self.version_id)
