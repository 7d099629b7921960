"""The result line and the metrics, read from the end of the first replica's log
backwards, over real HTTP against the emulator."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from watch_helpers import POOL, Recorder

from airflow_provider_aihc.emulator import scenarios
from airflow_provider_aihc.emulator.server import EmulatorServer
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
    everything = [
        line
        for record in aihc_emulator.backend.pod_logs(POOL, job_id, "res-old-master-0", marker="")[
            "logs"
        ]
        for line in record.split("\n")
    ]
    expected = [line for line in everything if "| lm loss: " in line][-1]
    value = float(expected.split("| lm loss: ")[1].split(" ")[0])
    assert outputs.metrics == {"iter_loss": value}
    assert outputs.lines_read >= 12000


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
