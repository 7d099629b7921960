"""On ``api_version: v2`` the exactly-once lookup asks ``DescribeJobs`` for the
task instance's candidate names (``keyword``) instead of reading the pool page by page.

Through ``execute`` against the emulator over HTTP; the DescribeJobs requests are counted
in the emulator's request log with 300 jobs of other task instances in the pool (a full
read takes four pages of 100).  How v2's ``keyword`` matches is inferred (a substring, as
the emulator serves it); each lookup also runs with the emulator matching it as a name
*prefix*, which every candidate's name must then start with.
"""

from __future__ import annotations

import json
import os

import pytest
from aihc_jobs import job_body
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator.pytest_plugin import CONN_ENV
from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Job, JobFilter
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks import calls
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.hooks.dialects.v1 import V1
from airflow_provider_aihc.hooks.dialects.v2 import V2
from airflow_provider_aihc.operators._identity import TI_LABEL, TaskIdentity
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

POOL = "cce-emulator0"
OTHERS = 300
#: A task id long enough that the default name (50 characters) is cut for its suffixes.
LONG_TASK_ID = "pretrain-gpt-7b-on-the-whole-corpus-with-long-context"


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real pauses between the hook's or the submitter's attempts."""
    monkeypatch.setattr(AIHCHook, "sleep", staticmethod(lambda seconds: None))
    monkeypatch.setattr("airflow_provider_aihc.operators._submit.time.sleep", lambda s: None)


@pytest.fixture(params=["substring", "prefix"])
def keyword_match(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """v2's ``keyword`` as the emulator infers it (substring), or as a name prefix."""
    if request.param == "prefix":

        def admits(self: JobFilter, job: Job) -> bool:
            status_ok = not self.status or job.status == self.status
            return status_ok and job.name.startswith(self.keyword or "")

        monkeypatch.setattr(JobFilter, "admits", admits)
    return str(request.param)


def _connect(monkeypatch: pytest.MonkeyPatch, api_version: str) -> None:
    """Switch the emulator's ``aihc_default`` connection to ``api_version``."""
    conn = json.loads(os.environ[CONN_ENV])
    conn["extra"]["api_version"] = api_version
    monkeypatch.setenv(CONN_ENV, json.dumps(conn))


