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
import math
import re
from collections import deque
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


#: A metric regex sees at most this many characters of a line, its end: a regex a DAG
#: author wrote with a leading ``.*`` is quadratic in what it is run on (S4-11).
METRIC_LINE_TAIL = 16 * 1024
#: What may come before the result marker on its line: a log prefix, nothing else
#: (security review S4-5: text that merely contains the marker, a scraped document or a
#: comment, is not a result).  Tokens: a date, a time or both (AIHC's own, a logger's), a level
#: (``INFO``, ``INFO:root:``), a bracketed field (``[rank0]:``, ``[train.py:42]``), CRI's
#: ``stdout F``, and the separators ``-`` and ``|``; at most :data:`PREFIX_TOKENS` of them.
_TIME = r"\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
_TIMESTAMP = rf"\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]{_TIME})?|{_TIME}"
_LEVEL = r"(?i:DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL|TRACE)(?::[\w.-]+:)?"
_FIELD = r"\[[^\]\"'\n]{1,64}\]:?"
#: The stream and tag of Kubernetes' CRI log format, should AIHC pass its lines on raw.
_CRI = r"(?:stdout|stderr) [FP]"
PREFIX_TOKENS = 8


def result_pattern(marker: str) -> re.Pattern[str]:
    """The pattern a result line matches (``match``, from the line's start): a log
    prefix, then ``marker``; the result is the text after the match (the marker's first
    occurrence after the prefix, so a result that contains the marker text is whole)."""
    token = rf"\s*(?:{_TIMESTAMP}|{_LEVEL}|{_FIELD}|{_CRI}|[-|])"
    return re.compile(rf"(?:{token}){{0,{PREFIX_TOKENS}}}?\s*{re.escape(marker)}")


def last_match(regex: re.Pattern[str], line: str) -> str | None:
    """The group of the last match of ``regex`` in the last :data:`METRIC_LINE_TAIL`
    characters of ``line`` (a progress bar's last update, not its first)."""
    last = deque(regex.finditer(line[-METRIC_LINE_TAIL:]), maxlen=1)
    return last[0].group(1) if last else None


class _Scan:
    """The newest match of each thing wanted, window by window from the end; a window's
    lines are fed in order, page by page as they arrive (never held whole)."""

    def __init__(self, spec: OutputSpec) -> None:
        self.spec = spec
        self.marker = None if spec.marker is None else result_pattern(spec.marker)
        self.result_line: tuple[str, int] | None = None  # (text after marker, line from end)
        self.values: dict[str, str] = {}
        self.lines_after = 0  # lines of the windows newer than the one being read
        self._window: tuple[str, int] | None = None  # (text, line number in the window)
        self._window_values: dict[str, str] = {}
        self._seen = 0

    @property
    def done(self) -> bool:
        marker_done = (
            self.spec.marker is None
            or self.result_line is not None
            or self.lines_after >= self.spec.result_lookback_lines
        )
        return marker_done and len(self.values) == len(self.spec.metrics)

    def feed(self, lines: list[str]) -> None:
        """The next lines of the window being read (in order): a later match wins."""
        marker, text = self.marker, self.spec.marker or ""
        for line in lines:
            self._seen += 1
            if marker and self.result_line is None and text in line:
                found = marker.match(line)
                if found is not None:
                    self._window = (line[found.end() :], self._seen)
            for name, regex in self.spec.metrics.items():
                if name not in self.values and (value := last_match(regex, line)) is not None:
                    self._window_values[name] = value

    def end_window(self) -> int:
        """Close the window fed so far: its last match of each thing not found in a newer
        window.  Returns how many lines it had."""
        total = self._seen
        if self.result_line is None and self._window is not None:
            text, seen = self._window
            self.result_line = (text, self.lines_after + total - seen + 1)
        for name, value in self._window_values.items():
            self.values.setdefault(name, value)
        self.lines_after += total
        self._window, self._window_values, self._seen = None, {}, 0
        return total


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
        lines = split_lines(page.logs, carriage_returns=True)
        if len(lines) >= page_lines and end - start > 1:  # maybe not the whole window
            width = max(1, (end - start) // 2)
            continue
        if len(lines) >= page_lines:
            yield from _page_through(
                GetPodLogs(job_id, pod, pool, "", page_lines, start, end, queue_id=queue_id),
                outputs,
                scan,
            )
        else:
            scan.feed(lines)
        total = scan.end_window()
        outputs.lines_read += total
        end = start
        if total < page_lines // 2:
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


def _page_through(first: GetPodLogs, outputs: Outputs, scan: _Scan) -> Flow[None]:
    """A one-second window too dense for one answer, read forward with ``marker`` paging,
    each page fed to ``scan`` as it arrives: memory holds one page, however dense the
    second (S4-11)."""
    page_lines = first.max_lines or PAGE_LINES
    marker = ""
    seen = {marker}  # a marker answered again would page in a circle
    while True:
        page = yield from _logs(replace(first, marker=marker), outputs)
        lines = split_lines(page.logs, carriage_returns=True)
        scan.feed(lines)
        if len(lines) < page_lines or not page.next_marker or page.next_marker in seen:
            return
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
    """A float where ``value`` reads as a finite one, else the text as printed: ``nan``
    and ``inf`` (a diverged run) stay text, as JSON has no such numbers and Airflow 3's
    XCom push refuses them (security review S4-9)."""
    try:
        number = float(value)
    except ValueError:
        return value
    return number if math.isfinite(number) else value


def first_replica(pods: list[tuple[str, str]]) -> str | None:
    """The pod of rank 0 among ``(name, replica type)``: the master, else ``…-0``."""
    masters = [name for name, kind in pods if kind.lower() == "master"]
    ranked = sorted(masters or [name for name, _ in pods if name.endswith("-0")])
    if ranked:
        return ranked[0]
    names = sorted(name for name, _ in pods)
    return names[0] if names else None
