"""The result line and the metrics, read from the end of the first replica's log
backwards, over real HTTP against the emulator."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from watch_helpers import POOL, Recorder

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCResultError, AIHCValidationError
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.watch import drive
from airflow_provider_aihc.watch.results import OutputSpec, first_replica, parse_result
from airflow_provider_aihc.watch.summary import collect

LOSS = {"loss": r"lm loss value: ([0-9.E+-]+)"}


def finish(server: EmulatorServer, hook: AIHCHook, create: Callable[..., str], name: str,
           **script: Any) -> str:  # fmt: skip
    """Create a job (with an ``Output`` script when given), run it to ``Succeeded``."""
    if script:
        server.backend.add_script(scenarios.Output(match=name, **script))
    job_id = create(name)
    for _ in range(20):
        if hook.get_job(job_id, POOL).is_terminal:
            break
    assert hook.get_job(job_id, POOL).status == "Succeeded"
    return job_id


def outputs_of(hook: AIHCHook, job_id: str, spec: OutputSpec, log: Recorder) -> Any:
    summary, outputs, _ = drive(collect(job_id, POOL, spec, None, log), hook)
    return summary, outputs


def test_default_emulator_log_gives_result_and_metric(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    job_id = finish(aihc_emulator, hook, create, "res-default")
    spec = OutputSpec.build("AIHC_RESULT ", {**LOSS, "ppl": r"lm loss PPL: (\S+)"})
    summary, outputs = outputs_of(hook, job_id, spec, log)

    assert outputs.found
    assert outputs.result["checkpoint"] == "/mnt/cluster/checkpoints/res-default"
    assert outputs.metrics["loss"] == pytest.approx(outputs.result["loss"], rel=1e-5)
    assert isinstance(outputs.metrics["ppl"], float)
    assert summary["metrics"] == outputs.metrics
    assert summary["status"] == "Succeeded"
    assert outputs.requests == 1


def test_last_marker_wins_prefix_ignored_and_string_metrics(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    lines = "\n".join(
        [
            '2026-01-01 INFO AIHC_RESULT {"v": 1}',
            "phase: warmup",
            "acc: 0.5",
            "[rank0] 12:00 AIHC_RESULT [1, 2, 3]",
            "phase: done",
        ]
    )
    job_id = finish(aihc_emulator, hook, create, "res-last", lines=lines, result="")
    spec = OutputSpec.build("AIHC_RESULT ", {"phase": r"phase: (\w+)", "acc": r"acc: (\S+)"})
    _, outputs = outputs_of(hook, job_id, spec, log)

    assert outputs.result == [1, 2, 3]
    assert outputs.metrics == {"phase": "done", "acc": 0.5}


def test_no_marker_no_result(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    job_id = finish(aihc_emulator, hook, create, "res-none", lines="nothing here", result="")
    _, outputs = outputs_of(hook, job_id, OutputSpec.build("AIHC_RESULT ", LOSS), log)
    assert not outputs.found
    assert outputs.metrics == {}


def test_a_metric_older_than_the_first_window_is_found_further_back(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    """Many lines after the only match: the reader pages back (dense one-second windows
    included) and finds it, never a wrong or missing value."""
    job_id = finish(aihc_emulator, hook, create, "res-old", lines="tail line", filler_lines=12000)
    # "lm loss:" appears only in the iteration lines, before the 12,000 filler lines
    spec = OutputSpec.build(None, {"iter_loss": r"\| lm loss: ([0-9.E+-]+)"})
    drive_spec = drive(collect(job_id, POOL, spec, None, log), hook)
    outputs = drive_spec[1]
    everything = aihc_emulator.backend.pod_logs(POOL, job_id, "res-old-master-0", marker="").lines
    expected = [line for line in everything if "| lm loss: " in line][-1]
    value = float(expected.split("| lm loss: ")[1].split(" ")[0])
    assert outputs.metrics == {"iter_loss": value}
    assert outputs.lines_read >= 12000


def _read_spread_log(spec: OutputSpec, lines_per_second: int, seconds: int) -> Any:
    """Drive ``read_outputs`` over a log of ``lines_per_second`` lines in each of
    ``seconds`` seconds without a result line: the emulator writes a job's log within a
    few seconds, a real job over hours, which is what the windows are sized for."""
    from types import SimpleNamespace

    from airflow_provider_aihc.watch.results import read_outputs

    flow = read_outputs("job-1", POOL, "p-master-0", spec, since=0, until=seconds)
    answer = None
    try:
        while True:
            call = flow.send(answer)
            start, end = max(call.start_time, 0), min(call.end_time, seconds)
            count = max(0, end - start) * lines_per_second
            logs = [f"t={start} line {i}" for i in range(min(count, call.max_lines))]
            answer = SimpleNamespace(logs=logs, next_marker="")
    except StopIteration as stop:
        return stop.value


def test_a_job_without_a_result_costs_a_bounded_read_not_its_whole_log() -> None:
    """With the default marker on and no metrics, a job that printed no result line is
    read back ``RESULT_LOOKBACK_LINES`` lines, not to its start."""
    from airflow_provider_aihc.watch.results import RESULT_LOOKBACK_LINES

    spec = OutputSpec.build("AIHC_RESULT ", None)
    hours = 10 * 3600  # 10 lines a second for ten hours: 360,000 lines
    bounded = _read_spread_log(spec, 10, hours)
    assert not bounded.found
    assert RESULT_LOOKBACK_LINES <= bounded.lines_read < 2 * RESULT_LOOKBACK_LINES
    whole = _read_spread_log(OutputSpec(spec.marker, spec.metrics, result_lookback_lines=10**9),
                             10, hours)  # fmt: skip
    assert whole.lines_read == 10 * hours
    assert bounded.requests < whole.requests / 10


def test_a_bad_result_line_fails_naming_line_size_and_cap(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    job_id = finish(aihc_emulator, hook, create, "res-bad", lines="x", result="{not json")
    with pytest.raises(AIHCResultError, match=r"line \d+ from the end .*res-bad-master-0.*cap"):
        outputs_of(hook, job_id, OutputSpec.build("AIHC_RESULT ", None), log)


def test_a_result_over_the_cap_fails() -> None:
    text = json.dumps("x" * 100)
    with pytest.raises(AIHCResultError, match=r"102 bytes, over the cap of 64 bytes"):
        parse_result(text, 3, pod="p-master-0", cap=64)


@pytest.mark.parametrize(
    ("metrics", "problem"),
    [
        (
            {"loss": r"lm loss: [0-9.]+"},
            "metrics['loss']: must have exactly one group (the value), has 0",
        ),
        ({"loss": r"(a)(b)"}, "metrics['loss']: must have exactly one group (the value), has 2"),
        ({"bad": r"(unclosed"}, "metrics['bad']: is not a regular expression"),
    ],
)
def test_a_metric_without_exactly_one_group_is_refused(
    metrics: dict[str, str], problem: str
) -> None:
    with pytest.raises(AIHCValidationError) as raised:
        OutputSpec.build("AIHC_RESULT ", metrics)
    assert problem in str(raised.value)


def test_first_replica_is_the_master() -> None:
    pods = [("j-worker-0", "worker"), ("j-master-0", "master"), ("j-worker-1", "worker")]
    assert first_replica(pods) == "j-master-0"
    assert first_replica([("j-worker-1", ""), ("j-worker-0", "")]) == "j-worker-0"
    assert first_replica([]) is None


def test_a_job_that_never_ran_has_null_times_not_made_up_numbers(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    aihc_emulator.backend.add_script(
        scenarios.FailJob(match="never-ran", reason="quota", from_status="Scheduled")
    )
    job_id = create("never-ran")
    for _ in range(10):
        if hook.get_job(job_id, POOL).is_terminal:
            break
    summary, outputs = outputs_of(hook, job_id, OutputSpec.build("AIHC_RESULT ", LOSS), log)
    assert summary["status"] == "Failed"
    assert summary["created_at"] is not None
    assert (summary["running_at"], summary["queue_seconds"]) == (None, None)
    assert (summary["run_seconds"], summary["accelerator_seconds"]) == (None, None)
    assert summary["accelerators_per_replica"] == {"baidu.com/a800_80g_cgpu": 8}
    assert not outputs.found


def test_the_summary_goes_to_xcom_the_log_and_stats_masked(
    aihc_emulator: EmulatorServer,
    hook: AIHCHook,
    create: Callable[..., str],
    log: Recorder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from airflow_provider_aihc import version_compat
    from airflow_provider_aihc.version_compat import mask_secret
    from airflow_provider_aihc.watch.summary import publish

    secret = "tok-7d0c1e5b9a"
    mask_secret(secret)
    job_id = finish(
        aihc_emulator, hook, create, "res-stats",
        lines=f"loss: 0.5\nnote: {secret}", result=json.dumps({"out": f"x{secret}y"}),
    )  # fmt: skip
    sent: list[tuple[str, str, float, dict[str, str]]] = []

    class Recording:
        @staticmethod
        def gauge(stat: str, value: float, *, tags: dict[str, str]) -> None:
            sent.append(("gauge", stat, value, tags))

        @staticmethod
        def timing(stat: str, value: Any, *, tags: dict[str, str]) -> None:
            sent.append(("timing", stat, value.total_seconds(), tags))

    monkeypatch.setattr(version_compat, "stats", lambda: Recording)
    spec = OutputSpec.build("AIHC_RESULT ", {"loss": r"loss: (\S+)", "note": r"note: (\S+)"})
    summary, outputs, job = drive(collect(job_id, POOL, spec, None, log), hook)
    pushed: dict[str, Any] = {}

    class TI:
        dag_id, task_id = "dag", "task"

        def xcom_push(self, key: str, value: Any) -> None:
            pushed[key] = value

    published = publish({"ti": TI()}, summary, outputs, log, push=True, job=job)
    assert pushed["result"] == {"out": "x***y"}
    assert pushed["metrics"] == {"loss": 0.5, "note": "***"}
    assert pushed["job_summary"] == published
    assert published["metrics"]["note"] == "***"
    line = next(m for m in log.messages("info") if "GPU-hours" in m)
    assert secret not in line
    assert f"AIHC job {job_id} summary: Succeeded" in line
    tags = {"dag_id": "dag", "task_id": "task", "pool": POOL, "queue": "default"}
    names = {stat for _, stat, _, got in sent if got == tags}
    assert {"aihc.job.run_seconds", "aihc.job.accelerator_seconds", "aihc.job.metric.loss",
            "aihc.job.run_duration", "aihc.job.restarts"} <= names  # fmt: skip
    assert "aihc.job.metric.note" not in names  # not a number


def test_a_dense_second_whose_markers_cycle_is_read_once_not_forever() -> None:
    """A one-second window too dense for one answer is paged with markers; an answer that
    sends back a marker already seen (a server bug, or a cycle) ends the paging."""
    from types import SimpleNamespace

    from airflow_provider_aihc.watch.results import read_outputs

    spec = OutputSpec.build(None, {"loss": r"loss=(\S+)"})
    flow = read_outputs("job-1", POOL, "p-master-0", spec, since=0, until=0, page_lines=10)
    answer, calls, outputs = None, 0, None
    try:
        while calls < 100:
            call = flow.send(answer)
            calls += 1
            marker = "b" if call.marker == "a" else "a"  # a, b, a, b, ...
            answer = SimpleNamespace(
                logs=[f"loss={calls} {i}" for i in range(10)], next_marker=marker
            )
    except StopIteration as stop:
        outputs = stop.value
    assert outputs is not None, "the reader paged in a circle"
    assert calls < 10
    assert outputs.metrics == {"loss": float(calls)}
