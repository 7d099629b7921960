"""LogStreamer: each line of a job's log copied exactly once, at most N per poll."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from aihc_jobs import job_body
from watch_helpers import Recorder, log_lines

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.exceptions import AIHCServerError
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.models.job import JobInfo, PodLogs
from airflow_provider_aihc.watch import (
    GetPodLogs,
    JobWatch,
    LogStreamer,
    drive,
    split_lines,
    wait_for_job,
)
from airflow_provider_aihc.watch.flow import GetJob

CONN_ENV = "AIRFLOW_CONN_AIHC_DEFAULT"
STAMPED = re.compile(r"^(\[[\w-]+\] )?\d{4}-\d\d-\d\dT")


def copied(log: Recorder) -> list[str]:
    """The log lines the streamer copied (timestamped by the emulator)."""
    return [m for m in log.messages("info") if STAMPED.match(m)]


def feed(flow: Any, answers: Sequence[object]) -> list[GetPodLogs]:
    """Run a flow by hand: send it ``answers`` in turn; return the log calls it made.  Its
    one read of the job's env (to mask its secrets) is answered with a job without any."""
    calls, pending, answer = [], list(answers), None
    try:
        while True:
            call = flow.send(answer)
            if isinstance(call, GetJob):
                answer = JobInfo()
                continue
            calls.append(call)
            answer = pending.pop(0)
    except StopIteration:
        return calls


def page(*records: str, marker: str | None = None) -> PodLogs:
    return PodLogs.model_validate({"logs": list(records), "nextMarker": marker})


