"""The async twins over the shared ``aiohttp`` session: same answers, same errors, same
retries as the sync path, one session (and its sockets) per connection id and event loop."""

from __future__ import annotations

import asyncio
import gc
import time
import warnings
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from hook_helpers import POOL, SK, StepClock, Waits, job_body, total_requests

from airflow_provider_aihc.auth.signer import format_timestamp
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import (
    AIHCAuthError,
    AIHCConfigError,
    AIHCNotFoundError,
    AIHCResponseError,
    AIHCServerError,
    AIHCThrottledError,
    AIHCTransportError,
)
from airflow_provider_aihc.hooks import _calling as calling_module
from airflow_provider_aihc.hooks import _sessions, _transport
from airflow_provider_aihc.hooks._sessions import borrowed
from airflow_provider_aihc.hooks._wire import Attempt
from airflow_provider_aihc.hooks.aihc import AIHCHook, shared_async_hook


@pytest.fixture
def job_id(aihc_emulator: EmulatorServer) -> str:
    """A job made in the backend directly: no request, no connection."""
    return str(aihc_emulator.backend.create_job(POOL, job_body("async-job")))


async def spy_client(hook: AIHCHook, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """Record the headers of every attempt the async sender signs (and then sends)."""
    sent: list[dict[str, str]] = []
    real = _transport.prepare

    def prepare(*args: Any) -> Attempt:
        attempt = real(*args)
        sent.append(dict(attempt.headers))
        return attempt

    monkeypatch.setattr(_transport, "prepare", prepare)
    return sent


async def session_of(conn_id: str = "aihc_default") -> aiohttp.ClientSession:
    """The running loop's shared session of ``conn_id``."""
    async with borrowed(conn_id, "http://127.0.0.1") as lease:
        return lease.http


async def test_aget_job_goes_through_the_shared_session(
    aihc_emulator: EmulatorServer, job_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = AIHCHook()
    sent = await spy_client(hook, monkeypatch)
    job = await hook.aget_job(job_id)
    assert (job.job_id, job.name, job.status) == (job_id, "async-job", "Created")
    assert job.pod_names == ["async-job-master-0", "async-job-worker-0"]
    assert len(sent) == 1
    assert "session" not in vars(hook)  # the requests session was never made
    assert aihc_emulator.backend.count("GetJob", 200) == 1


async def test_hooks_of_one_connection_share_one_session_and_socket(
    aihc_emulator: EmulatorServer, job_id: str, set_conn: Callable[..., None]
) -> None:
    set_conn("aihc_other")
    first, second = AIHCHook(), AIHCHook()
    await first.aget_job(job_id)
    await second.aget_job(job_id)
    await first.aget_job_events(job_id)
    await second.aget_pod_logs(job_id, "async-job-master-0")
    assert aihc_emulator.backend.count("GetJob", 200) == 2
    assert aihc_emulator.connections_total == 1  # keep-alive, one session
    session = await session_of()
    assert not session.closed
    assert session.connector is not None
    assert session.connector.limit_per_host == 16
    other = AIHCHook("aihc_other")
    await other.aget_job(job_id)
    assert await session_of("aihc_other") is not session  # one session per connection id
    assert aihc_emulator.connections_total == 2


def test_each_event_loop_gets_its_own_session_closed_with_it(
    aihc_emulator: EmulatorServer, job_id: str
) -> None:
    async def poll() -> aiohttp.ClientSession:
        await AIHCHook().aget_job(job_id)
        return await session_of()

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)  # "Unclosed client session"
        first = asyncio.run(poll())
        second = asyncio.run(poll())
        gc.collect()
    assert first is not second
    assert first.closed
    assert second.closed
    assert aihc_emulator.backend.count("GetJob", 200) == 2


async def test_a_session_is_replaced_after_its_ttl_and_closed_when_idle(
    aihc_emulator: EmulatorServer, job_id: str
) -> None:
    hook = AIHCHook()
    await hook.aget_job(job_id)
    old = await session_of()
    _sessions._LOOPS[asyncio.get_running_loop()].current["aihc_default"].expires = 0.0
    await hook.aget_job(job_id)  # builds a new session (with the CA bundle of now)
    new = await session_of()
    assert new is not old
    await asyncio.sleep(0)  # the old, idle session's close runs
    await asyncio.sleep(0)
    assert old.closed
    assert not new.closed


async def test_async_twins(aihc_emulator: EmulatorServer, job_id: str) -> None:
    hook = AIHCHook()
    statuses = [(await hook.aget_job(job_id)).status for _ in range(5)]
    assert statuses == ["Created", "Scheduled", "Running", "Succeeded", "Succeeded"]
    events = await hook.aget_job_events(job_id)
    assert [e.reason for e in events.events] == ["Created", "Scheduled", "Running", "Succeeded"]
    tail = await hook.aget_pod_logs(job_id, "async-job-master-0", max_lines=2)
    full = await hook.aget_pod_logs(job_id, "async-job-master-0", marker="")
    full_lines = full.logs[0].splitlines()
    assert tail.logs[0].splitlines() == full_lines[-2:]
    # A first page is the whole log, whatever max_lines says (bce-openapi-meta
    # i18n/zh-CN/aihc/DescribeJobLogs.json:10,12); the page
    # from its marker holds what came after (nothing: the job has ended).
    first = await hook.aget_pod_logs(job_id, "async-job-master-0", max_lines=5, marker="")
    rest = await hook.aget_pod_logs(
        job_id, "async-job-master-0", max_lines=5, marker=first.next_marker or "missing"
    )
    assert first.logs[0].splitlines() == full_lines
    assert rest.logs == []
    stopped = await hook.astop_job(job_id)
    assert stopped.job_id == job_id
    assert aihc_emulator.backend.count("StopJob", 200) == 1


async def test_astop_job_stops(aihc_emulator: EmulatorServer, job_id: str) -> None:
    await AIHCHook().astop_job(job_id)
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"


# ---- retries, like the sync path -----------------------------------------------------------


async def test_two_503s_then_success_is_three_requests(
    aihc_emulator: EmulatorServer, job_id: str, waits: Waits
) -> None:
    aihc_emulator.backend.add_fault(scenarios.error(503, operation="GetJob", times=2))
    assert (await AIHCHook().aget_job(job_id)).job_id == job_id
    assert aihc_emulator.backend.count("GetJob") == 3
    assert len(waits.async_) == 2
    assert waits.sync == []


async def test_retry_after_is_honoured(
    aihc_emulator: EmulatorServer, job_id: str, waits: Waits
) -> None:
    aihc_emulator.backend.add_fault(scenarios.throttle(retry_after=1, times=2))
    await AIHCHook().aget_job(job_id)
    assert waits.async_ == [1.0, 1.0]


async def test_drops_are_retried(aihc_emulator: EmulatorServer, job_id: str) -> None:
    aihc_emulator.backend.add_fault(scenarios.drop_before(operation="GetJob"))
    aihc_emulator.backend.add_fault(scenarios.drop_after(operation="StopJob"))
    await AIHCHook().aget_job(job_id)
    await AIHCHook().astop_job(job_id)
    assert aihc_emulator.backend.count("GetJob") == 2
    assert aihc_emulator.backend.count("StopJob") == 2


async def test_gives_up_after_max_retries_with_the_last_error(
    aihc_emulator: EmulatorServer, job_id: str, set_conn: Callable[..., None]
) -> None:
    set_conn(extra={"max_retries": 1})
    aihc_emulator.backend.add_fault(
        scenarios.error(500, operation="GetJob"),
        scenarios.error(503, operation="GetJob"),
        scenarios.error(502, operation="GetJob"),
    )
    with pytest.raises(AIHCServerError) as raised:
        await AIHCHook().aget_job(job_id)
    assert (raised.value.status, raised.value.code) == (503, "ServiceUnavailable")
    assert aihc_emulator.backend.count("GetJob") == 2


async def test_each_attempt_is_signed_afresh(
    aihc_emulator: EmulatorServer, job_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = StepClock(step=1.0)
    start = clock.now
    monkeypatch.setattr(AIHCHook, "clock", staticmethod(clock))
    hook = AIHCHook()
    sent = await spy_client(hook, monkeypatch)
    aihc_emulator.backend.add_fault(scenarios.error(503, times=2))
    await hook.aget_job(job_id)
    assert [h["x-bce-date"] for h in sent] == [format_timestamp(start + i) for i in range(3)]


# ---- errors, like the sync path ------------------------------------------------------------


async def test_errors(
    aihc_emulator: EmulatorServer, job_id: str, set_conn: Callable[..., None]
) -> None:
    set_conn(extra={"max_retries": 0})
    hook = AIHCHook()
    with pytest.raises(AIHCNotFoundError):
        await hook.aget_job("pytorchjob-missing")
    aihc_emulator.backend.add_fault(scenarios.throttle(retry_after=3))
    with pytest.raises(AIHCThrottledError) as throttled:
        await hook.aget_job(job_id)
    assert throttled.value.retry_after == 3.0
    aihc_emulator.backend.add_fault(scenarios.malformed())
    with pytest.raises(AIHCResponseError):
        await hook.aget_job(job_id)
    aihc_emulator.backend.add_fault(scenarios.drop_before())
    with pytest.raises(AIHCTransportError):
        await hook.aget_job(job_id)


async def test_wrong_secret(aihc_emulator: EmulatorServer, set_conn: Callable[..., None]) -> None:
    set_conn(password="wrong-" + SK)
    with pytest.raises(AIHCAuthError) as raised:
        await AIHCHook().aget_job("pytorchjob-1")
    assert raised.value.code == "SignatureDoesNotMatch"
    assert "wrong-" + SK not in str(raised.value)


async def test_timeout(
    aihc_emulator: EmulatorServer, job_id: str, set_conn: Callable[..., None]
) -> None:
    set_conn(extra={"max_retries": 0, "timeout": 0.2})
    aihc_emulator.backend.add_fault(scenarios.delay(1.0))
    with pytest.raises(AIHCTransportError, match="Timeout"):
        await AIHCHook().aget_job(job_id)


async def test_clock_skew(
    aihc_emulator: EmulatorServer, job_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(AIHCHook, "clock", staticmethod(lambda: time.time() - 7200))
    with pytest.raises(AIHCAuthError, match="clock") as raised:
        await AIHCHook().aget_job(job_id)
    assert raised.value.code == "RequestExpired"


async def test_refusals_send_nothing(
    aihc_emulator: EmulatorServer, set_conn: Callable[..., None]
) -> None:
    hook = AIHCHook()
    for bad in ("../resourcepools", "a/b", ".."):
        with pytest.raises(AIHCConfigError):
            await hook.aget_job(bad)
        with pytest.raises(AIHCConfigError):
            await hook.aget_pod_logs("pytorchjob-1", bad)
    set_conn("aihc_nopool", extra={"resource_pool_id": None})
    with pytest.raises(AIHCConfigError, match="resource_pool_id"):
        await AIHCHook("aihc_nopool").aget_job("pytorchjob-1")
    assert total_requests(aihc_emulator) == 0


# ---- one hook per connection id and loop, its settings read once per TTL -------------------


async def test_concurrent_polls_read_the_connection_once(
    aihc_emulator: EmulatorServer, job_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    real = calling_module.aget_connection

    async def counting(conn_id: str) -> Any:
        reads.append(conn_id)
        return await real(conn_id)

    monkeypatch.setattr(calling_module, "aget_connection", counting)
    hook = shared_async_hook("aihc_default")
    assert shared_async_hook("aihc_default") is hook
    jobs = await asyncio.gather(*(hook.aget_job_brief(job_id) for _ in range(20)))
    assert {job.job_id for job in jobs} == {job_id}
    assert reads == ["aihc_default"]


async def test_a_rotated_key_is_read_after_the_ttl(
    aihc_emulator: EmulatorServer,
    job_id: str,
    set_conn: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hook = shared_async_hook("aihc_default")
    await hook.aget_job_brief(job_id)
    set_conn(password="rotated-" + SK)  # the key changes under a running triggerer
    await hook.aget_job_brief(job_id)  # within the TTL: the settings it has
    monkeypatch.setattr(AIHCHook, "async_config_ttl_seconds", 0.0)
    hook._async_config_expiry = 0.0  # the TTL has passed
    with pytest.raises(AIHCAuthError):  # the emulator still expects the old key
        await hook.aget_job_brief(job_id)
    assert (await hook.aconfig()).secret_access_key == "rotated-" + SK


def test_each_event_loop_gets_its_own_shared_hook(aihc_emulator: EmulatorServer) -> None:
    async def hook() -> AIHCHook:
        return shared_async_hook("aihc_default")

    assert asyncio.run(hook()) is not asyncio.run(hook())


def test_a_call_made_while_the_loop_shuts_down_is_answered_and_its_session_closed(
    aihc_emulator: EmulatorServer, job_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio.run cancels every task at once: a trigger's cleanup that stops its job
    runs beside the closing of the sessions, and must still be answered."""
    built: list[aiohttp.ClientSession] = []
    real = _sessions._new_session
    monkeypatch.setattr(_sessions, "_new_session", lambda *a: built.append(real(*a)) or built[-1])

    async def cleanup_on_cancel(started: asyncio.Event) -> None:
        try:
            started.set()
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # the sessions' keeper is cancelled in this same round
            await AIHCHook().astop_job(job_id)

    async def main() -> None:
        await AIHCHook().aget_job(job_id)  # the session exists before the shutdown
        started = asyncio.Event()
        asyncio.get_running_loop().create_task(cleanup_on_cancel(started))
        await started.wait()

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        asyncio.run(main())
        gc.collect()
    assert aihc_emulator.backend.count("StopJob", 200) == 1
    assert built
    assert all(session.closed for session in built)
