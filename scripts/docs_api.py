"""What the API reference must cover: the provider's public modules and their public names.

Shared by ``docs/conf.py`` (one reference page per public module) and
``scripts/check_docs.py`` (every public class and function has an entry). Public is the
list :data:`PUBLIC_MODULES` and nothing else: the names a DAG author, a DAG test or a
deployment uses (``docs/api/index.md`` presents them). Every other module is internal,
whether or not its name starts with ``_``: it has no reference page, and it may change in
any release (``docs/architecture.md``, "Public and internal";
``tests/unit/test_public_api.py`` holds the list against the package and the docs).

A module's names are its ``__all__`` when it has one, else the classes and functions it
defines whose names do not start with ``_`` (with ``__all__``, those of them it lists). A
name is documented once, where it is defined: a package that re-exports it
(``airflow_provider_aihc.emulator.EmulatorServer``) does not repeat it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

PACKAGE = "airflow_provider_aihc"

#: The public modules: semantic versioning covers their names (``CHANGELOG.md``).
PUBLIC_MODULES = (
    PACKAGE,
    # What a DAG uses: operators, sensor, trigger, TaskFlow decorators, hook, link, errors.
    f"{PACKAGE}.operators.aihc",
    f"{PACKAGE}.operators.model_registry",
    f"{PACKAGE}.operators.service",
    f"{PACKAGE}.operators.sweep",
    f"{PACKAGE}.sensors.aihc",
    f"{PACKAGE}.sensors.service",
    f"{PACKAGE}.triggers.aihc",
    f"{PACKAGE}.triggers.service",
    f"{PACKAGE}.decorators",
    f"{PACKAGE}.decorators.aihc",
    f"{PACKAGE}.decorators.aihc_python",
    f"{PACKAGE}.hooks.aihc",
    f"{PACKAGE}.links.aihc",
    f"{PACKAGE}.exceptions",
    # What a DAG test uses: the emulator, its faults and job scripts, the pytest fixture.
    f"{PACKAGE}.emulator",
    f"{PACKAGE}.emulator.server",
    f"{PACKAGE}.emulator.steering.scenarios",
    f"{PACKAGE}.emulator.pytest_plugin",
    f"{PACKAGE}.emulator.dag_test",
)


def all_modules() -> list[str]:
    """Every module of the package, the package itself included."""
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    names += [info.name for info in pkgutil.walk_packages(package.__path__, f"{PACKAGE}.")]
    return sorted(names)


def public_modules() -> list[str]:
    """The public modules of the package (:data:`PUBLIC_MODULES`), the package first."""
    return sorted(PUBLIC_MODULES)


def is_public(module_name: str) -> bool:
    """Whether ``module_name`` is one of the public modules."""
    return module_name in PUBLIC_MODULES


def public_names(module_name: str) -> list[str]:
    """The public classes and functions of one module, as dotted paths."""
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        if exported is not None and name not in exported:
            continue
        if getattr(value, "__module__", None) != module_name:
            continue
        found.append(f"{module_name}.{name}")
    return found
