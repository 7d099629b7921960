"""The job's queue travels with it: every way to create and watch a job, in one queue.

Run with ``--conf '{"pool": ..., "queue": ...}'``: the create operator (waiting in the
worker, and deferred), and the sensor in every mode (poke, reschedule, deferrable) on
jobs of plain create tasks; the poke and reschedule sensors are given only the job id
(they take the queue from the upstream create operator's XCom ``job_queue``), the
deferrable one an explicit ``job_queue`` template.  ``tests/e2e/test_queue_travels.py`` runs it on
the emulator's managed pool on v1 and v2, and on a self-managed pool's ``research``
queue on v2.
"""

from __future__ import annotations

from datetime import datetime

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

POOL = "{{ dag_run.conf['pool'] }}"
QUEUE = "{{ dag_run.conf['queue'] }}"
JOB = {
    "image": "registry.baidubce.com/aihc-aiak/aiak-megatron:latest",
    "command": "bash /workspace/train.sh",
    "resource_pool_id": POOL,
    "job_queue": QUEUE,
}

with DAG("queue_travels", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    create_sync = AIHCCreateJobOperator(
        task_id="create_sync", name="qt-sync", wait_for_completion=True, poll_interval=0.2, **JOB
    )
    create_deferred = AIHCCreateJobOperator(
        task_id="create_deferred",
        name="qt-deferred",
        wait_for_completion=True,
        deferrable=True,
        poll_interval=0.2,
        **JOB,
    )
    for_poke = AIHCCreateJobOperator(task_id="for_poke", name="qt-poke", **JOB)
    poke = AIHCJobSensor(
        task_id="sensor_poke",
        job_id=for_poke.output,
        resource_pool_id=POOL,
        mode="poke",
        poke_interval=0.2,
    )
    for_reschedule = AIHCCreateJobOperator(task_id="for_reschedule", name="qt-resched", **JOB)
    reschedule = AIHCJobSensor(
        task_id="sensor_reschedule",
        job_id="{{ ti.xcom_pull(task_ids='for_reschedule') }}",
        resource_pool_id=POOL,
        mode="reschedule",
        poke_interval=1,
    )
    for_deferrable = AIHCCreateJobOperator(task_id="for_deferrable", name="qt-defer", **JOB)
    deferrable = AIHCJobSensor(
        task_id="sensor_deferrable",
        job_id=for_deferrable.output,
        resource_pool_id=POOL,
        job_queue="{{ ti.xcom_pull(task_ids='for_deferrable', key='job_queue') }}",
        deferrable=True,
        poke_interval=0.2,
    )

    create_sync >> create_deferred >> for_poke >> poke
    poke >> for_reschedule >> reschedule >> for_deferrable >> deferrable
