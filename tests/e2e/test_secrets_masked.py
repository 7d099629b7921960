"""Registry passwords and env tokens never reach Rendered Templates (security review F1,
F2), read from the ``rendered_task_instance_fields`` rows Airflow stored in a real DAG run,
on the plain and the mapped path."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

pytestmark = pytest.mark.dagrun

SECRETS = (
    "RegPw-1111-dict-rendered",
    "hf_LIST_2222",
    "RegPw-6666-snake",
    "hf_TEXT_4444",
    "apikey-DICT-3333",
    "RegPw-MAPPED-42",
)


def _rendered(dag_id: str) -> dict[tuple[str, int], dict]:
    url = os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        rows = db.execute(
            "SELECT task_id, map_index, rendered_fields FROM rendered_task_instance_fields "
            "WHERE dag_id = ?",
            (dag_id,),
        ).fetchall()
    return {(task, index): json.loads(fields) for task, index, fields in rows}


def test_rendered_templates_hide_every_secret_plain_and_mapped(aihc_emulator, run_dag):
    run = run_dag("secrets_masked")

    assert run.succeeded, run.output[-3000:]
    rendered = _rendered("secrets_masked")
    assert set(rendered) == {("literal_text", -1), ("snake_case", -1), ("mapped", 0), ("mapped", 1)}
    stored = json.dumps(list(rendered.values()))
    for secret in SECRETS:
        assert secret not in stored, secret
        assert secret not in run.output, secret
    assert "visible-value-1" in stored  # a setting whose name is not secret stays readable
    for index in (0, 1):
        body = rendered[("mapped", index)]["body"]
        assert "masking_job.json" not in str(body)  # the mapped task loaded its body file
        assert "***" in str(body)
    # What was hidden was sent: AIHC got the real values.
    jobs = {job["name"]: job["body"]["jobSpec"] for job in aihc_emulator.backend.jobs()}
    assert jobs["mapped-a"]["imageConfig"]["password"] == "RegPw-MAPPED-42"
    assert jobs["mapped-b"]["envs"] == [{"name": "API_KEY", "value": "apikey-DICT-3333"}]
    assert len(jobs) == 4


def test_second_review_findings_in_one_dag_run(aihc_emulator, run_dag):
    """S4-1: ``@task.aihc_python``'s arguments are not in Rendered Templates after the task
    ran (Airflow 3 stores them again then), neither an argument named ``api_key`` nor a
    registered secret that JSON escapes; the job still gets them.  S4-9: a ``nan`` metric
    does not fail the task.  S4-10: a result's and a metric's values reach the next task
    as printed, whatever their keys are named.  Issue #38 point 7: short ordinary env
    values do not make Airflow warn about a secret too short to mask.  S4-2: a deferred
    sensor masks the token a job it never rendered prints."""
    from aihc_jobs import job_body

    from airflow_provider_aihc.decorators._payload import PAYLOAD_ENV
    from airflow_provider_aihc.emulator.steering import scenarios
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    token = "hf_S4_2_sensed_token"
    aihc_emulator.backend.add_script(
        scenarios.Output(match="s4-sensed", lines=f"+ docker login -p {token} registry")
    )
    sensed = AIHCHook().create_job(
        job_body("s4-sensed", envs=[{"name": "REGISTRY_PASSWORD", "value": token}])
    )

    result = {"tokenizer": "s3://b/tokenizer-42", "proxy": "http://cache:3128"}
    aihc_emulator.backend.add_script(
        scenarios.Output(
            match="s4-train",
            lines="loss=2.5\nloss=nan\ntokenizer_version=s3://b/tok-v2",
            result=json.dumps(result),
        )
    )
    run = run_dag("secrets_s4", conf=json.dumps({"job_id": sensed.job_id}))

    assert run.succeeded, run.output[-4000:]
    rendered = _rendered("secrets_s4")
    stored = json.dumps(rendered[("s4_payload", -1)])
    assert rendered[("s4_payload", -1)]["envs"] == {"HF_TOKEN": "***"}  # no payload env
    escaped = json.dumps('hf_"S4-1\\quoted-token')[1:-1]
    for leak in ("S4-1-API-KEY-UNREGISTERED", 'hf_"S4-1\\quoted-token', escaped, "S4-1"):
        assert leak not in stored, leak
    [job] = [
        j
        for j in aihc_emulator.backend.jobs()
        if j["labels"].get("airflow-task-id") == "s4_payload"
    ]
    sent = {env["name"]: env["value"] for env in job["body"]["jobSpec"]["envs"]}
    assert json.loads(sent[PAYLOAD_ENV])["kwargs"]["api_key"] == "S4-1-API-KEY-UNREGISTERED"
    [line] = [line for line in run.output.splitlines() if "SECRETS_S4 " in line]
    pulled = json.loads(line.split("SECRETS_S4 ", 1)[1])
    assert pulled["result"] == result
    assert pulled["metrics"] == {"loss": "nan", "tokenizer_version": "s3://b/tok-v2"}
    assert "too short" not in run.output
    assert "+ docker login -p *** registry" in run.output
    assert token not in run.output
