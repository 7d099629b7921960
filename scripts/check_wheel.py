"""The built wheel works without the repository: what a user gets from ``pip install``.

Builds the wheel, installs it into a fresh venv beside the pinned Airflow, and from an empty
working directory (nothing of the source tree on ``sys.path``) checks that

1. the package is imported from the venv, not from the checkout;
2. ``airflow providers list`` shows the provider and the ``aihc`` connection type is
   registered (``airflow providers hooks``);
3. the emulator starts from the installed package (``python -m airflow_provider_aihc.emulator
   --port 0``) and prints its URL;
4. a DAG using ``AIHCCreateJobOperator`` and ``AIHCJobSensor`` (written here, into a DAGs
   folder of its own) succeeds with ``airflow dags test`` against that emulator, and the
   emulator's own record shows the one job it created succeeded.

Usage: ``python scripts/check_wheel.py [--artifact PATH] [AIRFLOW-pyX.Y ...]``, e.g.
``3.3.2-py3.11``: the combinations of ``constraints/airflow-<combination>.txt`` to check,
each on the Python that runs this script (default: every combination in ``constraints/``
for that Python). ``--artifact`` checks a built wheel or sdist (what ``make release-check``
built) instead of building a wheel here; an sdist is built into a wheel by the installer,
as ``pip install`` of an sdist does. Exits non-zero on the first failed check.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
UV = ROOT / ".venvs" / "tools" / "bin" / "uv"
DAG_ID = "aihc_wheel_check"
DAG = textwrap.dedent(
    f"""
    from datetime import datetime

    from airflow import DAG

    from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
    from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

    with DAG("{DAG_ID}", start_date=datetime(2026, 1, 1), schedule=None, catchup=False):
        create = AIHCCreateJobOperator(
            task_id="create",
            name="wheel-check",
            image="registry.baidubce.com/aihc/pytorch:2.1",
            command="python train.py",
            resource_pool_id="cce-emulator0",
        )
        AIHCJobSensor(
            task_id="wait",
            job_id=create.output,
            resource_pool_id="cce-emulator0",
            deferrable=True,
            poke_interval=1,
        )
    """
)


def json_printed(output: str) -> Any:
    """The JSON an ``airflow ... --output json`` printed: its last line that parses (Airflow
    3.0.6 prints its plugins' INFO log lines before it, on the same stdout)."""
    for line in reversed(output.splitlines()):
        if line.startswith(("[", "{")):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return json.loads(output)  # raises, showing what was printed


def run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 600) -> str:
    """Run ``cmd``; its output, or exit with it printed when it fails."""
    done = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)} (exit {done.returncode})\n{done.stdout}\n{done.stderr}")
    return done.stdout


PASSED: list[str] = []


def check(ok: bool, what: str, detail: str = "", name: str = "wheel") -> None:
    """Print one check; exit with ``detail`` when it failed (``name``: whose check it is)."""
    print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
    if not ok:
        sys.exit(f"{name} check failed: {what}\n{detail}\n{name}: {len(PASSED)} passed, 1 failed")
    PASSED.append(what)


def build_wheel(out: Path) -> Path:
    run([str(UV), "build", "--wheel", "--out-dir", str(out), str(ROOT)], dict(os.environ), ROOT)
    (wheel,) = out.glob("airflow_provider_aihc-*.whl")
    return wheel


def airflow_env(work: Path, venv: Path) -> dict[str, str]:
    home = work / "home"
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        AIRFLOW_HOME=str(home),
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{home / 'airflow.db'}",
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__DAGS_FOLDER=str(work / "dags"),
    )
    env.pop("PYTHONPATH", None)
    return env


