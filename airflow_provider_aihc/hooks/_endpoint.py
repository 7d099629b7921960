"""How an AIHC endpoint is declared: :class:`Endpoint` (its operation, v1 method and path,
what it needs), its v2 :class:`Action`, the :class:`Call` a caller makes of it, and the
:class:`ApiRequest` one call becomes.

An :class:`Endpoint` says everything about one operation that is not a value: its name
(in errors and logs), the v1 method and path, the v2 :class:`Action`, what it needs (the
call attributes that carry the pool, the queue id, the job id, the pod, ...), and which
call attributes become which v1 query arguments.  A :class:`Call` subclass
(``hooks/calls.py``) adds the values as fields and the model that reads the answer.
Every call after the create that addresses a job (or lists a pool's jobs) has :data:`QUEUE`
in its ``needs``: the dialects send its ``queueID``, and on a managed pool
(:data:`MANAGED_POOLS`) a call that has none is refused before any request
(:func:`missing_needs`), as Baidu's own client refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast

from airflow_provider_aihc.job_parameters import MANAGED_POOL_IDS

T = TypeVar("T")
Params = Sequence[tuple[str, str | None]]

#: What a call may need, each named by the call attribute that carries it.
#: The resource pool of a job call (query ``resourcePoolId``; the hook fills the default).
POOL = "pool"
#: The queue id (v1 ``queueID`` on managed pools, v2 ``queueID``): on a managed pool the
#: queue's id (``aihcq-…``), on a v2 self-managed pool the queue's name.
QUEUE = "queue_id"
#: The managed pools (job_parameters.py cites their source): their job calls need the queue id.
MANAGED_POOLS = MANAGED_POOL_IDS
#: Path arguments: the job, its pod, the pool and queue of a pool or queue call.
JOB = "job_id"
POD = "pod_name"
POOL_ID = "pool_id"
QUEUE_NAME = "queue_name"
PATH_ARGS = (JOB, POD, POOL_ID, QUEUE_NAME)


@dataclass(frozen=True, slots=True)
class Action:
    """An endpoint's v2 action (``?action=<name>``), built from the call's v1 arguments.

    :param name: the action, e.g. ``DescribeJobLogs``.
    :param fields: v1 query arguments a job action's body carries under the same name.
    :param fixed: ``(field, value)`` every request of the action carries.
    :param query: a pool or queue action: ``GET`` with query arguments, no body.
    :param ids: ``(path argument, query argument)`` a query action sends its ids as.
    :param paged: ``pageNo``/``pageSize`` are sent as ``pageNumber``/``pageSize``.
    :param shape: a body the dialect builds itself (``create``, ``list``, ``batch``).
    :param answer: how the flat answer reads back into v1 form (``job``, ``jobs``,
        ``pool``, ``pools``, ``queue``, ``queues``); ``None``: as it is.
    """

    name: str
    fields: tuple[str, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    query: bool = False
    ids: tuple[tuple[str, str], ...] = ()
    paged: bool = False
    shape: str | None = None
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One AIHC API operation.

    :param operation: the name used in errors and logs, e.g. ``GetJob``.
    :param method: the v1 HTTP method.
    :param path: the v1 path template, e.g. ``/api/v1/aijobs/{job_id}``.
    :param retryable: whether a failed attempt may be sent again (never for create).
    :param needs: the call attributes the request needs (:data:`POOL`, :data:`JOB`, ...).
    :param query: ``(call attribute, v1 query argument)``, sent when the value is set.
    :param v1_drops: v1 query arguments v1 cannot send (the hook filters instead).
    :param v2: the v2 action (``None``: the endpoint has none).
    :param v1: whether v1 defines the operation (``False``: only v2 does, and the v1
        dialect refuses it before sending).
    """

    operation: str
    method: str
    path: str
    retryable: bool = True
    needs: tuple[str, ...] = ()
    query: tuple[tuple[str, str], ...] = ()
    v1_drops: tuple[str, ...] = ()
    v2: Action | None = None
    v1: bool = True


class Call(Generic[T]):
    """One call of an endpoint: the subclass declares :attr:`endpoint` and :attr:`model`,
    its dataclass fields carry the values (named as in ``needs`` and ``query``)."""

    __slots__ = ()
    endpoint: ClassVar[Endpoint]
    #: The pydantic model that reads the answer (in v1 wire form).
    model: ClassVar[Any]
    #: A subclass of :attr:`model` that reads a v1 answer straight from its envelope's
    #: bytes (pydantic's JSON reader builds only the fields the model keeps), or ``None``:
    #: the answer is decoded first.  The watcher's ListJobs pages (at 10,000 jobs a hundred
    #: pages of 1,200 dicts and lists each a poll) are read this way.
    envelope_model: ClassVar[Any] = None

    def read(self, data: Any) -> T:
        """The typed answer."""
        return cast("T", self.model.model_validate(data))

    def path_args(self) -> dict[str, str]:
        """The v1 path's arguments."""
        return {name: getattr(self, name) for name in self.endpoint.needs if name in PATH_ARGS}

    def params(self) -> Params:
        """The v1 query arguments whose value is set (not ``None``, not empty): bce-sdk-go's
        ``WithQueryParamFilter`` leaves an empty value out the same way
        (``services/aihc/resource/client.go``, every job call)."""
        pairs = ((wire, getattr(self, attr)) for attr, wire in self.endpoint.query)
        return [(wire, str(value)) for wire, value in pairs if value is not None and value != ""]

    def payload(self) -> Any:
        """The JSON body in v1 wire form (``None``: none)."""
        return None


def missing_needs(call: Call[Any], pool: str | None = None) -> list[str]:
    """The needs of ``call`` it lacks, besides the pool (which the hook defaults) and the
    path arguments (which the dialects check, naming them).

    :param pool: the call's resolved pool: :data:`QUEUE` is a need only on a managed one
        (a self-managed pool finds a job by its id; v2 then names the ``default`` queue).
    """
    skip = (POOL, *PATH_ARGS) if is_managed_pool(pool) else (POOL, QUEUE, *PATH_ARGS)
    return [n for n in call.endpoint.needs if n not in skip and not getattr(call, n, None)]


def is_managed_pool(pool: str | None) -> bool:
    """Whether ``pool`` is a managed pool (:data:`MANAGED_POOLS`), whose job calls need the
    queue id."""
    return pool in MANAGED_POOLS


@dataclass(frozen=True, slots=True)
class ApiRequest:
    """One call, built once and signed afresh for every attempt."""

    endpoint: Endpoint
    path: str
    params: Params = ()
    body: bytes | None = None
    #: Unsigned headers the dialect adds (v2: ``X-API-Version`` or ``version``).
    headers: tuple[tuple[str, str], ...] = ()
    #: Reads a 2xx body into the typed answer itself, or gives ``None`` when it cannot
    #: (the body is then decoded and read as every other): :attr:`Call.envelope_model`.
    read: Callable[[bytes], Any] | None = None
