"""Online services: their configuration, instances rolled over polls, changelogs, tokens.

A service keeps the configuration it was last given (``ServiceConf``, validated by the
dialect) and a *revision*: a new one each time the pod template changes (everything but
``instanceCount``, ``access``, ``deploy``, ``hpa`` and ``name``; inferred, as a Kubernetes
Deployment does).  Instances move by poll count, as jobs do: each read of the service (a
poll) ages every instance, then takes one rolling-update step shaped by
``deploy.canaryStrategy{maxSurge, maxUnavailable}`` (percent of ``instanceCount``, 25/25 by
default: bce-python-sdk 0.9.79 ``service_model.py:335-354``; DOC ``Zmb4v974k``
"默认为最大超量和最大不可用均为25%").  As Kubernetes rounds them (inferred), ``maxSurge``
rounds up and ``maxUnavailable`` down, so at every poll

* instances ≤ ``instanceCount`` + surge, and
* ready instances ≥ ``instanceCount`` − unavailable (once they were);

a new instance is ready on its ``polls_to_ready``-th poll unless a script holds it back.

Changelog records (``changeType`` 1 create, 2 update, 3 scale, 4 traffic access: PY
``service_client.py:501``; GOI ``models.go:280-287``) chain by ``prev``.  A ``clientToken``
maps to the service it created (``choices.py`` for what the sources leave open).

Invented: the id forms (after the DOC examples ``s-r7d45dcffa0a``, instance
``s-r7d45dcffa0a-7ddffdd8db-sbrhh``, change ``ch-48a51f1fc896``), the instance states
(``Pending`` until ready, then ``Running``), ``404 ServiceNotFound`` / ``InstanceNotFound``
/ ``ChangeLogNotFound``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import random
import string
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .choices import SERVICE_STATUS, Choices
from .errors import EmulatorError, not_found
from .jobs import Clock
from .paging import Page

T = TypeVar("T")
CREATE, UPDATE, SCALE, ACCESS = 1, 2, 3, 4
#: Top-level ``ServiceConf`` keys that are not the pod template (inferred).
NOT_TEMPLATE = frozenset({"instanceCount", "access", "deploy", "hpa", "name"})
DEFAULT_PERCENT = 25
_SUFFIX = string.ascii_lowercase + string.digits


@dataclass
class Instance:
    """One instance (pod) of a service revision."""

    instance_id: str
    revision: int
    containers: list[dict[str, Any]]
    created_at: float
    polls: int = 0
    ready: bool = False
    blocked: bool = False
    #: Why it never becomes ready (a Kubernetes reason such as ``ImagePullBackOff``).
    stuck: str = ""


@dataclass
class Change:
    """One changelog record."""

    change_id: str
    service_id: str
    prev: str
    change_type: int
    description: str
    creator: str
    created_at: float


@dataclass
class Plan:
    """What the steering's scripts do to a service (``steering/scenarios.py``)."""

    #: New instances of this revision never become ready, with this reason.
    stuck_revision: int | None = None
    stuck_reason: str = ""
    #: Polls after the rollout of ``revert_revision`` completes before the configuration
    #: silently goes back to ``revert_conf`` (no changelog record).
    revert_revision: int | None = None
    revert_after_polls: int = 0
    revert_conf: dict[str, Any] | None = None


