"""Create fields only one dialect has, as Baidu's own clients send them.

v1 (bce-sdk-go ``services/aihc/api/v1/aiJob.go``): ``codeSource`` (``CodeSourceV3``,
``:172``, ``:186-194``), ``logCollectionFilePatterns`` (``:179``),
``requiredNodeAffinity``/``preferredNodeAffinity`` (``:180-181``),
``runningTimeoutStopTimeUnit`` ("最大运行时长，1m、1h、1d", ``:182``).  v2 (bce-openapi-meta
``schema/aihc/CreateJob.json:246-261``; baiducloud-go-sdk
``services/aihc/model_advanced_settings.go:4-5``): ``advancedSettings`` with
``runtimeEnv`` and, capitalised as defined, ``SubmitterBackoffLimit`` (RayJob 高级配置).
The dialects refuse the other dialect's fields before sending (``hooks.dialects``).
"""

from __future__ import annotations

from pydantic import Field

from airflow_provider_aihc.models._base import _RequestModel

__all__ = ["AdvancedSettings", "CodeSource"]


class CodeSource(_RequestModel):
    """Code mounted into the job (v1 ``codeSource``, bce-sdk-go ``CodeSourceV3``)."""

    file_path: str | None = None
    """Path of the uploaded code (from AIHC's code upload)."""
    mount_path: str | None = None
    """Where the code is mounted in the container."""
    id: str | None = None
    """Id of the code source."""
    bos_object_name: str | None = None
    """BOS object holding the code."""
    bos_temporary_token: str | None = None
    """Temporary token to read the BOS object (a secret: masked like a password)."""
    bos_endpoint: str | None = None
    """BOS endpoint of the object."""
    bos_bucket: str | None = None
    """BOS bucket of the object."""


class AdvancedSettings(_RequestModel):
    """A RayJob's advanced settings (v2 ``advancedSettings``)."""

    runtime_env: str | None = None
    """Ray runtime environment (``runtimeEnv``, a string)."""
    submitter_backoff_limit: int | None = Field(
        default=None,
        validation_alias="SubmitterBackoffLimit",
        serialization_alias="SubmitterBackoffLimit",
    )
    """Retries of the Ray job submitter (``SubmitterBackoffLimit``, capitalised as defined)."""
