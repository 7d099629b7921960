"""Errors raised by the AIHC provider.

::

    AIHCError
     ├── AIHCConfigError          the connection or a parameter cannot work (nothing was sent)
     │    └── AIHCValidationError  task input failed validation; lists every bad field  [F]
     ├── AIHCRefusedError         AIHC refused what no retry changes (400, 401/403, a 409
     │                            for a name another job holds); wraps the API error    [F]
     ├── AIHCWatchRefusedError    a job cannot be watched for a reason no retry changes
     │                            (400, 401/403, 404: no such job, or it was deleted)   [F]
     ├── AIHCTransportError       no HTTP answer (connection refused or dropped, timeout)
     ├── AIHCApiError             AIHC answered with an error (status, code, message, requestId)
     │    ├── AIHCAuthError        signature, access key or expiry rejected (401/403)
     │    ├── AIHCNotFoundError    404
     │    ├── AIHCThrottledError   429 (``retry_after`` seconds when the server said)
     │    ├── AIHCServerError      5xx
     │    └── AIHCResponseError    a 2xx answer that is not the JSON AIHC documents
     ├── AIHCJobFailedError       the job ended without succeeding (status and reason)
     ├── AIHCJobTimeoutError      the wait passed its deadline
     │    └── AIHCQueueTimeoutError  the job waited for resources past ``queue_timeout``
     └── AIHCResultError          the job's result line does not parse or is too big  [F]

[F]: also Airflow's ``AirflowFailException`` (2.11 and 3.x alike), so the task fails at
once, without its retries: input that cannot become valid by waiting is not retried.
Everything else (no answer, 5xx, 429, a lost answer) keeps the task's retries.

Messages carry the access key id and the requestId, never the secret key, the STS token
or an ``Authorization`` header.
"""

from __future__ import annotations

from collections.abc import Sequence

from airflow_provider_aihc.version_compat import AirflowFailException


class AIHCError(Exception):
    """Base class of every error this provider raises."""


class AIHCConfigError(AIHCError, ValueError):
    """The connection or a parameter is unusable; nothing was sent."""


class AIHCValidationError(AIHCConfigError, AirflowFailException):  # type: ignore[misc]
    """Task input failed validation; the task fails without retries.

    :param errors: ``(field, problem)`` pairs, one per bad field, in the wire or parameter name.
    :param subject: what the parameters are of (``job``, ``service``, ``model version``,
        ...), so that the message names what the task was about to send.
    :param task_id: the task whose parameters they are, when found at DAG parse (a DAG file
        may have many tasks; at run time the task log says whose).
    """

    def __init__(
        self, errors: Sequence[tuple[str, str]], subject: str = "job", *, task_id: str | None = None
    ) -> None:
        self.errors = tuple(errors)
        lines = "\n".join(f"  - {field}: {problem}" for field, problem in self.errors)
        count = len(self.errors)
        whose = f" of task {task_id!r}" if task_id else ""
        super().__init__(
            f"Invalid AIHC {subject} parameters{whose} ({count} error{'s' if count != 1 else ''}); "
            f"nothing was sent:\n{lines}"
        )


class AIHCRefusedError(AIHCError, AirflowFailException):  # type: ignore[misc]
    """AIHC refused a request for a reason no retry changes; the task fails without retries.

    :param error: AIHC's answer (also the ``__cause__``).
    :param problem: what is wrong, when more can be said than AIHC's message.
    """

    def __init__(self, error: AIHCApiError, problem: str | None = None) -> None:
        self.error = error
        detail = f"; {problem}" if problem else ""
        super().__init__(f"{error}{detail} (not retried: a retry would be refused alike)")


class AIHCWatchRefusedError(AIHCError, AirflowFailException):  # type: ignore[misc]
    """Watching a job was refused for a reason no retry changes (a 400, 401/403, or a 404:
    the job does not exist or was deleted); the task fails without retries.

    Raised where the wait ends (a sensor's poke, a deferred task's resumption), from the
    watch's event, which carries AIHC's answer as text (code and requestId, no secrets).

    :param job_id: the job.
    :param message: what the watch said, AIHC's answer included.
    """

    def __init__(self, job_id: str, message: str) -> None:
        self.job_id = job_id
        super().__init__(f"{message} (not retried: a retry would be refused alike)")