@dataclass
class Service:
    """A service: its live configuration, revision, instances and changelog."""

    service_id: str
    conf: dict[str, Any]
    created_at: float
    updated_at: float
    creator: str
    seq: int
    revision: int = 1
    template: str = ""
    instances: list[Instance] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    plan: Plan = field(default_factory=Plan)
    polls: int = 0

    @property
    def name(self) -> str:
        """The configuration's name."""
        return str(self.conf.get("name", ""))

    @property
    def desired(self) -> int:
        """``instanceCount``."""
        return int(self.conf.get("instanceCount") or 0)

    def ready_count(self) -> int:
        """Ready instances (blocked ones included: blocking removes traffic only)."""
        return sum(1 for i in self.instances if i.ready)

    def rolled_out(self) -> bool:
        """Every instance ready on the live revision, as many as asked."""
        current = [i for i in self.instances if i.revision == self.revision and i.ready]
        return len(current) == len(self.instances) == self.desired

    def phase(self) -> str:
        """``Running``, ``Stopped`` or ``Deploying`` (the emulator's own phases)."""
        if self.desired == 0 and not self.instances:
            return "Stopped"
        return "Running" if self.rolled_out() else "Deploying"

    def status_code(self) -> int:
        """``briefStat.status``: the invented number of :meth:`phase` (``choices.py``)."""
        return SERVICE_STATUS[self.phase()]

    def instance(self, instance_id: str) -> Instance:
        """One instance; ``404 InstanceNotFound``."""
        for item in self.instances:
            if item.instance_id == instance_id:
                return item
        raise not_found("InstanceNotFound", f"instance {instance_id!r} not found")


#: Called when a rollout starts: the service, ``create`` or ``modify``, the time.
OnRollout = Callable[[Service, str, float], None]


