"""First contact: a fresh clone on a machine with the system's Python and no uv reaches the
demo and the tests with what the README's quick start says.

The README's way to uv is ``scripts/get_uv.py``: the standard library alone fetches uv's
wheel from PyPI, checks its hash and unpacks the binary, which works on Debian's own
``/usr/bin/python3`` (no pip install outside a venv, PEP 668; maybe no pip or venv at all).
Offline, like every test: a local server with PyPI's JSON API stands in for PyPI (it
serves a wheel made of the uv binary this machine has), and uv's cache stands in for the
package index the README's later lines read. Everything else is the README's own lines,
verbatim, run by the system's ``python3`` in a ``git clone`` of this repository."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")
SYSTEM_PYTHON = "/usr/bin/python3"
GET_UV = ROOT / "scripts" / "get_uv.py"


def readme_block(first: str) -> list[str]:
    """The command lines of the README's bash block that starts with ``first``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M):
        if block.startswith(first):
            return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    raise AssertionError(f"the README has no bash block starting with {first!r}")


def test_the_readme_tells_a_machine_without_uv_what_to_do():
    assert readme_block("python3 scripts/get_uv.py") == [
        "python3 scripts/get_uv.py",
        'export PATH="$HOME/.local/bin:$PATH"',
    ]
    lines = readme_block("python3 -m venv")
    assert lines[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert lines[1].startswith("pip install -e . -e integrations/") and lines[-1] == "ranklens"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 scripts/get_uv.py" in ci and "pip install --quiet uv" not in ci


# --- a stand-in for PyPI's JSON API -------------------------------------------------------


def make_wheel(folder: Path, version: str, binary: bytes, platform_tag: str) -> Path:
    """A wheel laid out as uv's: the binaries under ``uv-<version>.data/scripts/``."""
    wheel = folder / f"uv-{version}-py3-none-{platform_tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"uv-{version}.data/scripts/uv", binary)
        zf.writestr(f"uv-{version}.data/scripts/uvx", binary)
        zf.writestr(f"uv-{version}.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    return wheel


@contextlib.contextmanager
def pypi_stand_in(folder: Path, wheels: list[Path], digest: str | None = None) -> Iterator[str]:
    """Serve ``/pypi/uv/json`` listing ``wheels`` (relative URLs, as a mirror may) and the
    wheels themselves; yield the index URL."""
    version = wheels[0].name.split("-")[1]
    files = [
        {"filename": w.name, "url": f"../../files/{w.name}",
         "digests": {"sha256": digest or hashlib.sha256(w.read_bytes()).hexdigest()}}
        for w in wheels
    ]  # fmt: skip
    page = json.dumps({"info": {"version": version}, "urls": files}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            name = self.path.rsplit("/", 1)[-1]
            body = page if self.path == "/pypi/uv/json" else None
            if body is None and (folder / name).is_file() and self.path.startswith("/files/"):
                body = (folder / name).read_bytes()
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def this_machines_tag() -> str:
    sys.path.insert(0, str(GET_UV.parent))
    try:
        import get_uv
    finally:
        sys.path.pop(0)
    tags = get_uv.machine_tags()
    if not tags or sys.platform == "win32":
        pytest.skip("no wheel tag for this machine")
    return tags[-1]


def system_python() -> str:
    """Debian's own interpreter where there is one (the case the README's line is for),
    else the one running the tests."""
    return SYSTEM_PYTHON if Path(SYSTEM_PYTHON).exists() else sys.executable


FAKE_UV = b"#!/bin/sh\necho 'uv 9.9.9 (stand-in)'\n"


@pytest.mark.parametrize(
    "wrong", ["digest", "no wheel for this machine", "no server", "not an index"]
)
def test_get_uv_refuses_what_it_cannot_check_and_says_why(tmp_path, wrong):
    tag = this_machines_tag() if wrong != "no wheel for this machine" else "win_arm64"
    wheel = make_wheel(tmp_path, "9.9.9", FAKE_UV, tag)
    bad_digest = "0" * 64 if wrong == "digest" else None
    with pypi_stand_in(tmp_path, [wheel], bad_digest) as index:
        if wrong == "no server":
            index = "http://127.0.0.1:9"  # nothing listens on the discard port
        elif wrong == "not an index":
            index += "/elsewhere"  # no /pypi/uv/json there
        proc = subprocess.run(
            [system_python(), str(GET_UV), "--dir", str(tmp_path / "bin"), "--index", index],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("get_uv: error: ")
    said = {"digest": "is not PyPI's", "no wheel for this machine": "has no uv wheel for this",
            "no server": "cannot download", "not an index": "HTTP 404"}[wrong]  # fmt: skip
    assert said in proc.stderr
    assert not (tmp_path / "bin" / "uv").exists()


def test_get_uv_installs_the_binary_of_this_machines_wheel_and_says_where(tmp_path):
    tag = this_machines_tag()
    other = make_wheel(tmp_path, "9.9.9", b"not this one", "win_arm64")
    wheel = make_wheel(tmp_path, "9.9.9", FAKE_UV, tag)
    with pypi_stand_in(tmp_path, [other, wheel]) as index:
        env = {**os.environ, "GET_UV_INDEX": index, "PATH": "/usr/bin:/bin"}
        proc = subprocess.run([system_python(), str(GET_UV), "--dir", str(tmp_path / "bin")],
                              capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    uv = tmp_path / "bin" / "uv"
    assert subprocess.run([str(uv)], capture_output=True, text=True).stdout.startswith("uv 9.9.9")
    assert (tmp_path / "bin" / "uvx").exists() and os.access(uv, os.X_OK)
    assert f"installed: {uv}" in proc.stdout and f'export PATH="{uv.parent}:$PATH"' in proc.stdout


# --- the README's lines, for real, on the system's Python ------------------------------------


def real_uv() -> Path:
    """The uv executable itself: the one on the PATH, or behind a pyenv shim."""
    candidates = [Path(os.path.realpath(UV))] if UV else []
    if shutil.which("pyenv"):
        found = subprocess.run(["pyenv", "which", "uv"], capture_output=True, text=True)
        if found.stdout.strip():
            candidates.append(Path(found.stdout.strip()))
    for c in candidates:
        if c.is_file() and c.read_bytes()[:4] == b"\x7fELF":
            return c
    pytest.skip("no uv binary to serve")


def offline_gap(proc: subprocess.CompletedProcess) -> None:
    """Skip, saying how to fill it, when uv's cache (the index's stand-in) lacks a package
    the lock names for the system's Python: a gap in this machine's cache, not a fault of
    the README's lines."""
    if proc.returncode and "wasn't found in the cache" in proc.stderr:
        missing = re.search(r"Failed to download `([^`]+)`", proc.stderr)
        pytest.skip(
            f"uv's cache lacks {missing.group(1) if missing else 'a locked package'} for "
            f"{SYSTEM_PYTHON}: fill it once online (`uv sync --python {SYSTEM_PYTHON}` in a "
            "scratch clone) and run again"
        )


@pytest.mark.slow
@pytest.mark.skipif(UV is None, reason="uv's cache stands in for the package index offline")
@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python at /usr/bin")
def test_a_fresh_clone_on_the_system_python_reaches_the_demo_and_the_tests(tmp_path):
    clone = tmp_path / "ranklens"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    path = "/usr/bin:/bin"  # the system's python3, and no uv
    cache = subprocess.run([UV, "cache", "dir"], capture_output=True, text=True, check=True)
    env = {
        "PATH": path,
        "HOME": str(home),
        "HAYSTACK_TELEMETRY_ENABLED": "False",
        # offline: uv's cache stands in for the index; no Python is downloaded
        "UV_OFFLINE": "1",
        "UV_CACHE_DIR": cache.stdout.strip(),
        "UV_PYTHON_DOWNLOADS": "never",
        "PIP_NO_INDEX": "1",  # the same for pip: what it would download is installed below
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    assert shutil.which("uv", path=path) is None, "uv must not be on this PATH"
    assert shutil.which("python3", path=path) == SYSTEM_PYTHON

    def sh(line: str, timeout: float = 1800) -> subprocess.CompletedProcess:
        proc = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip
        offline_gap(proc)
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        return proc

    # 1. uv: the README's two lines, PyPI stood in for by a local server
    get_uv, export = readme_block("python3 scripts/get_uv.py")
    (tmp_path / "wheels").mkdir()
    wheel = make_wheel(tmp_path / "wheels", "0.0.0", real_uv().read_bytes(), this_machines_tag())
    with pypi_stand_in(tmp_path / "wheels", [wheel]) as index:
        env["GET_UV_INDEX"] = index
        sh(get_uv)
        del env["GET_UV_INDEX"]
    quick_start = readme_block("uv run ranklens demo")
    demo = sh(f"{export} && {quick_start[0]}").stdout
    assert "llamaindex-bm25" in demo and "Not installed" not in demo
    said = "import platform; print(platform.python_version())"
    system = subprocess.run([SYSTEM_PYTHON, "-c", said], capture_output=True, text=True)
    assert sh(f'{export} && uv run python -c "{said}"').stdout == system.stdout  # uv chose it
    tests = sh(f"{export} && uv run pytest -q -p no:cacheprovider tests/metrics/test_specs.py")
    assert re.search(r"\d+ passed", tests.stdout), tests.stdout[-500:]

    # 2. pip in a virtual environment of the system's Python, the README's lines verbatim
    shutil.rmtree(clone / ".venv")
    make_venv, *installs, hello = readme_block("python3 -m venv")
    sh(make_venv.split(" && ")[0])  # python3 -m venv .venv
    activate = make_venv.split(" && ")[1]  # . .venv/bin/activate
    venv_python = clone / ".venv" / "bin" / "python"
    # the packages pip would fetch from the index, from uv's cache instead (harness only):
    # the lock's third-party packages into the README's .venv, then our own packages out,
    # so that the README's pip line installs them from the clone
    harness = {**env, "PATH": f"{home / '.local' / 'bin'}:{path}",
               "UV_PROJECT_ENVIRONMENT": str(clone / ".venv")}  # fmt: skip
    for args in (
        ["sync", "-q", "--frozen", "--all-packages", "--inexact", "--python", str(venv_python)],
        ["pip", "uninstall", "-q", "--python", str(venv_python), "ranklens",
         "ranklens-llamaindex", "ranklens-langchain", "ranklens-haystack"],
        ["pip", "install", "-q", "--python", str(venv_python), "hatchling>=1.24", "editables"],
    ):  # fmt: skip
        done = subprocess.run(["uv", *args], cwd=clone, env=harness, capture_output=True,
                              text=True)  # fmt: skip
        offline_gap(done)
        assert done.returncode == 0, f"uv {' '.join(args)}\n{done.stderr[-2000:]}"
    assert "pip" in sh(f"{activate} && python -m pip --version").stdout
    for install in installs:
        sh(f"{activate} && {install}")
    out = sh(f"{activate} && {hello}").stdout
    assert "ranklens demo" in out and "ranklens profiles" in out
    demo = sh(f"{activate} && ranklens demo").stdout
    assert "llamaindex-bm25" in demo and "Not installed" not in demo


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
