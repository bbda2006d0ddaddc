"""examples/chunking_budget.py: chunkings compared at equal k and at an equal token budget on
SciFact (skipped without ../shared/data/scifact); docs/chunking.md shows what it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "chunking_budget.py"


def run(*args: str) -> str:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=True,
        timeout=600,
    ).stdout  # fmt: skip


def table(out: str) -> dict[str, list[float]]:
    """The printed table: chunking -> its numbers."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^(\d+ chars)\s+([\d.\s]+)$", line)
        if m:
            rows[m[1]] = [float(x) for x in m[2].split()]
    return rows


def test_without_the_data_the_script_says_so_and_stops(tmp_path):
    out = run("--scifact", str(tmp_path))
    assert out.startswith(f"no SciFact data at {tmp_path}")


def test_a_budget_reads_more_small_chunks_and_the_pairs_are_tested(shared):
    root = shared("scifact", "raw", "scifact.zip").parents[1]
    out = run("--claims", "20", "--documents", "80", "--scifact", str(root))
    rows = table(out)
    assert list(rows) == ["200 chars", "400 chars", "800 chars"]
    held = [r[4] for r in rows.values()]  # chunks within 1024 tokens, on average
    assert held[0] > held[1] > held[2]
    # the budget holds more than 10 small chunks: their recall there is at least @10's
    assert rows["200 chars"][1] >= rows["200 chars"][0]
    assert len(re.findall(r"^  evidence_\w+@\w+ +\d+ chars - \d+ chars: [+-]", out, re.M)) == 12


@pytest.mark.slow
def test_the_page_shows_what_the_script_prints(shared):
    root = shared("scifact", "raw", "scifact.zip").parents[1]
    out = run("--scifact", str(root))
    page = (ROOT / "docs" / "chunking.md").read_text(encoding="utf-8")
    shown = re.search(
        r"\n\n((?:    .*\n|\n)+)", page[page.index("examples/chunking_budget.py` prints:") :]
    )
    printed = "\n".join(line[4:] for line in shown[1].rstrip("\n").split("\n"))
    assert printed.strip() == out.strip()
