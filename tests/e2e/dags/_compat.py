"""Imports that differ between Airflow 2.11 and 3.x, for the test DAGs only."""

try:
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]

__all__ = ["DAG", "task"]
