"""``make release-check``: the package as it would be published, checked before it is.

1. builds the wheel and the sdist (``uv build``) into ``build/release/dist``;
2. ``twine check --strict`` on both (the metadata and the README render on PyPI);
3. reads both: the version is ``__version__``, first in ``get_provider_info()["versions"]``
   and has a section in ``CHANGELOG.md``; the wheel holds ``py.typed``, the provider entry
   point and the ``LICENSE`` file (``License-File`` in its metadata, ``License-Expression``
   Apache-2.0); the sdist holds ``LICENSE``, ``README.md``, ``CHANGELOG.md`` and the
   package; the metadata lists the project URLs;
4. builds a wheel from the sdist, as ``pip install`` of the sdist does, and requires it to
   hold the same files with the same contents as the wheel built from the tree;
5. installs the wheel alone into a fresh venv beside each pinned Airflow and runs the wheel
   check (``scripts/check_wheel.py --artifact``): providers list, connection type, the
   emulator, a DAG run. Step 4 makes that the check of the sdist too: installing it
   installs the very same files. ``RELEASE_CHECK_SDIST=install`` installs the sdist
   itself as well (twice the time);
6. copies the checked wheel and sdist into ``dist/``, where the quick start's install line
   and the ``Dockerfile`` take the wheel from.

Usage: ``python scripts/release_check.py [AIRFLOW_VERSION ...]`` (default: every version in
``constraints/``). Exits non-zero naming the first failed check.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UV = ROOT / ".venvs" / "tools" / "bin" / "uv"
DIST = ROOT / "build" / "release" / "dist"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from check_wheel import PASSED  # noqa: E402
from check_wheel import check as wheel_check  # noqa: E402


def check(ok: bool, what: str, detail: str = "") -> None:
    wheel_check(ok, what, detail, name="release")


def run(cmd: list[str]) -> str:
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    check(done.returncode == 0, " ".join(Path(c).name if "/" in c else c for c in cmd[:3]),
          done.stdout + done.stderr)  # fmt: skip
    return done.stdout + done.stderr


def build() -> tuple[Path, Path]:
    shutil.rmtree(DIST, ignore_errors=True)
    run([str(UV), "build", "--quiet", "--sdist", "--wheel", "--out-dir", str(DIST), str(ROOT)])
    (wheel,) = DIST.glob("airflow_provider_aihc-*.whl")
    (sdist,) = DIST.glob("airflow_provider_aihc-*.tar.gz")
    return wheel, sdist


def check_metadata(wheel: Path, sdist: Path) -> None:
    from airflow_provider_aihc import __version__
    from airflow_provider_aihc.get_provider_info import get_provider_info

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = f"airflow_provider_aihc-{__version__}.dist-info"
        metadata = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    with tarfile.open(sdist) as archive:
        sdist_names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}

    check(metadata["Version"] == __version__, f"version {__version__} in the metadata")
    versions = get_provider_info()["versions"]
    check(
        versions[0] == __version__, "get_provider_info()['versions'] starts with it", str(versions)
    )
    changelog = (ROOT / "CHANGELOG.md").read_text()
    sections = re.findall(r"^## (\d+\.\d+\.\d+)\b", changelog, re.M)
    check(sections == versions, "CHANGELOG.md has a section per version, newest first",
          f"CHANGELOG: {sections}, get_provider_info: {versions}")  # fmt: skip
    check(metadata["License-Expression"] == "Apache-2.0", "License-Expression: Apache-2.0")
    check(metadata.get_all("License-File") == ["LICENSE"], "License-File: LICENSE")
    check(f"{info}/licenses/LICENSE" in names, "the wheel holds LICENSE")
    check("airflow_provider_aihc/py.typed" in names, "the wheel holds py.typed")
    check("apache_airflow_provider" in entry_points, "the provider entry point")
    urls = metadata.get_all("Project-URL") or []
    check(len(urls) >= 1, f"project URLs ({len(urls)})", str(urls))
    check(metadata["Requires-Python"] == ">=3.11", "Requires-Python >=3.11")
    wanted = {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml",
              "airflow_provider_aihc/py.typed", "airflow_provider_aihc/__init__.py"}  # fmt: skip
    check(wanted <= sdist_names, "the sdist holds LICENSE, README, CHANGELOG and the package",
          str(sorted(wanted - sdist_names)))  # fmt: skip


def _contents(wheel: Path) -> dict[str, int]:
    with zipfile.ZipFile(wheel) as archive:
        return {item.filename: item.CRC for item in archive.infolist()}


def check_sdist_builds_the_wheel(wheel: Path, sdist: Path) -> None:
    out = DIST / "from-sdist"
    run([str(UV), "build", "--quiet", "--wheel", "--out-dir", str(out), str(sdist)])
    (rebuilt,) = out.glob("*.whl")
    ours, theirs = _contents(wheel), _contents(rebuilt)
    differ = sorted(n for n in ours.keys() | theirs.keys() if ours.get(n) != theirs.get(n))
    check(not differ, f"the sdist builds the same wheel ({len(ours)} files)", str(differ))


def main(versions: list[str]) -> None:
    started = time.monotonic()
    print("build:", flush=True)
    wheel, sdist = build()
    check(True, f"built {wheel.name} and {sdist.name}")
    run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)])
    print("metadata:", flush=True)
    check_metadata(wheel, sdist)
    check_sdist_builds_the_wheel(wheel, sdist)
    artifacts = [wheel, sdist] if os.environ.get("RELEASE_CHECK_SDIST") == "install" else [wheel]
    for artifact in artifacts:
        print(f"installed alone: {artifact.name}", flush=True)
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "check_wheel.py"), "--artifact",
             str(artifact), *versions], cwd=ROOT, check=False,
        )  # fmt: skip
        check(done.returncode == 0, f"the wheel check passes for {artifact.name}")
    publish(wheel, sdist)
    print(f"release: {len(PASSED)} passed, 0 failed ({time.monotonic() - started:.0f} s)")


def publish(wheel: Path, sdist: Path) -> None:
    """The checked wheel and sdist into ``dist/``, where docs/quickstart.md's install line
    and the Dockerfile's ``COPY dist/airflow_provider_aihc-*.whl`` take them from (only
    this version's, so that glob matches one wheel)."""
    out = ROOT / "dist"
    out.mkdir(exist_ok=True)
    for old in out.glob("airflow_provider_aihc-*"):
        old.unlink()
    for artifact in (wheel, sdist):
        shutil.copy2(artifact, out / artifact.name)
    check(True, f"copied to dist/: {wheel.name}, {sdist.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
