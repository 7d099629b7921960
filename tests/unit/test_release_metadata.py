"""The version is kept in three places that must agree; the license ships with the package.

``make release-check`` checks the built artifacts; these are the source-tree halves of
those checks, cheap enough for every ``make test``.
"""

from __future__ import annotations

import re
from pathlib import Path

from airflow_provider_aihc import __version__
from airflow_provider_aihc.get_provider_info import get_provider_info

ROOT = Path(__file__).resolve().parents[2]


def test_the_provider_info_lists_this_version_first():
    versions = get_provider_info()["versions"]

    assert versions[0] == __version__
    assert len(set(versions)) == len(versions)
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in versions), versions


def test_the_changelog_has_a_section_per_version_newest_first():
    sections = re.findall(r"^## (\d+\.\d+\.\d+)\b", (ROOT / "CHANGELOG.md").read_text(), re.M)

    assert sections == get_provider_info()["versions"]


def test_the_license_is_apache_2_and_the_package_is_typed():
    text = (ROOT / "LICENSE").read_text()

    assert "Apache License" in text
    assert "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert (ROOT / "airflow_provider_aihc" / "py.typed").exists()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'license = "Apache-2.0"' in pyproject
    assert 'license-files = ["LICENSE"]' in pyproject
