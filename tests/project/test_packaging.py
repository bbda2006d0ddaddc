"""The five distributions build (the core, three framework packages and the optional C
helpers, ``ranklens-native``), and each installs alone with pip: the core, and each
framework package, whose ``ranklens>=0.2.0`` dependency resolves by name to the core's wheel
(pip ignores uv's workspace sources). Each Python package's wheel carries ``py.typed``.

Each framework package requires the core it is released with and states the framework
releases it is tested against (``[tool.ranklens.tested]``: the floor, the newest checked,
what Python 3.10 resolves to), in agreement with its README and ``uv.lock``; marked slow,
the floor is resolved lowest from uv's cache (``--offline``: never the network) and the
package's own tests run against it, and Python 3.10's resolution is checked the same way.

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

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv is the project's installer (see README)")

PACKAGES = {
    "ranklens-llamaindex": ("llamaindex", "llama_index"),
    "ranklens-langchain": ("langchain", "langchain_core"),
    "ranklens-haystack": ("haystack", "haystack"),
}
CORE_NEEDED = "0.2.0"
"""The first core each framework package works with: 0.2.0 brought the shared
``Instrumentation``, hits with character ranges and span labels, which they import."""


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
                          "ranklens_haystack", "ranklens_native"}  # fmt: skip
    native = found.pop("ranklens_native")
    with zipfile.ZipFile(native) as zf:  # the optional C helpers
        meta = zf.read(f"ranklens_native-{__version__}.dist-info/METADATA").decode()
        assert f"Version: {__version__}" in meta
        from ranklens.model.native import NATIVE

        if NATIVE is not None:  # a C compiler built it here: the wheel carries it too
            assert any(n.startswith("_ranklens_native.") for n in zf.namelist())
    for dist, path in [*found.items(), ("ranklens_native", native)]:  # each carries its licence
        with zipfile.ZipFile(path) as zf:
            licences = [n for n in zf.namelist() if n.rpartition("/")[2].startswith("LICENSE")]
            assert licences and "Apache License" in zf.read(licences[0]).decode(), dist
    for dist, path in found.items():
        with zipfile.ZipFile(path) as zf:
            meta = zf.read(f"{dist}-{__version__}.dist-info/METADATA").decode()
            entry = zf.read(f"{dist}-{__version__}.dist-info/entry_points.txt").decode()
            names = zf.namelist()
        assert f"Version: {__version__}" in meta
        assert f"{dist}/py.typed" in names  # a user's type checker reads the hints
        if dist == "ranklens":
            assert "[ranklens.renderers]" in entry and "markdown = " in entry
            assert "ranklens/render/assets/report.css" in names
            assert "ranklens/data/demo/questions.jsonl" in names
            assert "ranklens/__init__.pyi" in names
        else:
            assert f"Requires-Dist: ranklens>={CORE_NEEDED}" in meta
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


# ------------------------------------------------------------ versions each package states
def project(extra: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "integrations" / extra / "pyproject.toml").read_text())


def framework_of(extra: str) -> tuple[str, dict[str, str], str]:
    """(framework package, its tested versions, its requirement) of a framework package."""
    meta = project(extra)
    ((framework, tested),) = meta["tool"]["ranklens"]["tested"].items()
    (requirement,) = [d for d in meta["project"]["dependencies"] if d.startswith(framework)]
    return framework, tested, requirement


def locked(name: str) -> list[tuple[str, list[str]]]:
    """``[(version, resolution markers)]`` of a package in uv.lock."""
    try:
        import tomllib
    except ModuleNotFoundError:
        import tomli as tomllib
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    return [(p["version"], p.get("resolution-markers", [])) for p in lock["package"]
            if p["name"] == name]  # fmt: skip


@pytest.mark.parametrize("package", list(PACKAGES))
def test_each_framework_package_states_the_core_and_framework_releases_it_needs(package):
    from packaging.requirements import Requirement
    from packaging.version import Version

    from ranklens import __version__

    extra, _ = PACKAGES[package]
    meta = project(extra)
    core = next(Requirement(d) for d in meta["project"]["dependencies"] if d.startswith("ranklens"))
    assert str(core.specifier) == f">={CORE_NEEDED}" and __version__ in core.specifier
    framework, tested, requirement = framework_of(extra)
    floor, newest, py310 = (Version(tested[k]) for k in ("floor", "newest", "python310"))
    assert str(Requirement(requirement).specifier) == f">={floor.major}.{floor.minor}"
    assert floor <= py310 <= newest
    for version, markers in locked(framework):  # CI's versions lie in the tested range
        assert floor <= Version(version) <= newest, (framework, version)
        if any("< '3.11'" in m for m in markers) or not markers:
            assert Version(version) <= py310, (framework, version, "on Python 3.10")
    readme = (ROOT / "integrations" / extra / "README.md").read_text()
    flat = " ".join(readme.split())
    for shown in (f"ranklens >= {CORE_NEEDED}", f"{framework} {tested['floor']}",
                  tested["newest"], "Python 3.10", f"pip install {package}"):  # fmt: skip
        assert shown in flat, shown
    changelog = (ROOT / "integrations" / extra / "CHANGELOG.md").read_text()
    version = meta["project"].get("version") or _integration_version(extra)
    assert f"## [unreleased] - {package} {version}" in changelog
    assert f"## [integrations/{extra}-v0.1.0]" in changelog
    main = " ".join((ROOT / "README.md").read_text().split())
    assert f"| `{package}` | `{framework}` | {tested['floor']} | {tested['newest']} | " in main


def _integration_version(extra: str) -> str:
    text = (ROOT / "integrations" / extra / "src" / f"ranklens_{extra}" / "__init__.py").read_text()
    return text.split('__version__ = "', 1)[1].split('"', 1)[0]


def test_the_core_changelog_says_its_version_is_unreleased():
    from ranklens import __version__

    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog")
    assert f"## [unreleased] - ranklens {__version__}" in text
    assert all(_integration_version(e) == __version__ for e, _ in PACKAGES.values())


def offline_compile(requirements: str, *flags: str) -> str | None:
    """``uv pip compile --offline`` of ``requirements`` (None when uv's cache cannot
    resolve them without the network)."""
    proc = subprocess.run(
        [UV, "pip", "compile", "-q", "--offline", "--no-header", "-", *flags],
        input=requirements, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    return proc.stdout if proc.returncode == 0 else None


FLOOR_TEST_DEPS = {
    "llamaindex": ["llama-index-retrievers-bm25"],
    "langchain": ["langchain-text-splitters", "langchain-classic"],
    "haystack": [],
}


@pytest.mark.slow
@pytest.mark.parametrize("package", list(PACKAGES))
def test_a_framework_package_passes_its_tests_at_its_framework_floor(package, tmp_path):
    """The stated floor is true: the framework resolved lowest (the package's other
    dependencies as usual) from uv's cache, in a fresh venv with the core and the package
    from this tree, and the package's own tests run there (Ray's left out)."""
    extra, _ = PACKAGES[package]
    framework, tested, requirement = framework_of(extra)
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    pins = offline_compile(
        requirement + "\n", "--resolution", "lowest-direct", "--python-version", py
    )
    needs = "\n".join(["pytest", "hypothesis", "bm25s", "pyarrow", "pytrec-eval-terrier",
                       *FLOOR_TEST_DEPS[extra]])  # fmt: skip
    (tmp_path / "floor.txt").write_text(pins or "")
    tools = pins and offline_compile(needs + "\n", "-c", str(tmp_path / "floor.txt"),
                                     "--python-version", py)  # fmt: skip
    if not pins or not tools:
        pytest.skip(
            f"uv's cache cannot resolve {requirement} at its floor offline; fill it once with "
            f"the network: uv pip compile --resolution lowest-direct - <<< '{requirement}'"
        )
    assert f"{framework}=={tested['floor']}" in pins
    venv = tmp_path / "venv"
    uv("venv", "-q", "--python", sys.executable, str(venv))
    (tmp_path / "all.txt").write_text(pins + tools)
    env = {"VIRTUAL_ENV": str(venv)}
    uv("pip", "install", "-q", "--offline", "-r", str(tmp_path / "all.txt"),
       "-e", str(ROOT), "-e", str(ROOT / "integrations" / extra), env=env)  # fmt: skip
    python = venv / "bin" / "python"
    version = run_python(python, f"import importlib.metadata as m; print(m.version({framework!r}))")
    assert version.strip() == tested["floor"]
    proc = subprocess.run(
        [str(python), "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider",
         "-m", "not slow and not dense", "--ignore=tests/test_dense.py", "-k", "not ray"],
        cwd=ROOT / "integrations" / extra, capture_output=True, text=True,
        env={**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("package", list(PACKAGES))
def test_python_310_resolves_the_stated_framework_release(package):
    """What the README says of Python 3.10, from the resolver (offline, uv's cache)."""
    extra, _ = PACKAGES[package]
    framework, tested, requirement = framework_of(extra)
    pins = offline_compile(requirement + "\n", "--python-version", "3.10")
    if pins is None:
        pytest.skip(f"uv's cache cannot resolve {requirement} for Python 3.10 offline")
    assert f"{framework}=={tested['python310']}" in pins
