"""``python -m airflow_provider_aihc.emulator`` (also the ``aihc-emulator`` script).

Prints one line with the URL it listens on, then the Airflow connection that points at it
in JSON and URI form (the secret shown only when it is the documented default or one made
at start, else ``<SK>``), then serves until SIGTERM or SIGINT.  It
binds ``127.0.0.1`` unless ``--host`` says otherwise.  Jobs move with time by default
(``--seconds-per-status``, ``--running-seconds``); ``--polls-per-status`` makes them move
on polls instead.  The line also gives the control token that ``POST /_emulator/...``
requests must send (``X-AIHC-Emulator-Token``): ``AIHC_EMULATOR_CONTROL_TOKEN`` when set,
else a random one.  ``--loopback-host-only`` refuses every API request whose ``Host`` is
not a loopback name, not only control requests.

The secret access key comes from ``--secret-access-key-file`` (a file only its owner may
read), else ``AIHC_EMULATOR_SECRET_ACCESS_KEY``, else the documented default.
``--secret-access-key`` is refused with ``--execute``: a command line is readable by every
user of the machine (``/proc/<pid>/cmdline``, ``ps``).

``--execute`` runs each replica's command as a local process (``state/execute.py``): it runs
whatever it is sent, so it refuses a non-loopback ``--host`` and a secret shorter than 16
characters; without a secret of one's own it makes one at start (printed in the
connection, on its own stdout), unless ``--allow-default-credentials`` accepts the
documented default.  It implies ``--loopback-host-only``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import signal
import stat
import sys
from collections.abc import Sequence
from dataclasses import replace

from . import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY
from .connection import CONN_ENV
from .http.control import TOKEN_ENV
from .server import EmulatorServer, is_loopback
from .state.execute import ExecuteSettings
from .state.jobs import Progression

#: What the printed connection shows instead of a secret access key of the user's own.
SECRET_PLACEHOLDER = "<SK>"
#: The environment variable the secret access key is read from.
SECRET_ENV = "AIHC_EMULATOR_SECRET_ACCESS_KEY"


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="aihc-emulator", description="A local AIHC (百舸) API server for tests and demos."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port; 0 picks a free one")
    parser.add_argument("--access-key-id", default=DEFAULT_ACCESS_KEY_ID)
    secret = parser.add_mutually_exclusive_group()
    secret.add_argument(
        "--secret-access-key-file",
        metavar="PATH",
        help=f"read the secret key from this file (mode 0600); default: ${SECRET_ENV}, "
        "else the documented emulator secret",
    )
    secret.add_argument(
        "--secret-access-key",
        help="the secret key on the command line, which every local user can read "
        "(refused with --execute)",
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
    execute = parser.add_argument_group("running jobs for real (runs the commands it is sent)")
    execute.add_argument(
        "--execute", action="store_true", help="run each replica's command as a local process"
    )
    execute.add_argument(
        "--mount",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="the local directory of datasource NAME (default: one per job)",
    )
    execute.add_argument(
        "--execute-timeout", type=float, default=None, metavar="SECONDS",
        help="stop (and fail) a job that runs longer",
    )  # fmt: skip
    execute.add_argument(
        "--allow-default-credentials",
        action="store_true",
        help="execute even with the documented default secret access key",
    )
    return parser


def execute_settings(args: argparse.Namespace) -> ExecuteSettings | None:
    """The settings of ``--execute`` (``None`` without it).

    :raises SystemExit: a ``--mount`` that is not ``NAME=DIR``.
    """
    if not args.execute:
        return None
    mounts = {}
    for item in args.mount:
        name, sep, folder = item.partition("=")
        if not (sep and name and folder):
            raise SystemExit(f"aihc-emulator: --mount must be NAME=DIR, got {item!r}")
        mounts[name] = folder
    return ExecuteSettings(mounts=mounts, timeout=args.execute_timeout)


def secret_from_args(args: argparse.Namespace) -> tuple[str, bool]:
    """The secret access key and whether it may be printed (the documented default, or one
    made here because ``--execute`` got none).

    :raises ValueError: ``--secret-access-key`` with ``--execute``; an unreadable, empty or
        group/other-readable ``--secret-access-key-file``.
    """
    if args.secret_access_key is not None:
        if args.execute:
            raise ValueError(
                "--execute refuses --secret-access-key: every user of this "
                "machine can read a command line (/proc/<pid>/cmdline); give the secret in "
                f"{SECRET_ENV} or --secret-access-key-file"
            )
        return args.secret_access_key, args.secret_access_key == DEFAULT_SECRET_ACCESS_KEY
    if args.secret_access_key_file is not None:
        return _read_secret_file(args.secret_access_key_file), False
    if os.environ.get(SECRET_ENV):
        return os.environ[SECRET_ENV], False
    if args.execute and not args.allow_default_credentials:
        return secrets.token_urlsafe(24), True
    return DEFAULT_SECRET_ACCESS_KEY, True


def _read_secret_file(path: str) -> str:
    """The first line of ``path``, a file that only its owner may read."""
    try:
        with open(path, encoding="utf-8") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            text = handle.readline().rstrip("\r\n")
    except OSError as exc:
        raise ValueError(f"cannot read --secret-access-key-file: {exc.strerror}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ValueError(
            f"--secret-access-key-file {path} may be read by other users "
            f"(mode {stat.S_IMODE(mode):04o}): chmod 600 it"
        )
    if not text:
        raise ValueError(f"--secret-access-key-file {path} is empty")
    return text


def progression_from_args(args: argparse.Namespace) -> Progression:
    """Per poll when ``--polls-per-status`` is given, else by time."""
    if args.polls_per_status is not None:
        return Progression.per_poll(args.polls_per_status, args.running_polls)
    return Progression.by_time(args.seconds_per_status, args.running_seconds)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the emulator until SIGTERM/SIGINT; returns the exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")
    settings = execute_settings(args)
    try:
        secret, shown = secret_from_args(args)
        server = EmulatorServer(
            host=args.host,
            port=args.port,
            access_key_id=args.access_key_id,
            secret_access_key=secret,
            progression=progression_from_args(args),
            execute=settings or False,
            allow_default_credentials=args.allow_default_credentials,
            control_token=os.environ.get(TOKEN_ENV) or None,
            loopback_host_only=args.loopback_host_only,
        )
    except ValueError as exc:
        print(f"aihc-emulator: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(server, shown))
    except OSError as exc:
        print(f"aihc-emulator: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


async def _serve(server: EmulatorServer, show_secret: bool) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.serve(stop, on_ready=lambda url: _announce(server, url, show_secret))


def _announce(server: EmulatorServer, url: str, show_secret: bool) -> None:
    scope = "localhost only" if is_loopback(server.host) else "ALL interfaces of this address"
    print(
        f"AIHC emulator listening on {url} (bound to {server.host}: {scope}; "
        f"access key id {server.access_key_id}; control token {server.control_token})",
        flush=True,
    )
    connection = server.connection()
    if not show_secret:  # a secret of the user's: never printed
        connection = replace(connection, password=SECRET_PLACEHOLDER)
    print(f"AIHC emulator connection (JSON): {CONN_ENV}='{connection.json}'", flush=True)
    print(f"AIHC emulator connection (URI): {CONN_ENV}='{connection.uri}'", flush=True)
    if server.backend.executor is not None:
        print(
            "AIHC emulator: --execute is on: it RUNS the commands of the jobs it is sent",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
