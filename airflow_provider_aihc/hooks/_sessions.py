"""The triggerer's HTTP sessions and the one CA rule of both senders.

Every trigger of an event loop that talks to one connection shares one
:class:`aiohttp.ClientSession` (at most :data:`MAX_CONNECTIONS_PER_HOST` sockets per
endpoint).  A session is built with the CA bundle and proxy settings of the moment and
replaced after :data:`SESSION_TTL_SECONDS`, so a rotated bundle reaches a long-lived
triggerer the way a rotated key does; the old one is closed once its last request is done.
When the loop ends (``asyncio.run`` cancels what is left), every session of it is closed.

Proxies come from the environment as aiohttp's ``trust_env`` reads them
(``HTTP(S)_PROXY``, ``NO_PROXY``, proxy credentials), but are looked up here, once per
session and endpoint, with ``trust_env`` off: on, aiohttp would also read ``~/.netrc`` for
every request (in a thread) and refuse any request that carries its own ``Authorization``
when netrc has an entry (a ``default`` line matches every host).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import ssl
import sys
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from airflow_provider_aihc.exceptions import AIHCConfigError

if TYPE_CHECKING:
    import aiohttp
    from yarl import URL

#: Sockets one triggerer process keeps open per endpoint, however many triggers poll.
MAX_CONNECTIONS_PER_HOST = 16
#: How long a session (with its CA bundle and proxy settings) is used before a new one.
SESSION_TTL_SECONDS = 300.0
#: How long the end of a loop waits for calls still running before closing their sessions.
SHUTDOWN_GRACE_SECONDS = 30.0
#: The environment variables of the CA rule, in the order they are consulted.
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")
#: What the first async call needs loaded beyond this module: imported in a thread.
ASYNC_STACK = (
    "aiohttp",
    "yarl",
    "airflow_provider_aihc.hooks.aihc",
    "airflow_provider_aihc.hooks.dialects.v1",
    "airflow_provider_aihc.hooks.dialects.v2",
)


async def preload_async_stack() -> None:
    """Import the async sender, aiohttp and the models in a thread, once per process.

    On the event loop these imports stalled a triggerer for most of a second on its first
    AIHC trigger (every other trigger of the process waited); in a thread they do not.
    """
    missing = [name for name in ASYNC_STACK if name not in sys.modules]
    if missing:
        await asyncio.to_thread(lambda: [importlib.import_module(name) for name in missing])


def ca_location() -> tuple[str | None, str | None]:
    """The CA certificates to verify AIHC against, as ``(cafile, capath)``: the
    ``REQUESTS_CA_BUNDLE`` file (or directory), else ``SSL_CERT_FILE`` and/or
    ``SSL_CERT_DIR``, else certifi's bundle.  Read on every call, never cached.

    :raises AIHCConfigError: a variable names a path that does not exist.
    """
    for name in CA_VARIABLES:
        path = os.environ.get(name)
        if path and not os.path.exists(path):
            raise AIHCConfigError(f"{name} names {path!r}, which does not exist")
    bundle = os.environ.get("REQUESTS_CA_BUNDLE")
    if bundle:
        return (None, bundle) if os.path.isdir(bundle) else (bundle, None)
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if cafile or capath:
        return cafile or None, capath or None
    import certifi

    return certifi.where(), None


def requests_verify() -> str:
    """:func:`ca_location` as the ``verify`` argument of ``requests``."""
    cafile, capath = ca_location()
    return cafile if cafile else str(capath)


def ssl_context() -> ssl.SSLContext:
    """A verifying client context from :func:`ca_location` (file reads: call it in a thread).

    :raises AIHCConfigError: the bundle cannot be read as certificates.
    """
    cafile, capath = ca_location()
    try:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
        raise AIHCConfigError(f"the CA bundle {cafile or capath!r} cannot be read: {err}") from None


class Lease(NamedTuple):
    """A session lent for one call, and the proxy (if any) its endpoint is reached by."""

    http: aiohttp.ClientSession
    proxy: URL | None
    proxy_auth: aiohttp.BasicAuth | None


def env_proxy(base_url: str) -> tuple[URL | None, aiohttp.BasicAuth | None]:
    """The proxy the environment names for ``base_url``, as aiohttp's ``trust_env`` picks
    it; ``(None, None)`` for none (reads ``~/.netrc``: call it in a thread)."""
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    try:
        return get_env_proxy_for_url(URL(base_url))
    except LookupError:
        return None, None


@dataclass(eq=False)
class _Session:
    """One session, when it is due for replacement, how many calls are using it, and the
    proxy of each endpoint it has served."""

    http: aiohttp.ClientSession
    expires: float
    users: int = 0
    retired: bool = False
    proxies: dict[str, tuple[URL | None, aiohttp.BasicAuth | None]] = field(default_factory=dict)


class _LoopSessions:
    """The sessions of one event loop, by connection id; closes them when the loop ends.

    A replaced session is closed by its last call.  When the loop ends (``asyncio.run``
    cancels every task at once, so a trigger's cleanup may still be stopping its job),
    idle sessions are closed at once and busy ones by their last call; a call made after
    that gets a session of its own, closed by that call.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.current: dict[str, _Session] = {}
        self.retired: set[_Session] = set()
        self.locks: dict[str, asyncio.Lock] = {}
        self.ending = False
        self.drained = asyncio.Event()  # the loop is ending and every session is closed
        keeper = loop.create_task(self._close_when_cancelled(loop), name="aihc-sessions")
        _KEEPERS.add(keeper)
        keeper.add_done_callback(_KEEPERS.discard)

    async def get(self, conn_id: str) -> _Session:
        """The current session of ``conn_id``; builds one (off the loop) when due."""
        entry = self.current.get(conn_id)
        if entry is not None and time.monotonic() < entry.expires:
            return entry
        async with self.locks.setdefault(conn_id, asyncio.Lock()):
            entry = self.current.get(conn_id)
            if entry is None or time.monotonic() >= entry.expires:
                await preload_async_stack()
                context = await asyncio.to_thread(ssl_context)  # reads the CA files
                if entry is not None:
                    await self.retire(entry)
                entry = _Session(_new_session(context), time.monotonic() + SESSION_TTL_SECONDS)
                if not self.ending:
                    self.current[conn_id] = entry
        return entry

    async def retire(self, entry: _Session) -> None:
        """Stop handing ``entry`` out; close it now if idle, else at its last call."""
        if not entry.retired:
            entry.retired = True
            self.retired.add(entry)
            await self.release(entry, 0)

    async def release(self, entry: _Session, calls: int = 1) -> None:
        """``calls`` calls are done with ``entry``; a retired, idle session is closed."""
        entry.users -= calls
        if entry.retired and entry.users <= 0 and entry in self.retired:
            self.retired.discard(entry)
            await entry.http.close()
            if self.ending and not self.retired:
                self.drained.set()

    async def _close_when_cancelled(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            await loop.create_future()
        finally:
            self.ending = True
            entries = list(self.current.values())
            self.current.clear()
            for entry in entries:
                await self.retire(entry)
            if self.retired:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.drained.wait(), SHUTDOWN_GRACE_SECONDS)
            await asyncio.gather(*(entry.http.close() for entry in self.retired))
            self.locks.clear()  # (they, and the event, would keep the closed loop alive)
            self.drained = asyncio.Event()


#: The keepers of the loops' sessions (a task must be referenced until it is done).
_KEEPERS: set[asyncio.Task[None]] = set()
_LOOPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopSessions] = (
    weakref.WeakKeyDictionary()
)


