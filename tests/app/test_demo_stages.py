"""The demo's stage section: its three stages do what they say, and the table it prints
holds the shares a walk over the labels and the stages' lists (made here without the
runner) gives; the page it writes has one bar per stage. The first stage here is a real
BM25 (bm25s, the suite's ``demo_bm25`` runs) given as a function; the demo's own run with
LlamaIndex's BM25 is ``ranklens demo`` (tests/app/test_cli.py)."""

from __future__ import annotations

import re

import pytest

from ranklens.app.demo_stages import (
    KEEP,
    PER_LIGHTHOUSE,
    stages_section,
    title_rescorer,
    two_per_lighthouse,
    words,
)
from ranklens.capture import Hit


def test_the_stage_callables():
    hits = [Hit(id=d) for d in ("lh01-a", "lh01-b", "lh02-a", "lh01-c", "lh03-a", "lh02-b")]
    kept = two_per_lighthouse("q", hits)
    assert [h.id for h in kept] == ["lh01-a", "lh01-b", "lh02-a", "lh03-a", "lh02-b"]
    corpus = {h.id: {"title": t} for h, t in zip(hits, ["x", "seals here", "x", "x", "seals", "x"])}
    ranked = title_rescorer(corpus)("Where do grey seals haul out?", hits)
    assert [h.id for h in ranked] == ["lh01-b", "lh03-a", "lh01-a", "lh02-a", "lh01-c"]
    assert len(ranked) == KEEP and words("Where, SEALS?") == {"where", "seals"}


def test_the_section_shows_the_walked_shares(demo_bm25, tmp_path):
    ds, runs = demo_bm25
    first = runs["bm25"]

    def bm25(query, query_id):
        return sorted(first[query_id].items(), key=lambda p: -p[1])

    text = stages_section(ds, {"bm25": (bm25, {})}, "bm25", tmp_path)
    # the same stages made apart from the pipeline: BM25's top 10, then the callables
    rescore = title_rescorer(ds.corpus)
    held = {"bm25": [], "diversity": [], "title": []}
    grades = ds.qrels.to_dict()
    units = {  # a group of interchangeable passages is one unit, found by any of them
        q: [g for g in groups if any(grades[q].get(d, 0) >= 1 for d in g)]
        for q, groups in ds.qrels.to_groups().items()
    }
    for q, docs in first.items():
        rel = units.get(q)
        if not rel:
            continue
        ranked = [Hit(id=d) for d in sorted(docs, key=lambda d: -docs[d])]  # Hits this time
        diverse = two_per_lighthouse(ds.queries[q], ranked)
        lists = {"bm25": ranked, "diversity": diverse, "title": rescore(ds.queries[q], diverse)}
        for stage, hits in lists.items():
            ids = {h.id for h in hits}
            held[stage].append(sum(any(d in ids for d in g) for g in rel) / len(rel))
    rows = {
        cells[0]: cells
        for line in text.splitlines()
        if "│" in line
        for cells in [[c.strip() for c in line.split("│")[1:-1]]]
    }
    head = next([c.strip() for c in line.split("┃")[1:-1]] for line in text.splitlines()
                if "┃" in line)  # fmt: skip
    at = head.index("held")
    for stage, shares in held.items():
        assert float(rows[stage][at]) == pytest.approx(sum(shares) / len(shares), abs=5e-5)
    assert float(rows["diversity"][at]) < float(rows["bm25"][at])  # the filter loses evidence
    # the line of counts adds up to the relevant passages
    counts = re.search(r"Of the (\d+) relevant units .*?: never retrieved (\d+), filtered "
                       r"(\d+), cut by rank (\d+), in the final five (\d+)\.",
                       " ".join(text.split()))  # fmt: skip
    total, *parts = map(int, counts.groups())
    assert total == sum(parts) == sum(len(u) for u in units.values())
    assert "One question's path" in text and "relevant unit" in text
    page = (tmp_path / "stages.html").read_text()
    assert page.count('class="held"') == 3 and f"at most {PER_LIGHTHOUSE}" in text
