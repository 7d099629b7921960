"""Started in every Airflow 3.0-3.2 process the tests start (tests/conftest.py puts this
folder on their ``PYTHONPATH``): the process builds Airflow's in-process execution API
once, as 3.3's does, and nothing else of Airflow changes.

Before 3.3, ``dag.test()`` (and so ``airflow dags test``, and the drivers that run many
DAGs in one process: ``tests/e2e/runs_driver.py``, ``tests/reliability/rel_driver.py``)
builds a new one, a Cadwyn app of 1-3 s of CPU, for every task and trigger it runs: the
3.2.2 examples' v2 driver took 88 s with that, 23 s without; the service loop's DAG run
49 s and 13 s. 3.3's ``in_process_api_server`` is ``functools.lru_cache(maxsize=1)``-
wrapped; this wraps the older ones the same way, as soon as Airflow imports the module,
before anything reads the function (``tests/e2e/test_airflow_site.py`` holds it).
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

#: Where Airflow 3 keeps ``in_process_api_server``.
SUPERVISOR = "airflow.sdk.execution_time.supervisor"


class _CacheOnImport(importlib.abc.MetaPathFinder):
    """Finds no module itself: the supervisor's is found as usual, and its loader wraps
    the factory as soon as the module has run."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != SUPERVISOR:
            return None
        sys.meta_path.remove(self)  # once, and never in the way of the lookup below
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            if not hasattr(module.in_process_api_server, "cache_info"):
                module.in_process_api_server = functools.lru_cache(maxsize=1)(
                    module.in_process_api_server
                )

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _CacheOnImport())
