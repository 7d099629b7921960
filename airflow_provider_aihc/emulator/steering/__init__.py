"""Test steering, beside the state (``..state``) rather than inside it.

``scenarios`` holds the faults (what the network and the server do to a request: consumed
by ``..http.app`` before and after it answers) and the scripts (what happens to a job: bound
to a new job through the state's ``on_create``); ``requestlog`` the request log the HTTP
app writes.  :class:`Steering` is the three together.
"""

from __future__ import annotations

from airflow_provider_aihc.emulator.state.jobs import Job
from airflow_provider_aihc.emulator.state.services import Service

from .requestlog import RequestLog, RequestRecord
from .scenarios import Fault, Script, SteeringQueue

__all__ = ["RequestLog", "RequestRecord", "Steering"]


class Steering:
    """The queued faults and scripts and the request log of one emulator."""

    def __init__(self) -> None:
        self.faults = SteeringQueue()
        self.scripts = SteeringQueue()
        self.request_log = RequestLog()

    def add_fault(self, *faults: Fault) -> None:
        """Queue faults, consumed in order by the requests they match."""
        for fault in faults:
            self.faults.add(fault)

    def add_script(self, *scripts: Script) -> None:
        """Queue scripts, bound to the next matching jobs created."""
        for script in scripts:
            self.scripts.add(script)

    def bind_script(self, job: Job, now: float) -> None:
        """Apply the first queued script that matches a new job's name (``on_create``)."""
        script = self.scripts.take_script(job.name)
        if script is not None:
            script.apply(job, now)

    def bind_service_script(self, service: Service, rollout: str, now: float) -> None:
        """Apply the first queued service script that binds to a rollout (``on_rollout``)."""
        script = self.scripts.take_service_script(service.name, rollout)
        if script is not None:
            script.apply_service(service, now)

    def clear(self) -> None:
        """Forget every fault, script and request."""
        self.faults.clear()
        self.scripts.clear()
        self.request_log.clear()
