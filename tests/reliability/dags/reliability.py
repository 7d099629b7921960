"""The reliability suite's DAGs: fault matrix, kills, a crash, and every path for secrets.

``tests/reliability/rel_driver.py`` runs them with ``dag.test()`` in one process; the
crash DAG runs under ``airflow tasks test``.  Numbers mirror ``rel_plan.py`` (this file
must stay importable without the test folder on ``sys.path``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from _compat import DAG
from _recorder import CALLBACKS

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

START = datetime(2024, 1, 1)
IMAGE = "registry.baidubce.com/aihc-aiak/aiak-megatron:latest"
COMMAND = "bash /workspace/train.sh"
FAST = {"poll_interval": 0.05, "retry_delay": timedelta(seconds=0), **CALLBACKS}
#: rel_plan.RETRIES, DOOMED_RETRIES, DOOMED_TIMEOUT
RETRIES, DOOMED_RETRIES, DOOMED_TIMEOUT = 8, 1, 1.0
#: A wait that nothing else ends stops here (keeps a lost kill from hanging the suite). At
#: 2.5 s a loaded machine (load 15 on two cores) timed the wait out before the kill came
#: (5-8 s after the task's start there). On Airflow 3 a SIGTERM of a kept (cancel_on_kill
#: False) wait runs on_kill but does not end the wait: the driver fails the job once the
#: wait has read it on after the kill (rel_driver.end_a_kept_wait), else this would.
KILL_DEADLINE = 30.0


def _dag(dag_id: str) -> DAG:
    return DAG(dag_id, start_date=START, schedule=None, catchup=False)


# -- fault matrix ---------------------------------------------------------------------------

for mode in ("sync", "deferred"):
    with _dag(f"rel_matrix_{mode}"):
        AIHCCreateJobOperator(
            task_id="train",
            image=IMAGE,
            command=COMMAND,
            job_resources={"baidu.com/a800_80g_cgpu": 8},
            wait_for_completion=True,
            deferrable=mode == "deferred",
            timeout=60,
            retries=RETRIES,
            **FAST,
        )
    with _dag(f"rel_matrix_doomed_{mode}"):
        AIHCCreateJobOperator(
            task_id="train",
            image=IMAGE,
            command=COMMAND,
            wait_for_completion=True,
            deferrable=mode == "deferred",
            timeout=DOOMED_TIMEOUT,
            retries=DOOMED_RETRIES,
            **FAST,
        )

# -- kills ----------------------------------------------------------------------------------

for kind, modes in (
    ("sigterm", ("sync", "deferred")),
    ("markfailed", ("sync",)),
    ("exectimeout", ("deferred",)),
):
    for mode in modes:
        for cancel in (True, False):
            suffix = "cancel" if cancel else "keep"
            limits = (
                {"execution_timeout": timedelta(seconds=1.5)}
                if kind == "exectimeout"
                else {"timeout": KILL_DEADLINE}
            )
            with _dag(f"rel_kill_{kind}_{mode}_{suffix}"):
                AIHCCreateJobOperator(
                    task_id="train",
                    name=f"{kind}-{mode}-{suffix}",
                    image=IMAGE,
                    command=COMMAND,
                    wait_for_completion=True,
                    deferrable=mode == "deferred",
                    cancel_on_kill=cancel,
                    **limits,
                    **FAST,
                )

with _dag("rel_kill_sensor_poke"):
    created = AIHCCreateJobOperator(
        task_id="create", name="sensor-poke", image=IMAGE, command=COMMAND, **FAST
    )
    AIHCJobSensor(
        task_id="watch",
        job_id=created.output,
        mode="poke",
        poke_interval=0.05,
        timeout=KILL_DEADLINE,
        **CALLBACKS,
    )

# -- crash (airflow tasks test, killed with SIGKILL, then run again) ------------------------

with _dag("rel_crash"):
    AIHCCreateJobOperator(
        task_id="train",
        name="crash",
        image=IMAGE,
        command=COMMAND,
        wait_for_completion=True,
        deferrable=False,
        poll_interval=0.1,
    )

# -- secrets: every path, with the canary connection ----------------------------------------

CANARY = {"aihc_conn_id": "aihc_canary", "image": IMAGE, "command": COMMAND}

with _dag("rel_secret_create_wait"):
    AIHCCreateJobOperator(
        task_id="sync", wait_for_completion=True, deferrable=False, **CANARY, **FAST
    )
    AIHCCreateJobOperator(
        task_id="deferred", wait_for_completion=True, deferrable=True, **CANARY, **FAST
    )

with _dag("rel_secret_sensors"):
    for sensor_mode in ("poke", "reschedule", "deferrable"):
        job = AIHCCreateJobOperator(task_id=f"create_{sensor_mode}", **CANARY, **FAST)
        job >> AIHCJobSensor(
            task_id=f"sensor_{sensor_mode}",
            job_id=job.output,
            aihc_conn_id="aihc_canary",
            mode="reschedule" if sensor_mode == "reschedule" else "poke",
            deferrable=sensor_mode == "deferrable",
            poke_interval=0.5 if sensor_mode == "reschedule" else 0.05,
            timeout=60,
            **CALLBACKS,
        )

with _dag("rel_secret_failing_job"):
    AIHCCreateJobOperator(task_id="train", wait_for_completion=True, retries=1, **CANARY, **FAST)

with _dag("rel_secret_invalid"):
    AIHCCreateJobOperator(
        task_id="train",
        replicas="{{ 0 }}",  # templated: refused when the task runs (its secrets masked)
        priority="{{ 'urgent' }}",
        name="{{ 'Bad_Name' }}",
        **CANARY,
        **FAST,
    )

with _dag("rel_secret_wrong_secret"):
    AIHCCreateJobOperator(
        task_id="train",
        aihc_conn_id="aihc_canary_wrong",
        image=IMAGE,
        command=COMMAND,
        retries=1,
        **FAST,
    )

with _dag("rel_secret_timeout"):
    AIHCCreateJobOperator(
        task_id="sync", wait_for_completion=True, deferrable=False, timeout=1, **CANARY, **FAST
    )
    AIHCCreateJobOperator(
        task_id="deferred", wait_for_completion=True, deferrable=True, timeout=1, **CANARY, **FAST
    )
