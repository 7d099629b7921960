"""What the test drivers that run many DAGs in one Airflow process share.

``tests/e2e/runs_driver.py`` and ``tests/reliability/rel_driver.py`` run their DAGs with
``dag.test()``, one process for many runs; this makes such a process cost what it costs
on Airflow 3.3, on the Airflows before it too. ``tests/airflow_site/sitecustomize.py``
does the same for every Airflow process the tests start on 3.0-3.2 (``airflow dags test``).
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


def _cache_api_server(supervisor: ModuleType) -> None:
    """Build Airflow's in-process execution API once per process, as Airflow 3.3 does.

    Before 3.3, ``dag.test()`` builds a new one (a Cadwyn app: 1-3 s of CPU) for every
    task and trigger it runs; profiled on 3.2.2, that was three quarters of this driver's
    time. 3.3's ``in_process_api_server`` is ``functools.lru_cache(maxsize=1)``-wrapped;
    this wraps the older ones the same way, and leaves 3.3's alone.
    """
    if not hasattr(supervisor.in_process_api_server, "cache_info"):
        supervisor.in_process_api_server = functools.lru_cache(maxsize=1)(
            supervisor.in_process_api_server
        )


def build_execution_api_once() -> None:
    """:func:`_cache_api_server` in this process now (2.x has no such function)."""
    try:
        from airflow.sdk.execution_time import supervisor
    except ImportError:  # Airflow 2.11
        return
    _cache_api_server(supervisor)


class _CacheOnImport(importlib.abc.MetaPathFinder):
    """Finds no module itself: the supervisor's is found as usual, and its loader wraps
    the factory as soon as the module has run, before any other module reads it."""

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
            _cache_api_server(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def build_execution_api_once_on_import() -> None:
    """:func:`_cache_api_server` in this process whenever Airflow imports the supervisor:
    for a process that does not run code of ours first (``airflow dags test``)."""
    sys.meta_path.insert(0, _CacheOnImport())
