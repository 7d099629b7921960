"""Which task instance created a model version, a service or a service change.

AIHC's model, dataset and service objects carry no labels, so the jobs' identity
(``operators/_identity.py``: the task instance's key, the try series, an HMAC tag keyed by
the connection's secret) goes where each keeps free text (*inferred* that
these round-trip unchanged: ``docs/service_lifecycle.md``):

* a model version or a service change: a marker ``airflow-ti=<key> airflow-try-number=<n>
  airflow-ti-tag=<tag>`` in its ``description``;
* a service: the same three as ``misc.podAnnotations``.

The tag is :func:`~airflow_provider_aihc.operators._identity.job_tag` of the task
instance's key, the try number and the object's *subject* (a model version's
``bucket/path``, a service's name, a change's service and configuration digest): only the
secret's holder can make it, and a copy of one object's marker fits no other subject.  A
service is also created with a ``clientToken`` derived from the try series, its name and
its tag.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping

from airflow_provider_aihc.operators._identity import (
    TAG_LABEL,
    TI_LABEL,
    TRY_LABEL,
    TaskIdentity,
    job_tag,
    tag_verifies,
)

_MARK = re.compile(r"(airflow-ti|airflow-try-number|airflow-ti-tag)=([0-9A-Za-z]+)")


def identity_labels(secret: str, identity: TaskIdentity, subject: str) -> dict[str, str]:
    """The task instance's key, try number and tag for ``subject``."""
    signed = {TI_LABEL: identity.key, TRY_LABEL: str(identity.try_number)}
    # The try number is under the tag, as a job's try label is: a copied marker cannot be
    # replayed into a later try series.
    return {**signed, TAG_LABEL: job_tag(secret, signed, subject)}


def marker(secret: str, identity: TaskIdentity, subject: str) -> str:
    """The marker text of :func:`identity_labels` (for a ``description``)."""
    labels = identity_labels(secret, identity, subject)
    return " ".join(f"{k}={labels[k]}" for k in (TI_LABEL, TRY_LABEL, TAG_LABEL))


def marked(description: str | None, mark: str) -> str:
    """``description`` with the marker after it."""
    return f"{description} [{mark}]" if description else f"[{mark}]"


def labels_in(text: str) -> dict[str, str]:
    """The identity labels a marker in ``text`` carries (the last of each)."""
    return {key: value for key, value in _MARK.findall(text or "")}


def verifies(secret: str, labels: Mapping[str, str], subject: str) -> bool:
    """Whether ``labels`` carry this secret's tag for ``subject``."""
    return tag_verifies(secret, labels, subject)


def ours(secret: str, identity: TaskIdentity, labels: Mapping[str, str], subject: str) -> bool:
    """Whether ``labels`` say this task instance's current try series made ``subject``,
    with a tag that verifies."""
    return identity.created_in_series(labels) and verifies(secret, labels, subject)


def service_client_token(secret: str, identity: TaskIdentity, name: str) -> str:
    """``CreateService``'s ``clientToken``: the try series' token (a clear makes a new
    one), the service's name and its tag."""
    series = uuid.UUID(identity.client_token(0))
    return str(uuid.uuid5(series, f"{name}/{job_tag(secret, {TI_LABEL: identity.key}, name)}"))
