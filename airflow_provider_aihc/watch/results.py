"""What a job produced: its result line and its metrics, read from the end of the log of
its first replica backwards, a bounded window at a time.

AIHC's pod-log API has no "tail" parameter.  What its sources say of each parameter:

* ``startTime``: unix seconds, "unset = since pod start" (Baidu's v1 GetPodLogs
  reference, cloud.baidu.com/doc/AIHC);
* ``endTime``: sent by bce-sdk-go (``services/aihc/resource/client.go``) and a field of
  v2 DescribeJobLogs (bce-openapi-meta ``schema/aihc/DescribeJobLogs.json``); its meaning
  (only lines written at or before it) is **inferred** from its name and ``startTime``'s;
* ``maxLines``: a cap on the lines of one answer; *which* lines (the first or the last of
  the window) no source says, so this module never depends on it: an answer with fewer
  lines than the cap is the whole window, one that reaches the cap is read again over a
  narrower window (halved, down to one second);
* ``marker``/``nextMarker``: forward paging (bce-sdk-go reads ``nextMarker``); used only
  for a one-second window that still fills the cap, read page by page from its start.

So the log is read in time windows from the job's ``finishedAt`` backwards, each window
complete, growing while answers are sparse and shrinking while they are full, until the
result and every metric have been found or the pod's start is reached (the result is looked
for in the last :data:`RESULT_LOOKBACK_LINES` lines only: a job that prints none must not
cost a read of its whole log).  Within a window
the last match wins; an older window never overrides a newer one: a metric whose last
match is older than the lines read first is found further back, never reported wrong.
Memory holds one answer at a time; requests grow with the lines between the end and the
oldest value wanted, not with the log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from airflow_provider_aihc.exceptions import AIHCError, AIHCResultError
from airflow_provider_aihc.outputs import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_RESULT_MARKER,
    RESULT_LOOKBACK_LINES,
    OutputSpec,
)
from airflow_provider_aihc.watch.flow import Flow, GetPodLogs
from airflow_provider_aihc.watch.logs import split_lines

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_RESULT_MARKER",
    "RESULT_LOOKBACK_LINES",
    "OutputSpec",
    "Outputs",
    "first_replica",
    "parse_result",
    "read_outputs",
]

#: Lines asked for per log request (the bound on one answer in memory).
PAGE_LINES = 5000
#: The first window, seconds before the job's end.
FIRST_WINDOW_SECONDS = 60
#: A log whose pod start is unknown is read back this far at most (seconds).
MAX_LOOKBACK_SECONDS = 30 * 24 * 3600


@dataclass
class Outputs:
    """What the log gave: the result (``found`` tells a ``null`` result from none) and
    ``{name: value}`` of the metrics found."""

    result: Any = None
    found: bool = False
    metrics: dict[str, float | str] = field(default_factory=dict)
    requests: int = 0
    lines_read: int = 0


class _Scan:
    """The newest match of each thing wanted, window by window from the end."""

    def __init__(self, spec: OutputSpec) -> None:
        self.spec = spec
        self.result_line: tuple[str, int] | None = None  # (text after marker, line from end)
        self.values: dict[str, str] = {}
        self.lines_after = 0  # lines of the windows newer than the one being read

    @property
    def done(self) -> bool:
        marker_done = (
            self.spec.marker is None
            or self.result_line is not None
            or self.lines_after >= self.spec.result_lookback_lines
        )
        return marker_done and len(self.values) == len(self.spec.metrics)

    def window(self, pages: list[list[str]]) -> None:
        """Take one complete window (its pages in order): its last match of each thing
        not found in a newer window."""
        marker = self.spec.marker
        total = sum(len(page) for page in pages)
        result: tuple[str, int] | None = None
        values: dict[str, str] = {}
        seen = 0
        for page in pages:
            for line in page:
                seen += 1
                if marker and self.result_line is None and marker in line:
                    text = line[line.rindex(marker) + len(marker) :]
                    result = (text, self.lines_after + total - seen + 1)
                for name, regex in self.spec.metrics.items():
                    if name not in self.values and (match := regex.search(line)):
                        values[name] = match.group(1)
        if self.result_line is None and result is not None:
            self.result_line = result
        for name, value in values.items():
            self.values.setdefault(name, value)
        self.lines_after += total


def read_outputs(
    job_id: str,
    pool: str | None,
    pod: str,
    spec: OutputSpec,
    *,
    since: float | None,
    until: float,
    page_lines: int = PAGE_LINES,
    queue_id: str | None = None,
) -> Flow[Outputs]:
    """Read ``pod``'s log backwards from ``until`` to ``since`` (epoch seconds; the pod's
    start, ``None`` when unknown) until the result and every metric are found.

    :raises AIHCResultError: the result line does not parse, or is over the cap.
    """
    scan = _Scan(spec)
    outputs = Outputs()
    end = int(until) + 1
    floor = int(since) if since is not None else end - MAX_LOOKBACK_SECONDS
    width = FIRST_WINDOW_SECONDS
    while not scan.done and end > floor:
        start = max(floor, end - width)
        page = yield from _logs(
            GetPodLogs(job_id, pod, pool, None, page_lines, start, end, queue_id=queue_id),
            outputs,
        )
        lines = split_lines(page.logs)
        pages = [lines]
        if len(lines) >= page_lines:  # maybe not the whole window
            if end - start > 1:
                width = max(1, (end - start) // 2)
                continue
            pages = yield from _page_through(
                GetPodLogs(job_id, pod, pool, "", page_lines, start, end, queue_id=queue_id),
                outputs,
            )
        outputs.lines_read += sum(len(p) for p in pages)
        scan.window(pages)
        end = start
        if sum(len(p) for p in pages) < page_lines // 2:
            width *= 2
    outputs.metrics = {name: _number(value) for name, value in scan.values.items()}
    if scan.result_line is not None:
        outputs.result = parse_result(*scan.result_line, pod=pod, cap=spec.max_result_bytes)
        outputs.found = True
    return outputs


def _logs(call: GetPodLogs, outputs: Outputs) -> Flow[Any]:
    """One log request of the reader: counted, and an error AIHC answered raised."""
    page = yield call
    outputs.requests += 1
    if isinstance(page, AIHCError):
        raise page
    return page


def _page_through(first: GetPodLogs, outputs: Outputs) -> Flow[list[list[str]]]:
    """A one-second window too dense for one answer, read forward with ``marker`` paging.

    Holds that second's lines, however many; a log that writes more than
    :data:`PAGE_LINES` lines in one second is the only case that costs more memory.
    """
    pages: list[list[str]] = []
    page_lines = first.max_lines or PAGE_LINES
    marker = ""
    seen = {marker}  # a marker answered again would page in a circle
    while True:
        page = yield from _logs(replace(first, marker=marker), outputs)
        lines = split_lines(page.logs)
        pages.append(lines)
        if len(lines) < page_lines or not page.next_marker or page.next_marker in seen:
            return pages
        seen.add(page.next_marker)
        marker = page.next_marker


def parse_result(text: str, line_from_end: int, *, pod: str, cap: int) -> Any:
    """The JSON value of a result line (the text after the marker), within ``cap`` bytes.

    :raises AIHCResultError: naming the line (counted from the end of the pod's log),
        the size and the cap.
    """
    size = len(text.encode())
    where = f"line {line_from_end} from the end of the log of pod {pod}"
    if size > cap:
        raise AIHCResultError(
            f"The result on {where} is {size} bytes, over the cap of {cap} bytes "
            "(XCom is a database row: write large outputs to storage and return their path)"
        )
    try:
        return json.loads(text)
    except ValueError as err:
        raise AIHCResultError(
            f"The result on {where} ({size} bytes, cap {cap}) is not one JSON value: {err}"
        ) from None


def _number(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def first_replica(pods: list[tuple[str, str]]) -> str | None:
    """The pod of rank 0 among ``(name, replica type)``: the master, else ``…-0``."""
    masters = [name for name, kind in pods if kind.lower() == "master"]
    ranked = sorted(masters or [name for name, _ in pods if name.endswith("-0")])
    if ranked:
        return ranked[0]
    names = sorted(name for name, _ in pods)
    return names[0] if names else None
