"""Exactly one job per try series: adopt what an earlier try of it created, else create once.

AIHC documents no idempotency token for training jobs, so the job's labels are the source of
truth.  Before creating, and after any create whose outcome is unknown (no answer, 5xx, an
unreadable answer), list the pool's jobs and look for the ones this task instance's current
try series created (a clear starts a new series: the jobs of earlier series are history).
The list asks for names starting with what every candidate's name starts with (the
default name's stable prefix, or the very name after an unknown outcome): on
``api_version`` v2 the server then answers with those jobs only, not the pool's; the
labels still decide, never the name alone.
A live or succeeded one is adopted; only when every job of the series ended badly is a
fresh one created, under a new name.  A job of an earlier series that still runs (the task
was cleared while it ran, and nothing stopped it: its triggerer died or was down when the
clear came) is stopped first, when ``stop_earlier_series`` (the operator's
``cancel_on_kill``): a clear means "train again", never "train twice".  A create is never
re-sent while its first attempt might have landed and cannot be found; the deterministic
name is a second guard, since AIHC refuses a name in use.

Labels can be copied, so a job is this series' only when AIHC says the connection's own
user created it (the platform's ``aijob.cce.baidubce.com/ai-user-id`` label, checked when
the connection's extra ``user_id`` says who that is), its ``airflow-ti-tag`` label, an
HMAC keyed by the connection's tag key over its name and every identity label (the try and
series among them), verifies (``_identity.job_tag``), its ``airflow-deployment`` label is
this Airflow deployment's, and (for the derived default name) its name is one the series
derives.
A job that carries this task instance's labels but fails a check is never adopted, and the
log says why.
A name held by a job this connection did not create (squatted, or made by hand) is
replaced by a fresh one only the secret's holder can derive (``TaskIdentity.fresh_name``).

What no retry can change fails the task at once, without retries
(:class:`~airflow_provider_aihc.exceptions.AIHCRefusedError`): a 400, a refused
credential (401/403), and a ``409`` for a name that a job of another task instance, or of
an earlier series of this one, holds.  A create refused with a 400 about a resource reads
the job's queue once, to say which accelerator it does not offer (``_resource_names.py``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.exceptions import (
    AIHCApiError,
    AIHCAuthError,
    AIHCError,
    AIHCRefusedError,
    AIHCResponseError,
    AIHCServerError,
    AIHCThrottledError,
    AIHCTransportError,
)
from airflow_provider_aihc.operators._identity import (
    DAG_LABEL,
    DEPLOYMENT_LABEL,
    RUN_LABEL,
    TAG_LABEL,
    TASK_LABEL,
    TI_LABEL,
    TRY_LABEL,
    TaskIdentity,
    tag_key,
    tag_verifies,
)

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job import JobSummary
    from airflow_provider_aihc.models.request import CreateJobRequest

#: Create attempts, counting those whose outcome was unknown and whose job was not found.
MAX_CREATE_ATTEMPTS = 5
#: Lookups after an unknown outcome before concluding the create did not land.
LOOKUPS_AFTER_UNKNOWN = 3
LOOKUP_DELAY_SECONDS = 1.0
OUTCOME_UNKNOWN = (AIHCTransportError, AIHCServerError, AIHCResponseError)
#: AIHC's answer to a create whose name a job in the pool already has.
NAME_TAKEN_STATUS = 409
BAD_REQUEST_STATUS = 400
#: The label AIHC sets to the id of the user who created a job (the
#: ``aijob.cce.baidubce.com/*`` labels of Baidu's v1 job examples, cloud.baidu.com/doc/AIHC; the
#: emulator derives it from the access key, as the platform does from the key's user).
CREATOR_LABEL = "aijob.cce.baidubce.com/ai-user-id"


@dataclass(frozen=True, slots=True)
class SubmittedJob:
    """The job a task instance runs: created now, or adopted from an earlier try."""

    job_id: str
    job_name: str
    adopted: bool
    #: The ids of the series' earlier jobs, which ended badly (a retry made this one).
    earlier: tuple[str, ...] = ()


class JobSubmitter:
    """Create a task instance's job at most once.

    :param hook: the AIHC hook.
    :param resource_pool_id: the pool the job runs in.
    :param identity: the task instance.
    :param log: where decisions (adopt, create, retry) are logged.
    :param stop_earlier_series: stop the jobs of earlier try series that still run.
    :param watched: the task waits for the job and stops it when killed: its label
        ``airflow-watched`` lets the orphan sweep stop the job once the task has ended.
    :param sleep: the pause between attempts (a seam for tests).
    """

    def __init__(
        self,
        hook: AIHCHook,
        resource_pool_id: str,
        identity: TaskIdentity,
        log: Any,
        *,
        stop_earlier_series: bool = False,
        watched: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.hook = hook
        self.pool = resource_pool_id
        self.identity = identity
        self.log = log
        self.stop_earlier_series = stop_earlier_series
        self.watched = watched
        self.sleep = sleep
        self.key = tag_key(hook.config)

    def submit(self, request: CreateJobRequest) -> SubmittedJob:
        """Adopt the series' live or succeeded job, or create the next one.

        :raises AIHCRefusedError: AIHC refused for a reason no retry changes.
        """
        from airflow_provider_aihc.operators._resource_names import refusal

        try:
            return self._submit(request)
        except AIHCApiError as err:
            if isinstance(err, AIHCAuthError):
                raise AIHCRefusedError(err) from err
            if err.status == BAD_REQUEST_STATUS:
                # A refused resource name is said with the names the queue offers: one
                # read, on this failure path only (operators/_resource_names.py).
                raise refusal(self.hook, self.pool, request, err, self.log) from err
            raise

    def _submit(self, request: CreateJobRequest) -> SubmittedJob:
        jobs = self._trusted_jobs(request.queue, self._series_keyword(request.name))
        if self.stop_earlier_series:
            self._stop_earlier_series(jobs, request.queue)
        own = self._named_by_series(self._in_series(jobs), request.name)
        return replace(self._adopt_or_create(request, own), earlier=tuple(
            job.job_id for job in own if job.is_terminal and not job.is_successful
        ))  # fmt: skip

    def _adopt_or_create(self, request: CreateJobRequest, own: list[JobSummary]) -> SubmittedJob:
        for job in own:
            if not job.is_terminal or job.is_successful:
                self.log.info(
                    "Adopting AIHC job %s (%s, status %s) created by an earlier try since "
                    "the task last started afresh",
                    job.job_id,
                    job.name,
                    job.status,
                )
                return SubmittedJob(job.job_id, job.name, adopted=True)
        if own:
            self.log.info(
                "Earlier jobs of this try series ended %s; creating a fresh one",
                ", ".join(f"{job.job_id}={job.status}" for job in own),
            )
        return self._create(self._stamp(request, generation=len(own)), generation=len(own))

    def own_jobs(self, queue: str | None, *, name_keyword: str | None = None) -> list[JobSummary]:
        """The jobs of this task instance's current try series, newest first (none predate
        its run), told by their identity labels.

        :param name_keyword: what the name of every job sought starts with: the server
            (``api_version`` v2) then lists only jobs so named, not the whole pool.
        """
        return self._in_series(self._trusted_jobs(queue, name_keyword))

    def _trusted_jobs(self, queue: str | None, name_keyword: str | None) -> list[JobSummary]:
        """The jobs of this task instance, of any series, that this connection created."""
        jobs = self.hook.list_job_summaries(
            self.pool,
            queue=queue or None,
            created_after=self.identity.created_after,
            name_keyword=name_keyword,
        )
        mine = [job for job in jobs if self.identity.created_by_this_instance(job.labels_dict)]
        return [job for job in mine if self._trusted(job)]

    def _in_series(self, jobs: list[JobSummary]) -> list[JobSummary]:
        own = [job for job in jobs if self.identity.created_in_series(job.labels_dict)]
        return sorted(
            own, key=lambda job: job.created_at.timestamp() if job.created_at else 0.0, reverse=True
        )

    def _named_by_series(self, jobs: list[JobSummary], base: str) -> list[JobSummary]:
        """The jobs whose name the series derives from ``base``, when ``base`` is the
        derived default name (S4-3: the series' job under another name is no job of ours).
        A given name may be rendered differently by each try (``ti.try_number``): then the
        tag alone, which covers the try and its series, decides."""
        if base != self.identity.default_name():
            return jobs
        names = self.identity.series_names(base, self.key)
        for job in jobs:
            if job.name not in names:
                self.log.warning(
                    "Not adopting AIHC job %s (%s): its labels say this try series created "
                    "it, but its name is none the series derives from %r",
                    job.job_id,
                    job.name,
                    base,
                )
        return [job for job in jobs if job.name in names]

    def _stop_earlier_series(self, jobs: list[JobSummary], queue: str | None) -> None:
        """Stop what an earlier series left running (a failed stop is logged, not raised:
        the new series trains either way, and the log says which job to stop by hand)."""
        for job in jobs:
            if job.is_terminal or self.identity.created_in_series(job.labels_dict):
                continue
            try:
                self.hook.stop_job(job.job_id, self.pool, queue_id=queue or None)
            except AIHCError as err:
                self.log.error(
                    "Could not stop AIHC job %s (%s) of an earlier try series: %s; stop it by hand",
                    job.job_id,
                    job.name,
                    err,
                )
            else:
                self.log.warning(
                    "Stopped AIHC job %s (%s, %s): an earlier try series of this task "
                    "created it, and it still ran when the task was cleared",
                    job.job_id,
                    job.name,
                    job.status,
                )

    def _distrust(self, job: JobSummary) -> str | None:
        """Why a job that claims to be this connection's is not, or ``None``."""
        labels = job.labels_dict
        user_id = self.hook.config.user_id
        if user_id and labels.get(CREATOR_LABEL) != user_id:
            creator = labels.get(CREATOR_LABEL) or "an unknown user"
            return f"AIHC says {creator} created it, not this connection's user_id {user_id}"
        if TAG_LABEL not in labels:
            return "it has no airflow-ti-tag label (not created with this connection's secret)"
        if not tag_verifies(self.key, labels, job.name):
            return (
                "its airflow-ti-tag label is not the one the connection's tag key computes "
                "(created by someone else with copied labels, by an earlier release, or "
                "before the job_tag_key or, without one, the secret access key changed)"
            )
        if labels.get(DEPLOYMENT_LABEL, "") != self.identity.deployment:
            return (
                f"Airflow deployment {labels.get(DEPLOYMENT_LABEL) or '(none)'!r} created it, "
                f"not this one ({self.identity.deployment or '(none)'!r}: [aihc] deployment_id)"
            )
        return None

    def _trusted(self, job: JobSummary) -> bool:
        """Whether a job is the connection's own (logging why not, when it is not)."""
        reason = self._distrust(job)
        if reason is not None and TAG_LABEL in job.labels_dict and not job.is_terminal:
            # Probably the task's own job under a changed key (S4-7): it runs on unwatched.
            self.log.error(
                "AIHC job %s (%s) still runs and carries this task instance's labels, but is "
                "not adopted: %s. If it is this task's own, stop it by hand "
                "(AIHCStopJobOperator or the console)",
                job.job_id,
                job.name,
                reason,
            )
        elif reason is not None:
            self.log.warning(
                "Not adopting AIHC job %s (%s), which carries this task instance's labels: %s",
                job.job_id,
                job.name,
                reason,
            )
        return reason is None

    def _series_keyword(self, name: str) -> str | None:
        """What the name of every job the series created starts with, when every try
        derives the same name: the task instance's default name.  A given name may be
        rendered differently by each try (e.g. from ``ti.try_number``), so an earlier
        try's job could be named otherwise: then every job is read (``None``)."""
        if name != self.identity.default_name():
            return None
        return self.identity.name_prefix(name) or None

    def _stamp(self, request: CreateJobRequest, generation: int) -> CreateJobRequest:
        return self._named(request, self.identity.job_name(request.name, generation))

    def _named(self, request: CreateJobRequest, name: str) -> CreateJobRequest:
        """``request`` under ``name``, with the identity labels and the tag for that name."""
        from airflow_provider_aihc.models.request import Label

        identity_labels = self.identity.tagged(self.key, name, watched=self.watched)
        labels = [label for label in request.labels or [] if label.key not in identity_labels]
        labels += [Label(key=key, value=value) for key, value in identity_labels.items()]
        return request.model_copy(update={"name": name, "labels": labels})

    def _create(
        self, request: CreateJobRequest, generation: int, *, fresh: bool = False
    ) -> SubmittedJob:
        token = self.identity.client_token(generation)
        if fresh:  # another job than the one the squatted name's token meant
            token = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{token}/fresh"))
        uncertain = False
        for attempt in range(MAX_CREATE_ATTEMPTS):
            try:
                result = self.hook.create_job(request, self.pool, client_token=token)
            except AIHCThrottledError as err:
                self._pause(attempt, err, "AIHC throttled the create; it was not processed")
                continue
            except OUTCOME_UNKNOWN as err:
                uncertain = True
                self.log.warning("The create's outcome is unknown (%s); looking for the job", err)
                if found := self._find_created(request):
                    return found
                self._pause(attempt, err, "The job was not created")
                continue
            except AIHCApiError as err:
                if err.status == NAME_TAKEN_STATUS:
                    return self._name_taken(request, err, generation, fresh=fresh)
                if uncertain and (found := self._find_created(request)):
                    return found
                raise
            self.log.info("Created AIHC job %s (%s)", result.job_id, request.name)
            return SubmittedJob(result.job_id, result.job_name or request.name, adopted=False)
        raise AIHCError(
            f"AIHC did not accept the create of {request.name!r} after "
            f"{MAX_CREATE_ATTEMPTS} attempts; no job of this task instance exists"
        )

    def _find_created(self, request: CreateJobRequest) -> SubmittedJob | None:
        """After an unknown outcome: the job, if the create landed after all."""
        for lookup in range(LOOKUPS_AFTER_UNKNOWN):
            try:
                jobs = self.own_jobs(request.queue, name_keyword=request.name)
            except (*OUTCOME_UNKNOWN, AIHCThrottledError) as err:
                # No answer, 5xx, 429 or a garbled list tells nothing: look again.
                self.log.warning("Looking for the job failed (%s)", err)
            else:
                for job in jobs:
                    if job.name == request.name:
                        self.log.info("The create had landed: adopting AIHC job %s", job.job_id)
                        return SubmittedJob(job.job_id, job.name, adopted=True)
                return None
            if lookup + 1 < LOOKUPS_AFTER_UNKNOWN:
                self.sleep(LOOKUP_DELAY_SECONDS * (lookup + 1))
        raise AIHCError(
            f"Could not tell whether job {request.name!r} was created (AIHC unreachable); "
            "not creating another. A retry of this task will look for it again."
        )

    def _name_taken(
        self, request: CreateJobRequest, error: AIHCApiError, generation: int, *, fresh: bool
    ) -> SubmittedJob:
        """After a 409: adopt the job holding the name if this series created it (an earlier
        attempt landed unseen); create under a fresh name if this connection did not create
        it (squatted); else fail for good, naming who holds it."""
        # A name is held pool-wide; a managed pool lists one queue at a time (its id).
        queue = request.queue if self.hook.is_managed_pool(self.pool) else None
        jobs = self.hook.list_job_summaries(self.pool, queue=queue, name_keyword=request.name)
        holder = next((job for job in jobs if job.name == request.name), None)
        if holder is None:  # gone since: a retry may create it
            raise error
        distrust = self._distrust(holder)
        if distrust is not None and not fresh:
            name = self.identity.fresh_name(request.name, self.key)
            self.log.warning(
                "Name %r is held by AIHC job %s, which this connection did not create (%s); "
                "creating the job as %r instead",
                request.name,
                holder.job_id,
                distrust,
                name,
            )
            return self._create(self._named(request, name), generation, fresh=True)
        if distrust is None and self.identity.created_in_series(holder.labels_dict):
            self.log.info("The create had landed: adopting AIHC job %s", holder.job_id)
            return SubmittedJob(holder.job_id, holder.name, adopted=True)
        raise AIHCRefusedError(
            error,
            f"name {request.name!r} is held by AIHC job {holder.job_id} ({holder.status}) of "
            f"{self._owner(holder.labels_dict)}; give each run its own name: leave name unset "
            "(one is derived from the task instance) or template it with run_id",
        ) from error

    def _owner(self, labels: dict[str, str]) -> str:
        """Who created a job, from its identity labels, for an error message."""
        if labels.get(TI_LABEL) == self.identity.key:
            return f"try {labels.get(TRY_LABEL, '?')} of this task instance, before it was cleared"
        if TI_LABEL not in labels:
            return "no Airflow task"
        where = "/".join(labels.get(key, "?") for key in (DAG_LABEL, RUN_LABEL, TASK_LABEL))
        return f"another task instance ({where})"

    def _pause(self, attempt: int, error: AIHCError, what: str) -> None:
        from airflow_provider_aihc.hooks._wire import retry_delay

        delay = retry_delay(attempt, error)
        self.log.warning("%s; trying again in %.1f s", what, delay)
        self.sleep(delay)
