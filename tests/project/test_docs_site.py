"""The docs site: its API reference is generated from the public names (none left out), and
the whole site builds with mkdocs in strict mode (a broken link, a missing page or an
unresolved reference in a docstring fails), as CI builds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ranklens
from ranklens.app.api_reference import EXTRA, documented, pages

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_is_in_the_api_reference():
    public = {n for n in ranklens.__all__ if n not in ("__version__", "stats")}
    assert public | set(EXTRA) == documented()


def test_the_api_pages_are_generated_from_the_code():
    for file, text in pages().items():
        path = ROOT / "docs" / "api" / file
        assert path.read_text(encoding="utf-8") == text, (
            "regenerate: uv run python -m ranklens.app.api_reference docs/api"
        )


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").rglob("*.md")):
        name = page.relative_to(ROOT / "docs").as_posix()
        assert name in nav, f"{name} is not in mkdocs.yml's nav"


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / "site" / "api" / "evaluate" / "index.html").exists()
    assert (tmp_path / "site" / "search" / "search_index.json").exists()
