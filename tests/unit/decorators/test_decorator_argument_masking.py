"""``@task.aihc_python``'s arguments (security review S4-1): the payload reaches the job
but never the ``envs`` template field, and arguments under a sensitive name are registered
with Airflow's masker for the task log, as Rendered Templates hide them by name."""

from __future__ import annotations

import json
from datetime import datetime

from airflow_provider_aihc.decorators._payload import PAYLOAD_ENV
from airflow_provider_aihc.decorators.aihc_python import aihc_python_task
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS, redact

if AIRFLOW_V_3_0_PLUS:
    from airflow.sdk import DAG
else:  # pragma: no cover - exercised by the Airflow 2.11 test run
    from airflow import DAG  # type: ignore[assignment,no-redef]


def train(config: dict, note: str, api_key: str) -> None:
    print(config, note, api_key)


def test_packed_arguments_stay_out_of_envs_and_sensitive_ones_are_masked() -> None:
    with DAG("s4_1_unit", start_date=datetime(2024, 1, 1), schedule=None):
        operator = aihc_python_task(train, image="img", envs={"NCCL_DEBUG": "WARN"})(
            {"db": {"password": "S4-1-nested-pw"}, "rows": "S4-1-rows-visible"},
            "S4-1-note-visible",
            api_key="S4-1-api-key-value",
        ).operator

    operator._pack()

    assert operator.envs == {"NCCL_DEBUG": "WARN"}  # the template field, as rendered
    given = {name: getattr(operator, name) for name in operator.template_fields}
    envs = operator._job_parameters(given)["envs"]
    assert set(envs) == {"NCCL_DEBUG", PAYLOAD_ENV}
    assert json.loads(envs[PAYLOAD_ENV])["kwargs"] == {"api_key": "S4-1-api-key-value"}
    assert redact("key S4-1-api-key-value") == "key ***"
    assert redact("S4-1-nested-pw") == "***"  # a sensitive name at any depth
    assert redact("S4-1-rows-visible S4-1-note-visible") == "S4-1-rows-visible S4-1-note-visible"
