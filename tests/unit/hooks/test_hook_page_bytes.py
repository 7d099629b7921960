"""The watcher's ListJobs pages are read straight from their bytes on v1 (issue #37): a
page reads as the lenient model reads the decoded answer, whatever the page holds; where
pydantic's JSON reader cannot read it, the lenient model reads it, as before."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from hook_helpers import POOL, job_body
from raw_server import ok, serve

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCResponseError
from airflow_provider_aihc.hooks import calls
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.models.job import JobStatusPage, JobStatusPageFromJson

ITEM = {
    "jobId": "pytorchjob-1",
    "name": "a",
    "resourcePoolId": POOL,
    "queue": "default",
    "jobFramework": "PyTorchJob",
    "status": "Running",
    "createdAt": "2026-12-06T22:04:37Z",
    "enableFaultTolerance": False,
    "labels": [{"key": "k", "value": "v"}],
    "resources": [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}],
}
#: What AIHC may send where Go usually sends nothing, or another type than expected.
LENIENT_ITEM = {
    "jobId": 12345,
    "status": None,
    "createdAt": "2024-07-15 16:52:50.123 +0000 UTC",
    "enableFaultTolerance": "true",
    "queue": True,
    "podList": None,
    "unknownField": {"deep": [1, 2, {"x": None}]},
}

#: Creation times as AIHC writes them (ISO 8601 with a zone), and none.
ZONED_ITEMS = [
    {**ITEM, "createdAt": "2026-12-06T22:04:37.123456Z"},
    {**ITEM, "createdAt": "2026-12-07T06:04:37+08:00"},
    {**ITEM, "createdAt": None},
]


def envelope(result: Any) -> bytes:
    return json.dumps({"requestId": "r-1", "result": result}).encode()


#: (body, read straight from the bytes): pages the JSON reader reads, and ones it leaves.
PAGES = {
    "as the emulator sends it": (envelope({"total": 1, "jobs": [ITEM], "pageNo": 1}), True),
    "a lenient total": (envelope({"total": "1", "jobs": [ITEM]}), True),
    "times with a zone": (envelope({"total": 3, "jobs": ZONED_ITEMS}), True),
    # An item as AIHC does not send it: the whole page is read by the lenient model.
    "lenient fields": (envelope({"total": "2", "jobs": [ITEM, LENIENT_ITEM]}), False),
    "a time without its zone": (
        envelope({"total": 1, "jobs": [{**ITEM, "createdAt": "2026-12-06T22:04:37"}]}),
        False,
    ),
    "an empty time": (envelope({"total": 1, "jobs": [{**ITEM, "createdAt": ""}]}), False),
    "a flag as a string": (
        envelope({"total": 1, "jobs": [{**ITEM, "enableFaultTolerance": "true"}]}),
        False,
    ),
    "no jobs field": (envelope({"total": 0}), True),
    "jobs null": (envelope({"total": 0, "jobs": None}), False),
    "no envelope": (json.dumps({"total": 1, "jobs": [ITEM]}).encode(), False),
    "NaN": (b'{"result": {"total": NaN, "jobs": []}}', True),  # Python reads it too
}


def lenient(body: bytes) -> dict[str, Any]:
    """The page as the lenient model reads the decoded answer (the hook's other reads)."""
    decoded = json.loads(body)
    return JobStatusPage.model_validate(decoded.get("result", decoded)).model_dump()


@pytest.mark.parametrize("name", PAGES)
async def test_a_page_reads_as_the_lenient_model_reads_it(
    name: str, set_conn: Callable[..., None]
) -> None:
    body, from_bytes = PAGES[name]
    async with serve(ok(body)) as server:
        set_conn("aihc_raw", host=server.url)
        page = await AIHCHook("aihc_raw").alist_job_page(POOL)
        sync = AIHCHook("aihc_raw")  # in a thread: the server answers on this loop
        again = await asyncio.to_thread(sync.send, calls.ListJobStatuses(POOL, 1, 100))
        sync.session.close()
    assert page.model_dump() == lenient(body)
    assert again.model_dump() == page.model_dump()  # the sync sender reads it the same
    assert isinstance(page, JobStatusPage)
    assert (type(page) is JobStatusPageFromJson) is from_bytes


async def test_a_page_no_model_reads_is_still_named_malformed(
    set_conn: Callable[..., None],
) -> None:
    async with serve(ok(envelope(None))) as server:
        set_conn("aihc_raw", host=server.url)
        with pytest.raises(AIHCResponseError, match="unexpected result"):
            await AIHCHook("aihc_raw").alist_job_page(POOL)


@pytest.mark.parametrize(("api_version", "from_bytes"), [("v1", True), ("v2", False)])
async def test_the_emulators_pages_are_read_from_bytes_on_v1_only(
    api_version: str,
    from_bytes: bool,
    aihc_emulator: EmulatorServer,
    set_conn: Callable[..., None],
) -> None:
    """v2's answers are renamed into v1's form after decoding (``dialect.answer``)."""
    job_id = str(aihc_emulator.backend.create_job(POOL, job_body("page-bytes")))
    set_conn("aihc_page", extra={"api_version": api_version})
    page = await AIHCHook("aihc_page").alist_job_page(POOL)
    assert (type(page) is JobStatusPageFromJson) is from_bytes
    assert [(job.job_id, job.status) for job in page.jobs] == [(job_id, "Created")]
    assert page.total == 1
    assert page.jobs[0].created_at is not None


def test_every_model_read_from_bytes_is_its_calls_model() -> None:
    """The hook takes an answer read from bytes as typed only when it is the call's model."""
    readers = {
        name: kind
        for name, kind in vars(calls).items()
        if isinstance(kind, type) and getattr(kind, "envelope_model", None) is not None
    }
    assert set(readers) == {"ListJobStatuses"}
    for kind in readers.values():
        assert issubclass(kind.envelope_model, kind.model)
