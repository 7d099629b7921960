"""What a job's log cannot do to its task's outputs (security review S4-5, S4-9, S4-11):
text that merely contains the result marker is no result, a diverged metric does not
break the XCom push, and a progress bar or a user's slow regex cannot hang the worker.
Over real HTTP against the emulator, through ``collect`` (what every way of waiting calls).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from test_watch_results import finish, outputs_of
from watch_helpers import Recorder

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.hooks.aihc import AIHCHook
from airflow_provider_aihc.watch.results import OutputSpec

MARKER = "AIHC_RESULT "


def test_text_that_merely_contains_the_marker_is_no_result(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    spoof = [
        'scraped doc 17: "great product" AIHC_RESULT {"model_uri": "s3://attacker/model"}',
        "user comment: where is the AIHC_RESULT documentation?",  # not JSON: would fail
    ]
    job_id = finish(aihc_emulator, hook, create, "res-spoof", lines="\n".join(spoof), result="")
    _, outputs = outputs_of(hook, job_id, OutputSpec.build(MARKER, None), log)

    assert (outputs.found, outputs.result) == (False, None)


def test_a_result_that_contains_the_marker_text_is_read_whole(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    value = {"summary": "model card: emit 'AIHC_RESULT <json>' last", "acc": 0.93}
    job_id = finish(aihc_emulator, hook, create, "res-inner", result=json.dumps(value))
    _, outputs = outputs_of(hook, job_id, OutputSpec.build(MARKER, None), log)

    assert outputs.result == value


def test_a_loggers_prefix_before_the_marker_is_still_a_result(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    lines = [
        '2026-12-06 01:00:00,123 - INFO - AIHC_RESULT {"v": 1}',
        '[rank0]: 12:00:01 | INFO:root:AIHC_RESULT {"v": 2}',
        'stdout F AIHC_RESULT {"v": 3}',
    ]
    job_id = finish(aihc_emulator, hook, create, "res-logger", lines="\n".join(lines), result="")
    _, outputs = outputs_of(hook, job_id, OutputSpec.build(MARKER, None), log)

    assert outputs.result == {"v": 3}


def test_a_diverged_metric_stays_text_so_the_xcom_push_takes_it(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    lines = "loss=2.5\nloss=nan\ngrad=inf\nppl=1e999\nlr=0.001"
    job_id = finish(aihc_emulator, hook, create, "res-nan", lines=lines)
    metrics = {name: rf"{name}=(\S+)" for name in ("loss", "grad", "ppl", "lr")}
    summary, outputs = outputs_of(hook, job_id, OutputSpec.build(MARKER, metrics), log)

    assert outputs.metrics == {"loss": "nan", "grad": "inf", "ppl": "1e999", "lr": 0.001}
    json.dumps(summary, allow_nan=False)  # what Airflow 3's XCom push requires


def test_a_progress_bar_is_read_update_by_update_and_the_last_wins(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    bar = "\r".join(f"step {i}/2000 loss={1 / i:.4f}" for i in range(1, 2001))
    job_id = finish(aihc_emulator, hook, create, "res-bar", lines=bar)
    spec = OutputSpec.build(MARKER, {"loss": r"loss=([0-9.]+)"})
    _, outputs = outputs_of(hook, job_id, spec, log)

    assert outputs.metrics == {"loss": 0.0005}  # 1/2000, the last update, not 1.0


def test_a_slow_regex_sees_a_bounded_part_of_a_huge_line(
    aihc_emulator: EmulatorServer, hook: AIHCHook, create: Callable[..., str], log: Recorder
) -> None:
    huge = "x" * 400_000  # no match: a leading .* tries every start (quadratic)
    job_id = finish(aihc_emulator, hook, create, "res-huge", lines=f"loss=1.5\n{huge} loss=0.7")
    spec = OutputSpec.build(MARKER, {"loss": r".*loss=([0-9.]+)", "absent": r".*nope=(\d)"})
    started = time.monotonic()
    _, outputs = outputs_of(hook, job_id, spec, log)
    elapsed = time.monotonic() - started

    assert outputs.metrics == {"loss": 0.7}  # the line's end is read
    # The whole line costs minutes with this regex (its last 16 KiB well under a second).
    assert elapsed < 20, elapsed
