"""One emulator's state and its steering, as tests and the control API reach them.

:class:`Backend` is what ``EmulatorServer.backend`` (and the ``aihc_emulator`` fixture's
``.backend``) is: the :class:`~.state.store.State` (``.state``: jobs, pools, queues, time)
and the :class:`~.steering.Steering` beside it (faults, scripts, the request log), with the
steering and inspection calls tests use.  Its few job calls (``create_job``, ``poll``,
``pod_logs``, ``delete_job``, …) answer in the state's terms (an id, a status, a
:class:`~.state.paging.LogPage`), so a test can set a job up or read it without HTTP; the
wire shapes are the dialects' alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .dialects.common import iso
from .dialects.create import parse_create
from .state.catalog import Entry
from .state.choices import TOKEN_MISMATCH, Choices
from .state.errors import EmulatorError, invalid_param
from .state.execute import ExecuteSettings, Executor
from .state.jobs import Clock, Job, Progression
from .state.paging import LogPage
from .state.pods import all_labels
from .state.pools import Pool
from .state.services import Service
from .state.store import State
from .steering import Steering
from .steering.requestlog import RequestLog, RequestRecord
from .steering.scenarios import Fault, Script, SteeringQueue

__all__ = ["Backend", "EmulatorError", "RequestRecord"]


class Backend:
    """The state and the steering of one emulator.

    :param pools: the resource pools; :func:`~.state.pools.default_pools` when omitted.
    :param progression: how jobs move; :class:`~.state.jobs.Progression` ``()`` (per poll)
        by default.
    :param clock: epoch seconds, injectable so time-based moves need no sleeping.
    :param execute: run each job's replicas as local processes (``state/execute.py``)
        instead of simulating them; off (``None``) by default.
    """

    def __init__(
        self,
        *,
        pools: Sequence[Pool] | None = None,
        progression: Progression | None = None,
        clock: Clock | None = None,
        execute: ExecuteSettings | None = None,
    ) -> None:
        self.steering = Steering()
        self.state = State(
            pools=pools,
            progression=progression,
            clock=clock,
            execute=execute,
            on_create=self.steering.bind_script,
            on_rollout=self.steering.bind_service_script,
        )

    # ---- the state's settings ------------------------------------------------------------

    @property
    def progression(self) -> Progression:
        """How jobs move (settable: the control API changes the pace)."""
        return self.state.progression

    @progression.setter
    def progression(self, progression: Progression) -> None:
        self.state.progression = progression

    @property
    def clock(self) -> Clock:
        """The jobs' clock."""
        return self.state.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self.state.clock = clock

    @property
    def executor(self) -> Executor | None:
        """What runs jobs as local processes (``--execute``), if anything."""
        return self.state.executor

    # ---- jobs, answered in the state's terms (the dialects answer the wire) ---------------

    def create_job(
        self, pool_id: str, body: object, *, queue_id: str | None = None, creator: str = "emulator"
    ) -> str:
        """Validate a create body (written as v1 sends it) and create the job: its id."""
        job = self.state.submit(pool_id, parse_create(body), queue_id=queue_id, creator=creator)
        return job.job_id

    def poll(self, pool_id: str, job_id: str, *, queue_id: str | None = None) -> str:
        """A poll, as a GetJob is (the job may move on): the job's status after it."""
        return self.state.get_job(pool_id, job_id, lambda job: job.status, queue_id=queue_id)

    def stop_job(self, pool_id: str, job_id: str, *, queue_id: str | None = None) -> None:
        """``ManualTermination`` (a no-op once ended)."""
        self.state.stop_job(pool_id, job_id, queue_id=queue_id)

    def delete_job(self, pool_id: str, job_id: str, *, queue_id: str | None = None) -> None:
        """Gone for good (then 404)."""
        self.state.delete_job(pool_id, job_id, queue_id=queue_id)

    def pod_logs(
        self,
        pool_id: str,
        job_id: str,
        pod_name: str,
        *,
        marker: str | None = None,
        max_lines: int | None = None,
        queue_id: str | None = None,
    ) -> LogPage:
        """A page of the pod's log: its lines and the offset after them."""
        return self.state.pod_logs(
            pool_id, job_id, pod_name, max_lines=max_lines, marker=marker, queue_id=queue_id
        )

    # ---- steering ------------------------------------------------------------------------

    @property
    def faults(self) -> SteeringQueue:
        """The queued faults."""
        return self.steering.faults

    @property
    def scripts(self) -> SteeringQueue:
        """The queued scripts."""
        return self.steering.scripts

    @property
    def request_log(self) -> RequestLog:
        """Every API request answered (or dropped)."""
        return self.steering.request_log

    def add_fault(self, *faults: Fault) -> None:
        """Queue faults, consumed in order by the requests they match."""
        self.steering.add_fault(*faults)

    def add_script(self, *scripts: Script) -> None:
        """Queue scripts, bound to the next matching jobs created."""
        self.steering.add_script(*scripts)

    def set_status(self, job_id: str, status: str, reason: str = "", hold: bool = False) -> None:
        """Put a job into any status now (``hold`` keeps it there)."""
        self.state.set_status(job_id, status, reason, hold)

    def reset(self, progression: Progression | None = None) -> None:
        """Forget jobs, models, datasets, services, faults, scripts and the request log,
        restore the flagged choices' defaults; optionally change the pace."""
        self.state.reset(progression)
        self.steering.clear()

    def close(self) -> None:
        """Stop every executed job and wait until its processes are gone (shutdown)."""
        self.state.close()

    # ---- inspection ----------------------------------------------------------------------

    def record(self, record: RequestRecord) -> None:
        """Log one request (the app calls this for every API request)."""
        self.request_log.add(record)

    def count(self, operation: str, status: int | None = None) -> int:
        """How many requests of ``operation`` (optionally answered ``status``) came in."""
        return self.request_log.count(operation, status)

    def counts(self) -> dict[str, int]:
        """Requests per operation."""
        return self.request_log.counts()

    @property
    def requests(self) -> list[RequestRecord]:
        """The most recent requests, oldest first."""
        return self.request_log.records()

    def jobs(self) -> list[dict[str, Any]]:
        """Every job's state (:func:`job_state`), oldest first; never a poll."""
        return self.state.snapshot(job_state)

    def job(self, job_id: str) -> dict[str, Any]:
        """One job's state; ``KeyError`` when it does not exist."""
        return self.state.inspect(job_id, job_state)

    # ---- models, datasets, services (no poll, no wire shape) ---------------------------------

    @property
    def choices(self) -> Choices:
        """The flagged choices where the sources say nothing (``state/choices.py``)."""
        return self.state.choices

    def set_choices(
        self, *, unique_names: bool | None = None, token_mismatch: str | None = None
    ) -> Choices:
        """Change the flagged choices (``None`` keeps one); back to defaults on reset.

        :param unique_names: refuse a second model, dataset or service of one name (409).
        :param token_mismatch: ``replay`` or ``error`` for a reused ``clientToken``.
        """
        if unique_names is not None:
            self.state.choices.unique_names = bool(unique_names)
        if token_mismatch is not None:
            if token_mismatch not in TOKEN_MISMATCH:
                raise invalid_param(f"token_mismatch must be one of {', '.join(TOKEN_MISMATCH)}")
            self.state.choices.token_mismatch = token_mismatch  # type: ignore[assignment]
        return self.state.choices

    def registry_counts(self) -> dict[str, int]:
        """How many models, model versions, datasets, dataset versions, services and
        service changelog records there are."""
        models, model_versions = self.state.models.count()
        datasets, dataset_versions = self.state.datasets.count()
        services, changes = self.state.services.count()
        return {
            "models": models,
            "modelVersions": model_versions,
            "datasets": datasets,
            "datasetVersions": dataset_versions,
            "services": services,
            "serviceChanges": changes,
        }

    def models(self) -> list[dict[str, Any]]:
        """Every model with its versions (:func:`entry_state`), newest first."""
        return self.state.models.page(
            entry_state, wanted=lambda e: True, page_no=1, page_size=None
        ).items

    def datasets(self) -> list[dict[str, Any]]:
        """Every dataset with its versions (:func:`entry_state`), newest first."""
        return self.state.datasets.page(
            entry_state, wanted=lambda e: True, page_no=1, page_size=None
        ).items

    def services(self) -> list[dict[str, Any]]:
        """Every service's state (:func:`service_state`), oldest first; never a poll."""
        return self.state.services.snapshot(service_state)

    def service(self, service_id: str) -> dict[str, Any]:
        """One service's state; ``404 ServiceNotFound`` (an :class:`EmulatorError`)."""
        return self.state.services.inspect(service_id, service_state)

    def jobs_with_labels(self, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        """The jobs whose labels include every given key and value."""
        wanted = dict(labels).items()
        return [s for s in self.jobs() if wanted <= s["labels"].items()]


def job_state(job: Job) -> dict[str, Any]:
    """The emulator's own view of a job (control API, test helpers): not a wire shape."""
    return {
        "jobId": job.job_id,
        "name": job.name,
        "resourcePoolId": job.pool_id,
        "queue": job.request.queue,
        "status": job.status,
        "reason": job.reason,
        "priority": job.priority,
        "labels": {label["key"]: label["value"] for label in all_labels(job)},
        "createdAt": iso(job.created_at),
        "finishedAt": iso(job.finished_at),
        "polls": job.gets,
        "logLines": job.runner.line_count() if job.runner else len(job.log.entries),
        "body": job.request.body,
    }


def entry_state(entry: Entry) -> dict[str, Any]:
    """The emulator's own view of a model or dataset: not a wire shape."""
    return {
        "id": entry.entry_id,
        "name": entry.name,
        "attrs": dict(entry.attrs),
        "versions": [{"id": v.version_id, "version": v.label, **v.attrs} for v in entry.versions],
    }


def service_state(service: Service) -> dict[str, Any]:
    """The emulator's own view of a service (tests, the control API): not a wire shape."""
    return {
        "serviceId": service.service_id,
        "name": service.name,
        "phase": service.phase(),
        "revision": service.revision,
        "polls": service.polls,
        "conf": service.conf,
        "instances": [
            {
                "instanceId": i.instance_id,
                "revision": i.revision,
                "ready": i.ready,
                "blocked": i.blocked,
                "reason": i.stuck,
            }
            for i in service.instances
        ],
        "changes": [
            {
                "changeId": c.change_id,
                "prev": c.prev,
                "changeType": c.change_type,
                "description": c.description,
            }
            for c in service.changes
        ],
    }
