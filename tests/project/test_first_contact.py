"""First contact: a fresh clone on a machine with Python but no uv reaches the demo and the
tests with what the README's quick start says, run for real in a new virtual environment
whose PATH has no uv.

Offline, like every test: the third-party packages the README's pip line would fetch come
from uv's cache (``uv pip install --offline`` into the new environment before the README's
lines run, with pip told to use no index and no build isolation), and ``python3 -m pip
install uv`` is stood in for by copying the uv binary into the environment's ``bin``, which
is what that line installs. Everything else is the README's own lines, verbatim, in a
``git clone`` of this repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")


def readme_block(first: str) -> list[str]:
    """The command lines of the README's bash block that starts with ``first``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M):
        if block.startswith(first):
            return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    raise AssertionError(f"the README has no bash block starting with {first!r}")


def test_the_readme_tells_a_machine_without_uv_what_to_do():
    assert readme_block("python3 -m pip install uv") == ["python3 -m pip install uv"]
    lines = readme_block("python3 -m venv")
    assert lines[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert lines[1].startswith("pip install -e . -e integrations/") and lines[-1] == "ranklens"


def real_uv() -> Path:
    """The uv executable itself: the one on the PATH, or behind a pyenv shim."""
    candidates = [Path(os.path.realpath(UV))]
    if shutil.which("pyenv"):
        found = subprocess.run(["pyenv", "which", "uv"], capture_output=True, text=True)
        candidates.append(Path(found.stdout.strip() or UV))
    for c in candidates:
        if c.is_file() and c.read_bytes()[:4] == b"\x7fELF":
            return c
    pytest.skip("no uv binary to copy")


@pytest.mark.slow
@pytest.mark.skipif(UV is None, reason="uv's cache stands in for the package index offline")
def test_a_fresh_clone_without_uv_reaches_the_demo_and_the_tests(tmp_path):
    clone = tmp_path / "ranklens"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    # the Python running these tests, alone in a folder of its own: the lock resolves some
    # packages by Python version (soupsieve differs below 3.11.5), and uv's cache, which
    # stands in for the index offline, holds the wheels of the Python it was synced with,
    # not those of any other python3 the machine may have
    here = tmp_path / "python"
    here.mkdir()
    (here / "python3").symlink_to(os.path.realpath(getattr(sys, "_base_executable", "")
                                                    or sys.executable))  # fmt: skip
    path = f"{here}:/usr/bin:/bin"
    env = {
        "PATH": path,
        "HOME": str(tmp_path / "home"),
        "PIP_NO_INDEX": "1",  # offline: what pip would download is installed below
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "HAYSTACK_TELEMETRY_ENABLED": "False",
    }
    assert shutil.which("uv", path=path) is None, "uv must not be on this PATH"

    def sh(line: str, timeout: float = 600) -> subprocess.CompletedProcess:
        proc = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        return proc

    make_venv, *installs, hello = readme_block("python3 -m venv")
    sh(make_venv.split(" && ")[0])  # python3 -m venv .venv
    activate = make_venv.split(" && ")[1]  # . .venv/bin/activate
    venv_python = clone / ".venv" / "bin" / "python"
    # the packages pip would fetch from the index, from uv's cache instead (harness only):
    # the lock's third-party packages (the dev group's too: the tests run in this .venv
    # below) into the README's .venv, then our own packages out, so that the README's pip
    # line installs them from the clone
    harness = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(clone / ".venv")}
    for args in (
        ["sync", "-q", "--offline", "--frozen", "--all-packages", "--inexact",
         "--python", str(venv_python)],
        ["pip", "uninstall", "-q", "--python", str(venv_python), "ranklens",
         "ranklens-llamaindex", "ranklens-langchain", "ranklens-haystack"],
        ["pip", "install", "-q", "--offline", "--python", str(venv_python), "hatchling>=1.24",
         "editables"],
    ):  # fmt: skip
        done = subprocess.run([UV, *args], cwd=ROOT, env=harness, capture_output=True, text=True)
        assert done.returncode == 0, f"uv {' '.join(args)}\n{done.stderr[-2000:]}"
    assert "pip" in sh(f"{activate} && python -m pip --version").stdout
    for install in installs:
        sh(f"{activate} && {install}")
    out = sh(f"{activate} && {hello}").stdout
    assert "ranklens demo" in out and "ranklens profiles" in out
    demo = sh(f"{activate} && ranklens demo", timeout=900).stdout
    assert "llamaindex-bm25" in demo and "Not installed" not in demo

    # "python3 -m pip install uv" puts uv's binary in the environment's bin: so does this
    shutil.copy(real_uv(), clone / ".venv" / "bin" / "uv")
    cache = subprocess.run([UV, "cache", "dir"], capture_output=True, text=True, check=True)
    env.update(UV_OFFLINE="1", UV_CACHE_DIR=cache.stdout.strip())  # offline: uv's own cache
    tests = sh(f"{activate} && uv run pytest -q -p no:cacheprovider tests/metrics/test_specs.py",
               timeout=900)  # fmt: skip
    assert re.search(r"\d+ passed", tests.stdout), tests.stdout[-500:]


def test_the_demo_says_what_is_missing_instead_of_failing_without_pyarrow(monkeypatch):
    """A core install without pyarrow (``pip install -e .``) runs the whole demo: its scale
    section, which writes Parquet shards, says what it needs."""
    import importlib.util
    import types

    import ranklens
    from ranklens.app.demo import _scale_section, demo_paths

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))  # fmt: skip
    result = types.SimpleNamespace(run=ranklens.read_run(demo_paths()["bm25"]))
    text = _scale_section(None, result)
    assert "skipped here" in text and "pip install 'ranklens[fast]'" in text
