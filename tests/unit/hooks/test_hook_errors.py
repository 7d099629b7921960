"""Every error class the hook raises, from real emulator answers (and a few canned ones)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from email.utils import formatdate

import pytest
from hook_helpers import AK, Waits, job_body

from airflow_provider_aihc.emulator.backend import RequestRecord
from airflow_provider_aihc.emulator.http.wire import Response
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import (
    AIHCApiError,
    AIHCAuthError,
    AIHCError,
    AIHCNotFoundError,
    AIHCResponseError,
    AIHCServerError,
    AIHCThrottledError,
    AIHCTransportError,
)
from airflow_provider_aihc.hooks.aihc import AIHCHook

WRONG_SECRET = "not-the-secret-0123456789"


def canned(monkeypatch: pytest.MonkeyPatch, server: EmulatorServer, *responses: Response) -> None:
    """Answer the next API requests with these responses (then the emulator resumes)."""
    queue = list(responses)
    real = server.app.handle

    def handle(request: object) -> Response:
        if not queue:
            return real(request)  # type: ignore[arg-type]
        response = queue.pop(0)
        record = RequestRecord("Canned", request.method, request.path, response.status)  # type: ignore[attr-defined]
        server.backend.record(record)
        return response

    monkeypatch.setattr(server.app, "handle", handle)


def json_answer(
    status: int, payload: object, headers: list[tuple[str, str]] | None = None
) -> Response:
    body = json.dumps(payload).encode()
    return Response(status, body, [("Content-Type", "application/json"), *(headers or [])])


@pytest.fixture
def no_retries(set_conn: Callable[..., None]) -> AIHCHook:
    set_conn(extra={"max_retries": 0})
    return AIHCHook()


def _assert_names_key_and_request(err: AIHCApiError, access_key_id: str = AK) -> None:
    text = str(err)
    assert err.request_id
    assert err.request_id in text
    assert err.access_key_id == access_key_id
    assert f"access key {access_key_id}" in text


def test_not_found(hook: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    with pytest.raises(AIHCNotFoundError) as raised:
        hook.get_job("pytorchjob-does-not-exist")
    err = raised.value
    assert (err.status, err.code, err.operation) == (404, "JobNotFound", "GetJob")
    assert "pytorchjob-does-not-exist" in err.message
    assert "GetJob" in str(err)
    assert "HTTP 404" in str(err)
    _assert_names_key_and_request(err)
    assert aihc_emulator.backend.count("GetJob") == 1  # a 404 is final


def test_wrong_secret_is_an_auth_error_without_the_secret(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer
) -> None:
    set_conn(password=WRONG_SECRET)
    hook = AIHCHook()
    with pytest.raises(AIHCAuthError) as raised:
        hook.get_job("pytorchjob-1")
    err = raised.value
    assert (err.status, err.code) == (403, "SignatureDoesNotMatch")
    _assert_names_key_and_request(err)
    for text in (str(err), repr(err), repr(err.args), err.message):
        assert WRONG_SECRET not in text
        assert "bce-auth-v1" not in text
    assert aihc_emulator.backend.count("GetJob") == 1  # never retried


def test_wrong_secret_fails_test_connection_readably(set_conn: Callable[..., None]) -> None:
    set_conn(password=WRONG_SECRET)
    ok, message = AIHCHook().test_connection()
    assert ok is False
    assert "SignatureDoesNotMatch" in message
    assert AK in message
    assert WRONG_SECRET not in message


def test_unknown_access_key(set_conn: Callable[..., None]) -> None:
    set_conn(login="nobody-ak")
    with pytest.raises(AIHCAuthError) as raised:
        AIHCHook().list_jobs()
    err = raised.value
    assert (err.status, err.code) == (403, "InvalidAccessKeyId")
    _assert_names_key_and_request(err, "nobody-ak")


def test_throttled_carries_retry_after(
    no_retries: AIHCHook, aihc_emulator: EmulatorServer, waits: Waits
) -> None:
    aihc_emulator.backend.add_fault(scenarios.throttle(retry_after=7, operation="GetJob"))
    with pytest.raises(AIHCThrottledError) as raised:
        no_retries.get_job("pytorchjob-1")
    err = raised.value
    assert (err.status, err.code, err.retry_after) == (429, "TooManyRequests", 7.0)
    _assert_names_key_and_request(err)
    assert waits.sync == []


def test_throttled_with_an_http_date(
    no_retries: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    when = formatdate(time.time() + 60, usegmt=True)
    answer = json_answer(
        429, {"code": "Throttling", "message": "slow down"}, [("Retry-After", when)]
    )
    canned(monkeypatch, aihc_emulator, answer)
    with pytest.raises(AIHCThrottledError) as raised:
        no_retries.list_jobs()
    assert raised.value.retry_after is not None
    assert 55 <= raised.value.retry_after <= 60


@pytest.mark.parametrize(
    ("status", "code"),
    [(500, "InternalError"), (502, "BadGateway"), (503, "ServiceUnavailable"), (504, "Timeout")],
)
def test_server_errors(
    no_retries: AIHCHook, aihc_emulator: EmulatorServer, status: int, code: str
) -> None:
    aihc_emulator.backend.add_fault(scenarios.error(status))
    with pytest.raises(AIHCServerError) as raised:
        no_retries.get_job("pytorchjob-1")
    assert (raised.value.status, raised.value.code) == (status, code)
    _assert_names_key_and_request(raised.value)


def test_html_200_is_a_response_error(no_retries: AIHCHook, aihc_emulator: EmulatorServer) -> None:
    aihc_emulator.backend.add_fault(scenarios.malformed(operation="ListJobs"))
    with pytest.raises(AIHCResponseError) as raised:
        no_retries.list_jobs()
    err = raised.value
    assert (err.status, err.code) == (200, "MalformedResponse")
    assert "<html>" in err.message
    assert err.request_id  # from the x-bce-request-id header
    assert aihc_emulator.backend.count("ListJobs") == 1


def test_a_gateway_page_instead_of_json_is_retried_for_reads_and_stop(
    hook: AIHCHook, aihc_emulator: EmulatorServer, waits: Waits
) -> None:
    job_id = hook.create_job(job_body("garbled")).job_id
    aihc_emulator.backend.add_fault(
        scenarios.malformed(operation="GetJob"), scenarios.malformed(operation="StopJob")
    )

    assert hook.get_job(job_id).job_id == job_id
    hook.stop_job(job_id)

    assert aihc_emulator.backend.count("GetJob") == 2
    assert aihc_emulator.backend.count("StopJob") == 2
    assert aihc_emulator.backend.job(job_id)["status"] == "ManualTermination"


@pytest.mark.parametrize(
    "payload",
    [{"requestId": "r-1", "result": None}, {"requestId": "r-1", "result": "text"}, ["a", "list"]],
)
def test_json_200_of_the_wrong_shape_is_a_response_error(
    no_retries: AIHCHook,
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    payload: object,
) -> None:
    canned(monkeypatch, aihc_emulator, json_answer(200, payload))
    with pytest.raises(AIHCResponseError) as raised:
        no_retries.get_job("pytorchjob-1")
    assert raised.value.operation == "GetJob"


def test_create_answer_without_job_id_is_a_response_error(
    hook: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    canned(monkeypatch, aihc_emulator, json_answer(200, {"requestId": "r-2", "result": {}}))
    with pytest.raises(AIHCResponseError, match="jobId"):
        hook.create_job(job_body("lost-id"))


def test_dropped_connection_is_a_transport_error(
    no_retries: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    aihc_emulator.backend.add_fault(scenarios.drop_before(operation="GetJob"))
    with pytest.raises(AIHCTransportError) as raised:
        no_retries.get_job("pytorchjob-1")
    assert raised.value.operation == "GetJob"
    assert raised.value.reason
    assert aihc_emulator.backend.count("GetJob", 0) == 1


def test_timeout_is_a_transport_error(
    set_conn: Callable[..., None], aihc_emulator: EmulatorServer
) -> None:
    set_conn(extra={"max_retries": 0, "timeout": 0.2})
    aihc_emulator.backend.add_fault(scenarios.delay(1.0, operation="ListJobs"))
    with pytest.raises(AIHCTransportError, match="Timeout"):
        AIHCHook().list_jobs()


def test_nothing_listening_is_a_transport_error(set_conn: Callable[..., None]) -> None:
    with EmulatorServer() as gone:
        url = gone.url
    set_conn(host=url, extra={"max_retries": 0, "connect_timeout": 1})
    with pytest.raises(AIHCTransportError, match="ConnectionError"):
        AIHCHook().list_jobs()


def test_request_id_and_code_are_read_case_insensitively(
    no_retries: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {"RequestID": "rid-body", "Code": "InvalidParam", "MESSAGE": "bad thing"}
    canned(monkeypatch, aihc_emulator, json_answer(400, body, [("x-bce-request-id", "rid-header")]))
    with pytest.raises(AIHCApiError) as raised:
        no_retries.get_job("pytorchjob-1")
    err = raised.value
    assert type(err) is AIHCApiError
    assert (err.request_id, err.code, err.message) == ("rid-body", "InvalidParam", "bad thing")


def test_request_id_falls_back_to_the_header(
    no_retries: AIHCHook, aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    header = [("X-Bce-Request-Id", "rid-header")]
    canned(
        monkeypatch,
        aihc_emulator,
        json_answer(403, {"code": "AccessDenied", "message": "no"}, header),
        Response(502, b"<html>502 Bad Gateway</html>", [("x-bce-request-id", "rid-gw")]),
    )
    with pytest.raises(AIHCAuthError) as raised:
        no_retries.get_job("pytorchjob-1")
    assert (raised.value.request_id, raised.value.code) == ("rid-header", "AccessDenied")
    with pytest.raises(AIHCServerError) as gateway:
        no_retries.get_job("pytorchjob-1")
    assert (gateway.value.request_id, gateway.value.code) == ("rid-gw", "")
    assert "502 Bad Gateway" in gateway.value.message


def test_every_error_is_an_aihc_error() -> None:
    for cls in (
        AIHCAuthError,
        AIHCNotFoundError,
        AIHCThrottledError,
        AIHCServerError,
        AIHCResponseError,
    ):
        assert issubclass(cls, AIHCApiError)
    assert issubclass(AIHCTransportError, AIHCError)


# ---- clock skew --------------------------------------------------------------------------


@pytest.mark.parametrize(("skew", "words"), [(-7200, "expired"), (7200, "ahead")])
def test_clock_skew_says_to_check_the_clock(
    hook: AIHCHook,
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    skew: int,
    words: str,
) -> None:
    monkeypatch.setattr(AIHCHook, "clock", staticmethod(lambda: time.time() + skew))
    with pytest.raises(AIHCAuthError) as raised:
        hook.get_job("pytorchjob-1")
    err = raised.value
    assert (err.status, err.code) == (400, "RequestExpired")
    assert words in err.message
    assert "clock" in str(err)
    assert aihc_emulator.backend.count("GetJob") == 1  # not retried
    ok, message = hook.test_connection()
    assert ok is False
    assert "clock" in message
