"""The emulator as a real HTTP server on aiohttp's: in a thread for tests, or standalone.

::

    with EmulatorServer() as server:          # 127.0.0.1, a free port
        requests.get(server.url + "/api/v1/resourcepools", ...)
        server.backend.count("ListResourcePools")

HTTP itself (parsing, keep-alive, ``Expect: 100-continue``, limits, refusing smuggled or
garbled requests with a 400 and a closed connection) is aiohttp's.  This module only
adapts one aiohttp request to the socket-free :class:`~.http.app.App` and back, bounds the
time
a client may take to send its body (:data:`BODY_TIMEOUT_SECONDS`), and carries out the
two faults only a server can: a late answer (``delay``) and no answer at all (``drop``:
the connection is aborted).

:meth:`EmulatorServer.start` runs an event loop in a daemon thread and returns once the
socket listens; :meth:`EmulatorServer.serve` is the coroutine the standalone process
(``__main__``) awaits.  Nothing is logged per request above DEBUG.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import uuid
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from airflow_provider_aihc.emulator import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY
from airflow_provider_aihc.emulator.backend import Backend
from airflow_provider_aihc.emulator.connection import EmulatorConnection, connection_to
from airflow_provider_aihc.emulator.state.errors import EmulatorError
from airflow_provider_aihc.emulator.state.execute import ExecuteSettings
from airflow_provider_aihc.emulator.state.jobs import Clock, Progression
from airflow_provider_aihc.emulator.state.pools import Pool

from .http.app import App
from .http.wire import Request, Response, error_response

log = logging.getLogger(__name__)

BACKLOG = 4096
MAX_BODY_BYTES = 32 * 1024 * 1024
IDLE_TIMEOUT_SECONDS = 300.0
#: Seconds a client may take to send a request body once its head has arrived.
BODY_TIMEOUT_SECONDS = 30.0
#: Seconds an in-flight answer gets to finish when the server stops.
SHUTDOWN_TIMEOUT_SECONDS = 1.0
SERVER_HEADER = "aihc-emulator"
#: Where the standalone emulator takes a secret of one's own from (never the command line).
SECRET_SOURCES = "AIHC_EMULATOR_SECRET_ACCESS_KEY or --secret-access-key-file"


class EmulatorServer:
    """An AIHC emulator listening on ``host:port``.

    :param host: the address to bind; ``127.0.0.1`` keeps it local.
    :param port: the port; 0 picks a free one (read it from :attr:`url` after start).
    :param access_key_id: the one access key id accepted.
    :param secret_access_key: its secret.
    :param progression: how jobs move (per poll by default).
    :param pools: the resource pools (``cce-emulator0`` and ``aihc-serverless`` by default).
    :param clock: the jobs' clock, epoch seconds (signatures are checked against real time).
    :param backend: a ready backend, instead of ``progression``/``pools``/``clock``.
    :param body_timeout: seconds a client may take to send a body (then ``408``, closed).
    :param execute: run every job's replicas as local processes (``execute.py``): ``True``
        or the :class:`~.state.execute.ExecuteSettings`.  It runs whatever command it is sent, so
        it binds a loopback address only and refuses the documented default credentials and
        any secret shorter than :data:`MIN_EXECUTE_SECRET_LENGTH` characters.  A ``backend``
        that executes is held to the same rules.
    :param allow_default_credentials: execute even with the documented default secret.
    :raises ValueError: ``execute`` (or an executing ``backend``) with a non-loopback
        ``host``, a short secret or, unless allowed, the default secret access key.
    :param control_token: the token control ``POST`` requests must carry; default a random
        one per server (read it from :attr:`control_token`).
    :param loopback_host_only: refuse every API request whose ``Host`` is not loopback
        (always on with ``execute``: a page of another site cannot reach it by DNS
        rebinding).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        access_key_id: str = DEFAULT_ACCESS_KEY_ID,
        secret_access_key: str = DEFAULT_SECRET_ACCESS_KEY,
        progression: Progression | None = None,
        pools: Sequence[Pool] | None = None,
        clock: Clock | None = None,
        backend: Backend | None = None,
        body_timeout: float = BODY_TIMEOUT_SECONDS,
        execute: bool | ExecuteSettings = False,
        allow_default_credentials: bool = False,
        control_token: str | None = None,
        loopback_host_only: bool = False,
    ) -> None:
        settings = _execute_settings(execute)
        executes = settings is not None or (backend is not None and backend.executor is not None)
        if executes:
            check_execute(host, secret_access_key, allow_default_credentials)
        self.host = host
        self.port = port
        self.access_key_id = access_key_id
        self._secret_access_key = secret_access_key
        self.body_timeout = body_timeout
        self.backend = backend or Backend(
            pools=pools, progression=progression, clock=clock, execute=settings
        )
        #: What control ``POST`` requests must send in ``X-AIHC-Emulator-Token``.
        self.control_token = control_token or secrets.token_urlsafe(24)
        self.app = App(
            self.backend,
            {access_key_id: secret_access_key},
            control_token=self.control_token,
            loopback_host_only=loopback_host_only or executes,
        )
        #: TCP connections accepted since the object was made.
        self.connections_total = 0
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """``http://host:port`` (the bound port once started)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def connection(self, **extra: Any) -> EmulatorConnection:
        """The Airflow connection that points at this server, its credentials and the
        default pool: ``.json`` and ``.uri`` are its two forms (``connection.py``).

        :param extra: connection extras (``api_version="v2"``, ``max_retries=1``, …);
            ``None`` leaves one out.
        """
        return connection_to(
            self.url,
            access_key_id=self.access_key_id,
            secret_access_key=self._secret_access_key,
            **extra,
        )

    # ---- standalone: a coroutine ---------------------------------------------------------

    async def serve(
        self, stop: asyncio.Event, on_ready: Callable[[str], None] | None = None
    ) -> None:
        """Listen until ``stop`` is set, then close every connection.

        :param stop: set it to stop serving.
        :param on_ready: called with :attr:`url` once the socket listens.
        :raises OSError: when the address cannot be bound.
        """
        runner = web.AppRunner(
            self._web_app(),
            handle_signals=False,
            shutdown_timeout=SHUTDOWN_TIMEOUT_SECONDS,
            access_log=None,
            keepalive_timeout=IDLE_TIMEOUT_SECONDS,
            lingering_time=0,
            logger=log,
        )
        await runner.setup()
        self._runner = runner
        listener: asyncio.Server | None = None
        try:
            listener = await asyncio.get_running_loop().create_server(
                self._accept, self.host, self.port, backlog=BACKLOG
            )
            self.port = int(listener.sockets[0].getsockname()[1])
            if on_ready is not None:
                on_ready(self.url)
            await stop.wait()
        finally:
            if listener is not None:
                listener.close()
            await runner.cleanup()  # closes every open connection
            if listener is not None:
                await listener.wait_closed()
            self._runner = None
            await asyncio.to_thread(self.backend.close)  # no executed job outlives the server

    def _web_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        # Every path, newlines included (an encoded %0A decodes to one), reaches the App.
        app.router.add_route("*", r"/{path:[\s\S]*}", self._handle)
        return app

    def _accept(self) -> RequestHandler:
        """The protocol of one new connection (aiohttp's), counted."""
        protocols = self._runner.server if self._runner is not None else None
        if protocols is None:
            raise RuntimeError("the emulator is not serving")
        self.connections_total += 1
        return protocols()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        """One aiohttp request through :class:`App`; a drop aborts the connection."""
        body = await self._read_body(request)
        if isinstance(body, Response):
            return _to_aiohttp(body, close=True)
        headers = list(request.headers.items())
        peer = request.remote or ""
        response = self.app(Request(request.method, request.raw_path, headers, body, peer))
        if response.delay > 0:
            await asyncio.sleep(response.delay)
        if response.drop:
            if request.transport is not None:
                request.transport.abort()
            # Never sent: writing to the aborted transport ends the connection quietly.
            return web.Response(status=204)
        return _to_aiohttp(response, close=False)

    async def _read_body(self, request: web.Request) -> bytes | Response:
        """The body, or the error answer when it is too large or too slow to arrive."""
        try:
            async with asyncio.timeout(self.body_timeout):
                return await request.read()
        except TimeoutError:
            error = EmulatorError(408, "RequestTimeout", "the request body did not arrive")
        except web.HTTPRequestEntityTooLarge:
            error = EmulatorError(413, "EntityTooLarge", "the request body is too large")
        return error_response(error, str(uuid.uuid4()))

    # ---- in-process: a thread ------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> EmulatorServer:
        """Serve from a daemon thread; return once listening.

        :param timeout: seconds to wait for the socket.
        :raises RuntimeError: when it could not start (e.g. the port is taken).
        """
        if self._thread is not None:
            raise RuntimeError("the emulator is already running")
        self._ready.clear()
        self._error = None
        self._thread = threading.Thread(target=self._run, name="aihc-emulator", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError(f"the AIHC emulator did not start within {timeout} s")
        if self._error is not None:
            self._thread.join(timeout)
            self._thread = None
            raise RuntimeError(f"the AIHC emulator could not start: {self._error}") from (
                self._error
            )
        log.debug("AIHC emulator listening on %s", self.url)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and wait for the thread (a no-op when not running)."""
        thread, loop, event = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if loop is not None and event is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:
                log.debug("emulator loop already closed")
        executor = self.backend.executor
        thread.join(timeout + (executor.settings.grace if executor is not None else 0.0))
        self._thread = None

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._thread_main())
        except BaseException as exc:  # reported by start()
            self._error = exc
        finally:
            self._ready.set()
            loop.close()

    async def _thread_main(self) -> None:
        self._stop_event = asyncio.Event()
        await self.serve(self._stop_event, on_ready=lambda _url: self._ready.set())


def _execute_settings(execute: bool | ExecuteSettings) -> ExecuteSettings | None:
    if isinstance(execute, ExecuteSettings):
        return execute
    return ExecuteSettings() if execute else None


#: The shortest secret access key an executing emulator accepts (an empty or short secret
#: is as guessable as the documented one: anyone who signs with it runs commands).
MIN_EXECUTE_SECRET_LENGTH = 16


def check_execute(host: str, secret_access_key: str, allow_default_credentials: bool) -> None:
    """Refuse to execute commands for anyone but this machine's users, or for anyone who
    knows the documented default secret (unless explicitly allowed) or can guess a short one.

    :raises ValueError: saying which rule and how to satisfy it.
    """
    if not is_loopback(host):
        raise ValueError(
            f"execute runs the commands it is sent: it binds a loopback address only, not {host!r}"
        )
    if secret_access_key == DEFAULT_SECRET_ACCESS_KEY and not allow_default_credentials:
        raise ValueError(
            "execute runs the commands it is sent: give a secret access key of your own "
            f"({SECRET_SOURCES}), or --allow-default-credentials to accept the documented one"
        )
    if secret_access_key != DEFAULT_SECRET_ACCESS_KEY and (
        len(secret_access_key) < MIN_EXECUTE_SECRET_LENGTH
    ):
        raise ValueError(
            "execute runs the commands it is sent: its secret access key must have at least "
            f"{MIN_EXECUTE_SECRET_LENGTH} characters, this one has {len(secret_access_key)}"
        )


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _to_aiohttp(response: Response, *, close: bool) -> web.Response:
    """The aiohttp answer of an :class:`App` answer (aiohttp adds length and date)."""
    answer = web.Response(status=response.status, body=response.body)
    for name, value in response.headers:
        answer.headers.add(name, value)
    answer.headers["Server"] = SERVER_HEADER
    if close:
        answer.force_close()
    return answer
