"""Create three AIHC jobs and watch each with AIHCJobSensor in another mode.

poke → reschedule → (a 5xx/429 burst, then) deferrable, then one task that prints the
three job ids the sensors returned.  ``tests/e2e/test_watch_dags.py`` runs it against the
emulator.
"""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime

from _compat import DAG, task

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

JOB = {
    "image": "registry.baidubce.com/aihc-aiak/aiak-megatron:latest",
    "command": "bash /workspace/train.sh",
    "job_resources": {"baidu.com/a800_80g_cgpu": 8},
}
#: Lets the deferred sensor's one check through, then fails the trigger's next GetJobs.
BURST = [
    {"kind": "passthrough", "operation": "GetJob", "times": 1},
    {"kind": "error", "status": 503, "operation": "GetJob", "times": 2},
    {"kind": "throttle", "retry_after": 0, "operation": "GetJob", "times": 2},
]

with DAG("watch_sensor_modes", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    create_poke = AIHCCreateJobOperator(task_id="create_poke", name="watch-poke", **JOB)
    poke = AIHCJobSensor(
        task_id="sensor_poke", job_id=create_poke.output, mode="poke", poke_interval=0.2
    )
    create_resched = AIHCCreateJobOperator(
        task_id="create_reschedule", name="watch-reschedule", **JOB
    )
    resched = AIHCJobSensor(
        task_id="sensor_reschedule",
        job_id="{{ ti.xcom_pull(task_ids='create_reschedule') }}",
        mode="reschedule",
        poke_interval=1,
    )
    create_defer = AIHCCreateJobOperator(task_id="create_deferrable", name="watch-defer", **JOB)

    @task
    def burst() -> None:
        """Queue a burst of 503s and 429s in the emulator's control API."""
        from airflow_provider_aihc.emulator.http.control import control_headers
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        request = urllib.request.Request(
            AIHCHook().config.base_url + "/_emulator/faults",
            data=json.dumps(BURST).encode(),
            headers=control_headers(),  # the fixture's token (AIHC_EMULATOR_CONTROL_TOKEN)
        )
        urllib.request.urlopen(request, timeout=10).close()

    defer = AIHCJobSensor(
        task_id="sensor_deferrable",
        job_id=create_defer.output,
        deferrable=True,
        poke_interval=0.2,
    )

    @task
    def report(poke_id: str, reschedule_id: str, deferrable_id: str) -> None:
        print(f"WATCHED poke={poke_id} reschedule={reschedule_id} deferrable={deferrable_id}")

    create_poke >> poke
    create_resched >> resched
    [poke, resched] >> create_defer >> burst() >> defer
    report(poke.output, resched.output, defer.output)
