"""Wait until an AIHC online service serves the configuration it should.

``api_version`` v2 only.  AIHC action used: DescribeService (one per poke).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.version_compat import (
    AirflowSensorTimeout,
    BaseSensorOperator,
    Context,
    PokeReturnValue,
    conf,
)

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

DEFER_METHOD_NAME = "execute_complete"


class AIHCServiceSensor(BaseSensorOperator):  # type: ignore[misc]
    """Wait until an AIHC online service's rollout is done.

    Done when the live configuration is the expected one (every field ``expected_conf``
    sets has that value), ``briefStat.availableIns == totalIns ==`` the expected instance
    count, and every instance that takes traffic is ``Running`` with all its containers
    available.  ``briefStat.status`` is logged, never decided on: Baidu publishes no
    meaning for its integer.  A stuck rollout (an instance or container reason such as
    ``CrashLoopBackOff`` or ``ImagePullBackOff``) fails at once with the instances'
    reasons; the ``timeout`` fails with the last reasons.  The return value is the last
    summary: ``{service_id, brief_stat, instances: [{instanceId, status, reason}],
    conf_digest}``.

    Modes: ``poke``, ``reschedule`` (each poke reads the service afresh) and
    ``deferrable=True`` (the triggerer polls,
    :class:`~airflow_provider_aihc.triggers.service.AIHCServiceTrigger`).

    :param service_id: the service, e.g. a deploy operator's ``.output["service_id"]``
        (templated).
    :param expected_conf: the configuration that should be live (``None``: whatever is)
        (templated).
    :param expected_instance_count: instances that should be available (``None``: the
        configuration's ``instanceCount``) (templated).
    :param stuck_reasons: instance reasons that fail at once (``None``: the defaults).
    :param aihc_conn_id: the ``aihc`` connection (``api_version`` v2).
    :param deferrable: wait in the triggerer rather than in a worker slot.
    """

    template_fields: Sequence[str] = ("service_id", "expected_conf", "expected_instance_count")
    ui_color = "#2468f2"

    def __init__(
        self,
        *,
        service_id: str,
        expected_conf: Mapping[str, Any] | None = None,
        expected_instance_count: int | None = None,
        stuck_reasons: Sequence[str] | None = None,
        aihc_conn_id: str = "aihc_default",
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.service_id = service_id
        self.expected_conf = expected_conf
        self.expected_instance_count = expected_instance_count
        self.stuck_reasons = tuple(stuck_reasons) if stuck_reasons is not None else None
        self.aihc_conn_id = aihc_conn_id
        self.deferrable = deferrable
        self._last_message = ""

    @cached_property
    def hook(self) -> AIHCHook:
        """The AIHC hook of this task."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        return AIHCHook(aihc_conn_id=self.aihc_conn_id)

    def _judge(self) -> Any:
        from airflow_provider_aihc.watch.service import Expectation, judge

        expect = Expectation(self.expected_conf, self.expected_instance_count)
        if self.stuck_reasons is not None:
            expect = Expectation(
                self.expected_conf, self.expected_instance_count, None, self.stuck_reasons
            )
        return judge(self.service_id, self.hook.get_service(self.service_id), expect)

    def execute(self, context: Context) -> Any:
        self.hook.require_v2(type(self).__name__)
        if self.deferrable:
            from airflow_provider_aihc.triggers.service import AIHCServiceTrigger

            deadline = time.time() + float(self.timeout) if self.timeout else None
            self.defer(
                trigger=AIHCServiceTrigger(
                    self.service_id, self.aihc_conn_id, self.expected_conf,
                    self.expected_instance_count, None, self.stuck_reasons,
                    float(self.poke_interval), deadline,
                ),
                method_name=DEFER_METHOD_NAME,
            )  # fmt: skip
        try:
            return super().execute(context)
        except AirflowSensorTimeout:
            # The timeout names the instances' last reasons (read afresh: a rescheduled
            # sensor keeps nothing between pokes).
            from airflow_provider_aihc.watch.service import reasons_of

            summary = self._judge().summary
            raise AirflowSensorTimeout(
                f"AIHC service {self.service_id} not ready within the sensor's timeout; "
                f"last reasons: {reasons_of(summary)}"
            ) from None

    def poke(self, context: Context) -> PokeReturnValue | bool:
        from airflow_provider_aihc.watch.service import DONE, FAILED, AIHCServiceRolloutError

        verdict = self._judge()
        if verdict.message != self._last_message:
            self.log.info("AIHC service %s: %s", self.service_id, verdict.message)
            self._last_message = verdict.message
        if verdict.state == FAILED:
            raise AIHCServiceRolloutError(self.service_id, verdict.message, verdict.summary)
        if verdict.state == DONE:
            return PokeReturnValue(is_done=True, xcom_value=verdict.summary)
        return False

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> Any:
        """Resume after the trigger: the summary, or the failure with its reasons."""
        from airflow_provider_aihc.watch.service import AIHCServiceRolloutError

        status = event.get("status")
        if status == "success":
            return event.get("summary")
        message = str(event.get("message"))
        if status == "timeout":
            raise AirflowSensorTimeout(f"AIHC service {self.service_id}: {message}")
        raise AIHCServiceRolloutError(self.service_id, message, event.get("summary") or {})
