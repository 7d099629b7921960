"""A local AIHC (百舸) server for DAGs on a laptop and in CI.

Kept as moto keeps its backends: ``state/`` holds the domain (jobs, pods, pools, queues,
logs, time) with no wire shapes; ``dialects/`` parses each API generation's requests into
calls on the state and renders its answers: the v1 REST paths (``dialects/v1``; what the
``aihc`` CLI sends) and the v2 actions (``dialects/v2``; what bce-python-sdk's ``AihcClient``
sends); ``server.py`` is the aiohttp server, ``http/`` the app that routes a request to a
dialect, checks signatures and serves the control API; ``steering/`` (faults, scripts, the
request log) sits beside the state; ``backend.py`` joins state and steering for tests;
``connection.py`` writes the Airflow connection to an emulator; ``client.py`` is a signed
test client.

``python -m airflow_provider_aihc.emulator --port 8080`` (or ``aihc-emulator``) runs it
standalone; :class:`~.server.EmulatorServer` runs it in-process for tests (its
``connection(**extra)`` is the Airflow connection that points at it); the
``aihc_emulator`` pytest fixture (``pytest_plugin``) does that and points ``aihc_default``
at it.

Importing this package is cheap: the server and its state load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import Backend
    from .server import EmulatorServer
    from .state.jobs import Progression

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

_LAZY = {"EmulatorServer": "server", "Backend": "backend", "Progression": "state.jobs"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
