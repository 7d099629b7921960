"""The create, stop and delete operators name the job's queue in every call: on a managed
pool (bce-sdk-go ``services/aihc/resource/client.go:20-21``) AIHC refuses a call without it.

The emulator's managed pool ``aihc-serverless`` refuses a call without its queue's id
(``aihcq-emulator0``), as AIHC does; a task there that succeeds sent it every time.
"""

from __future__ import annotations

import json
import os
from urllib.parse import parse_qsl, urlsplit

import pytest
from operator_helpers import TaskInstanceStub, context_of

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.operators.aihc import (
    AIHCCreateJobOperator,
    AIHCDeleteJobOperator,
    AIHCStopJobOperator,
)

MANAGED_POOL = "aihc-serverless"
MANAGED_QUEUE = "aihcq-emulator0"

try:
    from airflow.sdk.exceptions import TaskDeferred
except ImportError:  # Airflow 2
    from airflow.exceptions import TaskDeferred  # type: ignore[no-redef]


def _operator(**kwargs: object) -> AIHCCreateJobOperator:
    return AIHCCreateJobOperator(
        task_id="train",
        **{"image": "busybox", "command": "true", "resource_pool_id": MANAGED_POOL, **kwargs},
    )


def _refused(server: EmulatorServer) -> list[str]:
    return [f"{r.operation} {r.status}" for r in server.backend.requests if r.status >= 400]


@pytest.mark.parametrize("job_queue", [None, "default"])
def test_a_managed_pool_without_a_queue_id_fails_before_any_request_naming_the_field(
    aihc_emulator: EmulatorServer, job_queue: str | None
) -> None:
    with pytest.raises(AIHCValidationError, match="is managed: job_queue must be the id") as err:
        _operator(job_queue=job_queue).execute(context_of(TaskInstanceStub()))
    assert [field for field, _ in err.value.errors] == ["queue (job_queue)"]
    assert aihc_emulator.backend.requests == []


def test_a_queue_id_in_body_is_enough(aihc_emulator: EmulatorServer) -> None:
    ti = TaskInstanceStub()
    _operator(body={"queue": MANAGED_QUEUE}).execute(context_of(ti))
    assert ti.xcom["job_queue"] == MANAGED_QUEUE
    assert _refused(aihc_emulator) == []


def test_waiting_on_a_managed_pool_sends_the_queue_id_on_every_call(
    aihc_emulator: EmulatorServer,
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(1, running=2)
    ti = TaskInstanceStub()
    job_id = _operator(
        job_queue=MANAGED_QUEUE, wait_for_completion=True, poll_interval=0.01
    ).execute(context_of(ti))
    assert ti.xcom["job_queue"] == MANAGED_QUEUE
    assert ti.xcom["job_summary"]["status"] == "Succeeded"  # read after the end, in its queue
    counts = aihc_emulator.backend.counts()
    assert counts["ListJobs"] >= 1  # the exactly-once lookup, in the queue
    assert counts["GetJob"] >= 2
    assert counts["GetPodLogs"] >= 1
    assert _refused(aihc_emulator) == []
    assert job_id


def test_deferring_on_a_managed_pool_hands_the_queue_to_the_trigger(
    aihc_emulator: EmulatorServer,
) -> None:
    operator = _operator(job_queue=MANAGED_QUEUE, wait_for_completion=True, deferrable=True)
    with pytest.raises(TaskDeferred) as deferred:
        operator.execute(context_of(TaskInstanceStub()))
    assert deferred.value.trigger.serialize()[1]["job_queue"] == MANAGED_QUEUE
    assert _refused(aihc_emulator) == []


def test_the_resumed_operator_reads_the_summary_in_the_events_queue(
    aihc_emulator: EmulatorServer,
) -> None:
    aihc_emulator.backend.progression = Progression.per_poll(1, running=1)
    job_id = _operator(job_queue=MANAGED_QUEUE).execute(context_of(TaskInstanceStub()))
    for _ in range(20):  # polls move a per-poll job on; no clock involved
        if aihc_emulator.backend.job(job_id)["status"] == "Succeeded":
            break
        aihc_emulator.backend.poll(MANAGED_POOL, job_id, queue_id=MANAGED_QUEUE)
    assert aihc_emulator.backend.job(job_id)["status"] == "Succeeded"
    event = {"status": "success", "job_id": job_id, "job_status": "Succeeded", "message": "ok",
             "job_queue": MANAGED_QUEUE}  # fmt: skip
    ti = TaskInstanceStub()
    resumed = _operator(body={"queue": MANAGED_QUEUE})  # a new object, as after a deferral
    assert resumed.execute_complete(context_of(ti), event) == job_id
    assert ti.xcom["job_summary"]["status"] == "Succeeded"
    assert _refused(aihc_emulator) == []


def test_stop_and_delete_take_job_queue_on_a_managed_pool(aihc_emulator: EmulatorServer) -> None:
    job_id = _operator(job_queue=MANAGED_QUEUE).execute(context_of(TaskInstanceStub()))
    where = {"job_id": job_id, "resource_pool_id": MANAGED_POOL, "job_queue": MANAGED_QUEUE}
    assert "job_queue" in AIHCStopJobOperator.template_fields
    AIHCStopJobOperator(task_id="stop", **where).execute({})
    AIHCDeleteJobOperator(task_id="delete", **where).execute({})
    assert _refused(aihc_emulator) == []
    assert aihc_emulator.backend.counts()["DeleteJob"] == 1


def test_on_a_v2_self_managed_pool_every_call_names_the_jobs_queue_not_default(
    aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """v2 wants the job's queue name on every single-job action of a self-managed pool
    ("自运维资源池须填入队列名称": bce-openapi-meta ``i18n/zh-CN/aihc/DeleteJob.json:4``;
    "通用资源池…": ``DescribeJob.json:4``): the emulator answers another queue's name
    ``JobNotFound``, and the wire is read too."""
    conn = json.loads(os.environ["AIRFLOW_CONN_AIHC_DEFAULT"])
    conn["extra"]["api_version"] = "v2"
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", json.dumps(conn))
    aihc_emulator.backend.progression = Progression.per_poll(1, running=2)
    operator = _operator(
        resource_pool_id=None, job_queue="research", wait_for_completion=True, poll_interval=0.01
    )
    sent: list[tuple[str, str | None]] = []
    real = operator.hook.session.request

    def request(method: str, url: str, **kwargs: object) -> object:
        query = dict(parse_qsl(urlsplit(url).query))
        sent.append((query.get("action", "?"), query.get("queueID")))
        return real(method, url, **kwargs)

    operator.hook.session.request = request  # type: ignore[method-assign]
    operator.execute(context_of(TaskInstanceStub()))
    actions = {action for action, _ in sent}
    assert {"DescribeJobs", "CreateJob", "DescribeJob", "DescribeJobLogs"} <= actions
    assert {queue for _, queue in sent} == {"research"}


def test_lineage_reads_the_job_in_its_queue_on_a_managed_pool(
    aihc_emulator: EmulatorServer,
) -> None:
    """Without the queue the managed pool refuses the read and lineage keeps the id alone."""
    operator = _operator(job_queue=MANAGED_QUEUE)
    job_id = operator.execute(context_of(TaskInstanceStub()))

    lineage = operator.get_openlineage_facets_on_complete(None)

    facet = lineage.run_facets["aihcJob"]
    assert (facet.jobId, facet.resourcePoolId, facet.queue) == (job_id, MANAGED_POOL, MANAGED_QUEUE)
    assert _refused(aihc_emulator) == []