class AIHCTransportError(AIHCError):
    """No HTTP answer arrived: the request may or may not have reached AIHC.

    :param operation: the API operation, e.g. ``CreateJob``.
    :param reason: what went wrong, e.g. ``ConnectTimeout``.
    """

    def __init__(self, operation: str, reason: str) -> None:
        self.operation = operation
        self.reason = reason
        super().__init__(f"AIHC {operation} got no answer: {reason}")


class AIHCApiError(AIHCError):
    """AIHC answered with an error.

    :param operation: the API operation, e.g. ``GetJob``.
    :param status: the HTTP status code.
    :param code: AIHC's error code (``""`` when the body had none).
    :param message: AIHC's error message.
    :param request_id: the requestId from the body or the ``x-bce-request-id`` header.
    :param access_key_id: the access key the request was signed with, to tell keys apart.
    """

    def __init__(
        self,
        operation: str,
        status: int,
        code: str = "",
        message: str = "",
        request_id: str | None = None,
        access_key_id: str | None = None,
    ) -> None:
        self.operation = operation
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.access_key_id = access_key_id
        details = [code or "no code", f"HTTP {status}"]
        if request_id:
            details.append(f"requestId {request_id}")
        if access_key_id:
            details.append(f"access key {access_key_id}")
        super().__init__(f"AIHC {operation} failed ({', '.join(details)}): {message or '-'}")


class AIHCAuthError(AIHCApiError):
    """The request's signature, access key or timestamp was rejected."""


class AIHCNotFoundError(AIHCApiError):
    """The job, pod or pool does not exist (HTTP 404)."""


class AIHCThrottledError(AIHCApiError):
    """AIHC asked to slow down (HTTP 429).

    :param retry_after: seconds from the ``Retry-After`` header, when given.
    """

    def __init__(self, *args: object, retry_after: float | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.retry_after = retry_after


class AIHCServerError(AIHCApiError):
    """AIHC failed on its side (HTTP 5xx)."""


class AIHCResponseError(AIHCApiError):
    """A 2xx answer whose body is not the JSON that AIHC documents."""


class AIHCJobFailedError(AIHCError):
    """The job ended without succeeding.

    :param job_id: the job.
    :param status: its final status, e.g. ``Failed``.
    :param reason: the job's own failure reason, when AIHC gave one.
    """

    def __init__(self, job_id: str, status: str, reason: str | None = None) -> None:
        self.job_id = job_id
        self.status = status
        self.reason = reason
        suffix = f": {reason}" if reason else ""
        super().__init__(f"AIHC job {job_id} ended {status}{suffix}")


class AIHCJobTimeoutError(AIHCError):
    """The wait for a job passed its deadline.

    :param job_id: the job.
    :param waited_seconds: how long the wait lasted.
    :param stopped: whether the job was stopped because of it.
    """

    def __init__(self, job_id: str, waited_seconds: float, stopped: bool) -> None:
        self.job_id = job_id
        self.waited_seconds = waited_seconds
        self.stopped = stopped
        action = "the job was stopped" if stopped else "the job was left running"
        super().__init__(
            f"AIHC job {job_id} did not finish within {waited_seconds:.0f} s; {action}"
        )


class AIHCQueueTimeoutError(AIHCJobTimeoutError):
    """The job waited for resources (not yet running) longer than ``queue_timeout``.

    :param job_id: the job.
    :param waited_seconds: how long it had waited in the queue.
    :param stopped: whether the job was stopped because of it.
    :param message: the whole text (pool, queue, last status, latest events).
    """

    def __init__(self, job_id: str, waited_seconds: float, stopped: bool, message: str) -> None:
        super().__init__(job_id, waited_seconds, stopped)
        self.args = (message,)


class AIHCResultError(AIHCError, AirflowFailException):  # type: ignore[misc]
    """The job's result line does not parse as JSON, or is larger than the cap; reading
    the same log again gives the same answer, so the task fails without its retries."""
