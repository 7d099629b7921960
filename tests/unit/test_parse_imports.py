"""What a DAG file imports by using the provider, held: a module added to DAG parse fails
this test unless the lists below are changed on purpose (issue 37).

Each DAG file of ``bench/bench_parse.py`` is executed in a fresh interpreter after the
floor every DAG file pays in the DAG processor (``bench/parse_floor.py``: ``DAG``,
``EmptyOperator``, for the TaskFlow pair ``@task``, and what serializing any DAG imports,
a claim held here too), as the benchmark does; the modules it adds are compared with the
lists here.  Every module costs each parse of each DAG file: see docs/benchmarks.md for
the figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
DAGS = BENCH / "dags"

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
#: Airflow's own modules a DAG file may load through us beyond its baseline's: common.compat
#: (where the base classes come from on 2.11).  The sensor and link base classes are in the
#: floor (bench/parse_floor.py).
AIRFLOW_ALLOWED_PREFIXES = ("airflow.providers.common",)
#: Never at parse: an HTTP client, pydantic, our hook or models.
FORBIDDEN = ("pydantic", "requests", "httpx", "aiohttp", "airflow_provider_aihc.hooks",
             "airflow_provider_aihc.models", "airflow_provider_aihc.watch",
             "airflow_provider_aihc.exceptions")  # fmt: skip

CHILD = r"""
import importlib.util, json, sys
sys.path.insert(0, sys.argv[3])
import parse_floor
del sys.path[0]
parse_floor.pay(sys.argv[2])
before = set(sys.modules)
spec = importlib.util.spec_from_file_location("parse_dag", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print("--modules--" + json.dumps(sorted(set(sys.modules) - before)))
"""

#: A DAG of two EmptyOperators serialized as the DAG processor serializes each file's DAGs
#: after parsing it: which of the floor's serializer modules that imports, and which were
#: there before.
SERIALIZE = r"""
import importlib, json, sys
from datetime import datetime
sys.path.insert(0, sys.argv[1])
import parse_floor
del sys.path[0]
import airflow.dag_processing.processor  # what the processor has before any file
from airflow.serialization import serialized_objects
major = parse_floor.airflow_major()
DAG, EmptyOperator = (
    getattr(importlib.import_module(module), name)
    for module, name in parse_floor.DAG_FILE_NAMES[major]
)
# DagSerialization since Airflow 3.2; SerializedDAG before it (2.11, 3.0, 3.1).
serializer = getattr(serialized_objects, "DagSerialization", None)
serializer = serializer or serialized_objects.SerializedDAG
with DAG(dag_id="two_empty", schedule=None, start_date=datetime(2025, 1, 1)) as dag:
    EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")
wanted = parse_floor.SERIALIZER_MODULES[major]
before = [m for m in wanted if m in sys.modules]
serializer.to_dict(dag)
after = [m for m in wanted if m in sys.modules]
print("--modules--" + json.dumps({"wanted": wanted, "before": before, "after": after}))
"""


def run_child(code: str, *args: str) -> object:
    """The JSON a child interpreter running ``code`` prints after ``--modules--``."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("--modules--"))
    return json.loads(line.removeprefix("--modules--"))


def added(dag_file: str, floor: str) -> list[str]:
    modules = run_child(CHILD, str(DAGS / dag_file), floor, str(BENCH))
    assert isinstance(modules, list)
    return modules


def test_the_floor_holds_only_what_serializing_any_dag_imports() -> None:
    """The floor's serializer modules are imported by the processor's serialization of a DAG
    of two EmptyOperators, and were not there before it: every DAG file pays them, right
    after its parse (bench/parse_floor.py).  When an Airflow release stops importing one of
    them there, this fails and the floor must lose it."""
    found = run_child(SERIALIZE, str(BENCH))
    assert isinstance(found, dict)
    assert found["before"] == []
    assert found["after"] == found["wanted"]


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
