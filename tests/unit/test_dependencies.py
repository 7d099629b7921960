"""The installed distribution declares exactly what the package imports.

Both lists are read from what is installed, not from pyproject.toml: the dependencies from
the distribution's metadata (``Requires-Dist`` without an ``extra`` marker), the imports from
the package's own modules (every ``import`` statement, at any depth, parsed with ``ast``).
A module is owned by the distribution whose file list holds the file it is loaded from, so
``airflow.providers.common.compat`` counts for its provider, not for Airflow.

Three kinds of import need no runtime dependency: one that only type checkers run (under
``if TYPE_CHECKING:``); one inside a module that another program loads through its own
entry point (the ``pytest11`` plugin runs inside pytest); and one inside a method that only
a host program calls, from the host's own environment (:data:`HOST_IMPORTS`). An import
guarded by ``except ImportError`` must be declared in an extra, and so must every import of
a module that only an optional integration loads (:data:`EXTRA_MODULES`).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import importlib.util
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

DIST = "airflow-provider-aihc"
PACKAGE = "airflow_provider_aihc"
#: Entry-point groups whose modules run inside the program that defines the group.
HOSTED_GROUPS = {"pytest11": "pytest"}
#: Top-level modules imported only inside methods a host calls, and who the host is:
#: ``AIHCHook.get_connection_form_widgets`` runs in Airflow 2's FAB webserver only.
HOST_IMPORTS = {
    "flask_appbuilder": "Airflow 2 webserver",
    "flask_babel": "Airflow 2 webserver",
    "wtforms": "Airflow 2 webserver",
}


#: Module prefix -> the extra that must declare what its modules import: the OpenLineage
#: provider is what calls into ``airflow_provider_aihc.lineage``.
EXTRA_MODULES = {f"{PACKAGE}.lineage.": "openlineage"}


def _requirements(dist: str = DIST) -> list[Requirement]:
    return [Requirement(line) for line in metadata.requires(dist) or ()]


def _is_extra(req: Requirement) -> bool:
    return req.marker is not None and "extra" in str(req.marker)


def declared_runtime() -> set[str]:
    return {canonicalize_name(req.name) for req in _requirements() if not _is_extra(req)}


def declared_extras(extra: str | None = None) -> set[str]:
    """What the extras declare: all of them, or the one named ``extra``."""
    return {
        canonicalize_name(req.name)
        for req in _requirements()
        if _is_extra(req) and (extra is None or req.marker.evaluate({"extra": extra}))  # type: ignore[union-attr]
    }


def allowed_extra(importer: str) -> str | None:
    return next((x for prefix, x in EXTRA_MODULES.items() if importer.startswith(prefix)), None)


def components(dist: str) -> set[str]:
    """The distributions ``dist`` is made of: what it requires at one exact version, released
    in lockstep with it (Airflow 3's ``apache-airflow`` is ``apache-airflow-core`` and
    ``apache-airflow-task-sdk``; Airflow 2's owns its modules itself)."""
    return {
        canonicalize_name(req.name)
        for req in _requirements(dist)
        if not _is_extra(req) and any(spec.operator == "==" for spec in req.specifier)
    }


def provided_by() -> dict[str, str]:
    """Each distribution a runtime dependency brings as itself or as one of its parts."""
    return {part: dist for dist in declared_runtime() for part in {dist, *components(dist)}}


def package_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None
    assert spec.origin is not None
    return Path(spec.origin).parent


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _guards_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(
            isinstance(n, ast.Name) and n.id in {"ImportError", "ModuleNotFoundError"}
            for n in names
        ):
            return True
    return False


def imports_of(tree: ast.AST, optional: bool = False) -> Iterator[tuple[str, bool]]:
    """``(module, optional)`` for every absolute import, skipping ``TYPE_CHECKING`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from (item for child in node.orelse for item in imports_of(child, optional))
            continue
        if isinstance(node, ast.Import):
            yield from ((alias.name, optional) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, optional
        inner_optional = optional or (isinstance(node, ast.Try) and _guards_import_error(node))
        yield from imports_of(node, inner_optional)


def hosted_modules() -> dict[str, str]:
    """Module name -> the distribution of the program that loads it."""
    hosted = {}
    for group, host in HOSTED_GROUPS.items():
        for entry in metadata.distribution(DIST).entry_points.select(group=group):
            hosted[entry.value.split(":")[0]] = host
    return hosted


def package_imports() -> dict[str, set[tuple[str, bool]]]:
    """Every third-party import of the package: module -> {(importing module, optional)}."""
    root = package_dir()
    hosted = hosted_modules()
    found: dict[str, set[tuple[str, bool]]] = {}
    for path in sorted(root.rglob("*.py")):
        importer = ".".join((PACKAGE, *path.relative_to(root).with_suffix("").parts))
        if importer in hosted:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for module, optional in imports_of(tree):
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or top in {PACKAGE, "__future__", *HOST_IMPORTS}:
                continue
            found.setdefault(module, set()).add((importer, optional))
    return found


@cache
def _files_by_dist() -> dict[str, set[Path]]:
    owners: dict[str, set[Path]] = {}
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        owners[name] = {Path(dist.locate_file(f)).resolve() for f in dist.files or ()}
    return owners


def owner(module: str) -> str:
    """The distribution that installs ``module`` (walking up to a parent that is installed)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        try:
            spec = importlib.util.find_spec(".".join(parts[:end]))
        except (ImportError, ValueError):
            continue
        if spec is None or spec.origin in (None, "namespace"):
            continue
        origin = Path(spec.origin).resolve()
        for dist, files in _files_by_dist().items():
            if origin in files:
                return dist
    candidates = metadata.packages_distributions().get(parts[0], [])
    assert candidates, f"{module} is imported but no installed distribution provides it"
    return canonicalize_name(candidates[0])


def test_every_import_is_declared() -> None:
    runtime, extras = provided_by(), declared_extras()
    problems = []
    for module, importers in sorted(package_imports().items()):
        dist = owner(module)
        where = ", ".join(sorted(name for name, _ in importers))
        optional = all(opt for _, opt in importers)
        in_extra = all(
            dist in declared_extras(allowed_extra(name)) for name, _ in importers
        ) and all(allowed_extra(name) for name, _ in importers)
        if dist not in runtime and not (optional and dist in extras) and not in_extra:
            problems.append(f"{module} ({dist}) imported by {where}")
    assert not problems, "imported but not declared:\n" + "\n".join(problems)


#: Declared for a version floor only, never imported (pyproject.toml says why).
FLOOR_ONLY = {"urllib3": "requests' transport; a floor past its decompression advisories"}


def test_every_declared_dependency_is_imported() -> None:
    runtime = provided_by()
    owners = {owner(module) for module in package_imports()}
    used = owners | {runtime[dist] for dist in owners if dist in runtime}
    unused = sorted(declared_runtime() - used - set(FLOOR_ONLY))
    assert not unused, f"declared in dependencies but never imported by the package: {unused}"


def test_the_checks_see_what_they_check() -> None:
    """The scan finds the imports the package certainly has, so an empty scan cannot pass."""
    imports = package_imports()
    assert owner("pydantic") == "pydantic"
    assert "pydantic" in imports
    assert "requests" in imports
    assert "apache-airflow" in declared_runtime()
    assert "pytest" not in {owner(module) for module in imports}  # the plugin is hosted
