"""What each part of the package may import: the map of ``docs/architecture.md``, held.

Each top-level folder (or module) of ``airflow_provider_aihc`` may import only the parts
listed for it here. The two rules that matter most: the signer is stdlib only (it is
checked against Baidu's vectors alone), and the emulator never imports the provider's
client (hooks, models, operators): it follows Baidu's definitions, so a mistake in the
client cannot be agreed with by the emulator. A new dependency between parts is a change
of this table and of docs/architecture.md, made on purpose.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "airflow_provider_aihc"

#: Part → the other parts it may import (its own modules always).
ALLOWED: dict[str, set[str]] = {
    "auth": set(),
    "exceptions": {"version_compat"},
    "version_compat": set(),
    "get_provider_info": set(),
    "job_parameters": set(),
    "outputs": {"exceptions"},
    "models": {"exceptions", "job_parameters"},
    "links": {"version_compat"},
    "hooks": {
        "auth",
        "exceptions",
        "get_provider_info",
        "job_parameters",
        "models",
        "version_compat",
    },
    "watch": {"exceptions", "hooks", "models", "outputs", "version_compat"},
    "triggers": {"exceptions", "hooks", "version_compat", "watch"},
    "lineage": {"exceptions", "hooks", "links", "models", "watch"},
    "operators": {
        *("exceptions", "hooks", "job_parameters", "lineage", "links", "models", "outputs"),
        *("triggers", "version_compat", "watch"),
    },
    "sensors": {
        *("exceptions", "hooks", "lineage", "links", "operators", "outputs", "triggers"),
        *("version_compat", "watch"),
    },
    "decorators": {"exceptions", "operators", "version_compat"},
    "emulator": {"auth"},
}


def part_of(path: Path) -> str:
    """The top-level folder or module a file belongs to (``hooks``, ``outputs``, ...)."""
    first = path.relative_to(PACKAGE).parts[0]
    return first.removesuffix(".py")


def imported_parts(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, part)`` for each import of another part of the package in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "airflow_provider_aihc":  # a part, or the root's __version__
                names = [f"airflow_provider_aihc.{a.name}" for a in node.names if a.name in ALLOWED]
        for name in names:
            if name.startswith("airflow_provider_aihc."):
                yield node.lineno, name.split(".")[1]


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if part_of(p) != "__init__")


def test_every_part_of_the_package_is_in_the_table() -> None:
    assert {part_of(path) for path in SOURCES} == set(ALLOWED)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_imports_only_the_parts_its_part_may(path: Path) -> None:
    part = part_of(path)
    wrong = [
        f"line {line}: {other}"
        for line, other in imported_parts(path)
        if other != part and other not in ALLOWED[part]
    ]
    assert wrong == [], f"{part} may import only {sorted(ALLOWED[part])}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "auth").rglob("*.py")), ids=lambda p: p.name)
def test_the_signer_imports_the_standard_library_only(path: Path) -> None:
    outside = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            outside |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            outside.add(node.module.split(".")[0])
    outside -= set(sys.stdlib_module_names) | {"__future__", "airflow_provider_aihc"}
    assert outside == set()


def test_nothing_outside_the_emulator_imports_it() -> None:
    users = [
        str(path.relative_to(PACKAGE))
        for path in SOURCES
        if part_of(path) != "emulator"
        and any(other == "emulator" for _, other in imported_parts(path))
    ]
    assert users == []
