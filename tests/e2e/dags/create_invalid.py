"""Bad input: the task fails listing every bad field, and nothing reaches AIHC."""

from __future__ import annotations

from datetime import datetime

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

with DAG("create_invalid", start_date=datetime(2024, 1, 1), schedule=None):
    AIHCCreateJobOperator(
        task_id="bad",
        name="{{ 'Bad_Name' }}",  # templated: found when it runs
        image="img",
        command="python train.py --config cfg.json",
        replicas="{{ 0 }}",
        priority="{{ 'urgent' }}",
        job_resources={"baidu.com/a800_80g_cgpu": -1},
        body={"jobSpec": {"enableRdma": True}},
    )
