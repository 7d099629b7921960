"""TaskFlow decorators: ``@task.aihc`` (the function returns the job's command) and
``@task.aihc_python`` (the function runs in the job), registered as ``task-decorators``.

``from airflow_provider_aihc.decorators import aihc_task, aihc_python_task`` gives the
same decorators with every parameter typed, for IDE completion.
"""

from __future__ import annotations

from typing import Any

__all__ = ["aihc_python_task", "aihc_task"]


def __getattr__(name: str) -> Any:
    if name == "aihc_task":
        from airflow_provider_aihc.decorators.aihc import aihc_task

        return aihc_task
    if name == "aihc_python_task":
        from airflow_provider_aihc.decorators.aihc_python import aihc_python_task

        return aihc_python_task
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
