"""How long a trigger waits before firing, so that Airflow 3's triggerer writes the lines
it copied last into the task log (``watch/logs.py``: the triggerer reads 4 KiB a round and
drops what it has not read when the trigger ends; found by ``make test-chaos``)."""

from __future__ import annotations

import pytest

from airflow_provider_aihc.watch.logs import (
    LOG_DRAIN_MAX_SECONDS,
    LOG_RECORD_BYTES,
    LogStreamer,
    log_drain_seconds,
)


class _Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str, *args: object) -> None:
        self.lines.append(message % args)

    def warning(self, message: str, *args: object) -> None:
        self.lines.append(message % args)


@pytest.mark.parametrize(
    ("size", "ago", "wait"),
    [
        (0, 0.0, 0.0),  # nothing copied: fire at once
        (4096, 0.0, 1.5),  # one read of the channel
        (4097, 0.0, 2.0),  # two
        (4096, 1.0, 0.5),  # copied a second ago: that second counts
        (4096, 5.0, 0.0),
        (10**7, 0.0, LOG_DRAIN_MAX_SECONDS),  # a huge batch waits at most the cap
    ],
)
def test_the_wait_grows_with_what_was_copied_last(size: int, ago: float, wait: float) -> None:
    assert log_drain_seconds((100.0 - ago, size), 100.0) == pytest.approx(wait)


def test_the_streamer_records_the_size_of_its_last_copy() -> None:
    streamer = LogStreamer("job-1", "pool", _Log())
    assert streamer.last_copy[1] == 0
    streamer._emit("pod-0", ["a" * 50, "b" * 50], share=10, many=False)
    at, size = streamer.last_copy
    assert size == 2 * (50 + LOG_RECORD_BYTES)
    streamer._emit("pod-1", ["c" * 10], share=10, many=True)  # the same poll, another pod
    assert streamer.last_copy[1] == size + 10 + LOG_RECORD_BYTES
    assert streamer.last_copy[0] >= at
