"""AIHCJobLink: the URL for Baidu and for the emulator, stored in XCom, read back."""

from __future__ import annotations

import subprocess
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from airflow_provider_aihc.links import aihc as link_module
from airflow_provider_aihc.links.aihc import AIHCJobLink, job_url
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor


@pytest.mark.parametrize(
    "base_url",
    [
        "https://aihc.bj.baidubce.com",
        "https://aihc.gz.baidubce.com:443",
        "https://AIHC.BaiduBCE.com",
    ],
)
def test_baidu_endpoints_link_to_the_console(base_url: str) -> None:
    url = job_url(base_url, "pytorchjob-265e535d", "cce-xyz 1")
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == (
        "https://console.bce.baidu.com/aihc/jobs/detail"
    )
    assert parse_qs(parts.query) == {
        "jobId": ["pytorchjob-265e535d"],
        "resourcePoolId": ["cce-xyz 1"],
    }


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/_emulator/jobs/pytorchjob-1"),
        ("http://localhost:9000/", "http://localhost:9000/_emulator/jobs/pytorchjob-1"),
        (
            "https://baidubce.com.evil.example",
            "https://baidubce.com.evil.example/_emulator/jobs/pytorchjob-1",
        ),
    ],
)
def test_other_endpoints_link_to_the_emulator_page(base_url: str, expected: str) -> None:
    assert job_url(base_url, "pytorchjob-1", "cce-emulator0") == expected


def test_ids_are_encoded_in_the_emulator_url() -> None:
    assert job_url("http://e:1", "../x?y", "p") == "http://e:1/_emulator/jobs/..%2Fx%3Fy"


class FakeTaskInstance:
    def __init__(self, fail: bool = False) -> None:
        self.pushed: dict[str, Any] = {}
        self.fail = fail

    def xcom_push(self, key: str, value: Any) -> None:
        if self.fail:
            raise RuntimeError("XCom backend down")
        self.pushed[key] = value


def test_persist_stores_the_url_under_the_links_xcom_key() -> None:
    ti = FakeTaskInstance()
    AIHCJobLink.persist({"ti": ti}, "http://127.0.0.1:1", "job-1", "pool")  # type: ignore[arg-type]
    assert ti.pushed == {AIHCJobLink().xcom_key: "http://127.0.0.1:1/_emulator/jobs/job-1"}


def test_a_failed_persist_only_costs_the_button(caplog: pytest.LogCaptureFixture) -> None:
    AIHCJobLink.persist({"ti": FakeTaskInstance(fail=True)}, "http://e:1", "job-1", "p")  # type: ignore[arg-type]
    assert "Could not store the AIHC job link" in caplog.text


def test_xcom_key_is_airflow_3s_default_for_the_class() -> None:
    """Airflow 3's API server reads ``_link_<class name>``; 2.x has no xcom_key at all."""
    assert AIHCJobLink().xcom_key == AIHCJobLink.XCOM_KEY == "_link_AIHCJobLink"


def test_get_link_reads_the_stored_url(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = {"_link_AIHCJobLink": "https://console.bce.baidu.com/aihc/jobs/detail?jobId=j"}
    asked: list[tuple[Any, str]] = []

    def get_xcom_value(ti_key: Any, key: str) -> Any:
        asked.append((ti_key, key))
        return stored.get(key)

    monkeypatch.setattr(link_module, "get_xcom_value", get_xcom_value)
    assert AIHCJobLink().get_link(None, ti_key="ti-key") == stored["_link_AIHCJobLink"]
    assert asked == [("ti-key", "_link_AIHCJobLink")]
    stored.clear()
    assert AIHCJobLink().get_link(None, ti_key="ti-key") == ""


def test_the_link_is_on_the_operator_and_the_sensor() -> None:
    for operator in (AIHCCreateJobOperator, AIHCJobSensor):
        assert [type(link) for link in operator.operator_extra_links] == [AIHCJobLink]
        assert operator.operator_extra_links[0].name == "AIHC Job"


def test_importing_the_link_loads_neither_the_hook_nor_the_models() -> None:
    code = (
        "import sys, airflow_provider_aihc.links.aihc\n"
        "heavy = [m for m in sys.modules if m.startswith(('airflow_provider_aihc.hooks',"
        " 'airflow_provider_aihc.models'))]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_link_survives_dag_serialization() -> None:
    """What the scheduler stores is what the UI (2.x webserver, 3.x API server) loads."""
    from datetime import datetime

    try:
        from airflow.sdk import DAG
        from airflow.serialization.serialized_objects import DagSerialization as serializer
    except ImportError:  # Airflow 2
        from airflow import DAG  # type: ignore[assignment,no-redef]
        from airflow.serialization.serialized_objects import (  # type: ignore[no-redef]
            SerializedDAG as serializer,
        )

    with DAG("linked", start_date=datetime(2024, 1, 1), schedule=None) as dag:
        create = AIHCCreateJobOperator(task_id="create", image="i", command="c")
        AIHCJobSensor(task_id="wait", job_id=create.output)
    loaded = serializer.from_dict(serializer.to_dict(dag))
    for task_id in ("create", "wait"):
        (link,) = loaded.get_task(task_id).operator_extra_links
        assert link.name == "AIHC Job"
        assert link.xcom_key == AIHCJobLink.XCOM_KEY