def start_emulator(
    python: Path, env: dict[str, str], cwd: Path
) -> tuple[subprocess.Popen[str], str, str]:
    """The emulator of the installed package, its URL and the connection JSON it prints."""
    proc = subprocess.Popen(
        [str(python), "-m", "airflow_provider_aihc.emulator", "--port", "0",
         "--seconds-per-status", "0.5", "--running-seconds", "2"],
        env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    check("listening on http://127.0.0.1:" in line, "emulator starts from the package", line)
    url = line.split("listening on ")[1].split()[0]
    printed = proc.stdout.readline()
    check("connection (JSON): AIRFLOW_CONN_AIHC_DEFAULT='" in printed, "it prints its connection",
          printed)  # fmt: skip
    connection = printed.split("='", 1)[1].rstrip().removesuffix("'")
    check(json.loads(connection)["host"] == url, "the printed connection points at it", printed)
    return proc, url, connection


def check_version(combination: str, wheel: Path, work: Path) -> None:
    version, python = combination.split("-py")
    print(f"Airflow {version}, Python {python}, {wheel.name}:", flush=True)
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if python != running:
        sys.exit(f"{combination}: run this script with Python {python}, not {running}")
    venv = work / "venv"
    constraints = ROOT / "constraints" / f"airflow-{combination}.txt"
    run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)], dict(os.environ), work)
    run(
        # The Dockerfile's own install line (uv for pip; not byte-compiled: the checks
        # import a part of it, 30 s of CPU saved a venv).
        [str(UV), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
         *dockerfile_install(DOCKERFILE, {"AIRFLOW_VERSION": version, "PYTHON_VERSION": python},
                             {"dist": wheel.parent, "constraints": constraints.parent})],
        dict(os.environ), work,
    )  # fmt: skip
    (work / "dags").mkdir()
    (work / "dags" / f"{DAG_ID}.py").write_text(DAG)
    env = airflow_env(work, venv)
    python, airflow = venv / "bin" / "python", str(venv / "bin" / "airflow")

    where = run([str(python), "-c", "import airflow_provider_aihc as p; print(p.__file__)"],
                env, work)  # fmt: skip
    check(where.startswith(str(venv)), "the package loads from the venv", where)
    providers = run([airflow, "providers", "list", "--output", "json"], env, work)
    names = {p["package_name"] for p in json_printed(providers)}
    check("airflow-provider-aihc" in names, "airflow providers list shows it", providers)
    hooks = run([airflow, "providers", "hooks", "--output", "json"], env, work)
    types = {h.get("connection_type") for h in json_printed(hooks)}
    check("aihc" in types, "the aihc connection type is registered", hooks)

    run([airflow, "db", "migrate"], env, work)
    emulator, url, connection = start_emulator(python, env, work)
    try:
        env["AIRFLOW_CONN_AIHC_DEFAULT"] = connection
        started = time.monotonic()
        run([airflow, "dags", "test", DAG_ID], env, work)
        with urllib.request.urlopen(f"{url}/_emulator/state", timeout=10) as answer:
            state = json.load(answer)
        statuses = [job["status"] for job in state["jobs"]]
        check(
            statuses == ["Succeeded"] and state["requests"].get("CreateJob") == 1,
            f"a DAG with the operator and the sensor ran ({time.monotonic() - started:.0f} s)",
            json.dumps(state)[:2000],
        )
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)


DOCKERFILE = ROOT / "Dockerfile"


def dockerfile_install(
    dockerfile: Path, args: dict[str, str], sources: dict[str, Path]
) -> list[str]:
    """The arguments of the Dockerfile's ``RUN pip install``, for a venv outside a container:
    its ``ARG`` values (``args`` over the file's defaults) substituted, each path a ``COPY``
    put into the image replaced by the file it copied (a ``COPY``'s first folder found in
    ``sources``, its glob matched there), ``--no-cache-dir`` (pip's, not uv's) left out.

    :raises ValueError: the Dockerfile has no such line, or a copied file is not found.
    """
    values: dict[str, str] = {}
    copied: dict[str, str] = {}
    install: list[str] | None = None
    for line in dockerfile.read_text().splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        if words[0] == "ARG" and "=" in words[1]:
            name, default = words[1].split("=", 1)
            values[name] = args.get(name, default)
        elif words[0] == "ARG":
            values.setdefault(words[1], args.get(words[1], ""))
        text = [_substitute(word, values) for word in words]
        if text[0] == "COPY":
            source, target = text[1], text[2]
            folder, _, pattern = source.partition("/")
            found = sorted(sources[folder].glob(pattern))
            if not found:
                raise ValueError(f"{dockerfile}: COPY {source}: nothing in {sources[folder]}")
            copied[target] = str(found[-1])
        elif text[0] == "RUN" and text[1:3] == ["pip", "install"]:
            install = [w for w in text[3:] if w != "--no-cache-dir"]
    if install is None:
        raise ValueError(f"{dockerfile} has no RUN pip install line")
    return [_copied(word, copied) for word in install]


def _substitute(word: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        word = word.replace(f"${{{name}}}", value)
    return word


def _copied(word: str, copied: dict[str, str]) -> str:
    """``word``, or the local file a ``COPY`` put where ``word`` points in the image."""
    for target, local in copied.items():
        name = Path(local).name
        if word == target or (target.endswith("/") and word.startswith(target)):
            matches = word == target or fnmatch.fnmatch(name, word[len(target) :])
            if matches:
                return local
    return word


def main(versions: list[str], artifact: Path | None = None) -> None:
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    versions = versions or sorted(
        p.stem.removeprefix("airflow-")
        for p in (ROOT / "constraints").glob(f"airflow-*-py{running}.txt")
    )
    work = Path(tempfile.mkdtemp(prefix="aihc-wheel-"))
    try:
        wheel = artifact.resolve() if artifact else build_wheel(work / "dist")
        print(f"{'checking' if artifact else 'built'} {wheel.name}", flush=True)
        for version in versions:
            check_version(version, wheel, Path(tempfile.mkdtemp(dir=work)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wheel: {len(PASSED)} passed, 0 failed", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--artifact"]:
        main(args[2:], Path(args[1]))
    else:
        main(args)
