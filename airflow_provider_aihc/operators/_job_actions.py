"""The operators that act on one existing job: stop and delete (re-exported by
:mod:`airflow_provider_aihc.operators.aihc`, their public home), and the create operator's
stop from a thread of its own when its task is killed.

AIHC actions used: GetJob, StopJob, DeleteJob.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.version_compat import BaseOperator, Context

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.watch.flow import Log


def stop_from_own_thread(
    hook: AIHCHook,
    job_id: str,
    pool: str | None,
    log: Log,
    wait_seconds: float,
    queue_id: str | None = None,
) -> None:
    """Stop a job from a thread of its own, on a copy of ``hook`` with its own HTTP
    session, and wait at most ``wait_seconds`` for the answer.

    For ``on_kill``, which Airflow calls from its SIGTERM handler on the main thread,
    wherever that thread was: possibly inside a log write or a request of this very hook,
    holding their locks (taking them again there deadlocked the task).
    """
    answered = threading.Event()

    def stop() -> None:
        own = copy.copy(hook)
        own.__dict__.pop("session", None)  # its own connections, not the main thread's
        try:
            own.stop_job(job_id, pool, queue_id=queue_id)
        except Exception:
            answered.set()
            log.exception("Task killed, but AIHC job %s could not be stopped", job_id)  # type: ignore[attr-defined]
        else:
            answered.set()
            log.info("Task killed: stopped AIHC job %s", job_id)

    threading.Thread(target=stop, name=f"aihc-stop-{job_id}").start()
    answered.wait(wait_seconds)


class _JobActionOperator(BaseOperator):
    """Base of the operators that act on one existing job."""

    template_fields: Sequence[str] = ("job_id", "resource_pool_id", "job_queue")

    def __init__(
        self,
        *,
        job_id: str,
        resource_pool_id: str | None = None,
        aihc_conn_id: str = "aihc_default",
        job_queue: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.job_id = job_id
        self.resource_pool_id = resource_pool_id
        self.aihc_conn_id = aihc_conn_id
        self.job_queue = job_queue or None

    @cached_property
    def hook(self) -> AIHCHook:
        """The AIHC hook of this task."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        return AIHCHook(aihc_conn_id=self.aihc_conn_id)


class AIHCStopJobOperator(_JobActionOperator):
    """Stop an AIHC job (AIHC has no suspend: a stopped job ends ``ManualTermination``).

    A job that already ended is left as it is.

    :param job_id: the job, e.g. ``"{{ ti.xcom_pull(task_ids='train') }}"`` (templated).
    :param resource_pool_id: its pool; defaults to the connection's (templated).
    :param aihc_conn_id: the ``aihc`` connection.
    :param job_queue: the job's queue as AIHC addresses it (templated): the queue id on a
        managed pool, which AIHC refuses a call without; the queue name on a v2
        self-managed pool, e.g. ``"{{ ti.xcom_pull(task_ids='train', key='job_queue') }}"``.
    """

    def execute(self, context: Context) -> str:
        queue = self.job_queue
        job = self.hook.get_job(self.job_id, self.resource_pool_id, queue_id=queue)
        if job.is_terminal:
            self.log.info("AIHC job %s already ended %s; nothing to stop", self.job_id, job.status)
            return self.job_id
        self.hook.stop_job(self.job_id, self.resource_pool_id, queue_id=queue)
        self.log.info("Stopped AIHC job %s (was %s)", self.job_id, job.status)
        return self.job_id


class AIHCDeleteJobOperator(_JobActionOperator):
    """Delete an AIHC job's record; a job that is already gone counts as deleted.

    :param job_id: the job (templated).
    :param resource_pool_id: its pool; defaults to the connection's (templated).
    :param aihc_conn_id: the ``aihc`` connection.
    :param job_queue: the job's queue as AIHC addresses it (templated; see
        :class:`AIHCStopJobOperator`).
    """

    def execute(self, context: Context) -> str:
        from airflow_provider_aihc.exceptions import AIHCNotFoundError

        try:
            self.hook.delete_job(self.job_id, self.resource_pool_id, queue_id=self.job_queue)
        except AIHCNotFoundError:
            self.log.info("AIHC job %s does not exist; nothing to delete", self.job_id)
        else:
            self.log.info("Deleted AIHC job %s", self.job_id)
        return self.job_id
