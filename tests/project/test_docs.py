"""The docs say what the code does: generated pages equal their generators, the code in
docs/grouped.md prints what the page shows, and every local link in the README resolves."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from ranklens.app.reference import metric_reference

ROOT = Path(__file__).resolve().parents[2]


def test_metric_reference_is_generated_from_the_code():
    text = (ROOT / "docs" / "metrics.md").read_text()
    assert text == metric_reference(), (
        "regenerate: uv run python -m ranklens.app.reference metrics > docs/metrics.md"
    )


def test_grouped_page_examples_print_what_they_show():
    page = (ROOT / "docs" / "grouped.md").read_text()
    examples = re.findall(r"```python\n(.*?)```\n\nprints\n\n```\n(.*?)```", page, re.S)
    assert len(examples) == 2
    namespace: dict = {}
    for code, shown in examples:  # in order, in one namespace, as a reader runs them
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "docs/grouped.md", "exec"), namespace)
        assert buf.getvalue() == shown


def test_readme_links_resolve():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme)
    assert links, "the README links its docs"
    for link in links:
        assert (ROOT / link).exists(), link


def test_dataset_schema_table_is_generated_from_the_code():
    from ranklens.io.records import dataset_fields_table

    assert dataset_fields_table() in (ROOT / "docs" / "datasets.md").read_text()
