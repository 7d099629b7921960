"""The lower layer of :class:`~airflow_provider_aihc.hooks.aihc.AIHCHook`: the connection,
and one way to send any declared call (``hooks/calls.py``), sync and async.

:meth:`CallingHook.send` and :meth:`CallingHook.asend` take a
:class:`~airflow_provider_aihc.hooks._endpoint.Call`, build its request in the
connection's dialect (the pool defaulted from the connection when the endpoint needs
one), send it with the retries of ``hooks/_transport.py`` and read the answer with the
call's model.  The hook's public methods are one call each over these; the watch drivers
send the calls their flows yield through them too.  Page sizes and bounds are class
attributes, like the clock and the sleeps: tests set them on the class or an instance.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError, create_model

from airflow_provider_aihc.exceptions import (
    AIHCAuthError,
    AIHCConfigError,
    AIHCNotFoundError,
    AIHCResponseError,
)
from airflow_provider_aihc.hooks import _transport
from airflow_provider_aihc.hooks._connection import ConnectionConfig, config_from_connection
from airflow_provider_aihc.hooks._endpoint import (
    POOL,
    QUEUE,
    ApiRequest,
    Call,
    is_managed_pool,
    missing_needs,
)
from airflow_provider_aihc.hooks._listing import Where
from airflow_provider_aihc.hooks.calls import GetResourcePool, ListJobsCall
from airflow_provider_aihc.hooks.dialects import Dialect, check_path_id, dialect_for
from airflow_provider_aihc.version_compat import BaseHook, aget_connection, mask_secret

if TYPE_CHECKING:
    import requests

T = TypeVar("T")

#: Jobs (and pools) asked for per list page, by default (:attr:`CallingHook.list_page_size`).
LIST_PAGE_SIZE = 100
#: A bound on pages read by one list, so a server that never stops paging cannot hang us.
LIST_MAX_PAGES = 1000
#: How long an async hook reuses its connection's settings before reading them again.
ASYNC_CONFIG_TTL_SECONDS = 300.0
#: A self-managed pool's id is its CCE cluster's (bce-sdk-go
#: ``services/aihc/api/v1/resourcePool.go:40``: "资源池 ID，CCE Cluster ID").
CCE_POOL_PREFIX = "cce-"


class CallingHook(BaseHook):  # type: ignore[misc]
    """An ``aihc`` connection and the senders of its calls.

    :param aihc_conn_id: the ``aihc`` connection.
    """

    #: Read once per attempt when signing; a seam for clock-skew tests.
    clock: ClassVar[staticmethod[[], float]] = staticmethod(time.time)
    #: How the sync sender waits between attempts; a seam for retry tests.
    sleep: ClassVar[staticmethod[[float], None]] = staticmethod(time.sleep)
    #: How the async sender waits between attempts; a seam for retry tests.
    asleep: ClassVar[staticmethod[[float], Awaitable[None]]] = staticmethod(asyncio.sleep)
    #: Jobs, pools and queues asked for per list page.
    list_page_size: int = LIST_PAGE_SIZE
    #: The most pages one list (or log read) reads.
    list_max_pages: int = LIST_MAX_PAGES
    #: Seconds :meth:`aconfig` reuses the connection's settings.
    async_config_ttl_seconds: float = ASYNC_CONFIG_TTL_SECONDS

    def __init__(self, aihc_conn_id: str) -> None:
        super().__init__()
        self.aihc_conn_id = aihc_conn_id
        self._async_config: ConnectionConfig | None = None
        self._async_config_expiry = 0.0
        self._async_config_lock: asyncio.Lock | None = None
        self._pool_managed: dict[str, bool] = {}

    @cached_property
    def config(self) -> ConnectionConfig:
        """The connection's settings; its secrets are registered with the masker."""
        return _masked(config_from_connection(self.get_connection(self.aihc_conn_id)))

    async def aconfig(self) -> ConnectionConfig:
        """:attr:`config`, read without blocking the event loop, and read again after
        :attr:`async_config_ttl_seconds` so that a rotated key reaches a long-lived
        triggerer; concurrent callers share one read."""
        if self._async_config is None or time.monotonic() >= self._async_config_expiry:
            if self._async_config_lock is None:
                self._async_config_lock = asyncio.Lock()
            async with self._async_config_lock:
                if self._async_config is None or time.monotonic() >= self._async_config_expiry:
                    conn = await aget_connection(self.aihc_conn_id)
                    self._async_config = _masked(config_from_connection(conn))
                    expiry = time.monotonic() + self.async_config_ttl_seconds
                    self._async_config_expiry = expiry
        return self._async_config

    @cached_property
    def session(self) -> requests.Session:
        """The ``requests`` session of this hook (keep-alive across calls)."""
        import requests

        return requests.Session()

    @property
    def dialect(self) -> Dialect:
        """The API generation the connection's ``api_version`` names."""
        return dialect_for(self.config.api_version)

    def resource_pool(self, resource_pool_id: str | None = None) -> str:
        """The pool to use: the given one, else the connection's ``resource_pool_id``."""
        return _pool(self.config, resource_pool_id, self.aihc_conn_id)

    def is_managed_pool(self, resource_pool_id: str | None = None) -> bool:
        """Whether the pool is managed, so that every call for one of its jobs needs the id
        of the job's queue: one of :data:`~airflow_provider_aihc.hooks._endpoint.MANAGED_POOLS`,
        or on ``api_version`` v2 a pool AIHC reports as managed
        (:attr:`~airflow_provider_aihc.models.pool.ResourcePool.managed`), asked once per
        hook and never for a CCE cluster's ``cce-`` id.  v1 goes by the id alone, as
        bce-sdk-go's v1 client does (``services/aihc/resource/client.go:20-21``).

        A pool AIHC will not describe to these credentials (no permission, or not found)
        counts as self-managed: AIHC itself then refuses a call that lacks the queue id.
        Any other failure of the lookup is raised (nothing has been created yet).
        """
        pool = self.resource_pool(resource_pool_id)
        if is_managed_pool(pool):
            return True
        if self.dialect.name == "v1" or pool.startswith(CCE_POOL_PREFIX):
            return False
        if pool not in self._pool_managed:
            try:
                self._pool_managed[pool] = self.send(GetResourcePool(pool)).managed
            except (AIHCAuthError, AIHCNotFoundError) as err:
                self.log.info("Pool %s was not described (%s): taken as self-managed", pool, err)
                self._pool_managed[pool] = False
        return self._pool_managed[pool]

    async def aresource_pool(self, resource_pool_id: str | None = None) -> str:
        """Async :meth:`resource_pool`."""
        return _pool(await self.aconfig(), resource_pool_id, self.aihc_conn_id)

    def send(self, call: Call[T]) -> T:
        """Send one declared call with ``requests`` and read its answer.

        :raises AIHCError: the call failed (after the retries its endpoint allows).
        """
        config = self.config
        dialect = dialect_for(config.api_version)
        request = _request(config, dialect, self.aihc_conn_id, call)
        result = _transport.send(self.session, config, request, clock=self.clock, sleep=self.sleep)
        return _parse(call, dialect, request, result)

    async def asend(self, call: Call[T]) -> T:
        """Async :meth:`send`, over the running loop's shared ``aiohttp`` session."""
        config = await self.aconfig()
        dialect = dialect_for(config.api_version)
        request = _request(config, dialect, self.aihc_conn_id, call)
        result = await _transport.asend(
            self.aihc_conn_id, config, request, clock=self.clock, sleep=self.asleep
        )
        return _parse(call, dialect, request, result)

    def _list_all(
        self,
        kind: type[ListJobsCall[Any]],
        resource_pool_id: str | None,
        queue: str | None,
        order_by: str | None,
        order: str | None,
        queue_id: str | None,
        where: Where,
    ) -> list[Any]:
        """Every job of the ListJobs pages (read as ``kind``) that ``where`` keeps, in list
        order; paging stops at an empty page, at the total, or at a job older than
        ``where`` wants (the list is newest first by ``createdAt`` then)."""
        if where.created_after is not None:
            order_by, order = "createdAt", "desc"
        first = kind(
            resource_pool_id, 1, self.list_page_size, queue, order_by, order, where.keyword,
            where.status, queue_id,
        )  # fmt: skip
        jobs: dict[str, Any] = {}
        received = 0
        for page_no in range(1, self.list_max_pages + 1):
            page = self.send(replace(first, page_no=page_no))
            # A job created between two pages shifts the others down one place: the
            # same job then arrives on both pages; keep its first sighting.
            older = False
            for job in page.jobs:
                if where.is_older(job.created_at):
                    older = True
                elif where.keeps(job.name, job.status):
                    jobs.setdefault(job.job_id, job)
            received += len(page.jobs)
            if older or not page.jobs or received >= page.total:
                break
        return list(jobs.values())