@pytest.fixture
def v2(aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    _connect(monkeypatch, "v2")
    return aihc_emulator


def _operator(**kwargs: object) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(task_id="train", image="busybox", command="true", **kwargs)


def _crowd(server: EmulatorServer, count: int = OTHERS, first: int = 0) -> None:
    """Jobs of other task instances: other runs of the same task (their default names and
    labels) and jobs outside Airflow."""
    for i in range(first, first + count):
        other = TaskIdentity("series", "train", f"manual__other-{i}")
        labels = [{"key": k, "value": v} for k, v in other.labels().items()]
        name = other.default_name() if i % 2 else f"unrelated-{i}"
        server.backend.create_job(POOL, job_body(name, labels=labels))


def _lookups(server: EmulatorServer) -> int:
    return sum(record.action == "DescribeJobs" for record in server.backend.requests)


def _names(server: EmulatorServer, ti: TaskInstanceStub) -> list[str]:
    key = TaskIdentity(ti.dag_id, ti.task_id, ti.run_id).key
    return sorted(job["name"] for job in server.backend.jobs_with_labels({TI_LABEL: key}))


@pytest.mark.usefixtures("keyword_match")
def test_a_retry_adopts_its_job_with_one_describe_jobs_among_300_others(
    v2: EmulatorServer,
) -> None:
    _crowd(v2)
    ti = TaskInstanceStub()
    v2.backend.request_log.clear()
    first = _operator().execute(context_of(ti))
    assert (_lookups(v2), v2.backend.count("CreateJob")) == (1, 1)
    v2.backend.set_status(first, "Running", hold=True)
    _crowd(v2, 50, first=OTHERS)  # newer than the job: a full read would page past them
    v2.backend.request_log.clear()

    assert _operator().execute(context_of(ti.retry())) == first

    assert (_lookups(v2), v2.backend.count("CreateJob")) == (1, 0)


@pytest.mark.usefixtures("keyword_match")
def test_a_lost_create_answer_is_found_with_the_keyword(v2: EmulatorServer) -> None:
    _crowd(v2)
    v2.backend.add_fault(scenarios.drop_after(operation="CreateJob"))
    ti = TaskInstanceStub()

    job_id = _operator().execute(context_of(ti))

    assert (
        v2.backend.job(job_id)["name"] == TaskIdentity("series", "train", ti.run_id).default_name()
    )
    assert (v2.backend.count("CreateJob"), _lookups(v2)) == (1, 2)  # before, and after
    assert len(_names(v2, ti)) == 1


@pytest.mark.usefixtures("keyword_match")
def test_a_clear_creates_a_new_job_and_its_retries_find_each_generation(
    v2: EmulatorServer,
) -> None:
    """Names cut for their suffixes (``-s2``, ``-s2-r2``) still start with the keyword."""
    _crowd(v2)
    ti = TaskInstanceStub(task_id=LONG_TASK_ID)
    old = _operator().execute(context_of(ti))
    v2.backend.set_status(old, "Succeeded")
    v2.backend.request_log.clear()

    new = _operator().execute(context_of(ti.clear()))
    assert new != old
    v2.backend.set_status(new, "Failed")
    newest = _operator().execute(context_of(ti.retry()))
    assert newest not in (old, new)
    v2.backend.set_status(newest, "Running", hold=True)
    assert _operator().execute(context_of(ti.retry())) == newest

    base = TaskIdentity("series", LONG_TASK_ID, ti.run_id).default_name()
    assert len(base) == 50
    assert _names(v2, ti) == sorted([base, f"{base[:47]}-s2", f"{base[:44]}-s2-r2"])
    assert (v2.backend.count("CreateJob"), _lookups(v2)) == (2, 3)


@pytest.mark.usefixtures("keyword_match")
def test_a_job_named_like_the_series_is_never_adopted_on_its_name(v2: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    base = TaskIdentity("series", "train", ti.run_id).default_name()
    impostor = v2.backend.create_job(POOL, job_body(f"{base}-r2"))
    v2.backend.set_status(impostor, "Running", hold=True)

    job_id = _operator().execute(context_of(ti))

    assert job_id != impostor
    assert _names(v2, ti) == [base]


def test_a_given_name_may_change_between_tries_so_it_reads_the_pool(v2: EmulatorServer) -> None:
    """A given name is rendered by each try (e.g. from ``ti.try_number``): the earlier
    try's job is still found by its labels."""
    _crowd(v2)
    ti = TaskInstanceStub()
    first = _operator(name="nightly-try-1").execute(context_of(ti))
    v2.backend.set_status(first, "Running", hold=True)
    v2.backend.request_log.clear()

    assert _operator(name="nightly-try-2").execute(context_of(ti.retry())) == first
    assert (v2.backend.count("CreateJob"), _lookups(v2)) == (0, 4)


def test_v1_reads_every_page_as_before(aihc_emulator: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    first = _operator().execute(context_of(ti))
    aihc_emulator.backend.set_status(first, "Running", hold=True)
    _crowd(aihc_emulator)
    aihc_emulator.backend.request_log.clear()

    assert _operator().execute(context_of(ti.retry())) == first

    assert aihc_emulator.backend.count("ListJobs") == 4  # 301 jobs, 100 a page
    assert aihc_emulator.backend.count("CreateJob") == 0
    assert {record.action for record in aihc_emulator.backend.requests} == {None}


# -- the hook's filters ----------------------------------------------------------------------


@pytest.mark.parametrize("api_version", ["v1", "v2"])
def test_list_filters_give_the_same_jobs_on_both_dialects(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, api_version: str
) -> None:
    backend = aihc_emulator.backend
    ids = {name: backend.create_job(POOL, job_body(name)) for name in ("ab-1", "ab-2", "x")}
    backend.set_status(ids["ab-2"], "Running", hold=True)
    _connect(monkeypatch, api_version)
    hook = AIHCHook()

    assert sorted(j.name for j in hook.list_job_summaries(name_keyword="ab")) == ["ab-1", "ab-2"]
    assert [j.name for j in hook.list_jobs(name_keyword="ab", statuses=["Running"])] == ["ab-2"]
    assert [j.name for j in hook.list_job_summaries(statuses="Running")] == ["ab-2"]
    running_or_not = hook.list_job_summaries(statuses=("Running", "Created", "Scheduled"))
    assert len(running_or_not) == 3
    assert [j.name for j in hook.list_job_summaries(name_keyword="zz")] == []


def test_v2_sends_the_filters_and_v1_drops_them() -> None:
    params = [("keyword", "train-1"), ("status", "Running"), ("pageNo", "1"), ("pageSize", "9")]
    v1 = V1.request(calls.ListJobsCall.endpoint, POOL, None, params, None, {})
    assert v1.params == (("resourcePoolId", POOL), ("pageNo", "1"), ("pageSize", "9"))
    v2 = V2.request(calls.ListJobsCall.endpoint, POOL, None, params, None, {})
    assert json.loads(v2.body or b"") == {
        "keyword": "train-1",
        "keywordType": "name",
        "status": "Running",
        "pageNumber": 1,
        "pageSize": 9,
    }


@pytest.mark.parametrize("statuses", [[], ["running"], ["Running", "Done"]])
def test_bad_statuses_are_refused_before_any_request(
    v2: EmulatorServer, statuses: list[str]
) -> None:
    with pytest.raises(AIHCConfigError, match=r"statuses must name one or more of Created, "):
        AIHCHook().list_job_summaries(statuses=statuses)
    assert v2.backend.requests == []


# -- the keyword ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "base",
    ["train-0123abcd", LONG_TASK_ID[:41] + "-0123abcd", "a" * 44 + "-----b", "x" * 50],
)
def test_every_name_a_try_may_have_created_starts_with_the_prefix(base: str) -> None:
    for try_number in range(1, 13):
        prefix = TaskIdentity("d", "t", "r", try_number=try_number).name_prefix(base)
        assert prefix
        assert not prefix.endswith("-")
        for first_try in range(1, try_number + 1):
            series = TaskIdentity("d", "t", "r", try_number=try_number, first_try=first_try)
            for generation in range(try_number):
                assert series.job_name(base, generation).startswith(prefix)


def test_the_prefix_is_the_whole_name_while_it_fits() -> None:
    identity = TaskIdentity("d", "train", "r", try_number=3)
    assert identity.name_prefix(identity.default_name()) == identity.default_name()
