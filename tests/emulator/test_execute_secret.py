"""The executing emulator's secret: never on its command line (S4-4), never short, and held
to the same rules however the executor is given (S4-8).

The command-line tests run the emulator as a user does, a real process
(``python -m airflow_provider_aihc.emulator``), and sign requests to it over HTTP.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from aihc_emulator_client import Client

from airflow_provider_aihc.emulator import DEFAULT_SECRET_ACCESS_KEY, EmulatorServer
from airflow_provider_aihc.emulator.__main__ import SECRET_ENV, SECRET_PLACEHOLDER
from airflow_provider_aihc.emulator.backend import Backend
from airflow_provider_aihc.emulator.state.execute import ExecuteSettings

EMULATOR = [sys.executable, "-m", "airflow_provider_aihc.emulator", "--port", "0"]
POOLS = "/api/v1/resourcepools"
#: The time a refusing emulator gets to exit (one that serves instead fails the test).
REFUSAL_SECONDS = 60


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != SECRET_ENV}
    env.update(extra)
    return env


def _refusal(*args: str, env: Mapping[str, str] | None = None) -> str:
    """The emulator's stderr when it refuses to start with ``args`` (exit status 2)."""
    try:
        done = subprocess.run(
            [*EMULATOR, *args],
            capture_output=True,
            text=True,
            timeout=REFUSAL_SECONDS,
            check=False,
            env=dict(env or _env()),
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the emulator served with {args} instead of refusing")
    assert done.returncode == 2, done.stderr
    return done.stderr


@pytest.fixture
def standalone() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """An executing emulator whose secret is in its environment: the process and secret."""
    secret = secrets.token_urlsafe(24)
    process = subprocess.Popen(
        [*EMULATOR, "--execute"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(**{SECRET_ENV: secret}),
    )
    try:
        yield process, secret
    finally:
        process.terminate()
        process.wait(timeout=30)


def _url_and_password(process: subprocess.Popen[str]) -> tuple[str, str]:
    assert process.stdout is not None
    first, as_json = process.stdout.readline(), process.stdout.readline()
    assert "listening on " in first, first
    password = json.loads(as_json.split("='", 1)[1].rstrip().removesuffix("'"))["password"]
    return first.split("listening on ")[1].split()[0], str(password)


def test_execute_takes_its_secret_from_the_environment_never_from_the_command_line(
    standalone: tuple[subprocess.Popen[str], str],
) -> None:
    process, secret = standalone
    url, printed = _url_and_password(process)
    assert printed == SECRET_PLACEHOLDER
    cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes()
    assert secret.encode() not in cmdline
    assert Client(url, secret_access_key=secret).request("GET", POOLS).status_code == 200
    wrong = Client(url, secret_access_key=DEFAULT_SECRET_ACCESS_KEY).request("GET", POOLS)
    assert wrong.status_code == 403


def test_execute_refuses_a_secret_on_the_command_line() -> None:
    secret = secrets.token_urlsafe(24)
    stderr = _refusal("--execute", "--secret-access-key", secret)
    assert "/proc/<pid>/cmdline" in stderr
    assert SECRET_ENV in stderr
    assert secret not in stderr


def test_a_secret_file_others_may_read_is_refused_and_one_only_its_owner_reads_is_used(
    tmp_path: Path,
) -> None:
    secret = secrets.token_urlsafe(24)
    path = tmp_path / "sk"
    path.write_text(secret + "\n")
    path.chmod(0o644)
    stderr = _refusal("--execute", "--secret-access-key-file", str(path))
    assert "chmod 600" in stderr
    assert secret not in stderr
    path.chmod(0o600)
    process = subprocess.Popen(
        [*EMULATOR, "--execute", "--secret-access-key-file", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    try:
        url, _ = _url_and_password(process)
        assert Client(url, secret_access_key=secret).request("GET", POOLS).status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_execute_without_a_secret_makes_one_and_prints_it_only_on_its_own_stdout() -> None:
    process = subprocess.Popen(
        [*EMULATOR, "--execute"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=_env(),
    )  # fmt: skip
    try:
        url, made = _url_and_password(process)
        assert made not in (DEFAULT_SECRET_ACCESS_KEY, SECRET_PLACEHOLDER)
        assert len(made) >= 16
        assert made.encode() not in Path(f"/proc/{process.pid}/cmdline").read_bytes()
        assert Client(url, secret_access_key=made).request("GET", POOLS).status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize("secret", ["", "x", "fifteen-chars-x"])
def test_execute_refuses_an_empty_or_short_secret(secret: str) -> None:
    with pytest.raises(ValueError, match="at least 16 characters"):
        EmulatorServer(secret_access_key=secret, execute=True)


def test_the_command_line_refuses_a_short_secret_and_the_documented_one() -> None:
    assert "at least 16 characters" in _refusal("--execute", env=_env(**{SECRET_ENV: "x"}))
    default = _env(**{SECRET_ENV: DEFAULT_SECRET_ACCESS_KEY})
    assert "--allow-default-credentials" in _refusal("--execute", env=default)


def test_an_executing_backend_is_held_to_the_same_rules() -> None:
    executing = Backend(execute=ExecuteSettings())
    with pytest.raises(ValueError, match="--allow-default-credentials"):
        EmulatorServer(backend=executing)
    with pytest.raises(ValueError, match="at least 16 characters"):
        EmulatorServer(backend=executing, secret_access_key="")
    secret = secrets.token_urlsafe(24)
    with pytest.raises(ValueError, match="loopback"):
        EmulatorServer(host="0.0.0.0", backend=executing, secret_access_key=secret)
    with EmulatorServer(backend=executing, secret_access_key=secret) as server:
        foreign = Client(server.url, secret_access_key=secret).request(
            "GET", POOLS, headers={"Host": "evil.example"}
        )
        assert (foreign.status_code, foreign.json()["code"]) == (403, "AccessDenied")
