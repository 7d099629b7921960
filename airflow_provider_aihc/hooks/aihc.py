"""AIHC hook: one method per endpoint, sync for workers and async for triggers.

The connection extra ``api_version`` picks the dialect (``hooks/dialects``): ``v1`` (the
default) sends the v1 paths below, ``v2`` the matching actions (``POST /?action=…``); the
methods, their arguments and typed results are the same.  The v1 endpoints name the
operations.  Endpoints (``/api/v1``, every job call with query ``resourcePoolId``): CreateJob ``POST
/aijobs``, ListJobs ``GET /aijobs``, GetJob ``GET /aijobs/{id}``, StopJob ``POST
/aijobs/{id}/stop``, DeleteJob ``DELETE /aijobs/{id}``, UpdateJob ``PUT /aijobs/{id}``,
GetJobEvents ``GET /aijobs/{id}/events``, GetPodLogs ``GET /aijobs/{id}/pods/{pod}/logs``,
GetPodEvents ``GET /aijobs/{id}/pods/{pod}/events``, and the resource pool and queue reads.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import ValidationError

from airflow_provider_aihc.exceptions import (
    AIHCConfigError,
    AIHCError,
    AIHCResponseError,
    AIHCValidationError,
)
from airflow_provider_aihc.hooks._base import (
    ApiRequest,
    ConnectionConfig,
    Endpoint,
    Params,
    config_from_connection,
)
from airflow_provider_aihc.hooks._listing import LIST_JOBS as LIST_JOBS  # one of the endpoints
from airflow_provider_aihc.hooks._listing import JobListing, _list_params
from airflow_provider_aihc.hooks._transport import asend, send
from airflow_provider_aihc.hooks.dialects import JOBS_PATH, Dialect, check_path_id, dialect_for
from airflow_provider_aihc.models.build import build_create_request
from airflow_provider_aihc.models.job import (
    CreateJobResult,
    DeleteJobResult,
    JobBrief,
    JobEvents,
    JobInfo,
    JobStatusItem,
    PodLogs,
    StopJobResult,
)
from airflow_provider_aihc.models.pool import Queue, QueueList, ResourcePool, ResourcePoolList
from airflow_provider_aihc.models.request import CreateJobRequest
from airflow_provider_aihc.version_compat import BaseHook, aget_connection, mask_secret

if TYPE_CHECKING:
    import requests

__all__ = ["AIHCHook", "check_path_id", "shared_async_hook"]

T = TypeVar("T")

CREATE_JOB = Endpoint("CreateJob", "POST", "/api/v1/aijobs", retryable=False)
GET_JOB = Endpoint("GetJob", "GET", "/api/v1/aijobs/{job_id}")
STOP_JOB = Endpoint("StopJob", "POST", "/api/v1/aijobs/{job_id}/stop")
DELETE_JOB = Endpoint("DeleteJob", "DELETE", "/api/v1/aijobs/{job_id}")
UPDATE_JOB = Endpoint("UpdateJob", "PUT", "/api/v1/aijobs/{job_id}")
GET_JOB_EVENTS = Endpoint("GetJobEvents", "GET", "/api/v1/aijobs/{job_id}/events")
GET_POD_LOGS = Endpoint("GetPodLogs", "GET", "/api/v1/aijobs/{job_id}/pods/{pod_name}/logs")
GET_POD_EVENTS = Endpoint("GetPodEvents", "GET", "/api/v1/aijobs/{job_id}/pods/{pod_name}/events")
LIST_POOLS = Endpoint("ListResourcePools", "GET", "/api/v1/resourcepools")
GET_POOL = Endpoint("GetResourcePool", "GET", "/api/v1/resourcepools/{pool_id}")
LIST_QUEUES = Endpoint("ListQueues", "GET", "/api/v1/resourcepools/{pool_id}/queue")
GET_QUEUE = Endpoint("GetQueue", "GET", "/api/v1/resourcepools/{pool_id}/queue/{queue_name}")

#: Jobs (and pools) asked for per list page; read on every call, so tests shrink it.
LIST_PAGE_SIZE = 100
#: A bound on pages read by one list, so a server that never stops paging cannot hang us.
LIST_MAX_PAGES = 1000
#: How long an async hook reuses its connection's settings before reading them again.
ASYNC_CONFIG_TTL_SECONDS = 300.0


class AIHCHook(JobListing, BaseHook):  # type: ignore[misc]
    """Talk to Baidu AIHC's v1 job API with ``bce-auth-v1`` signed requests.

    :param aihc_conn_id: the ``aihc`` connection: login = Access Key ID, password = Secret
        Access Key, host = endpoint (bare host or URL), extras ``region``,
        ``resource_pool_id``, ``security_token``, ``timeout``, ``max_retries``.
    """

    conn_name_attr = "aihc_conn_id"
    default_conn_name = "aihc_default"
    conn_type = "aihc"
    hook_name = "Baidu AIHC"
    #: Read once per attempt when signing; a seam for clock-skew tests.
    clock: ClassVar[staticmethod[[], float]] = staticmethod(time.time)
    #: How the sync sender waits between attempts; a seam for retry tests.
    sleep: ClassVar[staticmethod[[float], None]] = staticmethod(time.sleep)
    #: How the async sender waits between attempts; a seam for retry tests.
    asleep: ClassVar[staticmethod[[float], Awaitable[None]]] = staticmethod(asyncio.sleep)

    def __init__(self, aihc_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.aihc_conn_id = aihc_conn_id
        self._async_config: ConnectionConfig | None = None
        self._async_config_expiry = 0.0
        self._async_config_lock: asyncio.Lock | None = None

    # -- connection -------------------------------------------------------------------

    @cached_property
    def config(self) -> ConnectionConfig:
        """The connection's settings; its secrets are registered with the masker."""
        return _masked(config_from_connection(self.get_connection(self.aihc_conn_id)))

    async def aconfig(self) -> ConnectionConfig:
        """:attr:`config`, read without blocking the event loop, and read again after
        :data:`ASYNC_CONFIG_TTL_SECONDS` so that a rotated key reaches a long-lived
        triggerer; concurrent callers share one read."""
        if self._async_config is None or time.monotonic() >= self._async_config_expiry:
            if self._async_config_lock is None:
                self._async_config_lock = asyncio.Lock()
            async with self._async_config_lock:
                if self._async_config is None or time.monotonic() >= self._async_config_expiry:
                    conn = await aget_connection(self.aihc_conn_id)
                    self._async_config = _masked(config_from_connection(conn))
                    self._async_config_expiry = time.monotonic() + ASYNC_CONFIG_TTL_SECONDS
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

    # -- jobs -------------------------------------------------------------------------

    def create_job(
        self,
        request: CreateJobRequest | Mapping[str, Any],
        resource_pool_id: str | None = None,
        *,
        client_token: str | None = None,
    ) -> CreateJobResult:
        """Create a training job; sent exactly once (a lost answer is the caller's to resolve).

        :param request: a :class:`CreateJobRequest` or a mapping in wire (camelCase) form.
        :param resource_pool_id: the pool; defaults to the connection's.
        :param client_token: sent as ``clientToken`` (undocumented for jobs; harmless).
        :raises AIHCValidationError: ``request`` is invalid (every bad field; nothing sent).
        """
        model = request if isinstance(request, CreateJobRequest) else build_create_request(request)
        body = model.model_dump(mode="json", exclude_none=True)
        problems = self.dialect.create_problems(body)
        if problems:
            raise AIHCValidationError(problems)
        params: list[tuple[str, str | None]] = []
        if client_token:
            params.append(("clientToken", client_token))
        return self._call(
            CreateJobResult.model_validate,
            CREATE_JOB,
            resource_pool_id,
            params=params,
            queue_id=model.queue,
            body=body,
        )

    def get_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobInfo:
        """The job's details, with its pods."""
        return self._call(
            JobInfo.model_validate, GET_JOB, resource_pool_id, queue_id, job_id=job_id
        )

    async def aget_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> JobInfo:
        """Async :meth:`get_job`."""
        return await self._acall(
            JobInfo.model_validate, GET_JOB, resource_pool_id, queue_id, job_id=job_id
        )

    def get_job_brief(self, job_id: str, resource_pool_id: str | None = None) -> JobBrief:
        """The job's status, pod names and failure reasons, as a poll needs them: the
        same call as :meth:`get_job`, with a tenth of its parsing."""
        return self._call(JobBrief.model_validate, GET_JOB, resource_pool_id, job_id=job_id)

    async def aget_job_brief(self, job_id: str, resource_pool_id: str | None = None) -> JobBrief:
        """Async :meth:`get_job_brief`."""
        return await self._acall(JobBrief.model_validate, GET_JOB, resource_pool_id, job_id=job_id)

    async def aget_job_status_item(
        self, job_id: str, resource_pool_id: str | None = None
    ) -> JobStatusItem:
        """GetJob read as a :class:`JobStatusItem`: :meth:`aget_job_brief` (status, pods,
        reasons) plus the creation time, as the status watcher reads list items."""
        return await self._acall(
            JobStatusItem.model_validate, GET_JOB, resource_pool_id, job_id=job_id
        )

    async def aresource_pool(self, resource_pool_id: str | None = None) -> str:
        """Async :meth:`resource_pool`."""
        return _pool(await self.aconfig(), resource_pool_id, self.aihc_conn_id)

    def stop_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> StopJobResult:
        """Stop a running job (AIHC has no suspend; a stopped job ends)."""
        return self._call(
            StopJobResult.model_validate, STOP_JOB, resource_pool_id, queue_id, job_id=job_id
        )

    async def astop_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> StopJobResult:
        """Async :meth:`stop_job`."""
        return await self._acall(
            StopJobResult.model_validate, STOP_JOB, resource_pool_id, queue_id, job_id=job_id
        )

    def delete_job(
        self, job_id: str, resource_pool_id: str | None = None, *, queue_id: str | None = None
    ) -> DeleteJobResult:
        """Delete a job's record (for cleanup; stop it first to end it)."""
        return self._call(
            DeleteJobResult.model_validate, DELETE_JOB, resource_pool_id, queue_id, job_id=job_id
        )

    def update_job_priority(
        self,
        job_id: str,
        priority: str,
        resource_pool_id: str | None = None,
        *,
        queue_id: str | None = None,
    ) -> StopJobResult:
        """Change a queued job's priority: ``high``, ``normal`` or ``low``."""
        if priority not in ("high", "normal", "low"):
            raise AIHCConfigError(f"priority must be one of high, normal, low; got {priority!r}")
        return self._call(
            StopJobResult.model_validate,
            UPDATE_JOB,
            resource_pool_id,
            queue_id,
            job_id=job_id,
            body={"priority": priority},
        )

    def get_job_events(
        self,
        job_id: str,
        resource_pool_id: str | None = None,
        *,
        job_framework: str = "PyTorchJob",
        start_time: str | None = None,
        end_time: str | None = None,
    ) -> JobEvents:
        """The job's Kubernetes-style events (reason, message, type)."""
        params = _events_params(job_framework, start_time, end_time)
        return self._call(
            JobEvents.model_validate, GET_JOB_EVENTS, resource_pool_id, params=params, job_id=job_id
        )

    async def aget_job_events(
        self,
        job_id: str,
        resource_pool_id: str | None = None,
        *,
        job_framework: str = "PyTorchJob",
        start_time: str | None = None,
        end_time: str | None = None,
    ) -> JobEvents:
        """Async :meth:`get_job_events`."""
        params = _events_params(job_framework, start_time, end_time)
        return await self._acall(
            JobEvents.model_validate, GET_JOB_EVENTS, resource_pool_id, params=params, job_id=job_id
        )

    def get_pod_logs(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        start_time: int | None = None,
        max_lines: int | None = None,
        marker: str | None = None,
        end_time: int | None = None,
    ) -> PodLogs:
        """Log lines of one pod; pass the last ``next_marker`` to read on from there.

        ``start_time``/``end_time`` (epoch seconds) keep the lines written in that window:
        ``startTime`` is in AIHC's API table (aihc-api.md §3.2), ``endTime`` is what
        bce-sdk-go sends (``services/aihc/resource/client.go``) and v2's DescribeJobLogs
        takes (bce-openapi-meta ``schema/aihc/DescribeJobLogs.json``).
        """
        params = _logs_params(start_time, max_lines, marker, end_time)
        return self._call(
            PodLogs.model_validate,
            GET_POD_LOGS,
            resource_pool_id,
            params=params,
            job_id=job_id,
            pod_name=pod_name,
        )

    async def aget_pod_logs(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        start_time: int | None = None,
        max_lines: int | None = None,
        marker: str | None = None,
        end_time: int | None = None,
    ) -> PodLogs:
        """Async :meth:`get_pod_logs`."""
        params = _logs_params(start_time, max_lines, marker, end_time)
        return await self._acall(
            PodLogs.model_validate,
            GET_POD_LOGS,
            resource_pool_id,
            params=params,
            job_id=job_id,
            pod_name=pod_name,
        )

    def get_pod_events(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        job_framework: str = "PyTorchJob",
    ) -> JobEvents:
        """Events of one pod."""
        return self._call(
            JobEvents.model_validate,
            GET_POD_EVENTS,
            resource_pool_id,
            params=_events_params(job_framework, None, None),
            job_id=job_id,
            pod_name=pod_name,
        )

    def iter_pod_log_lines(
        self,
        job_id: str,
        pod_name: str,
        resource_pool_id: str | None = None,
        *,
        page_lines: int = 1000,
    ) -> Iterator[str]:
        """Every log line of a pod from its first, page by page (``marker`` paging)."""
        marker = ""
        while True:
            page = self.get_pod_logs(
                job_id, pod_name, resource_pool_id, max_lines=page_lines, marker=marker
            )
            lines = [line for record in page.logs for line in record.splitlines()]
            yield from lines
            if not lines or not page.next_marker or page.next_marker == marker:
                return
            marker = page.next_marker

    # -- pools and queues -------------------------------------------------------------

    def list_resource_pools(self) -> list[ResourcePool]:
        """Every resource pool the credentials can see (all pages)."""
        pools: list[ResourcePool] = []
        for page_no in range(1, LIST_MAX_PAGES + 1):
            page = self._call(
                ResourcePoolList.model_validate, LIST_POOLS, None, params=_list_params(page_no)
            )
            pools.extend(page.resource_pools)
            if not page.resource_pools or len(pools) >= page.total_count:
                break
        return pools

    def get_resource_pool(self, resource_pool_id: str | None = None) -> ResourcePool:
        """One resource pool."""
        pool_id = self.resource_pool(resource_pool_id)
        return self._call(ResourcePool.model_validate, GET_POOL, None, pool_id=pool_id)

    def list_queues(self, resource_pool_id: str | None = None) -> list[Queue]:
        """The queues of a pool (first page of up to 100)."""
        pool_id = self.resource_pool(resource_pool_id)
        page = self._call(
            QueueList.model_validate, LIST_QUEUES, None, params=_list_params(1), pool_id=pool_id
        )
        return page.queues

    def get_queue(self, queue_name: str, resource_pool_id: str | None = None) -> Queue:
        """One queue of a pool."""
        pool_id = self.resource_pool(resource_pool_id)
        return self._call(
            Queue.model_validate, GET_QUEUE, None, pool_id=pool_id, queue_name=queue_name
        )

    def test_connection(self) -> tuple[bool, str]:
        """One cheap signed call (list one page of resource pools)."""
        try:
            self._call(ResourcePoolList.model_validate, LIST_POOLS, None, params=_list_params(1, 1))
        except AIHCError as err:
            return False, str(err)
        return True, f"Connected to AIHC at {self.config.base_url}"

    # -- UI (Airflow < 3.2 reads these; newer versions read get_provider_info) ---------

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Relabel the standard connection form for AIHC."""
        from airflow_provider_aihc.get_provider_info import UI_FIELD_BEHAVIOUR

        return UI_FIELD_BEHAVIOUR

    @classmethod
    def get_connection_form_widgets(cls) -> dict[str, Any]:
        """The extra fields of the connection form, built from ``CONN_FIELDS``."""
        from airflow_provider_aihc.get_provider_info import CONN_FIELDS

        return {name: cls._form_field(spec) for name, spec in CONN_FIELDS.items()}

    @staticmethod
    def _form_field(spec: dict[str, Any]) -> Any:
        """Airflow 2's form field for one ``CONN_FIELDS`` entry.

        Airflow 2 accepts only text, integer, password and boolean fields (any other class
        drops the whole connection type), so an ``enum`` (``region``) is a text field that
        accepts only its values, listed in the description, and a non-integer number a text
        field that accepts only a number; numbers show their default.
        """
        # Only the Airflow 2 UI calls this; its stubs are not in the type-check env.
        from flask_appbuilder.fieldwidgets import (  # type: ignore[import-not-found]
            BS3PasswordFieldWidget,
            BS3TextFieldWidget,
        )
        from flask_babel import lazy_gettext  # type: ignore[import-not-found]
        from wtforms import IntegerField, PasswordField, StringField  # type: ignore[import-untyped]
        from wtforms.validators import (  # type: ignore[import-untyped]
            NumberRange,
            Optional,
            Regexp,
            any_of,
        )

        schema = spec["schema"]
        label, description = lazy_gettext(spec["label"]), spec["description"]
        if schema.get("format") == "password":
            return PasswordField(label, widget=BS3PasswordFieldWidget(), description=description)
        checks: list[Any] = [Optional()]
        field, extra = StringField, {}
        if "enum" in schema:
            checks.append(any_of(schema["enum"]))
            description = f"{description}: {', '.join(schema['enum'])}"
        elif "integer" in schema["type"]:
            field, extra = IntegerField, {"default": schema["default"]}
            checks.append(NumberRange(min=schema["minimum"]))
        elif "number" in schema["type"]:
            extra = {"default": str(schema["default"])}
            checks.append(Regexp(r"^\d+(\.\d+)?$", message="a number of seconds >= 0"))
        return field(
            label,
            validators=checks,
            widget=BS3TextFieldWidget(),
            description=description,
            **extra,
        )

    # -- plumbing ---------------------------------------------------------------------

    def _call(
        self,
        parse: Callable[[Any], T],
        endpoint: Endpoint,
        resource_pool_id: str | None,
        queue_id: str | None = None,
        *,
        params: Params = (),
        body: Any = None,
        **path_args: str,
    ) -> T:
        config = self.config
        dialect, request = self._prepare_call(
            config, endpoint, resource_pool_id, queue_id, params, body, path_args
        )
        result = send(self.session, config, request, clock=self.clock, sleep=self.sleep)
        return _parse(parse, endpoint, dialect.answer(endpoint, result))

    async def _acall(
        self,
        parse: Callable[[Any], T],
        endpoint: Endpoint,
        resource_pool_id: str | None,
        queue_id: str | None = None,
        *,
        params: Params = (),
        body: Any = None,
        **path_args: str,
    ) -> T:
        config = await self.aconfig()
        dialect, request = self._prepare_call(
            config, endpoint, resource_pool_id, queue_id, params, body, path_args
        )
        result = await asend(
            self.aihc_conn_id, config, request, clock=self.clock, sleep=self.asleep
        )
        return _parse(parse, endpoint, dialect.answer(endpoint, result))

    def _prepare_call(
        self,
        config: ConnectionConfig,
        endpoint: Endpoint,
        resource_pool_id: str | None,
        queue_id: str | None,
        params: Params,
        body: Any,
        path_args: Mapping[str, str],
    ) -> tuple[Dialect, ApiRequest]:
        """The connection's dialect and the request it makes of one call (both senders)."""
        dialect = dialect_for(config.api_version)
        request = _request(
            config, dialect, self.aihc_conn_id, endpoint, resource_pool_id, queue_id,
            params, body, path_args,
        )  # fmt: skip
        return dialect, request


