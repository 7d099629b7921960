"""A local AIHC (百舸) server for DAGs on a laptop and in CI.

It speaks both API generations from one backend: the v1 REST paths (``v1.py``; what the
``aihc`` CLI sends) and the v2 actions (``v2.py``; what bce-python-sdk's ``AihcClient``
sends), over aiohttp's HTTP server (``server.py``).

``python -m airflow_provider_aihc.emulator --port 8080`` (or ``aihc-emulator``) runs it
standalone; :class:`EmulatorServer` runs it in-process for tests; the ``aihc_emulator``
pytest fixture (``pytest_plugin``) does that and points ``aihc_default`` at it.

Importing this package is cheap: the server and its state load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import Backend
    from .jobs import Progression
    from .server import EmulatorServer

__all__ = [
    "DEFAULT_ACCESS_KEY_ID",
    "DEFAULT_RESOURCE_POOL_ID",
    "DEFAULT_SECRET_ACCESS_KEY",
    "Backend",
    "EmulatorServer",
    "Progression",
]

#: The access key id the emulator accepts unless told otherwise.
DEFAULT_ACCESS_KEY_ID = "aihc-emulator-ak"
#: Its secret access key (a public, fake value: the emulator guards nothing).
DEFAULT_SECRET_ACCESS_KEY = "aihc-emulator-sk"
#: The self-managed pool every emulator has.
DEFAULT_RESOURCE_POOL_ID = "cce-emulator0"

_LAZY = {"EmulatorServer": "server", "Backend": "backend", "Progression": "jobs"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
