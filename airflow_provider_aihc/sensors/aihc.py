"""Wait for an AIHC job that another task created.

AIHC actions used: GetJob, GetPodLogs, GetJobEvents (a failed job's reason); to find the
job's queue when neither ``job_queue`` nor the create operator's XCom gives it, ListQueues
(managed pool) or ListJobs (v2 self-managed pool), once (``sensors/_queue.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.links.aihc import AIHCJobLink
from airflow_provider_aihc.version_compat import (
    AirflowSensorTimeout,
    AirflowSkipException,
    BaseSensorOperator,
    PokeReturnValue,
    conf,
)

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.lineage.job import JobLineage
    from airflow_provider_aihc.version_compat import Context
    from airflow_provider_aihc.watch import JobEvent, JobWatch

DEFER_METHOD_NAME = "execute_complete"
MISSING_XCOM = "the XCom it pulls is missing (a wrong task_ids or key, or that task pushed nothing)"


class AIHCJobSensor(BaseSensorOperator):  # type: ignore[misc]
    """Wait until an AIHC job ends: succeed on ``Succeeded``, fail with the job's own reason
    on ``Failed``, ``Stopped`` or ``ManualTermination`` (skip instead with ``soft_fail``).

    The sensor's XCom return value is the job id.  It never stops the job: it only watches
    (a timeout fails the sensor and leaves the job running).  Input no retry can fix (an
    undefined or unusable connection, an unusable job id or pool, a job id pulled from a
    missing XCom) fails the task before any request, without retries, ``soft_fail`` or
    not; so does a job AIHC refuses to show (a 400, 401/403, or a 404: no such job, or it
    was deleted), when it is watched.  AIHC's transient errors (no answer, 5xx, 429) only
    delay the next poke.

    Modes:

    * ``poke`` (default): status changes and new log lines go to the task log as they come.
    * ``reschedule``: the worker slot is freed between pokes.  A rescheduled sensor starts
      afresh each time (Airflow keeps no state, XCom included, between its pokes), so each
      poke logs the current status, and the log is copied once, when the job has ended:
      its newest lines, at most 500 over all pods.
    * ``deferrable=True``: the first poke checks in the worker, then the triggerer waits
      (:class:`~airflow_provider_aihc.triggers.aihc.AIHCJobTrigger`) until the job ends or
      the sensor's ``timeout`` passes; log lines keep streaming from the triggerer, from
      where the worker stopped.

    :param job_id: the job, e.g. ``"{{ ti.xcom_pull(task_ids='train') }}"`` or an operator's
        ``.output`` (templated).
    :param resource_pool_id: its pool; defaults to the connection's (templated).
    :param job_queue: the job's queue as AIHC addresses it, which every call names: the
        queue id (``aihcq-…``) on a managed pool, the queue name on a self-managed one
        (templated).  ``None``: the XCom ``job_queue`` of the upstream create operator that
        created the job, else one lookup (a managed pool's only queue; on ``api_version``
        v2 the job's list item); the log says which.
    :param aihc_conn_id: the ``aihc`` connection.
    :param deferrable: wait in the triggerer rather than in a worker slot.
    :param stream_logs: copy the job's new log lines into the task log.
    :param result_marker: the last line of the first replica's log that contains it,
        followed by one JSON value, is the job's result (XCom ``result``); ``None`` reads
        no result.  In every mode the ended job's ``result``, ``metrics`` and
        ``job_summary`` are pushed, as the create operator pushes them (docs/results.md).
    :param metrics: ``{name: regex with one group}``: the last match of each in the first
        replica's log (a float where it parses) goes to XCom ``metrics``.
    :param queue_timeout: seconds the job may wait for resources (``Created``/``Scheduled``,
        from its ``createdAt``) before the sensor stops it and fails: unlike ``timeout``,
        which leaves the job running, this one is a limit on the job.
    """

    template_fields: Sequence[str] = ("job_id", "resource_pool_id", "job_queue")
    operator_extra_links = (AIHCJobLink(),)
    ui_color = "#2468f2"

    def __init__(
        self,
        *,
        job_id: str,
        resource_pool_id: str | None = None,
        aihc_conn_id: str = "aihc_default",
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        stream_logs: bool = True,
        result_marker: str | None = "AIHC_RESULT ",
        metrics: Mapping[str, str] | None = None,
        queue_timeout: float | None = None,
        job_queue: str | None = None,
        **kwargs: Any,
    ) -> None:
        from airflow_provider_aihc.operators._checks import queue_timeout_problems
        from airflow_provider_aihc.outputs import OutputSpec

        super().__init__(**kwargs)
        # Refused here, at DAG parse, as the run would refuse them.
        self.outputs, problems = OutputSpec.checked(result_marker, metrics)
        problems += queue_timeout_problems(queue_timeout)
        if problems:
            from airflow_provider_aihc.exceptions import AIHCValidationError

            raise AIHCValidationError(problems, task_id=self.task_id)
        self.result_marker = result_marker
        self.metrics = dict(metrics or {})
        self.queue_timeout = queue_timeout
        self._job_summary: dict[str, Any] | None = None
        self.job_id = job_id
        self.resource_pool_id = resource_pool_id
        self.job_queue = job_queue
        self._queue_found = False
        self._job_queue_id: str | None = None
        self.aihc_conn_id = aihc_conn_id
        self.deferrable = deferrable
        self.stream_logs = stream_logs
        self._watch: JobWatch | None = None
        self._link_stored = False
        self._input_checked = False
        #: Whether :meth:`poke` refused the input (so no job link was stored).
        self.input_refused = False

    @cached_property
    def hook(self) -> AIHCHook:
        """The AIHC hook of this task."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        return AIHCHook(aihc_conn_id=self.aihc_conn_id)

    @cached_property
    def job_pool(self) -> str:
        """The job's resource pool: the given one, else the connection's.  (Not ``pool``:
        that is the Airflow pool of the task itself.)"""
        return self.hook.resource_pool(self.resource_pool_id or None)

    @property
    def watch(self) -> JobWatch:
        """This sensor's watch, kept across pokes (poke mode) and new per reschedule."""
        if self._watch is None:
            from airflow_provider_aihc.watch import JobWatch

            self._watch = JobWatch(
                self.job_id,
                self.job_pool,
                self.log,
                stream_logs=self.stream_logs and not self.reschedule,
                queue_timeout=self.queue_timeout,
                queue_id=self._job_queue_id,
            )
        return self._watch

    def _find_queue(self, context: Context) -> bool:
        """Find the job's queue, once per sensor object: ``job_queue``, the create
        operator's XCom, or one lookup (``sensors/_queue.py``); logged with where it came
        from.  ``False``: the lookup failed transiently (no answer, 5xx, 429), so the next
        poke looks again."""
        if self._queue_found:
            return True
        from airflow_provider_aihc.exceptions import AIHCError
        from airflow_provider_aihc.hooks._wire import is_retryable
        from airflow_provider_aihc.sensors._queue import find_job_queue

        ti = context.get("ti")
        try:
            queue, source = find_job_queue(
                self.hook, self.job_pool, self.job_id, self.job_queue or None,
                self.upstream_task_ids, ti,
            )  # fmt: skip
        except AIHCError as err:
            if not is_retryable(err):
                raise
            self.log.warning("AIHC job %s: its queue could not be looked up (%s)", self.job_id, err)
            return False
        self.log.info("AIHC job %s: queue %s, from %s", self.job_id, queue or "-", source)
        self._job_queue_id, self._queue_found = queue, True
        return True

    def execute(self, context: Context) -> Any:
        """Check the input first, outside Airflow's sensor loop, which would turn its
        failure into a skip under ``soft_fail``; then sense as usual."""
        self._check_input()
        with _refusals_fail(self):
            return super().execute(context)

    def resume_execution(
        self, next_method: str, next_kwargs: dict[str, Any] | None, context: Context
    ) -> Any:
        """Resume after the trigger; a job no retry can watch fails, even with ``soft_fail``."""
        with _refusals_fail(self):
            return super().resume_execution(next_method, next_kwargs, context)

    def poke(self, context: Context) -> bool | PokeReturnValue:
        """One status check: logs the status when it changes and the new log lines;
        deferrable, it hands the wait to the triggerer after this first check."""
        from airflow_provider_aihc.watch import drive

        self._check_input()
        if not self._find_queue(context):
            return False
        if not self._link_stored:
            AIHCJobLink.persist(context, self.hook.config.base_url, self.job_id, self.job_pool)
            self._link_stored = True
        watch = self.watch
        event = drive(watch.check(), self.hook)
        if event is None:
            if self.deferrable:
                self._defer(watch.log_state)
            return False
        if self.reschedule and self.stream_logs:
            drive(watch.logs.tail_flow(watch.pod_names), self.hook)
        return PokeReturnValue(is_done=True, xcom_value=self._finish(event, context))

    def _check_input(self) -> None:
        """Refuse what no retry makes valid, before any request: an undefined or unusable
        connection, a job id or pool that cannot be a path segment (or no pool at all), a
        job id pulled from a missing XCom, a deferral without a poll interval.

        :raises AIHCValidationError: naming each bad field; the task fails without retries.
        """
        if self._input_checked:
            return
        from airflow_provider_aihc.exceptions import AIHCValidationError
        from airflow_provider_aihc.hooks.aihc import check_path_id
        from airflow_provider_aihc.operators._checks import (
            connection_problems,
            queue_timeout_problems,
        )

        problems = connection_problems(self.hook)
        connection_usable = not problems
        if self.job_id in (None, "None"):  # how a template renders a missing XCom
            problems.append(("job_id", f"is {self.job_id!r}: {MISSING_XCOM}"))
        else:
            problems += _config_problem("job_id", lambda: check_path_id("job_id", self.job_id))
        if connection_usable:  # the default pool is the connection's
            problems += _config_problem("resource_pool_id", lambda: self.job_pool)
        problems += queue_timeout_problems(self.queue_timeout)
        if self.deferrable and not self.poke_interval > 0:
            interval = self.poke_interval
            problems.append(("poke_interval", f"must be seconds > 0 to defer, got {interval!r}"))
        if problems:
            self.input_refused = True  # no link was stored: the link is absent, quietly
            raise AIHCValidationError(problems)
        self._input_checked = True

    def _defer(self, log_state: dict[str, str]) -> None:
        from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger

        self.defer(
            trigger=AIHCJobTrigger(
                job_id=self.job_id,
                resource_pool_id=self.job_pool,
                aihc_conn_id=self.aihc_conn_id,
                poll_interval=self.poke_interval,
                deadline=time.time() + _seconds(self.timeout),
                stop_on_timeout=False,
                cancel_on_kill=False,
                stream_logs=self.stream_logs,
                log_state=log_state,
                deferred_at=time.time(),  # a takeover resumes the log near where it stopped
                queue_timeout=self.queue_timeout,
                job_queue=self._job_queue_id,
            ),
            method_name=DEFER_METHOD_NAME,
        )

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> str:
        """Resume after the trigger: return the job id, or raise with the job's reason."""
        from airflow_provider_aihc.watch import JobEvent

        job_event = JobEvent.from_payload(event)
        self._job_queue_id = job_event.job_queue or self.job_queue or None
        if job_event.status == "timeout" and not job_event.queued:
            raise AirflowSensorTimeout(job_event.message)
        return self._finish(job_event, context)

    def _finish(self, event: JobEvent, context: Context) -> str:
        """Push the job's result, metrics and summary, then return the job id or raise."""
        from airflow_provider_aihc.exceptions import AIHCJobFailedError, AIHCJobTimeoutError
        from airflow_provider_aihc.watch import complete
        from airflow_provider_aihc.watch.summary import ENDED, deliver

        if event.status in ENDED:
            push = bool(self.do_xcom_push)
            pool = self.job_pool
            self._job_summary = deliver(
                self.hook, event, pool, self.outputs, context, self.log, push=push,
                queue_id=self._job_queue_id,
            )  # fmt: skip
        try:
            return complete(event, self.log)
        except (AIHCJobFailedError, AIHCJobTimeoutError) as err:
            # soft_fail is about the job's outcome; a job that cannot be watched at all
            # (deleted, a wrong id) is a mistake to fix, not a run to skip.
            if self.soft_fail or getattr(self, "never_fail", False):
                raise AirflowSkipException(f"Skipping: {err}") from err
            raise

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> JobLineage:
        """OpenLineage (when its provider is on): the watched job's final status and reason,
        with its id, pool, image, ..., as run facets, and the ``outlets`` as outputs.  Its
        datasources are the inputs of the task that created it, not of this one."""
        from airflow_provider_aihc.lineage.job import job_lineage

        return job_lineage(
            self.hook,
            self.job_id,
            self.job_pool,
            self.outlets,
            with_inputs=False,
            log=self.log,
            summary=self._job_summary,
            queue_id=self._job_queue_id,
        )


def _config_problem(name: str, read: Callable[[], object]) -> list[tuple[str, str]]:
    """``[(name, problem)]`` when ``read`` raises an ``AIHCConfigError``, else ``[]``."""
    from airflow_provider_aihc.exceptions import AIHCConfigError

    try:
        read()
    except AIHCConfigError as err:
        return [(name, str(err))]
    return []


@contextmanager
def _refusals_fail(sensor: AIHCJobSensor) -> Iterator[None]:
    """Airflow's sensor turns a fail-fast exception into a skip under ``soft_fail``; a job
    that cannot be watched (deleted, a wrong id, a refused key) is a mistake to fix, not a
    run to skip: it fails (``never_fail`` still skips, as it skips everything)."""
    from airflow_provider_aihc.exceptions import AIHCWatchRefusedError

    try:
        yield
    except AirflowSkipException as skip:
        refusal = skip.__cause__
        if isinstance(refusal, AIHCWatchRefusedError) and not getattr(sensor, "never_fail", False):
            raise refusal from refusal.__cause__
        raise


def _seconds(value: float | timedelta) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
