"""The table of create fields is the one place a field is declared: the operator's
signature, its docstring, the request model, the builder and the dialects agree with it."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from typing import Any

import pytest
from aihc_bad_values import BAD_VALUES

from airflow_provider_aihc.hooks.dialects import V1_ONLY_FIELDS, V2_ONLY_FIELDS
from airflow_provider_aihc.hooks.dialects.v1 import V1
from airflow_provider_aihc.hooks.dialects.v2 import V2, create_body
from airflow_provider_aihc.job_parameters import (
    BUILDER_PARAMETERS,
    JOB_FIELDS,
    JOB_PARAMETERS,
    SEALED_PARAMETERS,
    field,
)
from airflow_provider_aihc.models._base import wire_name
from airflow_provider_aihc.models.build import PARAMETER_PATHS, build_create_request
from airflow_provider_aihc.models.request import CreateJobRequest, JobSpec
from airflow_provider_aihc.operators._sealed import SealedAttribute
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

#: The operator's parameters that are not create fields.
OPERATOR_OWN = (
    "resource_pool_id",
    "body",
    "wait_for_completion",
    "deferrable",
    "poll_interval",
    "timeout",
    "cancel_on_kill",
    "stream_logs",
    "result_marker",
    "metrics",
    "queue_timeout",
    "aihc_conn_id",
)


def _signature() -> list[str]:
    parameters = inspect.signature(AIHCCreateJobOperator.__init__).parameters
    return [name for name in parameters if name not in ("self", "kwargs")]


def _model_paths() -> set[tuple[str, ...]]:
    """Every field of the create request by its wire path (``jobSpec`` by its fields)."""
    paths = set()
    for name, info in CreateJobRequest.model_fields.items():
        if name == "job_spec":
            spec = wire_name(name, info)
            paths |= {(spec, wire_name(n, i)) for n, i in JobSpec.model_fields.items()}
        else:
            paths.add((wire_name(name, info),))
    return paths


def test_the_signature_holds_every_job_parameter_in_the_tables_order_and_nothing_else() -> None:
    signature = _signature()

    assert [name for name in signature if name in JOB_PARAMETERS] == list(JOB_PARAMETERS)
    assert [name for name in signature if name not in JOB_PARAMETERS] == list(OPERATOR_OWN)


def test_the_docstring_documents_each_signature_parameter_once() -> None:
    documented = re.findall(r"^\s*:param (\w+):", AIHCCreateJobOperator.__doc__ or "", re.M)

    assert sorted(documented) == sorted(_signature())
    assert len(documented) == len(set(documented))
    assert "{job_parameters}" not in (AIHCCreateJobOperator.__doc__ or "")
    for name in JOB_PARAMETERS:  # the row's doc, said once, in the operator's words
        entry = re.search(
            rf":param {name}: (.*?)(?=\n\s*:param|\Z)", AIHCCreateJobOperator.__doc__ or "", re.S
        )
        assert entry is not None
        assert " ".join(entry.group(1).split()).startswith(" ".join(field(name).doc.split()))


def test_the_builders_docstring_documents_each_of_its_parameters_with_its_wire_path() -> None:
    doc = build_create_request.__doc__ or ""
    for name in BUILDER_PARAMETERS:
        assert f":param {name}:" in doc
        assert f"``{field(name).wire}``" in doc


def test_each_row_is_a_field_of_the_request_model_and_each_model_field_a_row() -> None:
    rows = {row.v1 or row.v2 for row in JOB_FIELDS}

    assert len(rows) == len(JOB_FIELDS)  # no field declared twice
    assert rows == _model_paths()


def test_templating_rendering_and_sealing_follow_the_rows() -> None:
    operator = AIHCCreateJobOperator
    templated = [row.name for row in JOB_FIELDS if row.templated]
    renderers = {row.name: row.renderer for row in JOB_FIELDS if row.templated and row.renderer}

    assert set(templated) == set(JOB_PARAMETERS) <= set(operator.template_fields)
    assert {k: v for k, v in operator.template_fields_renderers.items() if k != "body"} == renderers
    assert set(SEALED_PARAMETERS) == {"envs", "image_config", "code_source"}
    for name in (*SEALED_PARAMETERS, "body"):
        assert isinstance(vars(operator)[name], SealedAttribute), name


def test_every_job_parameter_reaches_the_builder_unchanged() -> None:
    # Templates: a literal "value-name" would be refused at construction (not a name).
    values = {name: f"{{{{ value }}}}-{name}" for name in JOB_PARAMETERS}
    task = AIHCCreateJobOperator(task_id="t", **values)

    assert {name: getattr(task, name) for name in JOB_PARAMETERS} == values
    assert "envs" not in vars(task)  # sealed
    assert "image_config" not in vars(task)
    assert "code_source" not in vars(task)
    assert {name: field(name).path for name in BUILDER_PARAMETERS} == PARAMETER_PATHS


def test_the_builder_refuses_a_parameter_that_is_no_fields_as_python_would() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'queue'"):
        build_create_request(queue="q")


def test_fields_only_one_dialect_has_are_refused_by_the_other() -> None:
    assert [r.name for r in V1_ONLY_FIELDS] == [r.name for r in JOB_FIELDS if r.v2 is None]
    assert [r.name for r in V2_ONLY_FIELDS] == [r.name for r in JOB_FIELDS if r.v1 is None]
    body = {(row.v1 or row.v2 or ("",))[0]: {"x": 1} for row in (*V1_ONLY_FIELDS, *V2_ONLY_FIELDS)}

    assert [f for f, _ in V2.create_problems(body)] == [
        f"{row.wire} ({row.name})" for row in V1_ONLY_FIELDS
    ]
    assert [f for f, _ in V1.create_problems(body)] == [
        f"{row.wire} ({row.name})" for row in V2_ONLY_FIELDS
    ]


def _at(body: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        body = body[key]
    return body


def test_v2_bodies_hold_each_field_at_its_v2_path() -> None:
    v1_body: dict[str, Any] = {"jobSpec": {}}
    for row in JOB_FIELDS:
        if row.v1 and row.v2:
            parent = v1_body["jobSpec"] if len(row.v1) == 2 else v1_body
            parent[row.v1[-1]] = f"value-{row.name}"
    v1_body["jobFramework"] = "PyTorchJob"

    v2_body = create_body(v1_body)

    for row in JOB_FIELDS:
        if row.v1 and row.v2:
            assert _at(v2_body, row.v2) == _at(v1_body, row.v1), row.name


def test_the_table_imports_nothing_but_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules)\n"
        "import airflow_provider_aihc.job_parameters\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(new - {'airflow_provider_aihc'} - set(sys.stdlib_module_names)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "[]"


def test_every_parameter_is_covered_by_the_bad_values() -> None:
    # A create field's fourth edit: its bad values (tests/aihc_bad_values.py), which the
    # reliability lane sends through a real execute; checked here so the edit lane sees it.
    covered = {param for param, _, _ in BAD_VALUES}
    missing = set(JOB_PARAMETERS) | {"resource_pool_id", "body", "poll_interval", "timeout"}
    assert missing - covered == set()
    assert set(JOB_PARAMETERS) <= set(PARAMETER_PATHS)


def test_the_docstring_wrap_is_textwraps() -> None:
    """``fill`` replaces ``textwrap.fill`` at DAG parse: the same text, for every row."""
    import textwrap

    from airflow_provider_aihc.job_parameters import fill

    texts = [f":param {r.name}: {r.doc} (templated).  {r.operator_doc}" for r in JOB_FIELDS]
    texts += ["a" * 120 + " b  c   " + "d" * 30, "x y", "   leading and trailing   "]
    for text in texts:
        for width in (20, 40, 92):
            expected = textwrap.fill(
                text, width, initial_indent="    ", subsequent_indent="        ",
                break_on_hyphens=False,
            )  # fmt: skip
            assert fill(text, width, "    ", "        ") == expected, (text, width)
