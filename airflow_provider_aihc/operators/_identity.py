"""Which task instance and try series a job belongs to: labels, a name, a client token.

A task instance is ``(dag_id, task_id, run_id, map_index)``; its key leaves the try number
out, so that every try finds the jobs earlier tries created.  Which of those a try may
adopt is decided by the *try series*: the tries since the task instance was last cleared.
A clear sets ``max_tries = try_number + retries``, so the current series began at try
``max_tries - retries + 1`` (the Task SDK's ``first_try_number``); a job whose creating try
(its ``airflow-try-number`` label) is older than that is history, not something to adopt.
Job names carry the series too (``-s<first try>`` after the first), so a cleared task's new
job never asks for the name its earlier job still holds.

Those labels are public facts (a scheduled ``run_id`` is ``scheduled__<date>``): anyone who
can create jobs in the pool could copy them.  So each job also carries :data:`TAG_LABEL`,
an HMAC keyed by the connection's tag key (:func:`tag_key`: the extra ``job_tag_key``, else
the secret access key) of the job's name and **every** identity label (:data:`SIGNED_LABELS`:
the task instance, the creating try and its series, the deployment, whether the task watches
the job).  Only the holder of the key can compute it; a copy of a real job's labels fits no
other name, no other try series and no other deployment, so a deleted job's labels replayed
onto a new job are never adopted by a later series (security review S4-3), and a job of
another deployment that shares the key is told apart (issue #34).  A job is adopted only
when its tag verifies (security review F5) and its name is one its series derives.
Tags of the previous format (``v1``, task instance and name only) never verify.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

#: The label that identifies the task instance exactly; the others are for people.
TI_LABEL = "airflow-ti"
DAG_LABEL = "airflow-dag-id"
TASK_LABEL = "airflow-task-id"
RUN_LABEL = "airflow-run-id"
MAP_INDEX_LABEL = "airflow-map-index"
TRY_LABEL = "airflow-try-number"
#: The first try of the series that created the job (for people; adoption reads TRY_LABEL).
SERIES_LABEL = "airflow-try-series"
#: The Airflow deployment whose task created the job (``[aihc] deployment_id``; empty when
#: unset): the orphan sweep of one deployment never touches another's jobs.
DEPLOYMENT_LABEL = "airflow-deployment"
#: ``true`` when the creating task waits for the job and stops it when killed
#: (``wait_for_completion`` and ``cancel_on_kill``): the job should not outlive its task,
#: and the orphan sweep may stop it once the task has ended.  ``false`` for a job the task
#: only starts.
WATCHED_LABEL = "airflow-watched"
#: The HMAC that proves the job was created with the connection's tag key (:func:`job_tag`).
TAG_LABEL = "airflow-ti-tag"
#: The labels the tag covers, in the order they enter it: all identity labels.
SIGNED_LABELS = (
    TI_LABEL,
    DAG_LABEL,
    TASK_LABEL,
    RUN_LABEL,
    MAP_INDEX_LABEL,
    TRY_LABEL,
    SERIES_LABEL,
    DEPLOYMENT_LABEL,
    WATCHED_LABEL,
)
IDENTITY_LABELS = frozenset(SIGNED_LABELS) | {TAG_LABEL}
#: Hex digits of the tag kept: 128 bits, within a label value's 63 characters.
TAG_LENGTH = 32
_TAG_CONTEXT = "airflow-provider-aihc/job-tag/v2"
#: What a ``[aihc] deployment_id`` may be: a label value.
DEPLOYMENT_ID_PATTERN = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?")

NAME_MAX_LENGTH = 50
CLOCK_SKEW_MARGIN = timedelta(hours=6)
LABEL_VALUE_MAX_LENGTH = 63
_NAMESPACE = uuid.UUID("6f1d1c52-7a43-4c1e-9d55-3f0f0c2b9a11")


@dataclass(frozen=True, slots=True)
class TaskIdentity:
    """The task instance a job is created for."""

    dag_id: str
    task_id: str
    run_id: str
    map_index: int = -1
    try_number: int = 1
    #: The first try of the current try series (1 until the task instance is cleared).
    first_try: int = 1
    #: No job of this task instance is older: its DAG run's start, less a margin for
    #: clock skew between Airflow and AIHC. ``None``: read the pool's whole history.
    created_after: datetime | None = None
    #: The Airflow deployment (``[aihc] deployment_id``; empty when unset).
    deployment: str = ""

    @classmethod
    def from_context(cls, context: Any) -> TaskIdentity:
        """Read the identity from an Airflow task context."""
        ti = context["ti"]
        task = context.get("task") or getattr(ti, "task", None)
        run_start = getattr(context.get("dag_run"), "start_date", None)
        return cls(
            dag_id=ti.dag_id,
            task_id=ti.task_id,
            run_id=ti.run_id,
            map_index=int(getattr(ti, "map_index", -1) if ti.map_index is not None else -1),
            try_number=int(getattr(ti, "try_number", 1) or 1),
            first_try=first_try_number(ti, getattr(task, "retries", 0)),
            created_after=run_start - CLOCK_SKEW_MARGIN
            if isinstance(run_start, datetime)
            else None,
            deployment=deployment_id(),
        )

    @property
    def key(self) -> str:
        """A short, stable hash of the task instance (label-safe)."""
        raw = "\0".join((self.dag_id, self.task_id, self.run_id, str(self.map_index)))
        return hashlib.sha256(raw.encode()).hexdigest()[:20]

    def labels(self, *, watched: bool = False) -> dict[str, str]:
        """The identity labels of a job this try creates (without the tag: :meth:`tagged`).

        :param watched: the task waits for the job and stops it when killed (see
            :data:`WATCHED_LABEL`).
        """
        return {
            TI_LABEL: self.key,
            DAG_LABEL: label_value(self.dag_id),
            TASK_LABEL: label_value(self.task_id),
            RUN_LABEL: label_value(self.run_id),
            MAP_INDEX_LABEL: str(self.map_index),
            TRY_LABEL: str(self.try_number),
            SERIES_LABEL: str(self.first_try),
            DEPLOYMENT_LABEL: self.deployment,
            WATCHED_LABEL: "true" if watched else "false",
        }

    def tagged(self, key: str, job_name: str, *, watched: bool = False) -> dict[str, str]:
        """:meth:`labels` plus :data:`TAG_LABEL`, the HMAC of them and ``job_name``.

        :param key: the connection's :func:`tag_key`.
        :param job_name: the name the job is created under.
        :param watched: see :meth:`labels`.
        """
        labels = self.labels(watched=watched)
        return labels | {TAG_LABEL: job_tag(key, labels, job_name)}

    def created_by_this_instance(self, labels: Mapping[str, str]) -> bool:
        """Whether a job with ``labels`` was created by this task instance (any series)."""
        return labels.get(TI_LABEL) == self.key

    def created_in_series(self, labels: Mapping[str, str]) -> bool:
        """Whether a job with ``labels`` was created by this task instance's current series.

        A job without a readable try label counts as created by try 1.
        """
        if labels.get(TI_LABEL) != self.key:
            return False
        try:
            created_by = int(labels.get(TRY_LABEL, "1"))
        except ValueError:
            created_by = 1
        return created_by >= self.first_try

    def default_name(self) -> str:
        """``<task>-<hash>``: lowercase alphanumerics and ``-``, at most 50 characters."""
        stem = job_name_part(self.task_id)[: NAME_MAX_LENGTH - 9] or "job"
        return f"{stem}-{self.key[:8]}"

    def job_name(self, base: str, generation: int) -> str:
        """The name of the series' ``generation``-th job (0 is the first).

        ``base`` in the first series; ``base-s<first try>`` in a later one; ``-r<n>`` added
        for the n-th job of a series whose earlier jobs ended badly.  ``base`` is cut to keep
        the whole within :data:`NAME_MAX_LENGTH`.
        """
        suffix = f"-s{self.first_try}" if self.first_try > 1 else ""
        if generation:
            suffix += f"-r{generation + 1}"
        if not suffix:
            return base
        return _cut(base, len(suffix)) + suffix

    def name_prefix(self, base: str) -> str:
        """What the name of every job this task instance's tries so far may have created
        from ``base`` starts with, whatever its series or generation: a lookup keyword.

        A try creates at most one job name, so up to try ``n`` no series began after try
        ``n`` and no series has more than ``n`` generations: every suffix is at most as long
        as ``-s<n>-r<n>``, and :meth:`job_name` cuts ``base`` by at most that much.
        """
        tries = max(self.try_number, self.first_try)
        return _cut(base, len(f"-s{tries}-r{tries}"))

    def fresh_name(self, name: str, key: str) -> str:
        """The name to use when ``name`` is held by a job that is not this connection's (a
        squatter): ``name`` cut, plus ``-x`` and 6 hex digits only the holder of the tag key
        (:func:`tag_key`) can derive, so every try picks the same one and nobody can squat
        it in advance."""
        digest = _hmac_hex(key, "fresh-name", self.key, name)
        return _cut(name, 8) + "-x" + digest[:6]

    def series_names(self, base: str, key: str) -> frozenset[str]:
        """Every name a job of the current try series may have, created from ``base``:
        :meth:`job_name` of each generation a try so far could reach, and its
        :meth:`fresh_name`.  A job under another name is not the series' (S4-3)."""
        generations = max(self.try_number - self.first_try + 1, 1)
        names = {self.job_name(base, g) for g in range(generations)}
        return frozenset(names | {self.fresh_name(name, key) for name in names})

    def client_token(self, generation: int) -> str:
        """An idempotency token for the series' ``generation``-th job."""
        return str(uuid.uuid5(_NAMESPACE, f"{self.key}/{self.first_try}/{generation}"))


