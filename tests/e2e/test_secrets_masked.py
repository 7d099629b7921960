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
