"""A user's type checker sees ranklens' types: mypy checks tests/typecheck/readme_calls.py (the
README's calls, with ``assert_type`` on what they return and ``# type: ignore`` on calls
the types must refuse) against the core and the three integrations, each marked typed by
its ``py.typed``. The facade's lazy names reach type checkers through
``ranklens/__init__.pyi``, kept equal to ``ranklens.__all__`` here.

Only that file is checked: ranklens' modules are followed silently (their own errors are
not this test's business), every other package is skipped (numpy's types become ``Any``),
and the cache lives in a temporary folder, so a cold run costs about 3 s of CPU.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import ranklens

ROOT = Path(__file__).resolve().parents[2]
USAGE = ROOT / "tests" / "typecheck" / "readme_calls.py"
PACKAGES = {
    "ranklens": ROOT / "src" / "ranklens",
    **{
        f"ranklens_{fw}": ROOT / "integrations" / fw / "src" / f"ranklens_{fw}"
        for fw in ("llamaindex", "langchain", "haystack")
    },
}
CONFIG = """\
[mypy]
python_version = 3.10
warn_unused_ignores = True
follow_imports = skip
ignore_missing_imports = True

[mypy-{ours}]
follow_imports = silent
"""


def mypy(tmp_path: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is a dev dependency (uv sync)")
    ours = ",".join(f"{p},{p}.*" for p in PACKAGES)
    config = tmp_path / "mypy.ini"
    config.write_text(CONFIG.format(ours=ours))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config),
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", *map(str, files)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip


def test_the_readme_calls_type_check_against_the_public_api(tmp_path):
    # a bad call in a second file shows the types are seen at all (ranklens as Any would
    # accept it) and that the check reports what it finds
    bad = tmp_path / "bad_call.py"
    bad.write_text(
        "import ranklens\n"
        "ev = ranklens.evaluate({'q': ['a']}, {'q': ['a']}, ['P@1'])\n"
        "ev.aggregate + 1\n"
        "ranklens.read_run(3.5)\n"
    )
    proc = mypy(tmp_path, USAGE, bad)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert [line for line in lines if "readme_calls.py:" in line] == [], proc.stdout
    assert len(lines) == 2, proc.stdout + proc.stderr
    assert 'Unsupported operand types for + ("Values" and "int")' in lines[0]
    assert 'Argument 1 to "read_run" has incompatible type "float"' in lines[1]


def test_each_distribution_is_marked_typed():
    for name, folder in PACKAGES.items():
        assert (folder / "py.typed").is_file(), f"{name} has no py.typed"


def test_the_facade_stub_lists_every_public_name_from_its_home():
    stub = ast.parse((PACKAGES["ranklens"] / "__init__.pyi").read_text())
    seen: dict[str, str] = {}
    for node in stub.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert alias.asname == alias.name, f"write `{alias.name} as {alias.name}`"
                seen[alias.name] = node.module or ""
    homes = {"__version__": "version", **ranklens._LAZY}  # the runtime's table
    missing = sorted(set(homes) - set(seen))
    extra = sorted(set(seen) - set(homes))
    assert not missing and not extra, (
        f"ranklens/__init__.pyi and _LAZY differ: add to the stub {missing}, not public {extra}"
    )
    moved = {n: (seen[n], homes[n]) for n in homes if seen[n] != homes[n]}
    assert not moved, f"the stub imports these from elsewhere than _LAZY: {moved}"
