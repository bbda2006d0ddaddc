"""Every code block of README.md and docs/*.md runs as a reader would run it.

A Python block runs in a fresh namespace, in a folder of its page's own (each page gets a
new one), unless its first line says what it continues (docs/setup.md states the
convention, CONTRIBUTING.md too):

- ``# continues the block above``: the namespace the page's previous Python block left;
- ``# continues docs/setup.md``: the namespace docs/setup.md's blocks leave, and the files
  they write copied into the page's folder.

So a block can use only what it defines or imports, what a block it names made, and files
that a block before it on the page wrote (or that docs/setup.md writes, when it says it
continues that page). Shell blocks run each ``ranklens`` command through the CLI in the
page's folder; a shell block whose first line is ``# continues docs/setup.md`` gets that
page's files first. Blocks that are not code (output shown on the page, a tree, a TOML
snippet) are listed below by their first line; any other block fails this test until it
is run here.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SETUP = ROOT / "docs" / "setup.md"

ABOVE = "# continues the block above"
SETUP_MARK = "# continues docs/setup.md"
NOT_CODE = (
    " app/",  # architecture.md: the floors drawn as text
    "[project.entry-points",  # architecture.md: a TOML snippet
    "retrieval_gt = ",  # grouped.md: the AutoRAG shapes, illustrative
    "trec {",  # grouped.md: printed output (checked by test_docs.py)
    "redundant {",
    "mrr@10 under each convention",  # conventions.md: generated explain output (test_conventions)
    "map under each convention",
    "ndcg@5 under each convention",
    "P@5 under each convention",
    "- llamaindex: evidence precision@5",  # chunking.md: the example's output (test_examples)
)
EXECUTED_ELSEWHERE = {"architecture.md": "tests/project/test_architecture.py"}
NOT_YET_MARKED: tuple[str, ...] = ()
"""Pages whose blocks still run as one session after docs/setup.md, as if each began with
``# continues docs/setup.md`` or ``# continues the block above``: their blocks get those
first lines, then these names leave this list."""
# the suite itself; the demo (run by tests/app/test_cli.py and in CI's last step)
SKIPPED_COMMANDS = ("uv run pytest", "uv run ranklens demo", "ranklens demo")
INSTALL_COMMANDS = (
    "python3 scripts/get_uv.py",
    'export PATH="$HOME/.local/bin:$PATH"',
    "python3 -m venv",
    "pip install ",
)
"""The README's first-contact lines, run for real on the system's Python by
tests/project/test_first_contact.py."""


def blocks(page: Path) -> list[tuple[str, str]]:
    """``(language, code)`` of each fenced block of ``page``, in order."""
    return [(lang, code) for _, lang, code in located_blocks(page)]


def located_blocks(page: Path) -> list[tuple[int, str, str]]:
    """``(line of the code's first line, language, code)`` of each fenced block."""
    text = page.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start(2)) + 1, m.group(1), m.group(2))
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
    ]


def _commands(code: str) -> list[list[str]]:
    joined = re.sub(r"\\\n\s*", " ", code)
    out = []
    for line in joined.splitlines():
        line = line.split("  #")[0].strip()
        if not line or line.startswith("#") or line.startswith(SKIPPED_COMMANDS + INSTALL_COMMANDS):
            continue
        words = shlex.split(line)
        if words[:2] == ["uv", "run"]:
            words = words[2:]
        assert words[0] == "ranklens", f"shell block runs something else: {line}"
        out.append(words[1:])
    return out


