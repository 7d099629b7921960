"""Live logs: each new line of a job's pods copied into the task log exactly once, with
the job's own secrets masked wherever the copy runs (security review S4-2).

Airflow masks a log line in the process that writes it, with the secrets registered in
that process.  The create operator registers the job's sensitive env values in the
worker when it renders; a deferred wait copies the log in the triggerer, and a sensor
never rendered the job at all.  So the streamer reads the job's env once (one GetJob,
before the first lines it copies: AIHC echoes ``envs`` in every get-job answer) and
replaces the values whose names are sensitive (Airflow's rule) in every line it copies.
Nothing of them is carried in the trigger's serialized kwargs, and nothing is registered
with the process's masker: a triggerer holding thousands of triggers would otherwise grow
one global pattern that every log record of the process is matched against.  The cost is
one request per streamer and one regex pass per copied line.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from airflow_provider_aihc.exceptions import AIHCError
from airflow_provider_aihc.watch.flow import Flow, GetJob, GetPodLogs, Log, adrive, drive

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.job_parts import JobEnv

#: Log lines copied into the task log per poll, over all pods of a job.
DEFAULT_LOG_LINES_PER_POLL = 500
#: Lines asked for per pod and poll, as a multiple of the copy cap (bounds one answer).
FETCH_FACTOR = 10
#: A pod whose server sent no log marker: the value is how many lines were already copied.
COUNTED = "#lines="
#: A pod whose server stopped sending markers: its log is no longer copied.
GIVEN_UP = "#off"
#: Airflow 3's triggerer reads its runner's log records 4 KiB a loop round, and when it
#: learns that a trigger ended it closes that trigger's log file at once: the records it
#: has not read yet go to the triggerer's own output, not the task log (found by ``make
#: test-chaos``: the last 2-7 lines of 3 of 102 jobs; apache/airflow#66158 is the same
#: channel losing large records).  So a trigger that just copied lines waits before it
#: fires, half a second per 4 KiB it wrote, plus a second, at most
#: :data:`LOG_DRAIN_MAX_SECONDS`.
LOG_READ_BYTES = 4096
#: What one log record costs on that channel besides its line (the JSON fields Airflow
#: adds: time, logger, level, the task instance's ids).
LOG_RECORD_BYTES = 450
LOG_DRAIN_SECONDS_PER_READ = 0.5
LOG_DRAIN_MAX_SECONDS = 20.0
#: What a masked value reads as in a copied line (Airflow's masker writes the same).
MASKED = "***"


class LogStreamer:
    """Copies a job's new log lines into the task log, each line once.

    Keeps, per pod, AIHC's ``nextMarker`` (:attr:`state`, plain strings, so a trigger can
    carry on where the worker stopped).  Per poll at most ``max_lines`` lines are copied
    over all pods; a pod with more new lines shows its newest ones after a "… N more lines
    not shown" line, and the next poll continues after them.  A server that sends no marker
    is read whole and the lines already copied are skipped.

    :param job_id: the job.
    :param pool: its pool.
    :param log: where the lines go (``info``, one call per line).
    :param max_lines: lines copied per poll, over all pods.
    :param state: the :attr:`state` of an earlier streamer of this job.
    :param queue_id: the job's queue as AIHC addresses it (``None``: unknown).
    """

    __slots__ = ("_failing", "_secrets", "_secrets_read", "job_id", "last_copy", "log",
                 "markers", "max_lines", "pool", "queue_id", "since")  # fmt: skip

    def __init__(
        self,
        job_id: str,
        pool: str | None,
        log: Log,
        *,
        max_lines: int = DEFAULT_LOG_LINES_PER_POLL,
        state: Mapping[str, str] | None = None,
        queue_id: str | None = None,
    ) -> None:
        self.job_id = job_id
        self.pool = pool
        self.queue_id = queue_id
        self.log = log
        self.max_lines = max(1, max_lines)
        self.markers: dict[str, str] = dict(state or {})
        #: Copy only lines written at or after this (epoch seconds): see
        #: :func:`takeover_resume_point`.
        self.since: float | None = None
        #: When the last lines were copied, and their size on Airflow's log channel
        #: (:func:`log_drain_seconds`).
        self.last_copy: tuple[float, int] = (0.0, 0)
        self._failing: set[str] = set()
        #: The job's secrets as one pattern (``None``: it has none); unread until the
        #: first lines are copied.
        self._secrets: re.Pattern[str] | None = None
        self._secrets_read = False

    @property
    def state(self) -> dict[str, str]:
        """Pod name → where its next read starts."""
        return dict(self.markers)

    def poll(self, hook: AIHCHook, pod_names: Sequence[str]) -> None:
        """Copy the new lines of every pod (sync)."""
        drive(self.flow(pod_names), hook)

    async def apoll(self, hook: AIHCHook, pod_names: Sequence[str]) -> None:
        """Copy the new lines of every pod (async)."""
        await adrive(self.flow(pod_names), hook)

    def flow(self, pod_names: Sequence[str]) -> Flow[None]:
        """Read each pod on from its marker and copy what is new."""
        share = _share(self.max_lines, pod_names)
        for pod in pod_names:
            marker = self.markers.get(pod, "")
            if marker == GIVEN_UP:
                continue
            counted = marker.startswith(COUNTED)
            page = yield GetPodLogs(
                self.job_id,
                pod,
                self.pool,
                marker=None if counted else marker,
                max_lines=None if counted else self.max_lines * FETCH_FACTOR,
                start_time=None if self.since is None else int(self.since),
                queue_id=self.queue_id,
            )
            if isinstance(page, AIHCError):
                self._failed(pod, page)
                continue
            self._failing.discard(pod)
            lines = split_lines(page.logs)
            if lines and not (yield from self._read_secrets()):
                return  # read again next poll, once the job's secrets are known
            if counted:
                seen = int(marker[len(COUNTED) :])
                lines, self.markers[pod] = lines[seen:], f"{COUNTED}{max(seen, len(lines))}"
            elif page.next_marker:
                self.markers[pod] = page.next_marker
            elif not marker:
                self.markers[pod] = f"{COUNTED}{len(lines)}"
            else:  # a marker before, none now: cannot tell new lines from old any more
                self.log.warning("AIHC sent no log marker for pod %s; not copying its log", pod)
                self.markers[pod] = GIVEN_UP
            self._emit(pod, lines, share, many=len(pod_names) > 1)

    def tail_flow(self, pod_names: Sequence[str]) -> Flow[None]:
        """Copy the newest lines of every pod once (for a watch that keeps no state)."""
        share = _share(self.max_lines, pod_names)
        for pod in pod_names:
            page = yield GetPodLogs(
                self.job_id, pod, self.pool, marker=None, max_lines=share, queue_id=self.queue_id
            )
            if isinstance(page, AIHCError):
                self._failed(pod, page)
                continue
            lines = split_lines(page.logs)
            if lines and not (yield from self._read_secrets()):
                return
            if len(lines) >= share:
                self.log.info("AIHC job %s, pod %s: the last %d lines", self.job_id, pod, share)
            self._emit(pod, lines, share, many=len(pod_names) > 1)

    def _emit(self, pod: str, lines: list[str], share: int, *, many: bool) -> None:
        if len(lines) > share:
            self.log.info(
                "AIHC job %s, pod %s: … %d more lines not shown (at most %d per poll); "
                "the newest follow",
                self.job_id,
                pod,
                len(lines) - share,
                self.max_lines,
            )
            lines = lines[-share:]
        if self._secrets is not None:
            lines = [self._secrets.sub(MASKED, line) for line in lines]
        for line in lines:
            if many:
                self.log.info("[%s] %s", pod, line)
            else:
                self.log.info("%s", line)
        at, size = self.last_copy
        now = time.time()
        written = sum(len(line) + LOG_RECORD_BYTES for line in lines)
        self.last_copy = (now, written + (size if now - at < LOG_DRAIN_MAX_SECONDS else 0))

    def _read_secrets(self) -> Flow[bool]:
        """Read the job's env once (one GetJob); ``False`` while it cannot be read: no
        line is copied unmasked."""
        if self._secrets_read:
            return True
        job = yield GetJob(self.job_id, self.pool, queue_id=self.queue_id)
        if isinstance(job, AIHCError):
            if "" not in self._failing:  # "": the job itself, once
                self._failing.add("")
                self.log.warning(
                    "Could not read the env of AIHC job %s to mask its secrets (%s); its "
                    "log is copied once it can be",
                    self.job_id,
                    job,
                )
            return False
        self._failing.discard("")
        self._secrets, self._secrets_read = secrets_pattern(job.envs), True
        return True

    def _failed(self, pod: str, error: AIHCError) -> None:
        if pod not in self._failing:
            self._failing.add(pod)
            self.log.warning("Could not read the log of AIHC pod %s (%s)", pod, error)


def takeover_resume_point(
    deferred_at: float | None, now: float, poll_interval: float, takeover_seconds: float
) -> float | None:
    """Where a trigger that took over from a stopped triggerer resumes the job's log.

    A trigger carries the log position of the moment its task deferred, not of how far
    the triggerer that ran it got, so a takeover would copy the job's log again from
    there.  The rule: a trigger that starts more than ``takeover_seconds`` (Airflow's
    ``[triggerer] triggerer_health_check_threshold``: how long a triggerer is silent
    before another takes its triggers) plus one poll after its task deferred counts as a
    takeover.  The triggerer before it copied the log until it stopped, at most
    ``takeover_seconds`` ago, a poll at a time; so the log resumes ``takeover_seconds``
    plus two polls ago (never before the deferral): lines older than that are in the task
    log already, the few after it may be shown twice.

    :param deferred_at: when the task deferred (epoch seconds); ``None``: unknown.
    :param now: the time now.
    :param poll_interval: the trigger's seconds between polls.
    :param takeover_seconds: the triggerer health-check threshold.
    :return: ``None`` for a first start, else the epoch seconds to copy lines from.
    """
    if deferred_at is None or now - deferred_at <= takeover_seconds + poll_interval:
        return None
    return max(deferred_at, now - takeover_seconds - 2 * poll_interval)


def log_drain_seconds(last_copy: tuple[float, int], now: float) -> float:
    """How long a trigger waits before it fires, so that the triggerer writes the lines it
    copied last into the task log first (:data:`LOG_READ_BYTES`).

    :param last_copy: :attr:`LogStreamer.last_copy`: when, and how many bytes.
    :param now: the time now (epoch seconds).
    """
    at, size = last_copy
    if size <= 0:
        return 0.0
    reads = math.ceil(size / LOG_READ_BYTES)
    wait = min(LOG_DRAIN_MAX_SECONDS, 1.0 + LOG_DRAIN_SECONDS_PER_READ * reads)
    return max(0.0, wait - (now - at))


def secrets_pattern(envs: Iterable[JobEnv]) -> re.Pattern[str] | None:
    """One pattern of the env values whose names Airflow deems sensitive (``HF_TOKEN``,
    ``*_PASSWORD``, ``[core] sensitive_var_conn_names``), longest first; values shorter
    than Airflow's ``[logging] min_length_masked_secret`` are left, as Airflow leaves them.
    ``None`` when there is nothing to mask."""
    from airflow_provider_aihc.version_compat import is_sensitive_name, min_masked_length

    shortest = min_masked_length()
    values = {
        env.value for env in envs if len(env.value) >= shortest and is_sensitive_name(env.name)
    }
    if not values:
        return None
    return re.compile("|".join(re.escape(value) for value in sorted(values, key=len)[::-1]))


def split_lines(records: Iterable[str], *, carriage_returns: bool = False) -> list[str]:
    """The lines of AIHC log records, each of which may hold several (``chunk``).

    :param carriage_returns: a lone ``\r`` ends a line too (a progress bar redraws its
        line with it): for reading results and metrics, where each update is a line of
        its own (S4-11).  The live copy keeps such a record one line, as a terminal shows
        it once.
    """
    lines: list[str] = []
    for record in records:
        parts = _LINE_ENDS.split(record) if carriage_returns else record.split("\n")
        if parts and parts[-1] == "":
            parts.pop()
        lines.extend(part.removesuffix("\r") for part in parts)
    return lines


#: ``\r\n``, ``\n`` or a lone ``\r``.
_LINE_ENDS = re.compile(r"\r\n|\r|\n")


def _share(max_lines: int, pod_names: Sequence[str]) -> int:
    return max(1, -(-max_lines // max(1, len(pod_names))))
