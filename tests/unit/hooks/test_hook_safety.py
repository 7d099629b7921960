"""Safety: ids that could escape their path segment, encoding of odd ids, nothing secret in
logs, exceptions or reprs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator

import pytest
from hook_helpers import SK, TOKEN, Sent, job_body, total_requests

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.pools import Pool, Queue
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCError, AIHCNotFoundError
from airflow_provider_aihc.hooks.aihc import AIHCHook

Spy = Callable[[AIHCHook], list[Sent]]

BAD_IDS = ["../resourcepools", "a/b", "..", ".", "", "   ", "a\\b", "/", "x/../../y"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_ids_that_escape_their_segment_are_refused_before_sending(
    hook: AIHCHook, aihc_emulator: EmulatorServer, bad: str
) -> None:
    job = "pytorchjob-1"
    calls: dict[str, Callable[[], object]] = {
        "get_job": lambda: hook.get_job(bad),
        "stop_job": lambda: hook.stop_job(bad),
        "delete_job": lambda: hook.delete_job(bad),
        "update_job_priority": lambda: hook.update_job_priority(bad, "high"),
        "get_job_events": lambda: hook.get_job_events(bad),
        "get_pod_logs(job)": lambda: hook.get_pod_logs(bad, "pod-0"),
        "get_pod_logs(pod)": lambda: hook.get_pod_logs(job, bad),
        "get_pod_events(pod)": lambda: hook.get_pod_events(job, bad),
        "get_resource_pool": lambda: hook.get_resource_pool(bad or "../x"),
        "list_queues": lambda: hook.list_queues(bad or "../x"),
        "get_queue": lambda: hook.get_queue(bad),
        "get_job(pool)": lambda: hook.get_job(job, bad or "../x"),
        "list_jobs(pool)": lambda: hook.list_jobs(bad or "../x"),
    }
    for name, call in calls.items():
        with pytest.raises(AIHCConfigError, match="must be a non-empty id") as raised:
            call()
        assert repr(bad) in str(raised.value) or bad == "", name
    assert total_requests(aihc_emulator) == 0


def test_percent_signs_are_encoded_not_decoded(
    hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    """An id that is already percent-encoded stays one literal segment."""
    with pytest.raises(AIHCNotFoundError) as raised:
        hook.get_job("%2E%2E%2Fresourcepools")
    assert raised.value.code == "JobNotFound"
    [record] = aihc_emulator.backend.requests
    assert record.operation == "GetJob"
    assert record.path == "/api/v1/aijobs/%252E%252E%252Fresourcepools"


UNICODE_POOL = "cce-测试 +x"


@pytest.fixture
def unicode_emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """An emulator whose pool and queues have ids with CJK, space and ``+``."""
    queues = (Queue("default"), Queue("a+b"), Queue("a b"), Queue("队列 ü"))
    with EmulatorServer(pools=[Pool(UNICODE_POOL, "unicode pool", queues=queues)]) as server:
        conn = server.connection(resource_pool_id=UNICODE_POOL)
        monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", conn.json)
        yield server


def test_unicode_space_and_plus_are_encoded_and_signed(
    unicode_emulator: EmulatorServer, wire: Spy
) -> None:
    hook = AIHCHook()
    sent = wire(hook)
    created = hook.create_job(job_body("odd-pool"))
    assert hook.get_job(created.job_id).resource_pool_id == UNICODE_POOL
    assert [job.job_id for job in hook.list_jobs()] == [created.job_id]
    assert hook.list_jobs(queue="队列 ü") == []
    assert hook.get_resource_pool().pool_id == UNICODE_POOL
    assert [q.name for q in hook.list_queues()] == ["default", "a+b", "a b", "队列 ü"]
    for name in ("a+b", "a b", "队列 ü"):
        assert hook.get_queue(name).name == name  # '+' is not a space, nor the reverse
    with pytest.raises(AIHCNotFoundError) as raised:
        hook.get_pod_logs(created.job_id, "pod ü+1 x")
    assert raised.value.code == "PodNotFound"  # signed correctly, then not found
    encoded_pool = "cce-%E6%B5%8B%E8%AF%95%20%2Bx"
    assert f"resourcePoolId={encoded_pool}" in sent[0].url
    assert "queue=%E9%98%9F%E5%88%97%20%C3%BC" in sent[3].url
    paths = [r.path for r in unicode_emulator.backend.requests]
    assert f"/api/v1/resourcepools/{encoded_pool}/queue/a%2Bb" in paths
    assert f"/api/v1/resourcepools/{encoded_pool}/queue/a%20b" in paths
    assert all(r.status in (200, 404) for r in unicode_emulator.backend.requests)


# ---- nothing secret in logs ----------------------------------------------------------------

WRONG_SECRET = "wrong-secret-abcdef0123456789"
LOGGERS = ("", "airflow_provider_aihc", "urllib3", "requests", "aiohttp", "tenacity", "asyncio")


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def debug_logs() -> Iterator[list[logging.LogRecord]]:
    """Every log record at DEBUG and above, from the hook, its HTTP clients and the rest."""
    handler = _Collect()
    saved = []
    for name in LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level, logger.disabled))
        logger.setLevel(logging.DEBUG)
        logger.disabled = False
    root = logging.getLogger()
    root.addHandler(handler)
    for name in LOGGERS[1:]:
        logging.getLogger(name).addHandler(handler)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)
        for name in LOGGERS[1:]:
            logging.getLogger(name).removeHandler(handler)
        for logger, level, disabled in saved:
            logger.setLevel(level)
            logger.disabled = disabled


def test_no_secret_token_or_signature_is_ever_logged(
    set_conn: Callable[..., None],
    aihc_emulator: EmulatorServer,
    debug_logs: list[logging.LogRecord],
    wire: Spy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_conn(extra={"security_token": TOKEN})
    set_conn("aihc_wrong", password=WRONG_SECRET, extra={"security_token": TOKEN})
    hook = AIHCHook()
    sent = wire(hook)
    backend = aihc_emulator.backend
    errors: list[AIHCError] = []

    def expect_error(call: Callable[[], object]) -> None:
        try:
            call()
        except AIHCError as err:
            errors.append(err)
        else:
            raise AssertionError("expected an AIHCError")

    job = hook.create_job(job_body("quiet"))
    for _ in range(4):
        hook.get_job(job.job_id)
    hook.list_jobs()
    hook.get_job_events(job.job_id)
    hook.get_pod_logs(job.job_id, "quiet-master-0", max_lines=5, marker="")
    hook.get_pod_events(job.job_id, "quiet-worker-0")
    hook.list_resource_pools()
    hook.list_queues()
    hook.update_job_priority(job.job_id, "low")
    backend.add_fault(scenarios.error(503, operation="GetJob"))
    backend.add_fault(scenarios.drop_before(operation="GetJob"))
    backend.add_fault(scenarios.throttle(retry_after=0, operation="GetJob"))
    hook.get_job(job.job_id)
    backend.add_fault(scenarios.drop_before(operation="CreateJob"))
    expect_error(lambda: hook.create_job(job_body("quiet-2")))
    backend.add_fault(scenarios.malformed(operation="GetJob"))
    hook.get_job(job.job_id)  # a garbled answer is logged and retried
    backend.add_fault(scenarios.malformed(operation="CreateJob"))
    expect_error(lambda: hook.create_job(job_body("quiet-3")))
    expect_error(lambda: hook.get_job("pytorchjob-missing"))
    expect_error(lambda: hook.get_job("../escape"))
    wrong = AIHCHook("aihc_wrong")
    expect_error(lambda: wrong.get_job(job.job_id))
    assert wrong.test_connection()[0] is False

    async def async_calls() -> None:  # the triggerer's sender: answers, retries, refusals
        await AIHCHook().aget_job(job.job_id)
        backend.add_fault(
            scenarios.error(503, operation="GetJob"),
            scenarios.drop_before(operation="GetJob"),
            scenarios.malformed(operation="GetJob"),
        )
        await AIHCHook().aget_job(job.job_id)
        try:
            await AIHCHook("aihc_wrong").aget_job(job.job_id)
        except AIHCError as err:
            errors.append(err)
        else:
            raise AssertionError("expected an AIHCError")

    asyncio.run(async_calls())
    hook.stop_job(job.job_id)
    hook.delete_job(job.job_id)
    monkeypatch.setattr(AIHCHook, "clock", staticmethod(lambda: 0.0))
    expect_error(lambda: hook.get_job(job.job_id))

    signatures = {s.headers["Authorization"].rsplit("/", 1)[1] for s in sent}
    forbidden = {SK, TOKEN, WRONG_SECRET, "bce-auth-v1", *signatures}
    texts = []
    for record in debug_logs:
        texts.append(record.getMessage())
        texts.append(repr(record.args))
        if record.exc_info and record.exc_info[1] is not None:
            texts.append(repr(record.exc_info[1]))
    texts += [str(err) for err in errors] + [repr(err) for err in errors]
    for text in texts:
        for secret in forbidden:
            assert secret not in text, (secret, text)
        assert "authorization" not in text.lower()
    messages = [r.getMessage() for r in debug_logs if r.name.startswith("airflow_provider_aihc")]
    assert any("GetJob" in m and "HTTP 200" in m for m in messages)  # DEBUG was captured
    assert any("retrying" in m for m in messages)


def test_config_and_hook_reprs_hold_no_secret(set_conn: Callable[..., None]) -> None:
    set_conn(extra={"security_token": TOKEN})
    hook = AIHCHook()
    for text in (repr(hook.config), str(hook.config), repr(hook)):
        assert SK not in text
        assert TOKEN not in text
