"""Every form a registry password or an env token may take, plain and mapped (security
review F1, F2): the test reads Rendered Templates as Airflow stored them."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from _compat import DAG

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

IMAGE = "registry.example/train:1"
COMMAND = "python train.py"
REGISTRY = {"username": "robot", "password": "RegPw-1111-dict-rendered"}

with DAG(
    "secrets_masked",
    start_date=datetime(2024, 1, 1),
    schedule=None,
    template_searchpath=[str(Path(__file__).parent)],
    params={"registry": REGISTRY},
):
    # A dict rendered into text (Jinja renders its Python repr), envs as a list.
    AIHCCreateJobOperator(
        task_id="literal_text",
        image=IMAGE,
        command=COMMAND,
        image_config="{{ params.registry }}",
        envs=[{"name": "HF_TOKEN", "value": "hf_LIST_2222"}],
    )
    # snake_case keys in a JSON text body, envs as JSON text.
    AIHCCreateJobOperator(
        task_id="snake_case",
        body=json.dumps(
            {
                "job_spec": {
                    "image": IMAGE,
                    "command": COMMAND,
                    "image_config": {"username": "u", "password": "RegPw-6666-snake"},
                }
            }
        ),
        envs='{"HF_TOKEN": "hf_TEXT_4444", "PLAIN_SETTING": "visible-value-1"}',
    )
    # A mapped task whose body is a .json file (loaded and rendered), envs as a dict.
    AIHCCreateJobOperator.partial(
        task_id="mapped",
        body="masking_job.json",
        envs={"API_KEY": "apikey-DICT-3333"},
    ).expand(name=["mapped-a", "mapped-b"])
