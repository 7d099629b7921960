"""Where the end-to-end tests find Airflow's CLI and the DAG files."""

from __future__ import annotations

import sys
from pathlib import Path

AIRFLOW = str(Path(sys.executable).with_name("airflow"))
DAGS_DIR = Path(__file__).parent / "dags"
EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "dags_examples"
