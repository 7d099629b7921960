"""The orphan sweep of ``dags_examples/aihc_orphan_sweep.py``, as Airflow users run it,
beside the storm's DAGs: every job a killed task left running is stopped within its bound."""

from __future__ import annotations

import runpy
from pathlib import Path

# The example file itself (DAG id ``aihc_orphan_sweep``), its interval from
# AIHC_ORPHAN_SWEEP_MINUTES (``deploy/chaos.py`` sets it).
_EXAMPLE = Path(__file__).resolve().parents[2] / "dags_examples" / "aihc_orphan_sweep.py"
globals().update({k: v for k, v in runpy.run_path(str(_EXAMPLE)).items() if not k.startswith("__")})
