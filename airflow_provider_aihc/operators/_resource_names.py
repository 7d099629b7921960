"""Whether the accelerators a job asks for are names its queue offers (issue #38, point 4).

A misspelt accelerator (``baidu.com/a800_80g_gpu`` for ``baidu.com/a800_80g_cgpu``) is at
best a 400 from CreateJob and at worst a job queued until its timeout.  The names a queue
offers are its quota's (``capability``: bce-sdk-go ``services/aihc/api/v1/queue.go:55``,
``:81``; v2 ``capability.acceleratorCardList[].acceleratorType``,
``services/aihc/v2/api/queue.go:71``, ``:85-89``; :attr:`~airflow_provider_aihc.models.
pool.Queue.accelerators`).  Reading them costs a request, so the provider reads them only
where that costs no request per task:

* ``validate(against_pool=True)``, the dry run a DAG's CI calls: one read of the job's queue
  before anything would be sent;
* ``execute``, only after CreateJob answered a 400 that names a resource: one read, so that
  the task fails saying which name is wrong and which the queue offers (no retry, no
  second create).

Only accelerator names are compared (:func:`~airflow_provider_aihc.models.pool.
is_accelerator`: ``cpu``, ``memory``, ``sharedMemory`` and ``rdma/hca`` are every node's).
When the queue names no accelerator (no quota given, or names that are not resource names:
that v2's ``acceleratorType`` is the resource name is inferred), nothing can be compared and
no problem is reported: a job AIHC might accept is never refused on a guess.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.exceptions import AIHCApiError, AIHCError, AIHCRefusedError

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.pool import Queue
    from airflow_provider_aihc.models.request import CreateJobRequest

__all__ = ["names_a_resource", "read_queue", "refusal", "resource_name_problems"]

BAD_REQUEST_STATUS = 400


def resource_name_problems(
    hook: AIHCHook, pool: str, request: CreateJobRequest
) -> list[tuple[str, str]]:
    """``(field, problem)`` for each accelerator the job asks for that its queue does not
    offer, after one read of the queue; empty when every name is offered or nothing can
    be compared.

    :param hook: the task's hook.
    :param pool: the job's resource pool.
    :param request: the create request (its ``queue`` and ``resources``).
    :raises AIHCError: the queue could not be read (it does not exist, AIHC unreachable).
    """
    from airflow_provider_aihc.models.pool import is_accelerator

    asked = [
        (index, resource.name)
        for index, resource in enumerate(request.job_spec.resources or ())
        if is_accelerator(resource.name)
    ]
    if not asked:
        return []  # no accelerator asked for: no read
    offered = read_queue(hook, pool, request.queue).accelerators
    if not offered:
        return []
    where = f"queue {request.queue!r} of resource pool {pool!r}"
    return [
        (
            f"jobSpec.resources[{index}].name (job_resources)",
            f"{name!r} is not offered by {where}; it offers {', '.join(offered)}",
        )
        for index, name in asked
        if name not in offered
    ]


def read_queue(hook: AIHCHook, pool: str, queue: str) -> Queue:
    """The job's queue, in one read: v1 ``GetQueue`` by the pool and the queue's name (or
    id); v2 ``DescribeQueue`` takes a queue id alone (bce-sdk-go
    ``services/aihc/v2/queue/client.go:27-38``), which a managed pool's job names, while a
    self-managed pool's job names its queue: there the pool's ``DescribeQueues`` (a tree,
    unpaged: ``services/aihc/v2/api/queue.go:30``) is searched by name or id.

    :raises AIHCError: the queue could not be read, or the pool has none so named.
    """
    if hook.dialect.name != "v2" or hook.is_managed_pool(pool):
        return hook.get_queue(queue, pool)
    found = _find(hook.list_queues(pool), queue)
    if found is None:
        raise AIHCError(f"AIHC DescribeQueues lists no queue {queue!r} in resource pool {pool!r}")
    return found


def _find(queues: Iterable[Queue], queue: str) -> Queue | None:
    """The queue named or identified ``queue``, among ``queues`` and their children."""
    for candidate in queues:
        if queue in (candidate.name, candidate.queue_id):
            return candidate
        if (child := _find(candidate.children, queue)) is not None:
            return child
    return None


def names_a_resource(error: AIHCApiError, request: CreateJobRequest) -> bool:
    """Whether a refused create may be about a resource name: a 400 from CreateJob whose
    message names one of the job's resources or the field, ``resources`` (AIHC's wording
    of such a refusal is not documented; the emulator's names both), not one about the
    queue or the ``resource pool``."""
    if error.operation != "CreateJob" or error.status != BAD_REQUEST_STATUS:
        return False
    message = (error.message or "").lower()
    names = (resource.name.lower() for resource in request.job_spec.resources or ())
    return "resources" in message or any(name in message for name in names)


def refusal(
    hook: AIHCHook, pool: str, request: CreateJobRequest, error: AIHCApiError, log: Any
) -> AIHCRefusedError:
    """The error a refused create fails the task with: AIHC's answer, and, when it may be
    about a resource name, which of the job's accelerators its queue does not offer (one
    read of the queue, on this failure path only).  A failed read leaves AIHC's answer
    alone: the refusal is the task's error either way."""
    if not names_a_resource(error, request):
        return AIHCRefusedError(error)
    try:
        problems = resource_name_problems(hook, pool, request)
    except AIHCError as err:
        log.warning("Could not read queue %r to check its resource names (%s)", request.queue, err)
        return AIHCRefusedError(error)
    if not problems:
        return AIHCRefusedError(error)
    return AIHCRefusedError(error, "; ".join(f"{field}: {problem}" for field, problem in problems))