class Services:
    """Every service, its changelog records and the client tokens seen.

    :param clock: epoch seconds.
    :param choices: the flagged choices (names, token reuse).
    :param polls_to_ready: the poll on which a new instance becomes ready.
    :param on_rollout: the steering's hook, called when a create or modify starts a rollout.
    """

    def __init__(
        self,
        clock: Clock,
        choices: Choices,
        *,
        polls_to_ready: int = 1,
        on_rollout: OnRollout | None = None,
    ) -> None:
        self._clock = clock
        self._choices = choices
        self.polls_to_ready = polls_to_ready
        self._on_rollout = on_rollout
        self._lock = threading.Lock()
        self._services: dict[str, Service] = {}
        self._changes: dict[str, Change] = {}
        self._tokens: dict[str, tuple[str, str]] = {}
        self._seq = 0

    # ---- changes of a service -----------------------------------------------------------

    def create(self, conf: dict[str, Any], token: str, creator: str) -> tuple[Service, bool]:
        """A new service, or (``True``) the one an earlier create with ``token`` made."""
        with self._lock:
            digest = _digest(conf)
            if token and token in self._tokens:
                service_id, first = self._tokens[token]
                if first != digest and self._choices.token_mismatch == "error":
                    raise EmulatorError(
                        409,
                        "IdempotentParameterMismatch",
                        "clientToken was used with another request body",
                    )
                return self._services[service_id], True
            if self._choices.unique_names and any(
                s.name == conf.get("name") for s in self._services.values()
            ):
                raise EmulatorError(
                    409, "ServiceAlreadyExists", f"service {conf.get('name')!r} exists"
                )
            self._seq += 1
            now = self._clock()
            service = Service(_service_id(), copy.deepcopy(conf), now, now, creator, self._seq)
            service.template = _template(conf)
            self._services[service.service_id] = service
            if token:
                self._tokens[token] = (service.service_id, digest)
            self._record(service, CREATE, "", creator)
            if self._on_rollout is not None:
                self._on_rollout(service, "create", now)
            return service, False

    def modify(
        self, service_id: str, conf: dict[str, Any], description: str, creator: str
    ) -> Service:
        """The whole configuration replaced (a record of type 2, always; a new revision
        only when the pod template changes: inferred)."""
        with self._lock:
            service = self._get(service_id)
            live_access = service.conf.get("access")
            if (_given(conf.get("access")) or {}) != (_given(live_access) or {}):
                raise EmulatorError(
                    400, "InvalidParam", "access (the network configuration) cannot be modified"
                )
            previous = service.conf
            service.conf = {**copy.deepcopy(conf), "access": live_access}
            service.updated_at = self._clock()
            template = _template(conf)
            if template != service.template:
                service.template = template
                service.revision += 1
                service.plan.revert_conf = previous
                if self._on_rollout is not None:
                    self._on_rollout(service, "modify", service.updated_at)
            self._record(service, UPDATE, description, creator)
            return service

    def scale(self, service_id: str, count: int, creator: str) -> Service:
        """``instanceCount`` set (a record of type 3)."""
        with self._lock:
            service = self._get(service_id)
            service.conf["instanceCount"] = count
            service.updated_at = self._clock()
            self._record(service, SCALE, "", creator)
            return service

    def set_access(self, service_id: str, public: bool, eip: str | None, creator: str) -> Service:
        """``access.publicAccess`` (and ``eip``) set (a record of type 4)."""
        with self._lock:
            service = self._get(service_id)
            access = dict(service.conf.get("access") or {})
            access["publicAccess"] = public
            if eip is not None:
                access["eip"] = eip
            service.conf["access"] = access
            service.updated_at = self._clock()
            self._record(service, ACCESS, "", creator)
            return service

    def delete(self, service_id: str) -> None:
        """Gone, with its records; its token is forgotten."""
        with self._lock:
            service = self._get(service_id)
            del self._services[service_id]
            for change in service.changes:
                self._changes.pop(change.change_id, None)
            self._tokens = {t: v for t, v in self._tokens.items() if v[0] != service_id}

    def block(self, service_id: str, instance_id: str, blocked: bool) -> None:
        """Traffic to one instance removed (or restored)."""
        with self._lock:
            self._get(service_id).instance(instance_id).blocked = blocked

    def delete_instance(self, service_id: str, instance_id: str) -> None:
        """One instance deleted; the next poll starts its replacement."""
        with self._lock:
            service = self._get(service_id)
            service.instances.remove(service.instance(instance_id))

    # ---- reads --------------------------------------------------------------------------

    def poll(self, service_id: str, render: Callable[[Service], T]) -> T:
        """A read of one service: it moves one step, then is ``render``-ed."""
        with self._lock:
            service = self._get(service_id)
            self._step(service)
            return render(service)

    def poll_all(self, render: Callable[[Service], T]) -> list[T]:
        """Every service moved one step and ``render``-ed, oldest first."""
        with self._lock:
            for service in self._services.values():
                self._step(service)
            return [render(s) for s in self._ordered(False)]

    def inspect(self, service_id: str, render: Callable[[Service], T]) -> T:
        """One service, not moved; ``404`` when it does not exist."""
        with self._lock:
            return render(self._get(service_id))

    def page(
        self, render: Callable[[Service], T], *, newest_first: bool, page_no: int, page_size: int
    ) -> Page[T]:
        """One page of services by ``createdAt`` (not a poll)."""
        with self._lock:
            found = self._ordered(newest_first)
            start = (page_no - 1) * page_size
            return Page(len(found), [render(s) for s in found[start : start + page_size]])

    def change_page(
        self,
        service_id: str,
        render: Callable[[Change], T],
        *,
        change_type: int | None,
        newest_first: bool,
        page_no: int,
        page_size: int,
    ) -> Page[T]:
        """One page of a service's changelog records."""
        with self._lock:
            found = [
                c
                for c in self._get(service_id).changes
                if change_type is None or c.change_type == change_type
            ]
            if newest_first:
                found.reverse()
            start = (page_no - 1) * page_size
            return Page(len(found), [render(c) for c in found[start : start + page_size]])

    def change(self, change_id: str, render: Callable[[Change], T]) -> T:
        """One changelog record; ``404 ChangeLogNotFound``."""
        with self._lock:
            found = self._changes.get(change_id)
            if found is None:
                raise not_found("ChangeLogNotFound", f"change {change_id!r} not found")
            return render(found)

    def snapshot(self, render: Callable[[Service], T]) -> list[T]:
        """Every service, oldest first; never a poll."""
        with self._lock:
            return [render(s) for s in self._ordered(False)]

    def count(self) -> tuple[int, int]:
        """``(services, changelog records)``."""
        with self._lock:
            return len(self._services), len(self._changes)

    def clear(self) -> None:
        """Forget every service, record and token."""
        with self._lock:
            self._services.clear()
            self._changes.clear()
            self._tokens.clear()

    # ---- internals ----------------------------------------------------------------------

    def _get(self, service_id: str) -> Service:
        service = self._services.get(service_id)
        if service is None:
            raise not_found("ServiceNotFound", f"service {service_id!r} not found")
        return service

    def _ordered(self, newest_first: bool) -> list[Service]:
        return sorted(self._services.values(), key=lambda s: -s.seq if newest_first else s.seq)

    def _record(self, service: Service, change_type: int, description: str, creator: str) -> None:
        prev = service.changes[-1].change_id if service.changes else ""
        change = Change(
            f"ch-{uuid.uuid4().hex[:12]}",
            service.service_id,
            prev,
            change_type,
            description,
            creator,
            self._clock(),
        )
        service.changes.append(change)
        self._changes[change.change_id] = change

    def _step(self, service: Service) -> None:
        """Age every instance, then one rolling-update step (module docstring)."""
        service.polls += 1
        now = self._clock()
        for item in service.instances:
            item.polls += 1
            if not item.ready and not item.stuck and item.polls >= self.polls_to_ready:
                item.ready = True
        self._maybe_revert(service)
        desired = service.desired
        surge, unavailable = budget(service.conf, desired)
        current = [i for i in service.instances if i.revision == service.revision]
        for item in [i for i in service.instances if i.revision != service.revision]:
            available = service.ready_count()
            if not item.ready or available - 1 >= desired - unavailable:
                service.instances.remove(item)
        while len(current) > desired:  # scaled down: not-ready ones go first
            item = min(current, key=lambda i: (i.ready, -i.created_at))
            current.remove(item)
            service.instances.remove(item)
        while len(service.instances) < desired + surge and len(current) < desired:
            item = self._new_instance(service, now)
            current.append(item)
            service.instances.append(item)

    def _new_instance(self, service: Service, now: float) -> Instance:
        template = hashlib.sha256(service.template.encode()).hexdigest()[:10]
        suffix = "".join(random.choices(_SUFFIX, k=5))
        stuck = service.plan.stuck_reason if service.plan.stuck_revision == service.revision else ""
        return Instance(
            f"{service.service_id}-{template}-{suffix}",
            service.revision,
            copy.deepcopy(list(service.conf.get("containers") or [])),
            now,
            stuck=stuck,
        )

    def _maybe_revert(self, service: Service) -> None:
        plan = service.plan
        if plan.revert_revision != service.revision or plan.revert_conf is None:
            return
        if not service.rolled_out():
            return
        if plan.revert_after_polls > 0:
            plan.revert_after_polls -= 1
            return
        # Silent: no changelog record, no update time; the rollout back runs as any other.
        service.conf = {**copy.deepcopy(plan.revert_conf), "access": service.conf.get("access")}
        service.template = _template(service.conf)
        service.revision += 1
        plan.revert_revision = None
        plan.revert_conf = None


