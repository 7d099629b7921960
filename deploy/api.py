"""The two HTTP surfaces the scenarios use: Airflow's REST API and the emulator's control API.

Only what a user (or an operator of the emulator) has: a token from ``POST /auth/token``
with the simple auth manager's generated admin password, then ``/api/v2``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

from airflow_provider_aihc.emulator.http.control import control_headers

TERMINAL_RUN_STATES = {"success", "failed"}
#: The states a task instance ends in (Airflow's finished ``TaskInstanceState``s).
FINAL_TI_STATES = frozenset({"success", "failed", "upstream_failed", "skipped", "removed"})
#: A task instance in one of these has failed its try (the scenario decides what that means).
FAILED_TI_STATES = {"failed", "up_for_retry", "upstream_failed"}


class Airflow:
    """Airflow's REST API (``/api/v2``) as the admin user.

    :param base_url: the API server, e.g. ``http://127.0.0.1:8080``.
    :param airflow_home: where the simple auth manager wrote its generated passwords.
    """

    def __init__(self, base_url: str, airflow_home: Path) -> None:
        self.base_url = base_url
        passwords = airflow_home / "simple_auth_manager_passwords.json.generated"
        self.password = json.loads(passwords.read_text())["admin"]
        self.session = requests.Session()
        token = self.session.post(
            f"{base_url}/auth/token",
            json={"username": "admin", "password": self.password},
            timeout=30,
        )
        token.raise_for_status()
        self.session.headers["Authorization"] = f"Bearer {token.json()['access_token']}"

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request under ``/api/v2``; the decoded JSON answer.

        :raises requests.HTTPError: with the answer's text.
        """
        answer = self.session.request(method, f"{self.base_url}/api/v2{path}", timeout=60, **kwargs)
        if not answer.ok:
            raise requests.HTTPError(f"{method} {path}: {answer.status_code} {answer.text[:500]}")
        return answer.json() if answer.content else None

    def dag_ids(self) -> set[str]:
        """The DAGs the API server knows (parsed by the DAG processor)."""
        return {d["dag_id"] for d in self.call("GET", "/dags", params={"limit": 100})["dags"]}

    def unpause(self, dag_id: str) -> None:
        """Unpause a DAG (new DAGs are paused)."""
        self.call("PATCH", f"/dags/{dag_id}", json={"is_paused": False})

    def trigger(
        self, dag_id: str, run_id: str, logical_date: str | None, conf: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Create a run; ``logical_date=None`` is a run without a logical date."""
        body = {"dag_run_id": run_id, "logical_date": logical_date, "conf": conf or {}}
        result: dict[str, Any] = self.call("POST", f"/dags/{dag_id}/dagRuns", json=body)
        return result

    def run(self, dag_id: str, run_id: str) -> dict[str, Any]:
        """One DAG run."""
        result: dict[str, Any] = self.call("GET", f"/dags/{dag_id}/dagRuns/{quote(run_id)}")
        return result

    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        """Every task instance of a run (mapped ones included)."""
        path = f"/dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances"
        result: list[dict[str, Any]] = self.call("GET", path, params={"limit": 100})[
            "task_instances"
        ]
        return result

    def task_instance(self, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
        """One unmapped task instance."""
        path = f"/dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances/{task_id}"
        result: dict[str, Any] = self.call("GET", path)
        return result

    def task_log(
        self, dag_id: str, run_id: str, task_id: str, try_number: int, map_index: int = -1
    ) -> str:
        """A try's whole log as text, one event a line."""
        events = self.task_log_events(dag_id, run_id, task_id, try_number, map_index)
        return "\n".join(event_text(e) for e in events)

    def task_log_events(
        self, dag_id: str, run_id: str, task_id: str, try_number: int, map_index: int = -1
    ) -> list[dict[str, Any]]:
        """A try's whole log: its structured events (``timestamp``, ``event``, …); none for
        a try Airflow has no record of (a try number the task skipped: ``make test-chaos``
        seed 372618's judgement stopped on that 404)."""
        path = f"/dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances/{task_id}/logs/{try_number}"
        params = {"full_content": "true", "map_index": map_index}
        try:
            content = self.call("GET", path, params=params, headers={"Accept": "application/json"})
        except requests.HTTPError as err:
            if ": 404 " in str(err) and "TaskInstance not found" in str(err):
                return []
            raise
        events = content.get("content") or []
        if isinstance(events, str):  # a log written as plain text: no timestamps
            return [{"event": line} for line in events.splitlines()]
        return [e if isinstance(e, dict) else {"event": str(e)} for e in events]

    def xcom(self, dag_id: str, run_id: str, task_id: str, key: str, map_index: int = -1) -> Any:
        """One XCom value of a task instance."""
        path = f"/dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances/{task_id}/xcomEntries/{key}"
        return self.call("GET", path, params={"map_index": map_index})["value"]

    def clear(self, dag_id: str, run_id: str, task_ids: list[str]) -> None:
        """Clear task instances (as the UI's "Clear" does), their run set running again."""
        body = {
            "dry_run": False,
            "dag_run_id": run_id,
            "task_ids": task_ids,
            "only_failed": False,
            "reset_dag_runs": True,
        }
        self.call("POST", f"/dags/{dag_id}/clearTaskInstances", json=body)

    def mark(self, dag_id: str, run_id: str, task_id: str, state: str) -> None:
        """Set a task instance's state (the UI's "Mark as failed/success")."""
        path = f"/dags/{dag_id}/dagRuns/{quote(run_id)}/taskInstances/{task_id}"
        self.call("PATCH", path, json={"new_state": state})

    def wait_run(
        self, dag_id: str, run_id: str, timeout: float, stop_on_failed_try: bool = True
    ) -> str:
        """Wait for a run to end; its state, or ``"<task> <state>"`` at the first failed try.

        :param stop_on_failed_try: return as soon as a task instance fails or waits to be
            retried (a retry would only burn the budget).
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.run(dag_id, run_id)["state"]
            if state in TERMINAL_RUN_STATES:
                return str(state)
            if stop_on_failed_try:
                for ti in self.task_instances(dag_id, run_id):
                    if ti["state"] in FAILED_TI_STATES:
                        return f"{ti['task_id']}[{ti['map_index']}] {ti['state']}"
            time.sleep(2)
        return f"still {self.run(dag_id, run_id)['state']} after {timeout:.0f} s"

    def wait_ti(
        self, dag_id: str, run_id: str, task_id: str, states: set[str], timeout: float
    ) -> dict[str, Any]:
        """Wait for a task instance to be in one of ``states``; the task instance.

        :raises TimeoutError: with its last state.
        """
        deadline = time.monotonic() + timeout
        ti: dict[str, Any] = {}
        while time.monotonic() < deadline:
            ti = self.task_instance(dag_id, run_id, task_id)
            if ti["state"] in states:
                return ti
            time.sleep(1)
        raise TimeoutError(
            f"{dag_id}.{task_id}: {ti.get('state')} after {timeout:.0f} s, not {states}"
        )


def event_text(event: dict[str, Any]) -> str:
    """One structured log event as text: its message, and its error when it has one."""
    text = str(event.get("event", ""))
    for error in event.get("error_detail") or []:
        if isinstance(error, dict):
            text += f" {error.get('exc_type')}: {error.get('exc_value')}"
    return text


class Emulator:
    """The emulator's control API (``/_emulator``) and its own record of jobs."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        answer = requests.request(
            method,
            f"{self.base_url}/_emulator/{path}",
            data=json.dumps({} if body is None else body),
            headers=control_headers(),
            timeout=30,
        )
        answer.raise_for_status()
        return answer.json()

    def fault(self, **fault: Any) -> None:
        """Queue a fault, e.g. ``kind="delay", seconds=60, operation="CreateJob"``."""
        self._call("POST", "faults", fault)

    def script(self, **script: Any) -> None:
        """Queue a script, e.g. ``kind="hold", status="Running", match="takeover"``."""
        self._call("POST", "scripts", script)

    def state(self) -> dict[str, Any]:
        """The emulator's whole record: ``jobs``, ``requests`` by operation, what is pending."""
        result: dict[str, Any] = self._call("GET", "state")
        return result

    def set_status(self, job_id: str, status: str) -> None:
        """Put a job into ``status`` now (releases a held job)."""
        self._call("POST", f"jobs/{job_id}/status", {"status": status})

    def jobs_of(
        self, dag_id: str, run_id: str, task_id: str, map_index: int = -1
    ) -> list[dict[str, Any]]:
        """The jobs whose labels name this task instance (every CreateJob that made one)."""
        wanted = {
            "airflow-dag-id": dag_id,
            "airflow-run-id": run_id,
            "airflow-task-id": task_id,
            "airflow-map-index": str(map_index),
        }
        jobs: list[dict[str, Any]] = self._call("GET", "state")["jobs"]
        return [j for j in jobs if wanted.items() <= j["labels"].items()]

    def gone(self, job_id: str) -> bool:
        """Whether the emulator has no such job (never created, or deleted)."""
        answer = requests.get(f"{self.base_url}/_emulator/jobs/{job_id}", timeout=30)
        return answer.status_code == 404

    def job(self, job_id: str) -> dict[str, Any]:
        """One job's state."""
        result: dict[str, Any] = self._call("GET", f"jobs/{job_id}")
        return result