def test_a_whole_run_is_copied_exactly_once_in_order(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(1, running=6)
    job_id = create("chatty")
    event = wait_for_job(
        hook,
        job_id,
        None,
        poll_interval=1.0,
        deadline=None,
        stop_on_timeout=True,
        stream_logs=True,
        log=log,
        sleep=lambda _: None,
    )
    assert event.status == "success"
    expected = log_lines(aihc_emulator, job_id, "chatty-master-0")
    assert len(expected) == 12 + 6 * 3 + 2 + 3  # start-up, iterations, output, closing
    assert copied(log) == expected
    assert expected[-1].endswith("training process exited with code 0")


@pytest.mark.parametrize("api_version", ["v1", "v2"])
def test_no_read_sends_an_empty_marker_and_the_first_sends_no_max_lines(
    aihc_emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    log: Recorder,
    api_version: str,
) -> None:
    """The first request of a pod's log sends no ``marker`` ("第一次请求不写 marker 参数")
    and no ``maxLines`` (then AIHC answers the whole log: bce-openapi-meta
    ``i18n/zh-CN/aihc/DescribeJobLogs.json:10,12``); the reads after it send the
    ``nextMarker`` they got."""
    monkeypatch.setenv(CONN_ENV, aihc_emulator.connection(api_version=api_version).json)
    hook = AIHCHook()
    aihc_emulator.backend.progression = Progression.per_poll(1, running=4)
    job_id = hook.create_job(job_body("markers")).job_id
    reads: list[dict[str, Any]] = []
    real = hook.session.request

    def request(method: str, url: str, **kwargs: Any) -> Any:
        query = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
        body = json.loads(kwargs["data"]) if kwargs.get("data") else {}
        if "/logs" in url or query.get("action") == "DescribeJobLogs":
            reads.append({**query, **body})
        return real(method, url, **kwargs)

    hook.session.request = request  # type: ignore[method-assign]
    event = wait_for_job(
        hook, job_id, None, poll_interval=1.0, deadline=None, stop_on_timeout=True,
        stream_logs=True, log=log, sleep=lambda _: None,
    )  # fmt: skip
    assert event.status == "success"
    assert copied(log) == log_lines(aihc_emulator, job_id, "markers-master-0")
    assert len(reads) > 2
    assert "marker" not in reads[0]
    assert "maxLines" not in reads[0]
    assert all(read.get("marker") for read in reads[1:])  # never an empty one


def test_a_chatty_job_is_capped_per_poll_and_carried_on_from_the_marker(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    aihc_emulator.backend.progression = Progression(
        polls_per_status=1, running_polls=3, log_lines_per_poll=25
    )
    job_id = create("flood")
    watch = JobWatch(job_id, None, log, max_log_lines=10)
    batches: list[list[str]] = []
    while True:
        before = len(copied(log))
        event = drive(watch.check(), hook)
        batches.append(copied(log)[before:])
        if event is not None:
            break
    everything = log_lines(aihc_emulator, job_id, "flood-master-0")
    shown = copied(log)
    assert all(len(batch) <= 10 for batch in batches)
    assert len(shown) == len(set(shown))  # nothing twice
    assert set(shown) <= set(everything)
    notes = [m for m in log.messages("info") if "more lines not shown" in m]
    hidden = [int(re.search(r"… (\d+) more", note).group(1)) for note in notes]  # type: ignore[union-attr]
    assert sum(hidden) + len(shown) == len(everything)  # every line shown or counted
    assert shown[-1] == everything[-1]  # the newest lines are the ones shown


def test_pods_share_the_cap_and_are_named(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    job_id = create("pair", replicas=2)
    watch = JobWatch(job_id, None, log, max_log_lines=8)
    per_poll = []
    while True:
        before = len(copied(log))
        done = drive(watch.check(), hook)
        per_poll.append(copied(log)[before:])
        if done:
            break
    assert all(sum(m.startswith("[pair-master-0]") for m in batch) <= 4 for batch in per_poll)
    lines = copied(log)
    master = [m for m in lines if m.startswith("[pair-master-0] ")]
    worker = [m for m in lines if m.startswith("[pair-worker-0] ")]
    assert master
    assert worker
    assert len(master) + len(worker) == len(lines)
    worker_log = log_lines(aihc_emulator, job_id, "pair-worker-0")
    assert {m.removeprefix("[pair-worker-0] ") for m in worker} <= set(worker_log)
    assert any("RANK=1" in line for line in worker_log)
    assert worker[-1].endswith(worker_log[-1])
    assert set(watch.log_state) == {"pair-master-0", "pair-worker-0"}


def test_records_holding_several_lines_are_split() -> None:
    assert split_lines(["a\nb", "c\n", "", "d\r\ne"]) == ["a", "b", "c", "d", "e"]
    log = Recorder()
    streamer = LogStreamer("j", "pool", log)
    calls = feed(streamer.flow(["p"]), [page("one\ntwo", "three", marker="m1")])
    assert (calls[0].marker, calls[0].max_lines) == ("", 5000)
    assert log.messages() == ["one", "two", "three"]
    assert streamer.state == {"p": "m1"}


def test_a_later_streamer_carries_on_from_the_state_it_is_given() -> None:
    first = LogStreamer("j", "pool", Recorder())
    feed(first.flow(["p"]), [page("a", marker="m1")])
    log = Recorder()
    second = LogStreamer("j", "pool", log, state=first.state)
    calls = feed(second.flow(["p"]), [page("b", marker="m2")])
    assert calls[0].marker == "m1"
    assert log.messages() == ["b"]


def test_a_server_without_markers_is_read_whole_and_counted() -> None:
    log = Recorder()
    streamer = LogStreamer("j", "pool", log)
    feed(streamer.flow(["p"]), [page("a", "b")])
    calls = feed(streamer.flow(["p"]), [page("a", "b", "c")])
    assert (calls[0].marker, calls[0].max_lines) == (None, None)
    assert log.messages() == ["a", "b", "c"]
    assert streamer.state == {"p": "#lines=3"}


def test_a_marker_that_stops_coming_stops_the_copy_rather_than_repeat() -> None:
    log = Recorder()
    streamer = LogStreamer("j", "pool", log)
    feed(streamer.flow(["p"]), [page("a", marker="m1")])
    feed(streamer.flow(["p"]), [page("b")])
    assert feed(streamer.flow(["p"]), []) == []  # no more reads of that pod
    assert log.messages("warning") == ["AIHC sent no log marker for pod p; not copying its log"]


def test_a_failing_log_read_is_reported_once_and_retried() -> None:
    log = Recorder()
    streamer = LogStreamer("j", "pool", log)
    error = AIHCServerError("GetPodLogs", 503, "ServiceUnavailable", "busy")
    feed(streamer.flow(["p"]), [error])
    feed(streamer.flow(["p"]), [error])
    calls = feed(streamer.flow(["p"]), [page("x", marker="m1")])
    assert calls[0].marker == ""
    assert len(log.messages("warning")) == 1
    assert log.messages("info") == ["x"]


def test_the_tail_is_copied_once_for_a_stateless_watch(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    job_id = create("tail")
    aihc_emulator.backend.set_status(job_id, "Running")
    for _ in range(3):
        hook.get_job(job_id)
    streamer = LogStreamer(job_id, None, log, max_lines=5)
    drive(streamer.tail_flow(["tail-master-0"]), hook)
    assert copied(log) == log_lines(aihc_emulator, job_id, "tail-master-0")[-5:]
    assert log.messages("info")[0] == f"AIHC job {job_id}, pod tail-master-0: the last 5 lines"


async def test_sync_and_async_polls_share_the_streamer(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    job_id = create("twins")
    aihc_emulator.backend.set_status(job_id, "Running")
    pods = ["twins-master-0"]
    streamer = LogStreamer(job_id, None, log)
    hook.get_job(job_id)
    streamer.poll(hook, pods)
    hook.get_job(job_id)
    await streamer.apoll(hook, pods)
    assert copied(log) == log_lines(aihc_emulator, job_id, "twins-master-0")


def test_reading_a_jobs_secrets_again_leaves_no_cyclic_garbage() -> None:
    """Each log-copying trigger reads its job's secrets once: Airflow's ``conf`` is looked
    up once per process, not again (on 2.11 each lookup was a failed ``airflow.sdk``
    import whose traceback held the job in a reference cycle, found by the costs bench)."""
    import gc

    from airflow_provider_aihc.models.job_parts import JobEnv
    from airflow_provider_aihc.watch.logs import secrets_pattern

    envs = [JobEnv(name="HF_TOKEN", value="hf_secret_value"), JobEnv(name="N", value="1")]
    assert secrets_pattern(envs) is not None  # the first call may import
    gc.collect()
    gc.disable()
    try:
        pattern = secrets_pattern(envs)
        garbage = gc.collect()
    finally:
        gc.enable()
    assert pattern is not None
    assert pattern.pattern == "hf_secret_value"
    assert garbage == 0
