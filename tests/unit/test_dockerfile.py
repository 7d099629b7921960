"""The Dockerfile's install is what the wheel check installs (``scripts/check_wheel.py``,
run by ``make release-check``): its build is checked without a container runtime."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from check_wheel import DOCKERFILE, dockerfile_install  # noqa: E402


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    (tmp_path / "airflow_provider_aihc-0.1.0-py3-none-any.whl").touch()
    return tmp_path


def test_the_image_is_the_official_airflow_image_of_the_pinned_versions() -> None:
    text = DOCKERFILE.read_text()
    assert "FROM apache/airflow:${AIRFLOW_VERSION}-python${PYTHON_VERSION}" in text
    airflow = re.search(r"ARG AIRFLOW_VERSION=(\S+)", text)
    python = re.search(r"ARG PYTHON_VERSION=(\S+)", text)
    assert airflow
    assert python
    default = ROOT / "constraints" / f"airflow-{airflow[1]}-py{python[1]}.txt"
    assert default.is_file(), default


@pytest.mark.parametrize(
    "combination",
    sorted(p.stem.removeprefix("airflow-") for p in (ROOT / "constraints").glob("airflow-*.txt")),
)
def test_the_install_line_is_the_wheel_with_airflow_and_its_constraints(
    combination: str, dist: Path
) -> None:
    version, python = combination.split("-py")
    args = dockerfile_install(
        DOCKERFILE,
        {"AIRFLOW_VERSION": version, "PYTHON_VERSION": python},
        {"dist": dist, "constraints": ROOT / "constraints"},
    )
    assert args == [
        "-c",
        str(ROOT / "constraints" / f"airflow-{combination}.txt"),
        f"apache-airflow=={version}",
        str(dist / "airflow_provider_aihc-0.1.0-py3-none-any.whl"),
    ]


def test_no_wheel_built_is_said(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="nothing in"):
        dockerfile_install(DOCKERFILE, {}, {"dist": tmp_path, "constraints": ROOT / "constraints"})
