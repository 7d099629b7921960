"""The emulator as a real HTTP server: in a thread for tests, or as a coroutine standalone.

::

    with EmulatorServer() as server:          # 127.0.0.1, a free port
        requests.get(server.url + "/api/v1/resourcepools", ...)
        server.backend.count("ListResourcePools")

:meth:`EmulatorServer.start` runs an event loop in a daemon thread and returns once the
socket listens; :meth:`EmulatorServer.serve` is the coroutine the standalone process
(``__main__``) awaits.  One event loop serves every connection (asyncio streams,
keep-alive), so a thousand concurrent pollers cost a thousand small coroutines.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence
from types import TracebackType

from . import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY
from .app import App
from .backend import Backend
from .http11 import MAX_HEAD_BYTES, serve_connection
from .jobs import Clock, Progression
from .pools import Pool

log = logging.getLogger(__name__)

BACKLOG = 4096


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
    ) -> None:
        self.host = host
        self.port = port
        self.access_key_id = access_key_id
        self.backend = backend or Backend(pools=pools, progression=progression, clock=clock)
        self.app = App(self.backend, {access_key_id: secret_access_key})
        self.connections_total = 0
        self._tasks: set[asyncio.Task[None]] = set()
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

    # ---- standalone: a coroutine ---------------------------------------------------------

    async def serve(
        self, stop: asyncio.Event, on_ready: Callable[[str], None] | None = None
    ) -> None:
        """Listen until ``stop`` is set, then close every connection.

        :param stop: set it to stop serving.
        :param on_ready: called with :attr:`url` once the socket listens.
        """
        server = await asyncio.start_server(
            self._on_connection, self.host, self.port, backlog=BACKLOG, limit=MAX_HEAD_BYTES
        )
        self.port = int(server.sockets[0].getsockname()[1])
        try:
            if on_ready is not None:
                on_ready(self.url)
            await stop.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await server.wait_closed()

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        self.connections_total += 1
        try:
            await serve_connection(reader, writer, self.app)
        except asyncio.CancelledError:
            writer.transport.abort()  # shutting down: end quietly
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]

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
        thread.join(timeout)
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
