"""Operators that create, stop and delete AIHC training jobs.

AIHC actions used: CreateJob, ListJobs (to adopt a job an earlier try created), GetJob,
StopJob, DeleteJob, and for waiting GetJobEvents and GetPodLogs.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from airflow_provider_aihc.job_parameters import (
    JOB_FIELDS,
    JOB_PARAMETERS,
    SEALED_PARAMETERS,
)
from airflow_provider_aihc.links.aihc import AIHCJobLink
from airflow_provider_aihc.operators._sealed import SealedAttribute, seal
from airflow_provider_aihc.version_compat import BaseOperator, conf

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.lineage.job import JobLineage
    from airflow_provider_aihc.models.job import JobInfo
    from airflow_provider_aihc.models.request import CreateJobRequest
    from airflow_provider_aihc.operators._job_actions import (
        AIHCDeleteJobOperator,
        AIHCStopJobOperator,
    )
    from airflow_provider_aihc.version_compat import Context
    from airflow_provider_aihc.watch import JobEvent

__all__ = ["AIHCCreateJobOperator", "AIHCDeleteJobOperator", "AIHCStopJobOperator"]

DEFER_METHOD_NAME = "execute_complete"
XCOM_JOB_ID = "job_id"
XCOM_JOB_NAME = "job_name"
XCOM_RESOURCE_POOL_ID = "resource_pool_id"
#: The job's queue as AIHC addresses it (a managed pool's queue id, else the queue name).
XCOM_JOB_QUEUE = "job_queue"
#: The ids of the try series' earlier jobs (ended badly), pushed when a retry made a fresh
#: job: the job summary covers them too.
XCOM_EARLIER_JOBS = "earlier_job_ids"
#: How long ``on_kill`` (in Airflow's SIGTERM handler) waits for its stop to be answered.
ON_KILL_WAIT_SECONDS = 30.0
#: The most the wait ends before ``execution_timeout``, leaving time to stop the job in
#: order.
EXECUTION_TIMEOUT_MARGIN_SECONDS = 30.0


def ahead_of_execution_timeout(seconds: float) -> float:
    """How long to wait under an ``execution_timeout`` of ``seconds``: a tenth less (at
    least 2 s, at most :data:`EXECUTION_TIMEOUT_MARGIN_SECONDS`, never over half of it).

    Airflow enforces ``execution_timeout`` with ``SIGALRM``, whose handler raises wherever
    the main thread is: inside a request to AIHC, a log write or one of Airflow's own
    calls (an XCom push, a state update).  Ending the wait first stops the job (when
    ``cancel_on_kill``) and fails the task with the job's timeout, in order; the alarm is
    then only a backstop (and ``on_kill`` its stop).
    """
    margin = min(EXECUTION_TIMEOUT_MARGIN_SECONDS, max(2.0, seconds / 10), seconds / 2)
    return seconds - margin


# The docstring's entries from ``name`` to ``advanced_settings`` are the rows' own,
# ``param_docs(JOB_PARAMETERS, operator=True)``, written out rather than made at every DAG
# parse (~0.3 ms); tests/unit/test_parse_docs.py holds them equal to the rows.
class AIHCCreateJobOperator(BaseOperator):
    """Create an AIHC training job, once per task instance, and optionally wait for it.

    Named parameters fill and override ``body``; ``None`` means "not given".  Every job
    parameter is templated (the job parameters are the rows of
    :data:`~airflow_provider_aihc.job_parameters.JOB_FIELDS`).  The job id is the return
    value (XCom ``return_value``); the job's id, name, pool and queue are also pushed as
    ``job_id``, ``job_name``, ``resource_pool_id``, ``job_queue``.  Every call after the
    create names the job's queue (on a managed pool, ``aihc-serverless`` or ``aihc-bhcmp``,
    ``job_queue`` must be the id of one of its queues, ``aihcq-…``: checked before any
    request).

    A retry adopts the job an earlier try of the same *try series* created while it is
    alive or has succeeded (found by the task instance's labels), and creates a fresh one,
    under a new name, only when that job ended badly.  A clear starts a new series: the
    cleared task creates a new job (named ``<name>-s<first try>``) and trains again.
    Input that cannot work (validation, a template naming a missing variable, a missing
    connection) and AIHC refusals no retry changes (400, 401/403, a ``409`` for a name
    another task's job holds) fail the task without its retries.

    .. seealso:: https://cloud.baidu.com/doc/AIHC/s/pmb0c0o9q (创建训练任务)

    :param resource_pool_id: the pool; defaults to the connection's ``resource_pool_id``
        (templated).
    :param name: job name; lowercase letters, digits and ``-``, at most 50 (templated).
        Default: ``<task id>-<hash of the task instance>``, unique per task instance.  A
        given name must be unique per run too (e.g. derived from ``run_id``): ``ds`` is
        missing from runs without a logical date (manual, API and asset-triggered runs on
        Airflow 3).
    :param image: container image (templated).
    :param command: command every replica runs (templated).
    :param job_queue: AIHC queue, AIHC's ``queue``; ``default`` unless ``body`` sets it
        (templated).  Not ``queue``: that is the Celery queue of the task itself.
    :param replicas: number of replicas, >= 1; 1 unless ``body`` sets it (templated).
    :param job_resources: resources per replica, AIHC's ``resources``, e.g.
        ``{"baidu.com/a800_80g_cgpu": 8}`` or ``[{"name", "quantity"}]`` (templated).  Not
        ``resources``: that is Airflow's own task resources.
    :param envs: environment, ``{"NAME": "value"}`` or ``[{"name", "value"}]``; number and
        boolean values are sent as strings (templated).
    :param priority: ``high``, ``normal`` or ``low``; ``normal`` unless ``body`` sets it
        (templated).
    :param job_framework: ``PyTorchJob`` or ``MPIJob``; with the connection's
        ``api_version`` v2 also ``TFJob`` or ``RayJob``; ``PyTorchJob`` unless ``body`` sets
        it (templated).
    :param enable_rdma: use RDMA (templated).
    :param datasources: volumes, e.g. ``[{"type": "pfs", "name": "pfs-x", "mountPath":
        "/mnt/cluster"}]`` (camelCase or snake_case keys) (templated).
    :param labels: job labels, ``{"team": "nlp"}`` or ``[{"key", "value"}]`` (templated).
        The task instance's identity labels (``airflow-*``) are added.
    :param fault_tolerance: restart on faults (templated).
    :param fault_tolerance_config: advanced fault tolerance; v2 takes ``faultToleranceArgs``
        (in ``body``) instead (templated).
    :param enable_bccl: inject BCCL; needs >= 2 replicas, RDMA, 8 GPUs each (templated).
    :param image_config: private registry credentials ``{"username", "password"}``
        (templated).  The password is masked like the secret key.
    :param tensorboard_config: ``{"enableTensorboard", "logPath"}`` (templated).
    :param alert_config: an alert rule created with the job (templated).
    :param retention_period: how long AIHC keeps the ended job, e.g. ``1d`` (templated).
    :param max_running_time: the longest the job may run before AIHC stops it, ``<n>m``,
        ``<n>h`` or ``<n>d`` (e.g. ``12h``); v1 only (templated).  AIHC's
        ``runningTimeoutStopTimeUnit`` (bce-sdk-go ``aiJob.go:182``): AIHC stops the job
        itself, whether or not a task still waits for it.
    :param code_source: code mounted into the job, e.g. ``{"filePath": ..., "mountPath":
        "/workspace"}`` or a BOS object (``bosBucket``, ``bosObjectName``, ``bosEndpoint``,
        ``bosTemporaryToken``); v1 only (templated).  The BOS temporary token is masked like
        the secret key.
    :param log_collection_file_patterns: files whose lines AIHC collects as the job's log,
        e.g. ``["/workspace/logs/*.log"]``; v1 only (templated).
    :param required_node_affinity: nodes the job must run on (a list of node names); v1 only
        (templated).
    :param preferred_node_affinity: nodes the job prefers to run on (a list of node names);
        v1 only (templated).
    :param advanced_settings: a RayJob's ``{"runtimeEnv": "<Ray runtime env JSON>",
        "SubmitterBackoffLimit": n}``; api_version v2 only (templated).
    :param body: a whole create request in wire form: a dict, a JSON string, an XCom value
        or the path of a ``.json`` file (rendered with Jinja) (templated).
    :param wait_for_completion: wait until the job ends; fail if it does not succeed.
    :param deferrable: wait in the triggerer rather than in a worker slot; only with
        ``wait_for_completion`` (a warning says so otherwise).  Default: ``[operators]
        default_deferrable``.
    :param poll_interval: seconds between status checks while waiting.
    :param timeout: seconds to wait at most; with ``execution_timeout``, the earlier wins
        (the wait ends a little before ``execution_timeout``, to stop the job in order).
        At the deadline the job is stopped and the task fails.
    :param cancel_on_kill: stop the job when the task is killed, times out or is marked
        failed, and, when a cleared task starts again, the job its earlier run left
        running (a clear means "train again", not "train twice"); ``False`` keeps them
        running (e.g. for a graceful worker drain).
    :param stream_logs: copy the job's new log lines into the task log while waiting.
    :param result_marker: when waiting, the last line of the first replica's log that
        contains it, followed by one JSON value, is the job's result (XCom ``result``);
        ``None`` reads no result.  See docs/results.md.
    :param metrics: ``{name: regex with one group}``; when waiting, the last match of each
        in the first replica's log (a float where it parses) goes to XCom ``metrics``.
        With the job summary (XCom ``job_summary``), read however the task waits.
    :param queue_timeout: seconds the job may wait for resources (``Created``/``Scheduled``)
        before it is stopped and the task fails; separate from ``timeout``.
    :param aihc_conn_id: the ``aihc`` connection.
    """

    template_fields: Sequence[str] = (*JOB_PARAMETERS, "resource_pool_id", "body")
    template_fields_renderers: ClassVar[dict[str, str]] = {
        "body": "json",
        **{row.name: row.renderer for row in JOB_FIELDS if row.templated and row.renderer},
    }
    operator_extra_links = (AIHCJobLink(),)
    ui_color = "#2468f2"
    #: The command is made when the task runs (``@task.aihc``), not given to ``__init__``.
    command_made_by_task: ClassVar[bool] = False
    # Parameters that may carry secrets: plain attributes kept out of the instance
    # ``__dict__``, which OpenLineage's full task info lists (operators/_sealed.py says why);
    # the job parameters' are added below, from their rows.
    body = SealedAttribute()

    def __init__(
        self,
        *,
        name: str | None = None,
        image: str | None = None,
        command: str | None = None,
        resource_pool_id: str | None = None,
        job_queue: str | None = None,
        replicas: int | str | None = None,
        job_resources: Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | None = None,
        envs: Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | None = None,
        priority: str | None = None,
        job_framework: str | None = None,
        enable_rdma: bool | str | None = None,
        datasources: Sequence[Mapping[str, Any]] | str | None = None,
        labels: Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | None = None,
        fault_tolerance: bool | str | None = None,
        fault_tolerance_config: Mapping[str, Any] | str | None = None,
        enable_bccl: bool | str | None = None,
        image_config: Mapping[str, Any] | str | None = None,
        tensorboard_config: Mapping[str, Any] | str | None = None,
        alert_config: Mapping[str, Any] | str | None = None,
        retention_period: str | None = None,
        max_running_time: str | None = None,
        code_source: Mapping[str, Any] | str | None = None,
        log_collection_file_patterns: Sequence[str] | str | None = None,
        required_node_affinity: Sequence[str] | str | None = None,
        preferred_node_affinity: Sequence[str] | str | None = None,
        advanced_settings: Mapping[str, Any] | str | None = None,
        body: Mapping[str, Any] | str | None = None,
        wait_for_completion: bool = False,
        deferrable: bool | None = None,
        poll_interval: float = 30,
        timeout: float | None = None,
        cancel_on_kill: bool = True,
        stream_logs: bool = True,
        result_marker: str | None = "AIHC_RESULT ",
        metrics: Mapping[str, str] | None = None,
        queue_timeout: float | None = None,
        aihc_conn_id: str = "aihc_default",
        **kwargs: Any,
    ) -> None:
        from airflow_provider_aihc.operators._checks import literal_problems
        from airflow_provider_aihc.outputs import OutputSpec

        given = locals()
        super().__init__(**kwargs)
        # Literal mistakes are refused here, at DAG parse, as the run would refuse them.
        problems = literal_problems(given, command_made_by_task=self.command_made_by_task)
        self.outputs, output_problems = OutputSpec.checked(result_marker, metrics)
        if problems or output_problems:
            from airflow_provider_aihc.exceptions import AIHCValidationError

            raise AIHCValidationError([*problems, *output_problems], task_id=self.task_id)
        self.result_marker = result_marker
        self.metrics = dict(metrics or {})
        self.queue_timeout = queue_timeout
        self.resource_pool_id = resource_pool_id
        for parameter in JOB_PARAMETERS:
            setattr(self, parameter, given[parameter])
        self.body = body
        self.wait_for_completion = wait_for_completion
        if deferrable and not wait_for_completion:
            warnings.warn(
                f"Task {self.task_id!r}: deferrable=True does nothing without "
                "wait_for_completion=True (the task does not wait for the job)",
                UserWarning,
                stacklevel=2,
            )
        self.deferrable = (
            conf.getboolean("operators", "default_deferrable", fallback=False)
            if deferrable is None
            else deferrable
        )
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.cancel_on_kill = cancel_on_kill
        self.stream_logs = stream_logs
        self.aihc_conn_id = aihc_conn_id
        self.job_id: str | None = None
        self._job_pool: str | None = None
        self._job_queue: str | None = None
        self._job_summary: dict[str, Any] | None = None
        self._earlier_jobs: tuple[str, ...] | None = None

    @cached_property
    def hook(self) -> AIHCHook:
        """The AIHC hook of this task."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        return AIHCHook(aihc_conn_id=self.aihc_conn_id)

    def _do_render_template_fields(
        self,
        parent: Any,
        template_fields: Any,
        context: Context,
        jinja_env: Any,
        seen_oids: set[int],
    ) -> None:
        """Render as usual; ``body`` alone may name a ``.json`` file to load and render; then
        mask the job's secrets (operators/_masking.py).  Overridden here, not in
        ``render_template_fields``: a mapped task calls this method directly.

        ``template_ext`` would treat *every* templated string ending in ``.json`` as a file
        (a ``command`` such as ``train.py --config cfg.json`` included), so it stays empty.

        :raises AIHCValidationError: naming each field whose template cannot render (an
            undefined variable, a missing ``body`` file, bad syntax): no retry renders it.
        """
        render = super()._do_render_template_fields
        if parent is not self:  # a nested object's fields: Airflow's own rendering
            return render(parent, template_fields, context, jinja_env, seen_oids)
        from airflow_provider_aihc.operators._masking import render_job_fields

        render_job_fields(self, render, template_fields, context, jinja_env, seen_oids)
        return None

    def build_request(
        self,
        default_name: str | None = None,
        *,
        values: Mapping[str, Any] | None = None,
        ask_aihc: bool = True,
    ) -> tuple[CreateJobRequest, str]:
        """Validate the rendered parameters into a create request and its pool.

        :param default_name: the job name when neither ``name`` nor ``body`` gives one.
        :param values: the templated fields' values to check, by name (default: this
            task's, rendered by Airflow).
        :param ask_aihc: on ``api_version`` v2, ask AIHC whether a pool is managed (one
            read, never a create); ``False`` goes by the pool id alone (:meth:`validate`).

        :raises AIHCValidationError: listing every bad field (job fields, ``poll_interval``
            and ``timeout`` when waiting, an unusable or undefined ``aihc_conn_id``);
            nothing was sent.
        """
        from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCValidationError
        from airflow_provider_aihc.job_parameters import MANAGED_POOL_IDS
        from airflow_provider_aihc.models.build import build_create_request
        from airflow_provider_aihc.operators._checks import (
            connection_problems,
            managed_queue_problems,
            queue_timeout_problems,
            wait_problems,
        )

        given = {name: getattr(self, name) for name in self.template_fields}
        given.update(values or {})
        errors: list[tuple[str, str]] = []
        request = None
        try:
            request = build_create_request(
                given.get("body"), default_name=default_name, **self._job_parameters(given)
            )
        except AIHCValidationError as err:
            errors.extend(err.errors)
        if self.wait_for_completion:
            # Checked now, not when the wait starts: by then the job exists and would be
            # left running by the task's failure.
            errors.extend(wait_problems(self.poll_interval, self.timeout))
            errors.extend(queue_timeout_problems(self.queue_timeout))
        connection = connection_problems(self.hook)
        errors.extend(connection)
        if not connection:
            try:
                pool = self.hook.resource_pool(given.get("resource_pool_id") or None)
            except AIHCConfigError as err:
                errors.append(("resourcePoolId (resource_pool_id)", str(err)))
            if request is not None:
                errors.extend(self.hook.dialect.create_problems(request.to_wire()))
            if request is not None and not errors:
                managed = self.hook.is_managed_pool if ask_aihc else MANAGED_POOL_IDS.__contains__
                errors.extend(managed_queue_problems(pool, request.queue, managed))
        if errors or request is None:
            raise AIHCValidationError(errors)
        return request, pool

    def _job_parameters(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The rendered job parameters the request is built from, out of ``given`` (a
        subclass may add what must reach the job without being a template field:
        ``@task.aihc_python``'s payload)."""
        return {param: given.get(param) for param in JOB_PARAMETERS}

    def validate(
        self, context: Mapping[str, Any] | None = None, *, against_pool: bool = False
    ) -> dict[str, Any]:
        """Check the request this task would send, without sending it: a dry run for a
        DAG's tests or CI (docs/testing.md).

        The templated parameters are rendered with ``context`` over a stand-in for a manual
        run now (``params`` at their defaults, ``ds``, ``ts``, ``logical_date``,
        ``run_id``, ``dag``, ``task``); then every check ``execute`` makes before its first
        request runs: the job fields, the waiting parameters, the connection (it must be
        defined: point it at the emulator in tests), the API version's fields and a managed
        pool's queue (known by the pool id).  A parameter given as an upstream task's XCom
        is unknown before the run: it counts as not given.

        :param context: template variables to use, over the stand-in's (e.g.
            ``{"params": {"lr": 0.1}}``).
        :param against_pool: also read the job's queue (one request, never a create) and
            check each accelerator ``job_resources`` asks for against the names it offers:
            a misspelt ``baidu.com/a800_80g_gpu`` is named with the names it offers, where
            AIHC would at best refuse it and at worst queue the job until its timeout.
            ``execute`` makes no such read before its create (a request per task); it
            reads the queue only when AIHC refuses a create about a resource, to fail
            with the same words (operators/_resource_names.py).
        :returns: the create request's body (v1 wire form), as ``execute`` would send it,
            without the name and labels a run adds.
        :raises AIHCValidationError: listing every bad field, as ``execute`` would; with
            ``against_pool``, also each accelerator the queue does not offer, or the queue
            that could not be read.
        """
        from airflow_provider_aihc.exceptions import AIHCError, AIHCValidationError
        from airflow_provider_aihc.operators._identity import job_name_part
        from airflow_provider_aihc.operators._masking import render_for_validation
        from airflow_provider_aihc.operators._resource_names import resource_name_problems

        values, problems = render_for_validation(self, context)
        try:
            request, pool = self.build_request(
                default_name=job_name_part(self.task_id)[:40] or "job",
                values=values,
                ask_aihc=False,
            )
        except AIHCValidationError as err:
            raise AIHCValidationError([*problems, *err.errors], task_id=self.task_id) from None
        if against_pool and not problems:
            try:
                problems = resource_name_problems(self.hook, pool, request)
            except AIHCError as err:
                where = f"queue {request.queue!r} of resource pool {pool!r}"
                problems = [("queue (job_queue)", f"could not read {where}: {err}")]
        if problems:
            raise AIHCValidationError(problems, task_id=self.task_id)
        return request.to_wire()

    def execute(self, context: Context) -> str:
        from airflow_provider_aihc.operators._identity import TaskIdentity
        from airflow_provider_aihc.operators._submit import JobSubmitter

        started = time.time()
        identity = TaskIdentity.from_context(context)
        request, pool = self.build_request(default_name=identity.default_name())
        submitter = JobSubmitter(
            self.hook,
            pool,
            identity,
            self.log,
            stop_earlier_series=self.cancel_on_kill,
            watched=self.wait_for_completion and self.cancel_on_kill,
        )
        job = submitter.submit(request)
        self.job_id, self._job_pool, self._job_queue = job.job_id, pool, request.queue
        if self.do_xcom_push:
            ti = context["ti"]
            ti.xcom_push(key=XCOM_JOB_ID, value=job.job_id)
            ti.xcom_push(key=XCOM_JOB_NAME, value=job.job_name)
            ti.xcom_push(key=XCOM_RESOURCE_POOL_ID, value=pool)
            ti.xcom_push(key=XCOM_JOB_QUEUE, value=request.queue)
            if job.earlier:
                ti.xcom_push(key=XCOM_EARLIER_JOBS, value=list(job.earlier))
        self._earlier_jobs = job.earlier
        AIHCJobLink.persist(context, self.hook.config.base_url, job.job_id, pool)
        if not self.wait_for_completion:
            return job.job_id
        return self._wait(context, job.job_id, pool, self._deadline(started))

    def _deadline(self, started: float) -> float | None:
        """When the wait ends: ``timeout`` after ``started``, or a margin before Airflow's
        ``execution_timeout`` (see :func:`ahead_of_execution_timeout`), the earlier."""
        limits = [float(self.timeout)] if self.timeout is not None else []
        if isinstance(self.execution_timeout, timedelta):
            limits.append(ahead_of_execution_timeout(self.execution_timeout.total_seconds()))
        return started + min(limits) if limits else None

    def _wait(self, context: Context, job_id: str, pool: str, deadline: float | None) -> str:
        from airflow_provider_aihc.exceptions import AIHCError, AIHCWatchRefusedError
        from airflow_provider_aihc.hooks._wire import is_retryable
        from airflow_provider_aihc.watch import JobEvent, wait_for_job

        queue = self._job_queue
        if self.deferrable:
            try:
                job = self.hook.get_job(job_id, pool, queue_id=queue)
            except AIHCError as err:
                if not is_retryable(err):  # a 400, 401/403, 404 (deleted): no retry helps
                    raise AIHCWatchRefusedError(
                        job_id, f"Could not watch AIHC job {job_id}: {err}"
                    ) from err
                # The trigger waits through such errors; failing here would leave the job
                # running unwatched when no retry is left.
                self.log.warning("Could not check AIHC job %s (%s); deferring", job_id, err)
                self._defer(job_id, pool, deadline)
            if not job.is_terminal:
                self._defer(job_id, pool, deadline)
            if self.stream_logs:
                self._copy_ended_job_log(job, pool, queue)
            return self._finish(JobEvent.from_job(self.hook, job), context)
        event = wait_for_job(
            self.hook,
            job_id,
            pool,
            poll_interval=float(self.poll_interval),
            deadline=deadline,
            stop_on_timeout=self.cancel_on_kill,
            stream_logs=self.stream_logs,
            log=self.log,
            queue_timeout=self.queue_timeout,
            queue_id=queue,
        )
        return self._finish(event, context)

    def _copy_ended_job_log(self, job: JobInfo, pool: str, queue: str | None) -> None:
        """Copy the log of a job that ended before a trigger could watch it into this
        try's log, as a wait in the worker does on the same reading.

        Mostly a job this try adopted: the try that created it died before it deferred,
        and the job ended in between (found by ``make test-chaos``: a worker SIGKILLed
        right after the create, and its retry succeeded with none of the job's lines)."""
        from airflow_provider_aihc.models.status import is_started
        from airflow_provider_aihc.watch.logs import LogStreamer

        if is_started(job.status):
            logs = LogStreamer(job.job_id, pool, self.log, queue_id=queue)
            logs.poll(self.hook, job.pod_names)

    def _defer(self, job_id: str, pool: str, deadline: float | None) -> None:
        from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger

        self.defer(
            trigger=AIHCJobTrigger(
                job_id=job_id,
                resource_pool_id=pool,
                aihc_conn_id=self.aihc_conn_id,
                poll_interval=self.poll_interval,
                deadline=deadline,
                stop_on_timeout=self.cancel_on_kill,
                cancel_on_kill=self.cancel_on_kill,
                stream_logs=self.stream_logs,
                deferred_at=time.time(),
                queue_timeout=self.queue_timeout,
                job_queue=self._job_queue,
            ),
            method_name=DEFER_METHOD_NAME,
        )

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> str:
        """Resume after the trigger: return the job id, or raise with the job's reason.

        The job's queue is the event's (the trigger carried it); an event of a trigger
        without one leaves the operator's own ``job_queue``."""
        from airflow_provider_aihc.watch import JobEvent

        job_event = JobEvent.from_payload(event)
        self._job_queue = job_event.job_queue or getattr(self, "job_queue", None) or None
        self.job_id = job_event.job_id  # this process's own record of the job (the link's)
        return self._finish(job_event, context)

    def _finish(self, event: JobEvent, context: Context) -> str:
        """Push the job's result, metrics and summary (however it was waited for), then
        return the job id or raise with the job's reason."""
        from airflow_provider_aihc.watch import complete
        from airflow_provider_aihc.watch.summary import deliver

        self.job_id = event.job_id  # for lineage: a resumed task is a new operator object
        pool = self._job_pool or self.resource_pool_id or None
        push = bool(self.do_xcom_push)
        summary = deliver(
            self.hook, event, pool, self.outputs, context, self.log, push=push,
            queue_id=self._job_queue, earlier_jobs=self._earlier(context),
        )  # fmt: skip
        self._job_summary = summary
        return complete(event, self.log)

    def _earlier(self, context: Context) -> tuple[str, ...]:
        """The try series' earlier jobs: this process's record, or (resumed after a
        deferral, a new operator object) the XCom pushed before it."""
        if self._earlier_jobs is not None:
            return self._earlier_jobs
        ti = context.get("ti")
        pull = getattr(ti, "xcom_pull", None)
        if pull is None:
            return ()
        index = getattr(ti, "map_index", -1)
        pulled = pull(task_ids=self.task_id, key=XCOM_EARLIER_JOBS, map_indexes=index)
        return tuple(pulled) if isinstance(pulled, list) else ()

    def on_kill(self) -> None:
        """Stop the job when ``cancel_on_kill``; the deferred wait's trigger does its own.

        Airflow calls this from its SIGTERM handler, on the main thread, wherever that
        thread was: possibly inside a log write or a request of this very hook, holding
        their locks (taking them again here deadlocked the task). So the stop is sent from
        a thread of its own, on a copy of the hook with its own HTTP session, and logged
        there; this handler only waits, a bounded time, for the stop to be answered.
        """
        if not (self.cancel_on_kill and self.job_id):
            return
        from airflow_provider_aihc.operators._job_actions import stop_from_own_thread

        stop_from_own_thread(
            self.hook, self.job_id, self._job_pool, self.log, ON_KILL_WAIT_SECONDS,
            self._job_queue,
        )  # fmt: skip

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> JobLineage:
        """OpenLineage (when its provider is on): the job's datasources as inputs, the
        ``outlets`` as outputs, the job (id, pool, image, status, reason, ...) as run facets."""
        from airflow_provider_aihc.lineage.job import job_lineage

        pool = self._job_pool or self.resource_pool_id or None  # None: the connection's
        return job_lineage(
            self.hook,
            self.job_id,
            pool,
            self.outlets,
            with_inputs=True,
            log=self.log,
            summary=self._job_summary,
            queue_id=self._job_queue,
        )


seal(AIHCCreateJobOperator, SEALED_PARAMETERS)


def __getattr__(name: str) -> Any:
    """The stop and delete operators, made when a DAG file first names them: a DAG file
    that only creates jobs does not pay for two more operator classes at every parse.
    Defined in ``_job_actions`` to keep this file small; public, documented and serialized
    as this module's, where they always were."""
    if name in ("AIHCStopJobOperator", "AIHCDeleteJobOperator"):
        from airflow_provider_aihc.operators import _job_actions

        operator = getattr(_job_actions, name)
        operator.__module__ = __name__
        globals()[name] = operator
        return operator
    if name == "BODY_FILE_EXTENSION":  # kept here, where it always was
        from airflow_provider_aihc.operators._masking import BODY_FILE_EXTENSION

        return BODY_FILE_EXTENSION
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
