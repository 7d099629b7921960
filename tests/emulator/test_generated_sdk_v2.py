"""Baidu's generated v2 client, ``baiducloud-python-sdk-aihc`` 0.0.4, against the emulator,
unchanged: every job action it has that the emulator serves, its answers parsed into the
client's own models, on a self-managed pool (a queue other than ``default``) and on the
managed pool (addressed by the queue's id, which differs from its name).

The generated client sends no ``X-API-Version`` header on job actions and literal
``xxxx`` defaults for pool and queue when a request leaves them unset
(``api/aihc_client.py``); both are what the emulator must accept or refuse as the server
would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from baiducloud_python_sdk_aihc.api.aihc_client import AihcClient
from baiducloud_python_sdk_aihc.models.batch_stop_training_tasks_v2_request import (
    BatchStopTrainingTasksV2Request,
)
from baiducloud_python_sdk_aihc.models.create_job_request import CreateJobRequest
from baiducloud_python_sdk_aihc.models.delete_job_request import DeleteJobRequest
from baiducloud_python_sdk_aihc.models.describe_job_events_request import (
    DescribeJobEventsRequest,
)
from baiducloud_python_sdk_aihc.models.describe_job_logs_request import (
    DescribeJobLogsRequest,
)
from baiducloud_python_sdk_aihc.models.describe_job_metrics_request import (
    DescribeJobMetricsRequest,
)
from baiducloud_python_sdk_aihc.models.describe_job_nodes_request import (
    DescribeJobNodesRequest,
)
from baiducloud_python_sdk_aihc.models.describe_job_request import DescribeJobRequest
from baiducloud_python_sdk_aihc.models.describe_job_webterminal_request import (
    DescribeJobWebterminalRequest,
)
from baiducloud_python_sdk_aihc.models.describe_jobs_request import (
    DescribeJobsRequest,
)
from baiducloud_python_sdk_aihc.models.describe_pod_events_request import (
    DescribePodEventsRequest,
)
from baiducloud_python_sdk_aihc.models.job_spec import JobSpec
from baiducloud_python_sdk_aihc.models.modify_job_request import ModifyJobRequest
from baiducloud_python_sdk_aihc.models.resource import Resource
from baiducloud_python_sdk_aihc.models.stop_job_request import StopJobRequest
from baiducloud_python_sdk_core.auth.bce_credentials import BceCredentials
from baiducloud_python_sdk_core.bce_client_configuration import BceClientConfiguration
from baiducloud_python_sdk_core.exception import BceHttpClientError, BceServerError
from baiducloud_python_sdk_core.retry.retry_policy import NoRetryPolicy

from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_SECRET_ACCESS_KEY,
    EmulatorServer,
)
from airflow_provider_aihc.emulator.state.jobs import Progression

SELF_MANAGED, RESEARCH = "cce-emulator0", "research"
MANAGED, MANAGED_QUEUE_ID = "aihc-serverless", "aihcq-emulator0"


@pytest.fixture
def running() -> Iterator[EmulatorServer]:
    """Jobs reach ``Running`` on the third poll and stay there for 20 polls."""
    with EmulatorServer(progression=Progression.per_poll(1, running=20)) as server:
        yield server


@pytest.fixture
def client(running: EmulatorServer) -> Any:
    config = BceClientConfiguration(
        credentials=BceCredentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY),
        endpoint=running.url,
        retry_policy=NoRetryPolicy(),
    )
    return AihcClient(config)


def create(client: Any, pool: str, queue: str, name: str) -> str:
    spec = JobSpec(
        image="registry.baidubce.com/aihc/train:1",
        replicas=2,
        resources=[Resource(name="baidu.com/a800_80g_cgpu", quantity=8)],
    )
    request = CreateJobRequest(
        resource_pool_id=pool,
        queue_id=queue,
        name=name,
        queue=queue,
        job_spec=spec,
        command="python train.py",
    )
    answer = client.create_job(request)
    assert answer.job_name == name
    return str(answer.job_id)


def describe(client: Any, pool: str, queue: str, job_id: str) -> Any:
    request = DescribeJobRequest(
        resource_pool_id=pool, queue_id=queue, job_id=job_id, need_detail=True
    )
    return client.describe_job(request).job


@pytest.mark.parametrize(
    ("pool", "queue"),
    [(SELF_MANAGED, RESEARCH), (MANAGED, MANAGED_QUEUE_ID)],
    ids=["self", "managed"],
)
def test_every_job_action_of_the_generated_client(
    client: Any, running: EmulatorServer, pool: str, queue: str
) -> None:
    job_id = create(client, pool, queue, "gen-train")
    for _ in range(3):  # Created -> Scheduled -> Running
        job = describe(client, pool, queue, job_id)
    assert (job.jobid, job.name, job.status, job.queue) == (job_id, "gen-train", "Running", queue)
    assert job.job.replicas == 2  # the spec parsed into the client's JobSpec, from ``Job``
    assert [r.quantity for r in job.job.resources] == [8]
    assert [p.name for p in job.pods] == ["gen-train-master-0", "gen-train-worker-0"]
    assert all(p.restart_count == 0 for p in job.pods)

    listed = client.describe_jobs(DescribeJobsRequest(resource_pool_id=pool, queue_id=queue))
    assert [j.jobid for j in listed.jobs] == [job_id]

    logs = client.describe_job_logs(
        DescribeJobLogsRequest(
            resource_pool_id=pool,
            queue_id=queue,
            job_id=job_id,
            pod_name="gen-train-master-0",
            max_lines="5",
            marker="",
        )
    )
    assert len(logs.logs) == 5
    assert logs.next_marker

    events = client.describe_job_events(
        DescribeJobEventsRequest(resource_pool_id=pool, queue_id=queue, job_id=job_id)
    )
    assert events.total >= 1
    pod_events = client.describe_pod_events(
        DescribePodEventsRequest(
            resource_pool_id=pool, queue_id=queue, job_id=job_id, pod_name="gen-train-master-0"
        )
    )
    assert pod_events.total >= 1
    nodes = client.describe_job_nodes(
        DescribeJobNodesRequest(resource_pool_id=pool, queue_id=queue, job_id=job_id)
    )
    assert nodes.job_id == job_id
    assert len(nodes.nodes) == 2
    metrics = client.describe_job_metrics(
        DescribeJobMetricsRequest(
            resource_pool_id=pool, queue_id=queue, job_id=job_id, metric_type="GpuUsage",
            start_time="0", time_step="60",
        )
    )  # fmt: skip
    assert metrics.job_id == job_id
    assert metrics.metrics is not None
    assert 70 <= metrics.metrics.value <= 99
    terminal = client.describe_job_webterminal(
        DescribeJobWebterminalRequest(
            resource_pool_id=pool, queue_id=queue, job_id=job_id, pod_name="gen-train-master-0",
            ping_timeout_second="600",
        )
    )  # fmt: skip
    assert terminal.web_terminal_url.startswith("wss://")

    modified = client.modify_job(
        ModifyJobRequest(resource_pool_id=pool, queue_id=queue, job_id=job_id, priority="high")
    )
    assert modified.job_id == job_id
    stopped = client.stop_job(StopJobRequest(resource_pool_id=pool, queue_id=queue, job_id=job_id))
    assert stopped.job_id == job_id
    assert running.backend.job(job_id)["status"] == "ManualTermination"
    deleted = client.delete_job(
        DeleteJobRequest(resource_pool_id=pool, queue_id=queue, job_id=job_id)
    )
    assert deleted.job_id == job_id
    assert running.backend.jobs() == []


def test_batch_stop_reports_each_job(client: Any) -> None:
    first = create(client, SELF_MANAGED, RESEARCH, "batch-a")
    second = create(client, SELF_MANAGED, RESEARCH, "batch-b")
    request = BatchStopTrainingTasksV2Request(
        queue_id=RESEARCH,
        resource_pool_id=SELF_MANAGED,
        job_list=[{"jobId": first}, {"jobId": second}, {"jobId": "job-missing"}],
        job_list_job_id=None,
    )
    result = client.batch_stop_training_tasks_v2(request).result
    assert (result.success_num, result.failed_num, result.success) == (2, 1, False)
    assert [r.job_id for r in result.success_list] == [first, second]
    assert [(r.job_id, r.success) for r in result.failed_list] == [("job-missing", False)]


def test_the_managed_pool_wants_the_queue_id_not_its_name(client: Any) -> None:
    job_id = create(client, MANAGED, MANAGED_QUEUE_ID, "by-id")
    with pytest.raises(BceHttpClientError) as refused:
        describe(client, MANAGED, "default", job_id)  # the queue's name, not its id
    assert isinstance(refused.value.last_error, BceServerError)
    assert "id of a queue" in str(refused.value.last_error)
