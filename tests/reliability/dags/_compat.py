"""Imports that differ between Airflow 2.11 and 3.x, for the reliability DAGs only."""

try:
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]

__all__ = ["DAG"]
