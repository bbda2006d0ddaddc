"""The four distributions build, and each installs alone with pip: the core, and each
framework package, whose ``ranklens>=0.1.0`` dependency resolves by name to the core's wheel
(pip ignores uv's workspace sources).

Offline: the built wheels plus the dependencies already downloaded. A fresh venv gets the
package's third-party dependencies from the committed lock (``uv sync --offline --frozen``,
from uv's cache) and pip (``ensurepip``); then pip installs the project's own packages from
the built wheels only (``--no-index``): by name, through the ``ranklens[<framework>]``
extra, and from the integration's folder (built by hatchling, added from uv's cache: pip
cannot fetch a build backend offline). The entry points are checked in each (renderers;
each framework's adapter plugin).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UV = shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv is the project's installer (see README)")

PACKAGES = {
    "ranklens-llamaindex": ("llamaindex", "llama_index"),
    "ranklens-langchain": ("langchain", "langchain_core"),
    "ranklens-haystack": ("haystack", "haystack"),
}


def uv(*args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [UV, *args], capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})}
    )
    assert proc.returncode == 0, f"uv {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    uv("build", "--all-packages", "--wheel", "--offline", "--out-dir", str(out))
    return out


def fresh_env(tmp: Path, package: str) -> Path:
    """A venv with ``package``'s third-party dependencies and pip, none of ours (offline)."""
    venv = tmp / f"venv-{package}"
    env = {"UV_PROJECT_ENVIRONMENT": str(venv)}
    uv("sync", "-q", "--offline", "--frozen", "--no-dev", "--package", package, env=env)
    python = venv / "bin" / "python"
    uv("pip", "uninstall", "-q", "--python", str(python), "ranklens", *PACKAGES)
    subprocess.run([str(python), "-m", "ensurepip"], check=True, capture_output=True)
    return python


def pip(python: Path, *args: str) -> None:
    proc = subprocess.run(
        [str(python), "-m", "pip", *args, "--disable-pip-version-check", "-q"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, f"pip {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"


def run_python(python: Path, code: str) -> str:
    proc = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, cwd=python.parents[2]
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def install_wheels(python: Path, wheels: Path, *requirements: str, build: bool = False) -> None:
    """``pip install`` from the built wheels only (no index)."""
    flags = ["--no-build-isolation"] if build else []
    pip(python, "install", "--no-index", "--find-links", str(wheels), *flags, *requirements)


def test_wheels_carry_one_version_a_named_core_dependency_and_entry_points(wheels):
    from ranklens import __version__

    found = {p.name.split("-")[0]: p for p in wheels.glob("*.whl")}
    assert set(found) == {"ranklens", "ranklens_llamaindex", "ranklens_langchain",
                          "ranklens_haystack"}  # fmt: skip
    for dist, path in found.items():
        with zipfile.ZipFile(path) as zf:
            meta = zf.read(f"{dist}-{__version__}.dist-info/METADATA").decode()
            entry = zf.read(f"{dist}-{__version__}.dist-info/entry_points.txt").decode()
            names = zf.namelist()
        assert f"Version: {__version__}" in meta
        if dist == "ranklens":
            assert "[ranklens.renderers]" in entry and "markdown = " in entry
            assert "ranklens/render/assets/report.css" in names
            assert "ranklens/data/demo/questions.jsonl" in names
        else:
            assert "Requires-Dist: ranklens>=0.1.0" in meta
            assert "[ranklens.adapters]" in entry


def test_the_core_installs_alone_from_its_wheel(wheels, tmp_path):
    python = fresh_env(tmp_path, "ranklens")
    install_wheels(python, wheels, "ranklens")
    out = run_python(
        python,
        "import ranklens\n"
        "rep = ranklens.compare({'q': ['a']}, {'x': {'q': ['a']}, 'y': {'q': ['b']}}, ['P@1'],"
        " test='t', ci='t')\n"
        "from ranklens.capture import plugins\n"
        "print(rep.to_markdown().splitlines()[0]); print(plugins())",
    )
    assert out.splitlines() == ["|  | run | P@1 |", "[]"]
    cli = subprocess.run([str(python.parent / "ranklens"), "--help"], capture_output=True,
                         text=True)  # fmt: skip
    assert cli.returncode == 0 and "evaluate" in cli.stdout


@pytest.mark.parametrize("package", list(PACKAGES))
def test_an_integration_installs_alone_from_its_wheel_folder_and_extra(wheels, tmp_path, package):
    extra, module = PACKAGES[package]
    python = fresh_env(tmp_path, package)
    check = (
        "import ranklens; from ranklens.capture import plugins\n"
        "print(sorted(m for m, _ in plugins()))"
    )
    install_wheels(python, wheels, package)  # the wheel, its core dependency by name
    assert run_python(python, check).strip() == repr([module])
    pip(python, "uninstall", "-y", "ranklens", package)
    install_wheels(python, wheels, f"ranklens[{extra}]")  # the core's extra
    assert run_python(python, check).strip() == repr([module])
    pip(python, "uninstall", "-y", "ranklens", package)
    uv("pip", "install", "-q", "--offline", "--python", str(python), "hatchling>=1.24")
    folder = str(ROOT / "integrations" / extra)
    install_wheels(python, wheels, folder, build=True)  # from its folder, built here
    assert run_python(python, check).strip() == repr([module])


def test_the_lock_is_committed_and_current():
    assert (ROOT / "uv.lock").exists()
    uv("lock", "--check", "--offline")
    assert sys.version_info >= (3, 10)
