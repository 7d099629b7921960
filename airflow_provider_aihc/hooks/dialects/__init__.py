"""AIHC's two API generations, one module each: what differs between them lives here.

A :class:`Dialect` turns one hook call (an operation named by its v1 :class:`Endpoint`, the
pool, the queue id, v1-named query arguments, a JSON body in v1 wire form) into the
:class:`ApiRequest` of its API generation, and turns the decoded answer back into the v1
wire form the response models read.  The hook's methods, their arguments and typed results
are the same on both; the connection extra ``api_version`` picks the dialect.

* :mod:`.v1`: REST paths (``/api/v1/aijobs…``), ``{requestId, result}`` envelopes.
* :mod:`.v2`: ``POST /?action=…`` with JSON bodies, flat answers, ``X-API-Version: v2``;
  pool and queue actions are ``GET`` with ``version: v2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks._endpoint import ApiRequest, Endpoint, Params
from airflow_provider_aihc.job_parameters import JOB_FIELDS, JobField

__all__ = ["JOBS_PATH", "LIST_FILTERS", "Dialect", "check_path_id", "dialect_for"]

#: v1 job endpoints start so; every job call, in either dialect, names a resource pool.
JOBS_PATH = "/api/v1/aijobs"
#: ListJobs arguments that narrow the list (a name ``keyword``, one ``status``): v2 sends
#: them to the server, v1 has no such filters and drops them; the hook filters what it reads
#: on either, so the answer is the same.
LIST_FILTERS = ("keyword", "status")


class Dialect(Protocol):
    """How one API generation says what the hook asks."""

    name: str

    def request(
        self,
        endpoint: Endpoint,
        pool: str | None,
        queue_id: str | None,
        params: Params,
        body: Any,
        path_args: Mapping[str, str],
    ) -> ApiRequest:
        """The request of one call.

        :param endpoint: the operation, as its v1 endpoint.
        :param pool: the resource pool of a job call (``None`` for pool and queue calls).
        :param queue_id: the queue id, when the caller gave one.
        :param params: query arguments, by their v1 names.
        :param body: the JSON body in v1 wire form, if any.
        :param path_args: the v1 path's arguments (``job_id``, ``pod_name``, ...).
        """
        ...

    def answer(self, endpoint: Endpoint, result: Any) -> Any:
        """The decoded answer in the v1 wire form the response models read."""
        ...

    def create_problems(self, body: Mapping[str, Any]) -> list[tuple[str, str]]:
        """``(field, problem)`` for what a v1 create body holds that this dialect cannot
        say; empty when it can be sent."""
        ...


#: Create fields only v1 defines, and only v2 (their rows in job_parameters name the sources).
V1_ONLY_FIELDS: tuple[JobField, ...] = tuple(r for r in JOB_FIELDS if r.v2 is None)
V2_ONLY_FIELDS: tuple[JobField, ...] = tuple(r for r in JOB_FIELDS if r.v1 is None)


def other_dialects_fields(
    body: Mapping[str, Any], fields: tuple[JobField, ...], needs: str
) -> list[tuple[str, str]]:
    """A problem for each of ``fields`` set in ``body`` (v1 form): it needs api_version
    ``needs`` (or what its row's ``refusal`` says)."""
    problems = []
    for row in fields:
        value: Any = body
        for key in row.wire.split("."):
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is not None:
            refusal = row.refusal or f"needs the connection's api_version {needs}"
            problems.append((f"{row.wire} ({row.name})", refusal))
    return problems


def dialect_for(api_version: str) -> Dialect:
    """The dialect of a connection's ``api_version`` (``v1`` or ``v2``)."""
    if api_version == "v2":
        from airflow_provider_aihc.hooks.dialects.v2 import V2

        return V2
    from airflow_provider_aihc.hooks.dialects.v1 import V1

    return V1


def check_path_id(name: str, value: str) -> str:
    """An id sent in a path or query, refused if it could escape its segment (``/``,
    ``.``, ``..``).

    :raises AIHCConfigError: naming the parameter.
    """
    text = str(value)
    if not text.strip() or "/" in text or "\\" in text or text in (".", ".."):
        raise AIHCConfigError(f"{name} must be a non-empty id without '/', got {value!r}")
    return text
