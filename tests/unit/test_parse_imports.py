"""What a DAG file imports by using the provider, held: a module added to DAG parse fails
this test unless the lists below are changed on purpose (issue 37).

Each DAG file of ``bench/bench_parse.py`` is executed in a fresh interpreter after the
floor every DAG file pays (``DAG``, ``EmptyOperator``; for the TaskFlow pair ``@task``),
as the benchmark does; the modules it adds are compared with the lists here.  Every module
costs each parse of each DAG file: see docs/benchmarks.md for the figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "bench" / "dags"

#: Ours, exactly: the operator and sensor DAG file.
OPERATOR_MODULES = [
    "airflow_provider_aihc.job_parameters",
    "airflow_provider_aihc.links",
    "airflow_provider_aihc.links.aihc",
    "airflow_provider_aihc.operators",
    "airflow_provider_aihc.operators._checks",
    "airflow_provider_aihc.operators._sealed",
    "airflow_provider_aihc.operators.aihc",
    "airflow_provider_aihc.outputs",
    "airflow_provider_aihc.sensors",
    "airflow_provider_aihc.sensors.aihc",
    "airflow_provider_aihc.version_compat",
]
#: Ours, exactly: the decorators' DAG file.
DECORATOR_MODULES = sorted(
    (
        {*OPERATOR_MODULES, "airflow_provider_aihc.decorators"}
        | {"airflow_provider_aihc.decorators._base", "airflow_provider_aihc.decorators.aihc"}
        | {"airflow_provider_aihc.decorators.aihc_python"}
    )
    - {"airflow_provider_aihc.sensors", "airflow_provider_aihc.sensors.aihc"}
)
#: Airflow's own modules a DAG file may load through us beyond its baseline's: the sensor
#: and link base classes and common.compat (where they come from on 2.11 and 3.x).
AIRFLOW_ALLOWED_PREFIXES = (
    "airflow.providers.common",  # common.compat
    "airflow.sdk.bases.operatorlink",
    "airflow.sdk.bases.sensor",
    # Airflow 2.11: its sensor base, the deprecated sensor aliases its package loads, and
    # its link base.
    "airflow.sensors",
    "airflow.models.skipmixin",
    "airflow.ti_deps.deps.ready_to_reschedule",
    "airflow.models.baseoperatorlink",
)
#: Never at parse: an HTTP client, pydantic, our hook or models.
FORBIDDEN = ("pydantic", "requests", "httpx", "aiohttp", "airflow_provider_aihc.hooks",
             "airflow_provider_aihc.models", "airflow_provider_aihc.watch",
             "airflow_provider_aihc.exceptions")  # fmt: skip

CHILD = r"""
import importlib.util, json, sys
try:
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.empty import EmptyOperator
except ImportError:  # Airflow 2.11
    from airflow import DAG
    from airflow.operators.empty import EmptyOperator
if sys.argv[2] == "taskflow":
    try:
        from airflow.sdk import task
    except ImportError:
        from airflow.decorators import task
    task.python
before = set(sys.modules)
spec = importlib.util.spec_from_file_location("parse_dag", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print("--modules--" + json.dumps(sorted(set(sys.modules) - before)))
"""


def added(dag_file: str, floor: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(DAGS / dag_file), floor],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("--modules--"))
    return list(json.loads(line.removeprefix("--modules--")))


@pytest.mark.parametrize(
    ("dag_file", "baseline", "floor", "ours"),
    [
        ("parse_aihc.py", "parse_empty.py", "operators", OPERATOR_MODULES),
        ("parse_decorators.py", "parse_taskflow.py", "taskflow", DECORATOR_MODULES),
    ],
)
def test_a_dag_file_imports_only_the_listed_modules(
    dag_file: str, baseline: str, floor: str, ours: list[str]
) -> None:
    modules = added(dag_file, floor)
    # The package itself and version_compat may be loaded before the DAG file (by
    # Airflow's discovery of the provider on 2.11): not the DAG file's to pay.
    own = [m for m in modules if m.startswith("airflow_provider_aihc.")]
    own = [m for m in own if m != "airflow_provider_aihc.version_compat"]
    ours = [m for m in ours if m != "airflow_provider_aihc.version_compat"]
    assert own == ours, "a module was added to (or left) DAG parse: change the list on purpose"
    theirs = {m for m in modules if not m.startswith("airflow_provider_aihc")}
    theirs -= set(added(baseline, floor))
    unexpected = sorted(m for m in theirs if not m.startswith(AIRFLOW_ALLOWED_PREFIXES))
    assert unexpected == []
    heavy = [m for m in modules if m.startswith(FORBIDDEN)]
    assert heavy == []
