"""The public API is the written list and nothing else (docs/architecture.md, "Public and
internal"): ``PUBLIC_MODULES`` in ``scripts/docs_api.py`` names real modules, the API
reference presents exactly them, and what a user reads (the docs' code and references, the
README, the example DAGs) points only into them."""

from __future__ import annotations

import ast
import importlib
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from docs_api import PACKAGE, PUBLIC_MODULES, all_modules, is_public, public_modules  # noqa: E402

#: A Sphinx cross-reference in the docs' Markdown: {class}`~airflow_provider_aihc.x.Y`.
ROLE = re.compile(r"\{(?:mod|class|func|meth|attr|data|exc|obj)\}`~?(airflow_provider_aihc[\w.]*)`")
#: Python imports in the docs' code blocks and the README: ``from`` a module, with its first
#: name (which may be a module itself), or ``import`` a module.
IMPORT = re.compile(
    r"^\s*(?:from (airflow_provider_aihc[\w.]*) import \(?\s*(\w+)"
    r"|import (airflow_provider_aihc[\w.]*))",
    re.M,
)
#: The one internal import an example DAG makes, and why: the Asset-or-time schedule differs
#: between Airflow 2.11 (datasets) and 3.x, and the example runs on both.
EXAMPLE_EXCEPTIONS = {("aihc_scheduled_retraining.py", f"{PACKAGE}.version_compat")}


def _imported(text: str) -> list[str]:
    """What the Python imports in ``text`` import: ``from a.b import c`` is ``a.b.c``, the
    module ``_module_of`` reduces it to."""
    return [f"{module}.{name}" if module else plain for module, name, plain in IMPORT.findall(text)]


def _module_of(dotted: str) -> str:
    """The longest prefix of ``dotted`` that is a module of the package."""
    modules = set(all_modules())
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    raise AssertionError(f"{dotted} names no module of the package")


def test_the_public_modules_are_real_modules_and_the_reference_covers_exactly_them() -> None:
    assert set(PUBLIC_MODULES) <= set(all_modules())
    for name in PUBLIC_MODULES:
        importlib.import_module(name)
    assert public_modules() == sorted(PUBLIC_MODULES)  # one page each (docs/conf.py)
    internal = [m for m in all_modules() if not is_public(m)]
    assert internal
    assert not set(internal) & set(public_modules())


def test_the_reference_index_names_every_public_module_and_no_internal_one() -> None:
    index = (ROOT / "docs/api/index.md").read_text()
    named = {_module_of(target) for target in ROLE.findall(index)}
    assert named == set(PUBLIC_MODULES)


@pytest.mark.parametrize(
    "doc", sorted(ROOT.glob("docs/**/*.md")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_the_docs_refer_only_to_public_modules(doc: Path) -> None:
    text = doc.read_text()
    refs = ROLE.findall(text) + _imported(text)
    assert [r for r in refs if not is_public(_module_of(r))] == []


def test_the_readme_and_the_example_dags_import_only_public_modules() -> None:
    readme = (ROOT / "README.md").read_text()
    found = [("README.md", what) for what in _imported(readme)]
    for example in sorted((ROOT / "dags_examples").glob("*.py")):
        for node in ast.walk(ast.parse(example.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                found += [(example.name, f"{node.module}.{a.name}") for a in node.names]
            elif isinstance(node, ast.Import):
                found += [(example.name, a.name) for a in node.names if a.name.startswith(PACKAGE)]
    assert found, "nothing checked"
    internal = {
        (where, _module_of(what)) for where, what in found if not is_public(_module_of(what))
    }
    assert internal == EXAMPLE_EXCEPTIONS


#: The team's reading notes live outside the repository; code and docs cite Baidu's sources
#: or the repository's own pages (docs/fidelity.md, docs/service_lifecycle.md) instead.
#: Spelled as a pattern so that this file does not name them itself.
OUTSIDE_NOTES = re.compile(r"aihc-(?:api|model-service-api|api-fidelity)(?:\.md)?\b|\.\./shared\b")
#: Folders that hold no tracked sources: venvs, caches, build output, Airflow's home.
UNTRACKED = {"build", "dist", "node_modules", "__pycache__", "_build"}


def _sources() -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in UNTRACKED]
        found += [Path(folder, f) for f in files if f.endswith((".py", ".md"))]
    return sorted(found)


def test_no_source_cites_notes_outside_the_repository() -> None:
    sources = _sources()
    assert ROOT / "README.md" in sources
    assert Path(__file__) in sources
    cited = [
        f"{path.relative_to(ROOT)}:{n}: {match.group(0)}"
        for path in sources
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in OUTSIDE_NOTES.finditer(line)
    ]
    assert cited == []
