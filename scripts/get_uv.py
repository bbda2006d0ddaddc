"""Install uv from PyPI with nothing but the Python standard library.

    python3 scripts/get_uv.py [--dir DIR] [--version X.Y.Z] [--index URL]

For a machine whose Python cannot install packages: Debian's and Ubuntu's ``python3``
refuse ``pip install`` outside a virtual environment (PEP 668), may have neither pip nor
venv, and have no pipx. uv is published on PyPI as wheels holding one static binary per
platform; this script asks PyPI's JSON API (``/pypi/uv/json``) for the release, picks the
wheel built for this machine (its platform tag: manylinux for glibc at or below this
machine's version, musllinux, macOS, Windows), downloads it over HTTPS, checks its SHA-256
against the digest PyPI lists, and writes the ``uv`` and ``uvx`` binaries it holds into
``DIR`` (default ``~/.local/bin``, where uv's own installer puts them). Nothing else is
touched. It prints where uv is and, when that folder is not on ``PATH``, the line to add.

The wheel format (PEP 427): ``uv-<version>.data/scripts/<binary>`` holds what a wheel
installer would copy into ``bin``. Platform tags: PEP 600 (manylinux), PEP 656
(musllinux). ``--index`` (or ``GET_UV_INDEX``) names another server with PyPI's JSON API,
such as a mirror.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

PYPI = "https://pypi.org"
ARCH = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "armv8l": "armv7l"}


class Failure(Exception):
    """A step that cannot go on: the message says what happened and what to do."""


def machine_tags() -> list[str]:
    """The wheel platform tags this machine runs, most specific first."""
    machine = platform.machine().lower()
    if sys.platform.startswith("linux"):
        arch = ARCH.get(machine, machine)
        libc, version = platform.libc_ver()
        if libc == "glibc" and version:
            major, minor = (int(x) for x in version.split(".")[:2])
            tags = [f"manylinux_{major}_{m}_{arch}" for m in range(minor, -1, -1)]
            return tags + ([f"manylinux2014_{arch}"] if (major, minor) >= (2, 17) else [])
        return [f"musllinux_1_{m}_{arch}" for m in (2, 1)]
    if sys.platform == "darwin":
        arch = "arm64" if machine == "arm64" else "x86_64"
        return [f"macosx_{v}_{arch}" for v in ("11_0", "10_12", "10_9")] + ["universal2"]
    if sys.platform == "win32":
        return {"amd64": ["win_amd64"], "arm64": ["win_arm64"]}.get(machine, ["win32"])
    return []


def wheel_platforms(filename: str) -> list[str]:
    """``uv-0.9.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl`` ->
    ``["manylinux_2_17_x86_64", "manylinux2014_x86_64"]``."""
    match = re.fullmatch(r"uv-[^-]+-py3-none-(.+)\.whl", filename)
    return match.group(1).split(".") if match else []


def choose(files: list[dict], tags: list[str]) -> dict:
    """The release's wheel for the first of ``tags`` (a ``universal2`` tag matches any
    macOS wheel of that kind)."""
    for tag in tags:
        for f in files:
            plats = wheel_platforms(f.get("filename", ""))
            if tag in plats or (tag == "universal2" and any(p.endswith(tag) for p in plats)):
                return f
    raise Failure(
        f"PyPI has no uv wheel for this machine ({sys.platform}, {platform.machine()}, "
        f"tags tried: {', '.join(tags) or 'none'}); see docs.astral.sh/uv for other installers"
    )


def fetch(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        raise Failure(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        hint = (
            " (install the ca-certificates package)" if "CERTIFICATE" in str(reason) else
            " (no network? behind a proxy, set HTTPS_PROXY)"
        )  # fmt: skip
        raise Failure(f"cannot download {url}: {reason}{hint}") from None


def release(index: str, version: str | None) -> tuple[str, list[dict]]:
    """``(version, files)`` of uv's release on the index (the newest without ``version``),
    each file's ``url`` made absolute (a mirror may list them relative to the page)."""
    url = f"{index.rstrip('/')}/pypi/uv/{version + '/' if version else ''}json"
    try:
        data = json.loads(fetch(url))
        files = [{**f, "url": urllib.parse.urljoin(url, f["url"])} for f in data["urls"]]
        return data["info"]["version"], files
    except (ValueError, KeyError, TypeError):
        raise Failure(f"{url}: not PyPI's JSON API (no info.version and urls)") from None


def install(index: str, version: str | None, folder: Path) -> Path:
    """Download, check and unpack uv into ``folder``; return the path of ``uv``."""
    found, files = release(index, version)
    wheel = choose(files, machine_tags())
    data = fetch(wheel["url"])
    expected = wheel.get("digests", {}).get("sha256")
    got = hashlib.sha256(data).hexdigest()
    if not expected or got != expected:
        raise Failure(f"{wheel['filename']}: SHA-256 {got} is not PyPI's {expected}: not installed")
    exe = ".exe" if sys.platform == "win32" else ""
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {Path(n).name: n for n in zf.namelist() if ".data/scripts/" in n}
        if f"uv{exe}" not in members:
            raise Failure(f"{wheel['filename']}: no uv{exe} under .data/scripts/ in the wheel")
        for name in (f"uv{exe}", f"uvx{exe}"):
            if name not in members:
                continue
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
            with os.fdopen(fd, "wb") as out:
                out.write(zf.read(members[name]))
            os.chmod(tmp, 0o755)  # rwxr-xr-x, as an installer leaves it
            os.replace(tmp, folder / name)  # atomic: a running uv is never half-written
    uv = folder / f"uv{exe}"
    try:
        said = subprocess.run([str(uv), "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise Failure(f"{uv} was written but does not run here: {exc}") from None
    print(f"{said.stdout.strip()} installed: {uv} (from {wheel['filename']}, {found})")
    return uv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path.home() / ".local" / "bin",
                        help="folder for the uv binary (default: ~/.local/bin)")  # fmt: skip
    parser.add_argument("--version", help="a uv release (default: the newest on PyPI)")
    parser.add_argument("--index", default=os.environ.get("GET_UV_INDEX", PYPI),
                        help="a server with PyPI's JSON API (default: pypi.org)")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        uv = install(args.index, args.version, args.dir.expanduser())
    except Failure as exc:
        sys.stderr.write(f"get_uv: error: {exc}\n")
        return 1
    on_path = os.environ.get("PATH", "").split(os.pathsep)
    if str(uv.parent) not in on_path:
        print(f'{uv.parent} is not on PATH: export PATH="{uv.parent}:$PATH"')
    return 0


if __name__ == "__main__":
    sys.exit(main())