def tag_key(config: Any) -> str:
    """The key of a connection's tags and fresh names: its extra ``job_tag_key`` when set,
    else its secret access key.

    STS credentials bring a new secret key at every refresh; a tag keyed by it would not
    verify on the retry after one (security review S4-7), so set ``job_tag_key`` with STS.

    :param config: the hook's ``ConnectionConfig``.
    """
    return str(getattr(config, "job_tag_key", None) or config.secret_access_key)


def job_tag(key: str, labels: Mapping[str, str], job_name: str) -> str:
    """The :data:`TAG_LABEL` value of the job ``job_name`` with identity ``labels``:
    HMAC-SHA256 keyed by ``key`` of the name and every :data:`SIGNED_LABELS` value (an
    absent label counts as empty), hex, cut to :data:`TAG_LENGTH`.

    :param key: the connection's :func:`tag_key`.
    :param labels: the job's labels (only :data:`SIGNED_LABELS` are read).
    :param job_name: the job's name.
    """
    values = [labels.get(label, "") for label in SIGNED_LABELS]
    return _hmac_hex(key, "tag", job_name, *values)[:TAG_LENGTH]


def tag_verifies(key: str, labels: Mapping[str, str], job_name: str) -> bool:
    """Whether a job's :data:`TAG_LABEL` is the one ``key`` computes for its name and its
    identity labels (compared in constant time)."""
    sent = labels.get(TAG_LABEL)
    if not sent or not labels.get(TI_LABEL):
        return False
    return hmac.compare_digest(sent, job_tag(key, labels, job_name))


