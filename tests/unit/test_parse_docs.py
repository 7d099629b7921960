"""The create operator's docstring lists the job parameters in their rows' own words: the
entries ``job_parameters.param_docs`` makes, written out in the operator's source so that
no DAG parse makes them (issue 37: ~0.3 ms of every parse that imports the operator)."""

from __future__ import annotations

from airflow_provider_aihc.job_parameters import JOB_PARAMETERS, param_docs
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator


def test_the_docstring_has_the_rows_entries_verbatim() -> None:
    entries = param_docs(JOB_PARAMETERS, operator=True)
    doc = AIHCCreateJobOperator.__doc__ or ""
    assert entries in doc, (
        "the operator's docstring no longer has the rows' :param: entries; paste these "
        "in place of its job parameters' entries (operators/aihc.py):\n" + entries
    )
    assert doc.count(entries.splitlines()[0]) == 1
