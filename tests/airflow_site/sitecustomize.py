"""Started in every Airflow 3.0-3.2 process the tests start (tests/conftest.py puts this
folder on their ``PYTHONPATH``): ``airflow dags test`` there builds its in-process
execution API once, as 3.3's does, instead of once per task and trigger (the service
loop's DAG run on 3.2.2: 49 s before, 13 s after). Nothing else of Airflow changes.
"""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "in_process_airflow", Path(__file__).resolve().parents[1] / "in_process_airflow.py"
)
assert _spec is not None
assert _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
_module.build_execution_api_once_on_import()
