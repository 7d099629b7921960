"""What the API reference must cover: the provider's public modules and their public names.

Shared by ``docs/conf.py`` (one reference page per public module) and
``scripts/check_docs.py`` (every public class and function has an entry). Public: no path
component starts with ``_``; a module's names are its ``__all__`` when it has one, else the
classes and functions it defines whose names do not start with ``_`` (with ``__all__``, those
of them it lists). A name is documented once, where it is defined: a package that re-exports
it (``airflow_provider_aihc.watch.JobWatch``) does not repeat it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

PACKAGE = "airflow_provider_aihc"


def public_modules() -> list[str]:
    """The public modules of the package, the package itself first."""
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    for info in pkgutil.walk_packages(package.__path__, f"{PACKAGE}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


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
