"""What the benchmarks share: an isolated Airflow home and the environment of child processes."""

from __future__ import annotations

import io
import os
import platform
import queue
import re
import secrets
import subprocess
import sys
import tarfile
import tempfile
import threading
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(__file__).resolve().parent
#: Bytecode of every module the children import, kept across runs outside the repository.
#: Installed packages ship compiled; without this, ``PYTHONDONTWRITEBYTECODE`` (set in some
#: sandboxes) makes every fresh process recompile our modules and the DAG file from source.
PYCACHE_PREFIX = Path(tempfile.gettempdir()) / (
    f"aihc-bench-pycache-{platform.python_implementation()}-{platform.python_version()}-"
    f"{Path(sys.prefix).name}"
)


def airflow_env(home: str) -> dict[str, str]:
    """An isolated Airflow home and quiet logs; set before anything imports Airflow."""
    return {
        "AIRFLOW_HOME": home,
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
    }


def child_env(home: str, package: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of a measured child process: this one's, plus an isolated Airflow
    home, the repository on ``sys.path``, and cached bytecode as an installed package has.

    :param package: a folder holding another ``airflow_provider_aihc`` to measure instead
        (:func:`package_at`); by default the ``AIHC_BENCH_PYTHONPATH`` environment variable
        (a patched copy, for experiments), else the repository's.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(airflow_env(home))
    package = package or os.environ.get("AIHC_BENCH_PYTHONPATH")
    paths = [package, str(REPO_ROOT), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE_PREFIX)
    env.update(extra)
    return env


def package_at(revision: str, into: str) -> str:
    """Extract ``airflow_provider_aihc`` as it was at git ``revision`` into the folder
    ``into`` (``git archive``), to be measured beside the working tree in the same run:
    what a figure was before a change, on this machine and under this load, rather than
    a number written down on another day.  Returns ``into``.

    :raises subprocess.CalledProcessError: ``revision`` is not in the repository.
    """
    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", "--format=tar", revision, "airflow_provider_aihc"],
        capture_output=True,
        check=True,
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


# -- a standalone emulator (its signed client: airflow_provider_aihc.emulator.client) ---------


class Emulator:
    """``python -m airflow_provider_aihc.emulator --port 0`` in its own process.

    :param env: the child's environment (:func:`child_env`).
    :param args: extra command-line arguments.
    :param timeout: seconds to wait for the URL line.
    """

    def __init__(self, env: dict[str, str], *args: str, timeout: float = 60.0) -> None:
        from airflow_provider_aihc.emulator.http.control import TOKEN_ENV

        # The control token: the child takes it from its environment, and this process's
        # EmulatorClient (control_headers) from its own.
        self.control_token = env.get(TOKEN_ENV) or secrets.token_urlsafe(24)
        os.environ[TOKEN_ENV] = self.control_token
        env = {**env, TOKEN_ENV: self.control_token}
        command = [sys.executable, "-m", "airflow_provider_aihc.emulator", "--port", "0", *args]
        self.process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.pid = self.process.pid
        lines: queue.Queue[str] = queue.Queue()
        assert self.process.stdout is not None
        stdout = self.process.stdout
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            first = lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise RuntimeError(f"the emulator printed no URL within {timeout} s") from None
        found = re.search(r"http://\S+", first)
        if not found:
            self.stop()
            raise RuntimeError(f"unexpected first line from the emulator: {first!r}")
        self.url = found.group(0)
        self.port = int(self.url.rsplit(":", 1)[1])

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the emulator process so far (``/proc/<pid>/stat``)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


def tcp_connections_to(port: int) -> int:
    """Established TCP connections (IPv4 and IPv6) whose remote port is ``port``: the
    client ends of connections to a local server, read from ``/proc/net/tcp{,6}``."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            remote_port = int(parts[2].rsplit(":", 1)[1], 16)
            if remote_port == port and parts[3] == "01":  # 01 = ESTABLISHED
                count += 1
    return count
