"""What the online-service operators share: the connection, the v2 check, masking the
registry passwords a ``ServiceConf`` may hold, and the wait for a rollout (in the worker,
or deferred to :class:`~airflow_provider_aihc.triggers.service.AIHCServiceTrigger`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.version_compat import BaseOperator, Context, conf, mask_secret

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

DEFER_METHOD_NAME = "execute_complete"
XCOM_SERVICE_ID = "service_id"
SECRET_KEYS = frozenset({"password"})


def mask_passwords(value: object) -> None:
    """Register every ``password`` in a configuration with the secrets masker (a
    container image's registry password: ``image.password``)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in SECRET_KEYS and isinstance(item, str) and item:
                mask_secret(item)
            else:
                mask_passwords(item)
    elif isinstance(value, list | tuple):
        for item in value:
            mask_passwords(item)


class ServiceOperator(BaseOperator):
    """Base of the online-service operators: the connection and the rollout wait.

    :param aihc_conn_id: the ``aihc`` connection (``api_version`` v2).
    :param wait_for_completion: wait until the rollout is done (see
        :class:`~airflow_provider_aihc.sensors.service.AIHCServiceSensor` for what "done"
        means); fail if it fails.
    :param deferrable: wait in the triggerer rather than in a worker slot.
    :param poll_interval: seconds between ``DescribeService`` polls while waiting.
    :param timeout: seconds to wait at most (``None``: no limit); the task then fails with
        the instances' last reasons.
    :param stuck_reasons: instance reasons that fail the wait at once (``None``: the
        defaults, ``CrashLoopBackOff``, ``ImagePullBackOff``, ``ErrImagePull``, ...).
    """

    ui_color = "#2468f2"

    def __init__(
        self,
        *,
        aihc_conn_id: str = "aihc_default",
        wait_for_completion: bool = True,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        poll_interval: float = 30.0,
        timeout: float | None = None,
        stuck_reasons: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.aihc_conn_id = aihc_conn_id
        self.wait_for_completion = wait_for_completion
        self.deferrable = deferrable
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.stuck_reasons = tuple(stuck_reasons) if stuck_reasons is not None else None

    @cached_property
    def hook(self) -> AIHCHook:
        """The AIHC hook of this task."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        return AIHCHook(aihc_conn_id=self.aihc_conn_id)

    def render_template_fields(self, context: Context, jinja_env: Any = None) -> None:
        """Render, then mask the registry passwords the rendered values hold, before they
        are logged or stored as rendered fields."""
        super().render_template_fields(context, jinja_env)
        for name in self.template_fields:
            mask_passwords(getattr(self, name, None))

    def wait(
        self,
        service_id: str,
        result: dict[str, Any],
        *,
        expected_conf: Mapping[str, Any] | None = None,
        instance_count: int | None = None,
        previous_conf: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``result``, after the rollout is done when waiting (its summary added as
        ``summary``); defers when ``deferrable``.

        :raises AIHCServiceRolloutError: the rollout failed or timed out (after
            :meth:`on_rollout_failure`).
        """
        if not self.wait_for_completion:
            return result
        if self.deferrable:
            from airflow_provider_aihc.models.service_requests import without_secrets
            from airflow_provider_aihc.triggers.service import AIHCServiceTrigger

            deadline = None if self.timeout is None else time.time() + self.timeout
            # Airflow stores a trigger's arguments: no registry password goes there (the
            # judgement does not compare them; a revert takes them from the live service).
            expected = without_secrets(expected_conf) if expected_conf is not None else None
            previous = without_secrets(previous_conf) if previous_conf is not None else None
            self.defer(
                trigger=AIHCServiceTrigger(
                    service_id, self.aihc_conn_id, expected, instance_count,
                    previous, self.stuck_reasons, self.poll_interval, deadline,
                    carry=result,
                ),
                method_name=DEFER_METHOD_NAME,
            )  # fmt: skip
        from airflow_provider_aihc.watch.service import (
            AIHCServiceRolloutError,
            Expectation,
            wait_for_rollout,
        )

        expect = Expectation(expected_conf, instance_count, previous_conf)
        if self.stuck_reasons is not None:
            expect = Expectation(expected_conf, instance_count, previous_conf, self.stuck_reasons)
        try:
            summary = wait_for_rollout(
                self.hook, service_id, expect, poll_interval=self.poll_interval,
                timeout=self.timeout, log=self.log,
            )  # fmt: skip
        except AIHCServiceRolloutError as err:
            self.on_rollout_failure(result, previous_conf, str(err))
            raise
        return {**result, "summary": summary}

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> dict[str, Any]:
        """Resume after the trigger: the result on success, else the failure (after
        :meth:`on_rollout_failure`); the result and the previous configuration come back in
        the event."""
        from airflow_provider_aihc.watch.service import AIHCServiceRolloutError

        result = dict(event.get("carry") or {})
        previous_conf = event.get("previous_conf")

        if event.get("status") == "success":
            self.log.info("AIHC service %s: %s", event.get("service_id"), event.get("message"))
            return {**result, "summary": event.get("summary") or {}}
        error = AIHCServiceRolloutError(
            str(event.get("service_id")), str(event.get("message")), event.get("summary") or {}
        )
        self.on_rollout_failure(result, previous_conf, str(error))
        raise error

    def on_rollout_failure(
        self, result: Mapping[str, Any], previous_conf: Mapping[str, Any] | None, why: str
    ) -> None:
        """What to do before a failed rollout fails the task (nothing, by default)."""
