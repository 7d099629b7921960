"""The Airflows the tests start build their in-process execution API once per process
(tests/airflow_site/sitecustomize.py on 3.0-3.2; 3.3's own): the matrix lane's DAG runs
on 3.0-3.2 cost a quarter of what they did, and would quietly cost it again if Airflow
moved the function this wraps."""

from __future__ import annotations

import subprocess
import sys

import pytest

from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS

PROBE = (
    "from airflow.sdk.execution_time import supervisor\n"
    "print('cached:', hasattr(supervisor.in_process_api_server, 'cache_info'))\n"
)


@pytest.mark.skipif(not AIRFLOW_V_3_0_PLUS, reason="Airflow 2.x has no in-process API")
def test_an_airflow_the_tests_start_builds_its_execution_api_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cached: True" in done.stdout.splitlines(), done.stdout[-3000:]
