"""The demo's stage section: a three-stage pipeline over the demo's passages (the demo's
BM25 retriever, its top 10; at most two passages per lighthouse; a re-scoring by the overlap
of the question with each passage's title, cut to 5), run by the runner as a
:class:`~ranklens.Pipeline` and measured stage by stage (:func:`ranklens.evaluate_stages`):
what each stage holds, where each relevant passage was lost, and one question's path
through the stages."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

KEEP = 5
"""Passages the title stage keeps."""
METRICS = ["recall", "ndcg@5"]


def words(text: str) -> set[str]:
    """A text's content words: lower case, punctuation stripped, longer than three letters."""
    return {w.strip(".,?!:;'\"()").lower() for w in text.split() if len(w) > 3}


def doc_of(hit: Any) -> str:
    """The passage a hit names, in any form a stage may return: a :class:`~ranklens.Hit`
    (its parent, else its id), an ``(id, score)`` pair, a dict with ``id``, or an id."""
    if isinstance(hit, str):
        return hit
    if isinstance(hit, tuple):
        return str(hit[0])
    if isinstance(hit, dict):
        return str(hit.get("parent") or hit.get("id"))
    return str(getattr(hit, "parent", None) or getattr(hit, "id", None))


def title_rescorer(corpus: dict[str, dict[str, Any]]) -> Any:
    """The second stage: each hit re-scored by how many of the question's content words its
    passage's title holds (BM25's order breaks ties), the first :data:`KEEP` kept."""

    def by_title(query: str, hits: list[Any]) -> list[Any]:
        asked = words(query)

        def overlap(hit: Any) -> int:
            doc = corpus.get(doc_of(hit)) or {}
            return len(asked & words(str(doc.get("title") or "")))

        ranked = sorted(enumerate(hits), key=lambda p: (-overlap(p[1]), p[0]))
        return [h for _, h in ranked[:KEEP]]

    return by_title


PER_LIGHTHOUSE = 2
"""Passages of one lighthouse the third stage keeps."""


def two_per_lighthouse(query: str, hits: list[Any]) -> list[Any]:
    """The third stage: diversity by lighthouse (a passage id's ``lhNN`` prefix), the first
    :data:`PER_LIGHTHOUSE` passages of each kept: a filter that drops an answer when a
    question needs more passages of one lighthouse."""
    seen: dict[str, int] = {}
    out = []
    for hit in hits:
        lighthouse = doc_of(hit).split("-")[0]
        seen[lighthouse] = seen.get(lighthouse, 0) + 1
        if seen[lighthouse] <= PER_LIGHTHOUSE:
            out.append(hit)
    return out


def stages_section(
    dataset: Any,
    retrievers: dict[str, tuple[Any, dict[str, Any]]],
    baseline: str,
    folder: Path | None = None,
) -> str:
    """The section's text, the demo's ``baseline`` retriever (``{name: (retriever,
    options)}``, the demo's) as the first stage; the HTML page (the waterfall, every
    question's path) written to ``folder/stages.html`` when a folder is given."""
    from ..capture import Pipeline, run_retriever
    from ..settings import Calling, Statistics
    from ..stages import evaluate_stages

    if baseline not in retrievers:
        return ""
    retriever, options = retrievers[baseline]
    pipeline = Pipeline([
        ("bm25", retriever),
        ("diversity", two_per_lighthouse, "filter"),
        ("title", title_rescorer(dataset.corpus), "reranker"),
    ], name="pipeline")  # fmt: skip
    result = run_retriever(pipeline, dataset, calls=Calling(progress=False), **options)
    ev = evaluate_stages(dataset, result, METRICS, stats=Statistics(n_resamples=2000))
    fates = ev.attribution.fate_counts()
    per = ev.attribution.per_query()
    lost = per["relevant"] - per["found"]
    shown = str(ev.attribution.query_ids[int(lost.argmax())])
    head = (
        f"Where the evidence is lost: a pipeline of three stages ({baseline}'s top 10; at "
        f"most {PER_LIGHTHOUSE} passages per lighthouse; a re-scoring by the question's words "
        f"in each passage's title, cut to {KEEP}), run as a ranklens.Pipeline and measured "
        "stage by stage against the same labels (ranklens.evaluate_stages; ranklens stages "
        f"on run files; docs/stages.md). Of the {sum(fates.values())} relevant units (a "
        "passage, or a group of interchangeable ones): never retrieved "
        f"{fates['never retrieved']}, filtered {fates['filtered']}, cut by rank "
        f"{fates['cut by rank']}, in the final five {fates['found']}."
    )
    page = ""
    if folder is not None:
        path = folder / "stages.html"
        ev.to_html(path)
        page = f"The waterfall and every question's path: {path.resolve()}\n"
    tail = f"One question's path (StageEvaluation.query):\n{ev.query_text(shown)}{page}"
    return (
        "\n" + "\n".join(textwrap.wrap(head, 92)) + "\n\n" + ev.table(color=False)
        + "\n" + tail
    )  # fmt: skip
