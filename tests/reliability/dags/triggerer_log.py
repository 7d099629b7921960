"""Security review S4-2 through a real ``airflow triggerer`` process (issue #35).

One deferred wait on a job that prints its own env token: ``rel_triggerer.py`` runs it
against an emulator that executes the job's command, with a real triggerer beside the
DAG run, and ``test_triggerer_log.py`` reads the trigger's task log.  The token reaches
the job only through ``envs`` (``HF_TOKEN``: Airflow's key-name rule calls it sensitive);
the triggerer never rendered this task, so only the log streamer's own masking can hide
it there.  The token and the line mirror ``rel_plan.py`` (this file must stay importable
without the test folder on ``sys.path``).
"""

from __future__ import annotations

from datetime import datetime

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

#: rel_plan.TRIGGERER_TOKEN, TRIGGERER_JOB_LINE
TOKEN = "hf_S4_2_TRIGGERER_LOG_7c1e9a"
JOB_LINE = "S4-2 job line: hf login --token"

with DAG("rel_triggerer_log", start_date=datetime(2024, 1, 1), schedule=None, catchup=False):
    AIHCCreateJobOperator(
        task_id="train",
        name="s4-2-triggerer-log",
        image="registry.baidubce.com/aihc-aiak/aiak-megatron:latest",
        # The lines come while the trigger watches (the job runs on after them), so the
        # trigger copies them, not the task once it resumes.
        command=f'sleep 2; echo "{JOB_LINE} $HF_TOKEN"; echo "env dump: HF_TOKEN=$HF_TOKEN"; '
        "sleep 3",
        envs={"HF_TOKEN": TOKEN},
        wait_for_completion=True,
        deferrable=True,
        poll_interval=0.5,
        timeout=120,
        retries=0,
    )
