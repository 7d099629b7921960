"""What the test drivers that run many DAGs in one Airflow process share.

``tests/e2e/runs_driver.py`` and ``tests/reliability/rel_driver.py`` run their DAGs with
``dag.test()``, one process for many runs; this makes such a process cost what it costs
on Airflow 3.3, on the Airflows before it too.
"""

from __future__ import annotations

import functools


def build_execution_api_once() -> None:
    """Build Airflow's in-process execution API once per process, as Airflow 3.3 does.

    Before 3.3, ``dag.test()`` builds a new one (a Cadwyn app: 1-3 s of CPU) for every
    task and trigger it runs; profiled on 3.2.2, that was three quarters of this driver's
    time. 3.3's ``in_process_api_server`` is ``functools.lru_cache(maxsize=1)``-wrapped;
    this wraps the older ones the same way, and leaves 2.x (no such function) and 3.3 alone.
    """
    try:
        from airflow.sdk.execution_time import supervisor
    except ImportError:  # Airflow 2.11
        return
    if not hasattr(supervisor.in_process_api_server, "cache_info"):
        supervisor.in_process_api_server = functools.lru_cache(maxsize=1)(
            supervisor.in_process_api_server
        )
