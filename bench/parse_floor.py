"""The floor a DAG file's parse is measured from: what the DAG processor pays for every DAG
file, whatever the file uses.  ``bench/bench_parse.py`` and
``tests/unit/test_parse_imports.py`` both run :func:`pay` in a fresh interpreter before
they execute the DAG file, so that the figure and the import list are of the same thing.

The floor is:

* ``DAG`` and ``EmptyOperator`` (``airflow.sdk`` and the standard provider on Airflow 3;
  ``airflow`` and ``airflow.operators.empty`` on 2.11), and for the TaskFlow pair ``@task``
  itself;
* the modules the DAG processor's serialization of *any* DAG imports
  (:data:`SERIALIZER_MODULES`): the processor serializes each file's DAGs right after
  parsing it, in the same process (Airflow 3.3 ``dag_processing/processor.py``
  ``_serialize_dags``, ``DagSerialization.to_dict``; 2.11 ``DagFileProcessor.save_dag_to_db``,
  ``SerializedDAG.to_dict``), and that serialization imports the operator-link and sensor
  base classes even for a DAG of two ``EmptyOperator``s.  A DAG file that imports them
  first does not add them to what the file costs the processor; it only pays them earlier.
  ``tests/unit/test_parse_imports.py`` holds that claim against the installed Airflow.

On Airflow 3 the floor's objects are then frozen (``gc.freeze()``), as the DAG processor
manager freezes its heap before it forks the processes that parse the files (3.3
``dag_processing/manager.py``, ``before_run``: "To prevent COW in forked process parsing
dag file").  A file's garbage collections there scan only what the parse made; unfrozen,
one more young collection than the baseline's (a file that makes more objects) could set
off a generation-1 collection of the floor's imports, ~1.5 ms that the processor never
pays.  Airflow 2.11's processor freezes nothing, so neither does its floor.

Stdlib and Airflow only: the children import this module by path.
"""

from __future__ import annotations

import gc
import importlib

#: What every DAG file imports, by Airflow major version: (module, name).
DAG_FILE_NAMES = {
    3: (("airflow.sdk", "DAG"), ("airflow.providers.standard.operators.empty", "EmptyOperator")),
    2: (("airflow", "DAG"), ("airflow.operators.empty", "EmptyOperator")),
}
#: Where ``@task`` comes from, by Airflow major version.
TASK_DECORATOR = {3: ("airflow.sdk", "task"), 2: ("airflow.decorators", "task")}
#: What serializing any DAG imports (above), by Airflow major version.
SERIALIZER_MODULES = {
    3: ("airflow.sdk.bases.operatorlink", "airflow.sdk.bases.sensor"),
    2: ("airflow.models.baseoperatorlink", "airflow.sensors.base"),
}


def airflow_major() -> int:
    """3 when ``airflow.sdk`` has ``DAG`` (Airflow 3.x), else 2."""
    try:
        from airflow.sdk import DAG  # noqa: F401
    except ImportError:  # Airflow 2.11
        return 2
    return 3


def pay(floor: str) -> None:
    """Import the floor: ``floor`` is ``operators`` or ``taskflow`` (also ``@task``)."""
    major = airflow_major()
    for module, name in DAG_FILE_NAMES[major]:
        getattr(importlib.import_module(module), name)
    if floor == "taskflow":  # what every TaskFlow DAG file pays: @task itself
        module, name = TASK_DECORATOR[major]
        getattr(importlib.import_module(module), name).python  # noqa: B018
    for module in SERIALIZER_MODULES[major]:
        importlib.import_module(module)
    if major == 3:
        gc.freeze()