_ASYNC_HOOKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AIHCHook]] = (
    weakref.WeakKeyDictionary()
)


def shared_async_hook(aihc_conn_id: str) -> AIHCHook:
    """One hook per connection id and running event loop, for the triggers of a triggerer:
    a thousand watched jobs read their connection once (per TTL), not once each, and hold
    no settings of their own."""
    hooks = _ASYNC_HOOKS.setdefault(asyncio.get_running_loop(), {})
    hook = hooks.get(aihc_conn_id)
    if hook is None:
        hook = hooks[aihc_conn_id] = AIHCHook(aihc_conn_id)
    return hook


def _parse(parse: Callable[[Any], T], endpoint: Endpoint, result: Any) -> T:
    """The typed result; a 2xx answer the model cannot read is an :class:`AIHCResponseError`."""
    try:
        return parse(result)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'result'}: {e['msg']}"
            for e in err.errors(include_url=False, include_input=False)[:3]
        )
        raise AIHCResponseError(
            endpoint.operation, 200, "MalformedResponse", f"unexpected result ({problems})"
        ) from None


def _request(
    config: ConnectionConfig,
    dialect: Dialect,
    conn_id: str,
    endpoint: Endpoint,
    resource_pool_id: str | None,
    queue_id: str | None,
    params: Params,
    body: Any,
    path_args: Mapping[str, str],
) -> ApiRequest:
    """Build a call in the connection's dialect; job calls name a resource pool."""
    pool = None
    if endpoint.path.startswith(JOBS_PATH):
        pool = _pool(config, resource_pool_id, conn_id)
    return dialect.request(endpoint, pool, queue_id, params, body, path_args)


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
    return config


def _events_params(job_framework: str, start_time: str | None, end_time: str | None) -> Params:
    params: list[tuple[str, str | None]] = [("jobFramework", job_framework)]
    params += [(k, v) for k, v in (("startTime", start_time), ("endTime", end_time)) if v]
    return params


def _logs_params(
    start_time: int | None, max_lines: int | None, marker: str | None, end_time: int | None = None
) -> Params:
    pairs = (
        ("startTime", start_time),
        ("endTime", end_time),
        ("maxLines", max_lines),
        ("marker", marker),
    )
    return [(k, str(v)) for k, v in pairs if v is not None]
