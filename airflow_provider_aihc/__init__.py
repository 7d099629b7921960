"""Apache Airflow provider for Baidu AI Cloud AIHC (百舸) training jobs."""

__version__ = "0.1.0"
