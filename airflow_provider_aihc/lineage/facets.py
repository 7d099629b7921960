"""The ``aihcJob`` OpenLineage run facet.

Imports OpenLineage's client at module level, so only :mod:`.job` imports this module, and
only when the OpenLineage provider asks a task for its lineage.
"""

from __future__ import annotations

from typing import Any

from airflow.providers.common.compat.openlineage.facet import RunFacet
from attrs import define

#: The key of :class:`AIHCJobRunFacet` among a run's facets.
FACET_KEY = "aihcJob"


@define
class AIHCJobRunFacet(RunFacet):  # type: ignore[misc]
    """An AIHC training job as AIHC reported it when the task ended.

    Carries no command, environment, labels or registry credentials: those may hold
    secrets.  Field names are camelCase, as in OpenLineage's own facets.
    """

    jobId: str
    """The job id."""
    jobName: str
    """The job name."""
    resourcePoolId: str
    """The resource pool."""
    queue: str
    """The AIHC queue."""
    consoleUrl: str
    """The job's page: Baidu's console, or the emulator's."""
    image: str
    """The container image."""
    replicas: int
    """Number of replicas."""
    resources: list[dict[str, str | int | float]]
    """Resources per replica, ``[{"name": ..., "quantity": ...}]``."""
    jobFramework: str
    """``PyTorchJob`` or ``MPIJob``."""
    priority: str
    """``high``, ``normal`` or ``low``."""
    status: str
    """The job's status, e.g. ``Succeeded``, ``Failed`` or, for a task that did not wait,
    ``Created``."""
    reason: str | None = None
    """Why the job ended badly, as AIHC said (pod reason or latest Warning event)."""
    summary: dict[str, Any] | None = None
    """The ``job_summary`` the task pushed (times, queue and run seconds, replicas,
    accelerators, accelerator-seconds, restarts, metrics), masked; ``None`` when the task
    did not wait for the job."""