def _run(code: str, ns: dict, where: str, line: int = 1) -> None:
    """Run ``code`` in ``ns``; a traceback names the page's own line."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(compile("\n" * (line - 1) + code, where, "exec"), ns)


@pytest.fixture(scope="module")
def setup_page(tmp_path_factory) -> tuple[dict, Path]:
    """docs/setup.md run once, as a reader runs it: its namespace and its folder."""
    for package in ("ranklens_llamaindex", "ranklens_langchain", "ranklens_haystack"):
        pytest.importorskip(package)
    folder = tmp_path_factory.mktemp("setup")
    ns: dict = {"__name__": "docs_setup"}
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        for i, (line, lang, code) in enumerate(located_blocks(SETUP)):
            assert lang == "python", f"docs/setup.md holds Python blocks only, block {i} is {lang}"
            assert i == 0 or code.startswith(ABOVE), "docs/setup.md's blocks continue each other"
            _run(code, ns, str(SETUP), line)
    finally:
        os.chdir(cwd)
    return ns, folder


class Page:
    """One page's run: its folder, the namespace its last Python block left."""

    def __init__(self, page: Path, folder: Path, setup) -> None:
        self.page, self.folder, self._setup = page, folder, setup
        self.last: dict | None = None
        self.has_setup_files = False

    def setup_namespace(self) -> dict:
        ns, made = self._setup()
        if not self.has_setup_files:
            for path in made.rglob("*"):
                if path.is_file() and not (self.folder / path.relative_to(made)).exists():
                    (self.folder / path.relative_to(made)).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(path, self.folder / path.relative_to(made))
            self.has_setup_files = True
        return dict(ns)

    def namespace_for(self, code: str) -> dict:
        first = code.splitlines()[0] if code.strip() else ""
        if self.page.name in NOT_YET_MARKED:
            return self.last if self.last is not None else self.setup_namespace()
        if first.startswith(ABOVE):
            assert self.last is not None, f"{self.page.name}: {first!r} with no Python block above"
            return self.last
        if first.startswith(SETUP_MARK):
            return self.setup_namespace()
        assert not first.startswith("# continues"), f"{self.page.name}: unknown mark {first!r}"
        return {"__name__": f"readme_{self.page.stem}"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_code_block_runs(page, tmp_path, request, monkeypatch, capsys):
    from ranklens.app.cli import main

    monkeypatch.chdir(tmp_path)
    run = Page(page, tmp_path, lambda: request.getfixturevalue("setup_page"))
    ran = 0
    for line, lang, code in located_blocks(page):
        first = code.splitlines()[0] if code.strip() else ""
        if lang in ("", "text", "toml") and first.startswith(NOT_CODE):
            continue
        if lang == "python" and page.name in EXECUTED_ELSEWHERE:
            ran += 1
            continue
        if lang == "python":
            ns = run.namespace_for(code)
            _run(code, ns, str(page), line)
            run.last = ns
            ran += 1
        elif lang in ("bash", "sh", "") and first.lstrip().startswith(
            ("ranklens", "uv run", SETUP_MARK, *INSTALL_COMMANDS)
        ):
            if first.startswith(SETUP_MARK) or page.name in NOT_YET_MARKED:
                run.setup_namespace()
            for argv in _commands(code):
                status = main(argv)
                out = capsys.readouterr()
                assert status == 0, (argv, out.err)
            ran += 1
        else:
            pytest.fail(
                f"{page.name}: a ```{lang} block starting {first!r} is neither run nor listed"
            )
    if page.name == "README.md":  # a front page: a few blocks, each run
        assert ran >= 5
    if page.name == "sweeps.md":  # `ranklens sweep sweep.toml` chose a configuration
        import json

        selection = json.loads((tmp_path / "sweep.json").read_text())["selection"]
        assert selection and all(s["chosen"] in s["feasible"] for s in selection.values())


def test_a_block_runs_in_a_fresh_namespace_unless_it_says_what_it_continues(tmp_path):
    """The harness itself: a name from another block is a NameError unless the block is
    marked, and a mark names only what exists."""
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n```\n\n```python\nprint(x)\n```\n")
    run = Page(page, tmp_path, lambda: ({}, tmp_path))
    first, second = (code for _, code in blocks(page))
    run.last = run.namespace_for(first)
    _run(first, run.last, "page.md")
    with pytest.raises(NameError):
        _run(second, run.namespace_for(second), "page.md")
    marked = f"{ABOVE}\n{second}"
    _run(marked, run.namespace_for(marked), "page.md")
    with pytest.raises(AssertionError, match="unknown mark"):
        run.namespace_for("# continues somewhere else\n")
    with pytest.raises(AssertionError, match="no Python block above"):
        Page(page, tmp_path, dict).namespace_for(marked)
