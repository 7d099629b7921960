"""What an AIHC task reports to OpenLineage when it ends.

The OpenLineage provider calls ``get_openlineage_facets_on_complete`` (also for a failed
task) only when it is installed and enabled; the operator and sensor import this module
from there, so DAG parsing never loads OpenLineage.  One ``GetJob`` gives what AIHC really
ran (an adopted job included) and its status; a failed job's reason comes from the same
lookup the wait uses (pod reasons, else the latest Warning event).

Reported:

* inputs: one dataset per datasource of the job (:mod:`.naming`); the create operator only;
* outputs: the task's ``outlets``, converted as Airflow converts them (which it stops doing
  once an operator reports lineage of its own);
* run facets: ``aihcJob`` (:class:`.facets.AIHCJobRunFacet`) and the standard
  ``externalQuery`` (the job id, source ``aihc``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from airflow.providers.common.compat.openlineage.facet import (
    Dataset,
    ExternalQueryRunFacet,
    RunFacet,
)
from airflow.providers.openlineage.extractors import OperatorLineage
from airflow.providers.openlineage.extractors.manager import ExtractorManager

from airflow_provider_aihc.exceptions import AIHCError
from airflow_provider_aihc.lineage.facets import FACET_KEY, AIHCJobRunFacet
from airflow_provider_aihc.lineage.naming import datasource_location
from airflow_provider_aihc.links.aihc import job_url
from airflow_provider_aihc.models.status import is_failed

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobInfo
    from airflow_provider_aihc.watch.flow import Log

#: ``source`` of the standard ``externalQuery`` run facet.
EXTERNAL_SOURCE = "aihc"
EXTERNAL_FACET_KEY = "externalQuery"
#: What :func:`job_lineage` returns.
JobLineage: TypeAlias = OperatorLineage[Dataset, RunFacet]


def job_lineage(
    hook: AIHCHook,
    job_id: str | None,
    resource_pool_id: str | None,
    outlets: Iterable[Any],
    *,
    with_inputs: bool,
    log: Log,
    summary: Mapping[str, Any] | None = None,
    queue_id: str | None = None,
) -> JobLineage:
    """The lineage of a task that created or watched ``job_id``.

    :param hook: the task's AIHC hook.
    :param job_id: the job; ``None`` when the task ended before it had one (outlets only).
    :param resource_pool_id: its pool; ``None`` for the connection's.
    :param outlets: the task's declared outlets.
    :param with_inputs: report the job's datasources as inputs (the task that created it).
    :param log: where a failed lookup is reported (lineage never fails a task).
    :param summary: the ``job_summary`` the task pushed (masked), if it waited.
    :param queue_id: the job's queue, which a managed pool's ``GetJob`` requires (without
        it, the read is refused and the lineage keeps only the job's id).
    """
    outputs = outlet_datasets(outlets)
    if not job_id:
        return OperatorLineage(outputs=outputs)
    external: dict[str, RunFacet] = {
        EXTERNAL_FACET_KEY: ExternalQueryRunFacet(externalQueryId=job_id, source=EXTERNAL_SOURCE)
    }
    try:
        job = hook.get_job(job_id, resource_pool_id, queue_id=queue_id)
    except AIHCError as err:
        log.warning("OpenLineage: could not read AIHC job %s (%s): its id only", job_id, err)
        return OperatorLineage(outputs=outputs, run_facets=external)
    facet = job_facet(job, job_url(hook.config.base_url, job.job_id, job.resource_pool_id))
    facet.summary = dict(summary) if summary else None
    return OperatorLineage(
        inputs=job_inputs(job) if with_inputs else [],
        outputs=outputs,
        run_facets={FACET_KEY: _with_reason(hook, job, facet), **external},
    )


def job_facet(job: JobInfo, console_url: str) -> AIHCJobRunFacet:
    """The ``aihcJob`` facet of ``job`` (no reason yet).

    :param job: the job as ``GetJob`` returned it.
    :param console_url: its page.
    """
    return AIHCJobRunFacet(
        jobId=job.job_id,
        jobName=job.name,
        resourcePoolId=job.resource_pool_id,
        queue=job.queue,
        consoleUrl=console_url,
        image=job.image,
        replicas=job.replicas,
        resources=[{"name": r.name, "quantity": r.quantity} for r in job.resources],
        jobFramework=job.job_framework,
        priority=job.priority,
        status=job.status,
    )


def job_inputs(job: JobInfo) -> list[Dataset]:
    """One dataset per datasource of ``job``, in order, without repeats or scratch space.

    :param job: the job as ``GetJob`` returned it.
    """
    seen: dict[tuple[str, str], Dataset] = {}
    for source in job.datasources:
        found = datasource_location(
            source.type, source.name, source.source_path, source.options, job.resource_pool_id
        )
        if found is not None:
            key = (found.namespace, found.name)
            seen.setdefault(key, Dataset(namespace=found.namespace, name=found.name))
    return list(seen.values())


def outlet_datasets(outlets: Iterable[Any]) -> list[Dataset]:
    """The task's outlets as OpenLineage datasets, converted as Airflow converts them (an
    asset whose scheme has no registered converter is left out, as Airflow leaves it).

    :param outlets: the task's declared outlets.
    """
    converted = (ExtractorManager.convert_to_ol_dataset(outlet) for outlet in outlets)
    return [dataset for dataset in converted if dataset is not None]


def _with_reason(hook: AIHCHook, job: JobInfo, facet: AIHCJobRunFacet) -> AIHCJobRunFacet:
    """``facet`` with the reason of a failed job, found as the wait finds it."""
    if is_failed(job.status):
        from airflow_provider_aihc.watch import JobEvent

        facet.reason = JobEvent.from_job(hook, job).reason
    return facet
