"""What a waiting task reads from its job's log: the result marker and the metric patterns.

Validated when the operator or sensor is constructed (at DAG parse, before any request),
so this module imports nothing of the watch, the hook or the models; the reading itself is
:mod:`airflow_provider_aihc.watch.results`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_RESULT_MARKER",
    "RESULT_LOOKBACK_LINES",
    "OutputSpec",
]

#: What a result line carries after its logger's prefix (DESIGN.md "Results").
DEFAULT_RESULT_MARKER = "AIHC_RESULT "
#: The largest result pushed to XCom (a database row), in bytes of its JSON text.
DEFAULT_MAX_RESULT_BYTES = 64 * 1024
#: How many lines from the end the result marker is looked for: a job prints its result
#: last, and a job that prints none (most jobs, with the default marker on) must not cost a
#: read of its whole log.  Metrics asked for are looked for back to the pod's start.
RESULT_LOOKBACK_LINES = 20_000


class OutputSpec:
    """What to look for in the log: the result marker and the metric patterns.

    Build it with :meth:`build`, which validates before any request.  Made at DAG parse: a
    plain class with slots, as a named tuple's generated ``__new__`` would cost that parse
    ~0.2 ms (a frozen dataclass's methods a millisecond).  Not changed once made.

    :param marker: the result marker, or ``None`` (no result is read).
    :param metrics: the compiled metric patterns, by name.
    :param max_result_bytes: the largest result pushed to XCom.
    :param result_lookback_lines: how many lines from the end the marker is looked for.
    """

    __slots__ = ("marker", "max_result_bytes", "metrics", "result_lookback_lines")

    def __init__(
        self,
        marker: str | None,
        metrics: Mapping[str, re.Pattern[str]],
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        result_lookback_lines: int = RESULT_LOOKBACK_LINES,
    ) -> None:
        self.marker = marker
        self.metrics = metrics
        self.max_result_bytes = max_result_bytes
        self.result_lookback_lines = result_lookback_lines

    def __repr__(self) -> str:
        return f"OutputSpec(marker={self.marker!r}, metrics={sorted(self.metrics)!r})"

    def without_outputs(self) -> OutputSpec:
        """The same limits, looking for nothing (a job that did not end: no result)."""
        return OutputSpec(None, {}, self.max_result_bytes, self.result_lookback_lines)

    @classmethod
    def build(
        cls,
        result_marker: str | None,
        metrics: Mapping[str, str] | None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    ) -> OutputSpec:
        """Validate ``result_marker`` and ``metrics``.

        :raises AIHCValidationError: naming each metric whose pattern does not compile or
            has not exactly one group, and a marker that is not a string.
        """
        spec, problems = cls.checked(result_marker, metrics, max_result_bytes)
        if problems:
            from airflow_provider_aihc.exceptions import AIHCValidationError

            raise AIHCValidationError(problems)
        return spec

    @classmethod
    def checked(
        cls,
        result_marker: str | None,
        metrics: Mapping[str, str] | None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    ) -> tuple[OutputSpec, list[tuple[str, str]]]:
        """:meth:`build`'s spec (of the valid metrics) and its problems, not raised: for
        the operator, which reports them with its other parameters'."""
        problems: list[tuple[str, str]] = []
        if result_marker is not None and not isinstance(result_marker, str):
            problems.append(("result_marker", f"must be a string or None, got {result_marker!r}"))
        compiled: dict[str, re.Pattern[str]] = {}
        if metrics is not None and not isinstance(metrics, Mapping):
            problems.append(("metrics", f"must be a dict of name: regex, got {metrics!r}"))
            metrics = {}
        for name, pattern in (metrics or {}).items():
            where = f"metrics[{name!r}]"
            if not isinstance(name, str) or not name or not isinstance(pattern, str):
                problems.append((where, "must map a non-empty name to a regex string"))
                continue
            try:
                regex = re.compile(pattern)
            except re.error as err:
                problems.append((where, f"is not a regular expression: {err}"))
                continue
            if regex.groups != 1:
                problems.append(
                    (where, f"must have exactly one group (the value), has {regex.groups}")
                )
                continue
            compiled[name] = regex
        marker = result_marker if isinstance(result_marker, str) else None
        return cls(marker or None, compiled, max_result_bytes), problems

    @property
    def wanted(self) -> bool:
        """Whether anything is looked for at all."""
        return bool(self.marker or self.metrics)