def _request(
    config: ConnectionConfig, dialect: Dialect, conn_id: str, call: Call[Any]
) -> ApiRequest:
    """The call in the connection's dialect; a job call names a resource pool."""
    endpoint = call.endpoint
    pool = _pool(config, getattr(call, POOL), conn_id) if POOL in endpoint.needs else None
    missing = missing_needs(call, pool)
    if missing:
        where = f" on managed resource pool {pool!r} (the queue's id, aihcq-...)" if pool else ""
        raise AIHCConfigError(
            f"{endpoint.operation} needs {', '.join(missing)}{where}; none was given"
        )
    queue_id = getattr(call, QUEUE, None)
    request = dialect.request(
        endpoint, pool, queue_id, call.params(), call.payload(), call.path_args()
    )
    if call.envelope_model is not None and dialect.name == "v1":
        request = replace(request, read=envelope_reader(call.envelope_model))
    return request


@cache
def envelope_reader(model: type[BaseModel]) -> Callable[[bytes], Any]:
    """Reads a v1 answer ``{"requestId": ..., "result": {...}}`` (the envelope bce-sdk-go
    unwraps, ``services/aihc/resource/client.go``: see ``hooks/dialects/v1.py``) into
    ``model`` from its bytes, with pydantic's JSON reader: the fields the model does not
    keep are skipped, not built as dicts and lists first.  ``None`` for a body it cannot
    read that way (not that envelope, or not valid for the model): the transport then
    decodes it as every other answer, and :func:`_parse` reads it with the call's lenient
    model or names what is wrong, as before.
    """
    envelope: Any = create_model(f"{model.__name__}Envelope", result=(model, ...))

    def read(body: bytes) -> Any:
        try:
            return envelope.model_validate_json(body).result
        except ValidationError:
            return None

    return read


