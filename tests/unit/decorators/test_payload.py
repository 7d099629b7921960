"""What travels in the job of ``@task.aihc_python``, and what is refused."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_aihc.decorators import _payload
from airflow_provider_aihc.decorators._payload import PayloadError, build, function_source


def task_like(*args: Any, **kwargs: Any) -> Any:
    """A stand-in for ``@task.aihc_python(...)`` when the source is read."""
    return lambda function: function


class _Task:
    aihc_python = staticmethod(task_like)


task = _Task()


@task.aihc_python(
    image="python:3.11",
    replicas=2,
)
def train(rows: int, lr: float = 0.1, *, tags: list[str] | None = None) -> dict[str, Any]:
    # a comment keeps its line
    import os

    if rows < 0:
        raise ValueError(f"rows must be >= 0, got {rows}")
    return {"rank": int(os.environ.get("RANK", "0")), "rows": rows, "lr": lr, "tags": tags}


def run_job(payload: str, rank: int = 0) -> subprocess.CompletedProcess[str]:
    """What one replica does: the bootstrap under ``python3``, as the job runs it."""
    env = {"PATH": os.environ["PATH"], _payload.PAYLOAD_ENV: payload, "RANK": str(rank)}
    return subprocess.run(
        ["bash", "-c", _payload.command()], env=env, capture_output=True, text=True, timeout=60
    )


def test_the_source_keeps_every_line_where_the_dag_file_has_it() -> None:
    source, file, first = function_source(train)
    lines = Path(__file__).read_text().splitlines()

    assert file == Path(__file__).name
    assert "@task" not in source
    assert "image=" not in source
    for offset, line in enumerate(source.splitlines()):
        if line.strip():
            assert lines[first - 1 + offset].strip() == line.strip()
    assert "# a comment keeps its line" in source


def test_rank_0_prints_the_return_value_as_the_result_marker_line() -> None:
    done = run_job(build(train, [3], {"tags": ["a"]}))

    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("AIHC_RESULT ")
    assert json.loads(last.removeprefix("AIHC_RESULT ")) == {
        "rank": 0, "rows": 3, "lr": 0.1, "tags": ["a"],
    }  # fmt: skip


def test_other_ranks_run_it_and_print_no_result() -> None:
    done = run_job(build(train, [3], {}), rank=1)
    assert done.returncode == 0, done.stderr
    assert "AIHC_RESULT" not in done.stdout


def test_an_exception_exits_non_zero_with_a_traceback_naming_the_dag_file_line() -> None:
    done = run_job(build(train, [-1], {}))

    assert done.returncode == 1
    assert "ValueError: rows must be >= 0, got -1" in done.stderr
    raise_line = next(
        n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1)
        if "raise ValueError(f\"rows must be" in line
    )  # fmt: skip
    assert f'File "{Path(__file__).name}", line {raise_line}, in train' in done.stderr
    assert 'raise ValueError(f"rows must be >= 0, got {rows}")' in done.stderr
    assert "AIHC_RESULT" not in done.stdout


def test_a_return_value_json_cannot_carry_fails_the_job() -> None:
    def bad() -> object:
        return {1, 2}

    done = run_job(build(bad, [], {}))
    assert done.returncode == 1
    assert "TypeError" in done.stderr
    assert "set is not JSON serializable" in done.stderr


@pytest.mark.parametrize(
    ("args", "kwargs", "says"),
    [
        ([datetime.date(2025, 1, 1)], {}, "argument 'rows': a datetime.date cannot travel"),
        ([1], {"tags": [b"x"]}, "argument 'tags'[0]: a bytes cannot travel"),
        ([1], {"lr": float("nan")}, "argument 'lr': nan is not a JSON number"),
        ([{2: "x"}], {}, "argument 'rows': key 2 is a int, not a str"),
        ([1, object()], {}, "argument 'lr': a object cannot travel"),
    ],
)
def test_a_value_json_cannot_carry_is_refused_naming_the_argument_and_type(
    args: list[Any], kwargs: dict[str, Any], says: str
) -> None:
    with pytest.raises(PayloadError, match=None) as caught:
        build(train, args, kwargs)
    assert says in str(caught.value)


def test_a_payload_past_the_limit_is_refused_with_the_limit_and_why() -> None:
    with pytest.raises(PayloadError) as caught:
        build(train, ["x" * _payload.MAX_PAYLOAD_BYTES], {})
    message = str(caught.value)
    assert f"more than the {_payload.MAX_PAYLOAD_BYTES}" in message
    assert "128 KiB" in message


def test_a_lambda_is_refused() -> None:
    with pytest.raises(PayloadError, match="plain def"):
        build(lambda: 1, [], {})


def test_the_bootstrap_runs_on_the_oldest_python3_it_is_given() -> None:
    """The job's Python need not be the worker's: the bootstrap compiles everywhere."""
    compile(_payload.BOOTSTRAP, "<bootstrap>", "exec")
    assert sys.version_info >= (3, 11)
