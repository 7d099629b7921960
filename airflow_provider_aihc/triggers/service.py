"""``AIHCServiceTrigger``: an online service's rollout, waited for in the triggerer.

It polls ``DescribeService`` (one call per interval) and judges each answer as the worker
does (``watch/service.py`` :func:`judge`).  It keeps no state between polls: a triggerer
that takes the trigger over starts polling again, and nothing is sent twice (the trigger
only reads; a revert is the resumed task's, in the worker).  It serializes to plain values.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook


class AIHCServiceTrigger(BaseTrigger):  # type: ignore[misc]
    """Fire once the service's rollout is done, failed, or past its deadline.

    The event is ``{"status": "success" | "failed" | "timeout" | "error", "service_id",
    "message", "summary", "carry", "previous_conf"}``.

    :param service_id: the service.
    :param aihc_conn_id: the ``aihc`` connection.
    :param expected_conf: the configuration that should be live (``None``: whatever is).
    :param instance_count: instances that should be available (``None``: the configuration's).
    :param previous_conf: the configuration before the change, when known.
    :param stuck_reasons: instance reasons that fail the rollout at once (``None``: the
        defaults, ``CrashLoopBackOff``, ``ImagePullBackOff``, ...).
    :param poll_interval: seconds between polls.
    :param deadline: epoch seconds at which the wait ends in ``timeout`` (``None``: never).
    :param carry: plain values the event hands back untouched (the deferring operator's
        result so far: Airflow's ``airflow dags test`` does not pass ``defer(kwargs=)`` on).
    """

    def __init__(
        self,
        service_id: str,
        aihc_conn_id: str = "aihc_default",
        expected_conf: Mapping[str, Any] | None = None,
        instance_count: int | None = None,
        previous_conf: Mapping[str, Any] | None = None,
        stuck_reasons: Sequence[str] | None = None,
        poll_interval: float = 30.0,
        deadline: float | None = None,
        carry: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.service_id = service_id
        self.aihc_conn_id = aihc_conn_id
        self.expected_conf = dict(expected_conf) if expected_conf is not None else None
        self.instance_count = instance_count
        self.previous_conf = dict(previous_conf) if previous_conf is not None else None
        self.stuck_reasons = tuple(stuck_reasons) if stuck_reasons is not None else None
        self.poll_interval = poll_interval
        self.deadline = deadline
        self.carry = dict(carry) if carry is not None else None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """The classpath and plain keyword arguments."""
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "service_id": self.service_id,
                "aihc_conn_id": self.aihc_conn_id,
                "expected_conf": self.expected_conf,
                "instance_count": self.instance_count,
                "previous_conf": self.previous_conf,
                "stuck_reasons": list(self.stuck_reasons)
                if self.stuck_reasons is not None
                else None,
                "poll_interval": self.poll_interval,
                "deadline": self.deadline,
                "carry": self.carry,
            },
        )

    @property
    def hook(self) -> AIHCHook:
        """The connection's hook shared by the triggers on the running loop."""
        from airflow_provider_aihc.hooks.aihc import shared_async_hook

        return shared_async_hook(self.aihc_conn_id)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Poll until done, failed or the deadline; yield exactly one event."""
        from airflow_provider_aihc.hooks._sessions import preload_async_stack

        await preload_async_stack()
        from airflow_provider_aihc.exceptions import AIHCApiError, AIHCTransportError
        from airflow_provider_aihc.watch.service import DONE, FAILED, Expectation, judge

        expect = Expectation(self.expected_conf, self.instance_count, self.previous_conf)
        if self.stuck_reasons is not None:
            expect = replace(expect, stuck_reasons=self.stuck_reasons)
        last_message, summary = "never read", dict[str, Any]()
        while True:
            try:
                detail = await self.hook.aget_service(self.service_id)
            except (AIHCTransportError, AIHCApiError) as err:
                if isinstance(err, AIHCApiError) and err.status < 429:
                    yield self._event("error", str(err), summary)
                    return
                self.log.warning("AIHC service %s not read (%s)", self.service_id, err)
            except Exception as err:  # a bug: fail the task, never hang
                self.log.exception("Watching AIHC service %s failed", self.service_id)
                yield self._event("error", str(err), summary)
                return
            else:
                verdict = judge(self.service_id, detail, expect)
                summary = verdict.summary
                if verdict.message != last_message:
                    self.log.info("AIHC service %s: %s", self.service_id, verdict.message)
                last_message = verdict.message
                if verdict.state == DONE:
                    yield self._event("success", verdict.message, summary)
                    return
                if verdict.state == FAILED:
                    yield self._event("failed", verdict.message, summary)
                    return
            wait = self.poll_interval
            if self.deadline is not None:
                left = self.deadline - time.time()
                if left <= 0:
                    yield self._event(
                        "timeout", f"not ready in time; last: {last_message}", summary
                    )
                    return
                wait = min(wait, left)
            await asyncio.sleep(wait)

    def _event(self, status: str, message: str, summary: Mapping[str, Any]) -> TriggerEvent:
        payload = {
            "status": status,
            "service_id": self.service_id,
            "message": message,
            "summary": dict(summary),
            "carry": self.carry,
            "previous_conf": self.previous_conf,
        }
        return TriggerEvent(payload)  # type: ignore[no-untyped-call]