def _parse(call: Call[T], dialect: Dialect, request: ApiRequest, result: Any) -> T:
    """The typed result; a 2xx answer the model cannot read is an :class:`AIHCResponseError`.

    :param result: what the transport gave: the decoded answer, or the typed one when the
        request's :attr:`~ApiRequest.read` read it.
    """
    if request.read is not None and isinstance(result, call.model):
        return result  # type: ignore[no-any-return]
    try:
        return call.read(dialect.answer(call.endpoint, result))
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'result'}: {e['msg']}"
            for e in err.errors(include_url=False, include_input=False)[:3]
        )
        raise AIHCResponseError(
            call.endpoint.operation, 200, "MalformedResponse", f"unexpected result ({problems})"
        ) from None


def _pool(config: ConnectionConfig, resource_pool_id: str | None, conn_id: str) -> str:
    pool = resource_pool_id or config.resource_pool_id
    if not pool:
        raise AIHCConfigError(
            "resource_pool_id is not set: pass resource_pool_id or set the extra "
            f"'resource_pool_id' of connection {conn_id!r}"
        )
    return check_path_id("resource_pool_id", pool)


def _masked(config: ConnectionConfig) -> ConnectionConfig:
    mask_secret(config.secret_access_key)
    if config.security_token:
        mask_secret(config.security_token)
    if config.job_tag_key:
        mask_secret(config.job_tag_key)
    return config