def deployment_id() -> str:
    """This Airflow deployment's ``[aihc] deployment_id`` (``AIRFLOW__AIHC__DEPLOYMENT_ID``),
    empty when unset.

    :raises AIHCConfigError: it is not a label value (letters, digits, ``.``, ``_``,
        ``-``; at most 63 characters; alphanumeric ends).
    """
    from airflow_provider_aihc.exceptions import AIHCConfigError
    from airflow_provider_aihc.version_compat import conf

    value = str(conf.get("aihc", "deployment_id", fallback="") or "").strip()
    if value and not DEPLOYMENT_ID_PATTERN.fullmatch(value):
        raise AIHCConfigError(
            "[aihc] deployment_id must be 1-63 letters, digits, '.', '_' or '-', starting "
            f"and ending with a letter or digit; got {value[:70]!r}"
        )
    return value


def _hmac_hex(secret: str, *parts: str) -> str:
    message = "\0".join((_TAG_CONTEXT, *parts)).encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def first_try_number(ti: Any, retries: Any) -> int:
    """The first try of the task instance's current try series (1 before any clear).

    ``max_tries - retries + 1``, kept within ``1..try_number`` (``retries`` edited since
    the clear); 1 when the task instance has no ``max_tries``.

    :param ti: the task instance of the context (2.11 and 3.x both have ``try_number``
        and ``max_tries``).
    :param retries: the task's ``retries``.
    """
    try_number = int(getattr(ti, "try_number", None) or 1)
    max_tries = getattr(ti, "max_tries", None)
    if not isinstance(max_tries, int) or max_tries < 0:
        return 1
    return max(1, min(try_number, max_tries - int(retries or 0) + 1))


def _cut(base: str, suffix_length: int) -> str:
    """``base`` cut to leave room for a suffix within :data:`NAME_MAX_LENGTH` (no trailing
    ``-``); a shorter cut is always a prefix of a longer one."""
    return base[: NAME_MAX_LENGTH - suffix_length].rstrip("-")


def label_value(value: str) -> str:
    """A Kubernetes-safe label value: ``[A-Za-z0-9._-]``, alphanumeric ends, ≤ 63 chars."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-._")
    return safe[:LABEL_VALUE_MAX_LENGTH].rstrip("-._") or "none"


def job_name_part(value: str) -> str:
    """Lowercase alphanumerics and ``-`` only, no leading or trailing ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
