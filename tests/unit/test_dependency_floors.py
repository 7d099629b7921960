"""The version floors of pyproject.toml exclude the advisories that reach the package, and
every committed constraints file (``constraints/*.txt``) satisfies every floor."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = sorted((ROOT / "constraints").glob("*.txt"))
#: The lowest version each floor may name: the first release past its advisories.
SECURITY_FLOORS = {
    "aiohttp": "3.14.4",  # CVE-2026-128131 (client: concatenated gzip members)
    "requests": "2.33.0",  # CVE-2024-47081 (.netrc leak), CVE-2026-25645 (temp path)
    "jinja2": "3.1.6",  # CVE-2025-27516 (sandbox escape)
    "urllib3": "2.7.0",  # CVE-2025-66471, CVE-2025-66418, CVE-2026-21441, CVE-2026-44432
    # The CA bundle the provider hands to TLS (hooks/_sessions.py): without the distrusted
    # TrustCor (CVE-2022-23491), e-Tugra (CVE-2023-37920) and GLOBALTRUST (CVE-2024-39689) roots.
    "certifi": "2024.7.4",
}


def _requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = (Requirement(line) for line in project["dependencies"])
    return {canonicalize_name(req.name): req for req in found}


def _pins(path: Path) -> dict[str, Version]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line and not line.startswith("-"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name.split("[")[0].strip())] = Version(version.split(";")[0])
    return pins


@pytest.mark.parametrize(("name", "lowest"), SECURITY_FLOORS.items())
def test_the_floor_excludes_the_advisories(name: str, lowest: str) -> None:
    requirement = _requirements()[name]
    floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    assert floors, f"{name} has no >= floor"
    assert min(floors) >= Version(lowest), f"{name}>={min(floors)} admits advisories < {lowest}"
    assert Version(lowest) in requirement.specifier or min(floors) > Version(lowest)


def test_there_are_constraints_to_check() -> None:
    assert len(CONSTRAINTS) >= 2


@pytest.mark.parametrize("path", CONSTRAINTS, ids=[path.name for path in CONSTRAINTS])
def test_every_constraints_file_satisfies_every_floor(path: Path) -> None:
    pins = _pins(path)
    problems = [
        f"{name}=={pins[name]} does not satisfy {requirement}"
        for name, requirement in _requirements().items()
        if name in pins and pins[name] not in requirement.specifier
    ]
    assert not problems, f"{path.name}: " + "; ".join(problems)
    if path.name.startswith("airflow-"):  # a whole environment (docs.txt only adds to one)
        for name in SECURITY_FLOORS:
            assert name in pins, f"{path.name} pins no {name}"
