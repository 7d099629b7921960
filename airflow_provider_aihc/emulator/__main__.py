"""``python -m airflow_provider_aihc.emulator`` (also the ``aihc-emulator`` script).

Prints one line with the URL it listens on, then serves until SIGTERM or SIGINT.  It
binds ``127.0.0.1`` unless ``--host`` says otherwise.  Jobs move with time by default
(``--seconds-per-status``, ``--running-seconds``); ``--polls-per-status`` makes them move
on polls instead.  The line also gives the control token that ``POST /_emulator/...``
requests must send (``X-AIHC-Emulator-Token``): ``AIHC_EMULATOR_CONTROL_TOKEN`` when set,
else a random one.  ``--loopback-host-only`` refuses every API request whose ``Host`` is
not a loopback name, not only control requests.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import signal
import sys
from collections.abc import Sequence

from . import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY
from .control import TOKEN_ENV
from .jobs import Progression
from .server import EmulatorServer


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="aihc-emulator", description="A local AIHC (百舸) API server for tests and demos."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port; 0 picks a free one")
    parser.add_argument("--access-key-id", default=DEFAULT_ACCESS_KEY_ID)
    parser.add_argument(
        "--secret-access-key",
        default=DEFAULT_SECRET_ACCESS_KEY,
        help="the secret key (default: the documented emulator secret)",
    )
    parser.add_argument("--seconds-per-status", type=float, default=3.0)
    parser.add_argument("--running-seconds", type=float, default=20.0)
    parser.add_argument(
        "--polls-per-status", type=int, default=None, help="move jobs on polls, not on time"
    )
    parser.add_argument("--running-polls", type=int, default=None)
    parser.add_argument(
        "--loopback-host-only",
        action="store_true",
        help="refuse every request whose Host is not 127.0.0.1, ::1 or localhost",
    )
    parser.add_argument("--log-level", default="WARNING")
    return parser


def progression_from_args(args: argparse.Namespace) -> Progression:
    """Per poll when ``--polls-per-status`` is given, else by time."""
    if args.polls_per_status is not None:
        return Progression.per_poll(args.polls_per_status, args.running_polls)
    return Progression.by_time(args.seconds_per_status, args.running_seconds)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the emulator until SIGTERM/SIGINT; returns the exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")
    server = EmulatorServer(
        host=args.host,
        port=args.port,
        access_key_id=args.access_key_id,
        secret_access_key=args.secret_access_key,
        progression=progression_from_args(args),
        control_token=os.environ.get(TOKEN_ENV) or None,
        loopback_host_only=args.loopback_host_only,
    )
    try:
        asyncio.run(_serve(server))
    except OSError as exc:
        print(f"aihc-emulator: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


async def _serve(server: EmulatorServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.serve(stop, on_ready=lambda url: _announce(server, url))


def _announce(server: EmulatorServer, url: str) -> None:
    scope = "localhost only" if _is_loopback(server.host) else "ALL interfaces of this address"
    print(
        f"AIHC emulator listening on {url} (bound to {server.host}: {scope}; "
        f"access key id {server.access_key_id}; control token {server.control_token})",
        flush=True,
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


if __name__ == "__main__":
    sys.exit(main())