def budget(conf: dict[str, Any], desired: int) -> tuple[int, int]:
    """``(surge, unavailable)`` instances of ``deploy.canaryStrategy`` (percent; both 0
    or unset mean the 25/25 default; surge rounds up, unavailable down; at least one of
    them is 1 or more, as Kubernetes makes it)."""
    strategy = (conf.get("deploy") or {}).get("canaryStrategy") or {}
    surge_pct = int(strategy.get("maxSurge") or 0)
    unavailable_pct = int(strategy.get("maxUnavailable") or 0)
    if surge_pct == 0 and unavailable_pct == 0:
        surge_pct = unavailable_pct = DEFAULT_PERCENT
    surge = math.ceil(desired * surge_pct / 100)
    unavailable = math.floor(desired * unavailable_pct / 100)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _given(value: Any) -> Any:
    """A value without its unset parts (GOI sends zero values for unset fields: D12)."""
    if not isinstance(value, dict):
        return value
    kept = {k: _given(v) for k, v in value.items()}
    return {k: v for k, v in kept.items() if v not in (None, "", False, {}, [], 0)}


def _template(conf: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in conf.items() if k not in NOT_TEMPLATE}, sort_keys=True)


def _digest(conf: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(conf, sort_keys=True).encode()).hexdigest()


def _service_id() -> str:
    return "s-" + "".join(random.choices(_SUFFIX, k=12))
