"""The endpoint declarations (``hooks/calls.py``): each endpoint is declared once, both
dialects and the watch read that one declaration, and what a call needs is checked
before anything is sent."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.exceptions import AIHCConfigError, AIHCNotFoundError
from airflow_provider_aihc.hooks import calls
from airflow_provider_aihc.hooks._endpoint import QUEUE, Call
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.watch import flow


def _declared() -> list[type[Call[object]]]:
    return [
        c
        for _, c in inspect.getmembers(calls, inspect.isclass)
        if issubclass(c, Call) and hasattr(c, "endpoint") and c.__module__ == calls.__name__
    ]


def test_every_endpoint_is_declared_once_in_the_dialects_that_define_it() -> None:
    endpoints = {c.endpoint.operation: c.endpoint for c in _declared()}
    # Reads of one endpoint into another model share its declaration (the same object).
    assert all(c.endpoint is endpoints[c.endpoint.operation] for c in _declared())
    # ... and no two declarations name one operation.
    assert len({id(c.endpoint) for c in _declared()}) == len(endpoints)
    # A v2 action for each, but for what only v1 defines (bce-sdk-go ListNodeByResourcePoolID;
    # no v2 action lists a pool's nodes); v1 for each, but for v2's BatchStopJobs.
    assert sorted(e.operation for e in endpoints.values() if e.v2 is None) == ["ListPoolNodes"]
    assert sorted(e.operation for e in endpoints.values() if not e.v1) == ["BatchStopJobs"]
    with_v2 = [e for e in endpoints.values() if e.v2]
    assert len({e.v2.name for e in with_v2 if e.v2}) == len(with_v2)


def test_every_query_argument_and_need_is_a_field_of_its_call() -> None:
    for call in _declared():
        if not dataclasses.is_dataclass(call):
            continue
        fields = {f.name for f in dataclasses.fields(call)}
        wanted = {attr for attr, _ in call.endpoint.query} | set(call.endpoint.needs)
        assert wanted <= fields, call.__name__


def test_the_watch_yields_the_hook_declarations() -> None:
    assert (flow.GetJobBrief, flow.GetJob, flow.GetPodLogs) == (
        calls.GetJobBrief,
        calls.GetJob,
        calls.GetPodLogs,
    )
    assert (flow.GetJobEvents, flow.StopJob) == (calls.GetJobEvents, calls.StopJob)


def test_a_call_lacking_what_it_needs_is_refused_before_any_request(
    hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    # A managed pool's job calls need the queue id (hooks/_endpoint.py MANAGED_POOLS).
    with pytest.raises(AIHCConfigError, match="StopJob needs queue_id on managed resource pool"):
        hook.send(calls.StopJob("pytorchjob-1", "aihc-serverless"))
    assert aihc_emulator.backend.requests == []


def test_every_call_that_addresses_a_job_or_lists_jobs_needs_its_queue() -> None:
    addressing = {c.__name__ for c in _declared() if QUEUE in c.endpoint.needs}
    assert addressing >= {
        "GetJob", "GetJobBrief", "GetJobStatusItem", "StopJob", "DeleteJob", "UpdateJob",
        "GetJobEvents", "GetPodLogs", "GetPodEvents", "ListJobs", "ListJobSummaries",
        "ListJobStatuses",
    }  # fmt: skip


def test_a_self_managed_pool_takes_a_job_call_without_the_queue_id(
    hook: AIHCHook, aihc_emulator: EmulatorServer
) -> None:
    with pytest.raises(AIHCNotFoundError):  # sent: AIHC answers for the unknown job
        hook.send(calls.StopJob("pytorchjob-1"))
    assert len(aihc_emulator.backend.requests) == 1


def test_a_list_sends_its_queue_as_the_queue_id_as_baidus_v1_client_does() -> None:
    # bce-sdk-go services/aihc/resource/client.go:477-478: one queue, sent twice.
    assert calls.ListJobs("aihc-serverless", 1, 10, queue="aihcq-1").queue_id == "aihcq-1"
    assert calls.ListJobs("p", 1, 10, queue="q", queue_id="other").queue_id == "other"
    assert calls.ListJobs("p", 1, 10, queue="all").queue_id is None
