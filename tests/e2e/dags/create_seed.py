"""The seed LLaMA2-7B request, once as named parameters and once as a body file."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from _compat import DAG, task

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

JOBS = Path(__file__).resolve().parents[3] / "dags_examples" / "jobs"
SEED = json.loads((JOBS / "llama2_7b_pretrain.json").read_text())
SPEC = SEED["jobSpec"]

with DAG(
    "create_seed",
    start_date=datetime(2024, 1, 1),
    schedule=None,
    template_searchpath=[str(JOBS)],
):
    named = AIHCCreateJobOperator(
        task_id="seed_named",
        name="llama2-7b-named-{{ ds_nodash }}",
        image=SPEC["image"],
        command=SPEC["command"],
        replicas="{{ 1 }}",
        job_resources={"baidu.com/a800_80g_cgpu": 8},
        enable_rdma="{{ true }}",
        envs={"CUDA_DEVICE_MAX_CONNECTIONS": 1},
        datasources=SEED["datasources"],
        job_queue="default",
        priority="normal",
        job_framework="PyTorchJob",
    )
    from_file = AIHCCreateJobOperator(task_id="seed_body", body="llama2_7b_pretrain.json")

    @task
    def report(**context):
        ti = context["ti"]
        for task_id in ("seed_named", "seed_body"):
            values = {
                key: ti.xcom_pull(task_ids=task_id, key=key)
                for key in ("return_value", "job_id", "job_name", "resource_pool_id")
            }
            print(f"XCOM {task_id} {json.dumps(values, sort_keys=True)}")

    [named, from_file] >> report()
