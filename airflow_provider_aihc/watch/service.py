"""Whether an online service's rollout is done, failed, or still going: one judgement, used
by the operators' waits, the sensor and the trigger alike.

Done, all of (the criteria are *inferred*, no source says when a rollout has ended:
``docs/service_lifecycle.md``):

* the live configuration is the expected one (every field it sets has that value:
  :func:`~airflow_provider_aihc.models.service_requests.conf_matches`);
* ``briefStat.availableIns == briefStat.totalIns ==`` the expected instance count;
* every instance that takes traffic is ``Running`` with all its containers available, and
  there are that many of them.

Failed: an instance's or container's reason, or status, names a stuck state
(``models/service_requests.py`` ``STUCK_REASONS``: Kubernetes reasons, *inferred* to
surface there), or the live
configuration is neither the expected nor the previous one (someone else changed it).
``briefStat.status`` is never decided on: its integer has no published meaning (bce-sdk-go
``inference/v2/models.go:308`` types it ``int32``; no source gives its values); it is only
reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.exceptions import AIHCApiError, AIHCError, AIHCTransportError
from airflow_provider_aihc.models.service_requests import STUCK_REASONS, conf_digest, conf_matches

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.models.service import ServiceDetail

DONE, WAITING, FAILED = "done", "waiting", "failed"


class AIHCServiceRolloutError(AIHCError):
    """An online service's rollout failed, or did not finish in time.

    :param service_id: the service.
    :param message: what went wrong, with the instances' last reasons.
    :param summary: the last :attr:`Rollout.summary`.
    """

    def __init__(self, service_id: str, message: str, summary: Mapping[str, Any]) -> None:
        self.service_id = service_id
        self.summary = dict(summary)
        super().__init__(f"AIHC service {service_id}: {message}")


@dataclass(frozen=True)
class Rollout:
    """One judgement of a service."""

    state: str
    message: str
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Expectation:
    """What the rollout should end in (plain values: a trigger serializes them).

    :param expected_conf: the configuration that should be live (``None``: whatever is).
    :param instance_count: instances that should be available (``None``: the expected or
        live configuration's ``instanceCount``).
    :param previous_conf: the configuration before the change, when known: the live one
        may still be it while the change is taken up; anything else fails.
    :param stuck_reasons: reasons that fail the rollout at once.
    """

    expected_conf: Mapping[str, Any] | None = None
    instance_count: int | None = None
    previous_conf: Mapping[str, Any] | None = None
    stuck_reasons: Sequence[str] = STUCK_REASONS


def _summary(service_id: str, detail: ServiceDetail) -> dict[str, Any]:
    brief = detail.status.brief_stat
    return {
        "service_id": service_id,
        "brief_stat": {
            "status": brief.status,
            "availableIns": brief.available_ins,
            "totalIns": brief.total_ins,
            "hazard": brief.hazard,
            "reason": brief.reason,
        },
        "instances": [
            {
                "instanceId": i.instance_id,
                "status": i.status.status,
                "reason": "; ".join(i.reasons()),
            }
            for i in detail.instances
        ],
        "conf_digest": conf_digest(detail.service),
    }


def reasons_of(summary: Mapping[str, Any]) -> str:
    """The instances' reasons (and the service's), for a message."""
    found = [f"{i['instanceId']}: {i['reason']}" for i in summary["instances"] if i["reason"]]
    if summary["brief_stat"]["reason"]:
        found.append(f"service: {summary['brief_stat']['reason']}")
    return "; ".join(found) or "no reason given"


def judge(service_id: str, detail: ServiceDetail, expect: Expectation) -> Rollout:
    """Done, failed or waiting: see the module's docstring."""
    summary = _summary(service_id, detail)
    live = detail.service
    for instance in detail.instances:
        texts = [instance.status.status, *instance.reasons()]
        texts += [c.status.container_status for c in instance.containers]
        stuck = [r for r in expect.stuck_reasons if any(r in text for text in texts)]
        if stuck:
            return Rollout(
                FAILED, f"the rollout is stuck ({', '.join(stuck)}): {reasons_of(summary)}", summary
            )
    if expect.expected_conf is not None and not conf_matches(expect.expected_conf, live):
        if expect.previous_conf is not None and not conf_matches(expect.previous_conf, live):
            return Rollout(
                FAILED,
                "the live configuration is neither the expected nor the previous one "
                f"(digest {summary['conf_digest']}): someone else changed it",
                summary,
            )
        return Rollout(WAITING, "the expected configuration is not live yet", summary)
    wanted = expect.instance_count
    if wanted is None:
        source = expect.expected_conf if expect.expected_conf is not None else live
        wanted = int(source.get("instanceCount") or 0)
    brief = detail.status.brief_stat
    serving = [i for i in detail.instances if not i.status.blocked]
    ready = [
        i
        for i in serving
        if i.status.status == "Running"
        and i.status.available_containers == i.status.total_containers
    ]
    if brief.available_ins == brief.total_ins == wanted and len(ready) == len(serving) == wanted:
        return Rollout(DONE, f"{wanted} of {wanted} instances available", summary)
    return Rollout(
        WAITING,
        f"{brief.available_ins} of {wanted} instances available ({brief.total_ins} in all; "
        f"status {brief.status}, meaning unpublished): {reasons_of(summary)}",
        summary,
    )


def wait_for_rollout(
    hook: AIHCHook,
    service_id: str,
    expect: Expectation,
    *,
    poll_interval: float,
    timeout: float | None,
    log: Any,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Poll ``DescribeService`` until :func:`judge` says done (its summary) or failed.

    AIHC's transient errors (no answer, 5xx, 429: already retried by the transport) only
    delay the next poll.

    :raises AIHCServiceRolloutError: the rollout failed, or ``timeout`` seconds passed (with
        the last reasons).
    """
    deadline = None if timeout is None else clock() + timeout
    last: Rollout | None = None
    while True:
        try:
            verdict = judge(service_id, hook.get_service(service_id), expect)
        except (AIHCTransportError, AIHCApiError) as err:
            if isinstance(err, AIHCApiError) and err.status < 429:
                raise
            log.warning("AIHC service %s could not be read (%s); polling on", service_id, err)
        else:
            if last is None or verdict.message != last.message:
                log.info("AIHC service %s: %s", service_id, verdict.message)
            last = verdict
            if verdict.state == DONE:
                return verdict.summary
            if verdict.state == FAILED:
                raise AIHCServiceRolloutError(service_id, verdict.message, verdict.summary)
        if deadline is not None and clock() >= deadline:
            message = last.message if last else "never read"
            summary = last.summary if last else {}
            raise AIHCServiceRolloutError(
                service_id, f"not ready after {timeout:.0f} s; last: {message}", summary
            )
        sleep(poll_interval)
