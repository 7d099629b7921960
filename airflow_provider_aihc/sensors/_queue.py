"""Which queue the sensor's job is in, when the sensor may be given only a job id.

Every call after the create names the job's queue as AIHC addresses it: the queue's id
on a managed pool (``aihc-serverless``, ``aihc-bhcmp``, or one AIHC reports as managed:
:meth:`~airflow_provider_aihc.hooks.aihc.AIHCHook.is_managed_pool`), where AIHC refuses a
call without it (bce-sdk-go ``services/aihc/resource/client.go:175-177``), and its name on
a v2 self-managed pool ("自运维资源池须填入队列名称，托管资源池须填入队列Id": bce-openapi-meta
``i18n/zh-CN/aihc/DeleteJob.json:4``).  In this order, the first that answers:

1. the sensor's own ``job_queue``;
2. the XCom ``job_queue`` of an upstream create operator whose XCom ``job_id`` is this job;
3. one lookup: a managed pool's only queue (ListQueues), or on a v2 self-managed pool the
   job's list item (ListJobs pages); a v1 self-managed pool needs no queue at all.

The sensor logs which one it used.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.exceptions import AIHCValidationError

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

#: The create operator's XCom keys (``operators/aihc.py``), read here without importing it.
XCOM_JOB_ID = "job_id"
XCOM_JOB_QUEUE = "job_queue"


def find_job_queue(
    hook: AIHCHook,
    pool: str,
    job_id: str,
    given: str | None,
    upstream: Iterable[str],
    ti: Any,
) -> tuple[str | None, str]:
    """The job's queue as AIHC addresses it, and where it came from (for the log).

    :param given: the sensor's ``job_queue``.
    :param upstream: the sensor's upstream task ids (the create operator is one of them
        when the job id comes from its XCom).
    :param ti: the running task instance (``xcom_pull``).
    :raises AIHCValidationError: a managed pool with several queues and none of the above:
        naming ``job_queue`` and the pool's queue ids.
    :raises AIHCError: the lookup failed (the sensor looks again at its next poke).
    """
    if given:
        return given, "the sensor's job_queue"
    for task_id in sorted(upstream):
        queue = _pull(ti, task_id, XCOM_JOB_QUEUE)
        if isinstance(queue, str) and queue and _pull(ti, task_id, XCOM_JOB_ID) == job_id:
            return queue, f"the XCom job_queue of task {task_id!r}, which created the job"
    if hook.is_managed_pool(pool):
        ids = sorted({i for queue in hook.list_queues(pool) for i in _queue_ids(queue)})
        if len(ids) == 1:
            return ids[0], f"the only queue of managed pool {pool!r} (ListQueues)"
        raise AIHCValidationError(
            [
                (
                    "job_queue",
                    f"resource pool {pool!r} is managed: AIHC needs the id of the job's queue "
                    f"on every call; it has queues {ids or 'none'}: pass job_queue (or take "
                    "the create operator's XCom job_queue)",
                )
            ]
        )
    if hook.dialect.name == "v1":
        return None, "none needed (api_version v1 finds a self-managed pool's job by its id)"
    for job in hook.list_job_summaries(pool):
        if job.job_id == job_id:
            return job.queue or None, f"the job's list item in pool {pool!r} (ListJobs)"
    return None, f"unknown: not listed in pool {pool!r} (ListJobs); v2 names the default queue"


def _pull(ti: Any, task_id: str, key: str) -> Any:
    pull = getattr(ti, "xcom_pull", None)
    return None if pull is None else pull(task_ids=task_id, key=key)


def _queue_ids(queue: Any) -> list[str]:
    """The ids of a queue and its children (a managed pool's submittable queues), as AIHC
    answers them (``queueId``: the emulator's and v2's queue answer, ``Queue.queue_id``)."""
    own = [queue.queue_id] if queue.queue_id else []
    return own[:1] + [i for child in queue.children for i in _queue_ids(child)]