@contextlib.asynccontextmanager
async def borrowed(conn_id: str, base_url: str) -> AsyncIterator[Lease]:
    """The running loop's session for ``conn_id``, held for the duration of one call.

    :param conn_id: the Airflow connection id the session serves.
    :param base_url: the endpoint the call goes to (for its proxy).
    """
    loop = asyncio.get_running_loop()
    sessions = _LOOPS.get(loop)
    if sessions is None:
        sessions = _LOOPS[loop] = _LoopSessions(loop)
    entry = await sessions.get(conn_id)
    entry.users += 1
    try:
        if sessions.ending:  # the loop is ending: this session is closed after this call
            await sessions.retire(entry)
        if base_url not in entry.proxies:
            entry.proxies[base_url] = await asyncio.to_thread(env_proxy, base_url)
        yield Lease(entry.http, *entry.proxies[base_url])
    finally:
        await sessions.release(entry)


def _new_session(context: ssl.SSLContext) -> aiohttp.ClientSession:
    """A session of at most 16 sockets per host (proxies: see :func:`env_proxy`)."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit_per_host=MAX_CONNECTIONS_PER_HOST, ssl=context)
    session = aiohttp.ClientSession(connector=connector, trust_env=False, raise_for_status=False)
    # aiohttp silently sends an idempotent request again when a kept-alive socket drops
    # it; retries belong to RetryPolicy alone (counted, backed off, max_retries=0 honoured).
    # No public switch: aiohttp's own test client turns it off the same way.
    session._retry_connection = False
    return session
