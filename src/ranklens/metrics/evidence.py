"""Character-level metrics of evidence spans: how much of the evidence the top k chunks
hold, and how much of what they hold is evidence (Smith & Troynikov, "Evaluating
Chunking Strategies for Retrieval", Chroma technical report, 2024).

For a query with evidence ``E`` (the union of its spans' characters at or above the
relevance level) and retrieved chunks ``C_1, C_2, ...`` in rank order:

* evidence recall@k = ``|E ∩ (C_1 ∪ … ∪ C_k)| / |E|``;
* evidence precision@k = ``|E ∩ (C_1 ∪ … ∪ C_k)| / Σ_{r≤k} |C_r|`` (the characters the
  reader of the top k reads, overlapping chunks counted as often as they are read);
* evidence IoU@k = ``|E ∩ ∪C| / (Σ_{r≤k} |C_r| + |E| − |E ∩ ∪C|)``.

These follow Chroma's chunking evaluation, with the evidence as a set of characters: where
spans overlap, Chroma divides recall by the spans' summed lengths and adds each span's
uncovered part to IoU's denominator, so that a character labelled twice counts twice.
Judging's ``evidence_total`` switch says which (the ``chroma`` convention reproduces
Chroma's numbers; see docs/spans.md): the metrics read the evidence total and the covered
evidence as judging counted them, and never the switch. Each is a cumulative function of
per-rank arrays that judging computes once
(:class:`~ranklens.judging.spanmatch.SpanChars`): the evidence characters a rank covers
first (once as a set, ``new``; as the total counts them, ``counted``) and the chunk's
length. Characters are counted as code points of the documents' texts.
A query without evidence scores 0; a query without a retrieved chunk scores 0. With
``tokenizer=`` every count is in tokens (:mod:`ranklens.judging.tokens`).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ..errors import MetricNameError
from ..judging import LevelView
from ..judging.spanmatch import SpanChars
from .base import safe_div


def _chars(v: LevelView) -> SpanChars:
    c = v.j.chars
    if c is None or c.q is None:
        raise MetricNameError(
            "the evidence metrics (evidence_recall, evidence_precision, evidence_iou) need "
            "span labels and a run of chunks: ranklens.SpanLabels (docs/spans.md)"
        )
    return c


def _top(v: LevelView, k: int | None) -> tuple[np.ndarray, ...]:
    """Per query: evidence characters covered in the top k, characters read, the evidence
    total, and the covered evidence as the total counts it (IoU's uncovered part is the
    total less this)."""
    c = _chars(v)
    n_q = v.j.n_queries
    # _chars checked that the rows are placed: q and rank are set
    rank, rows_q = cast(np.ndarray, c.rank), cast(np.ndarray, c.q)
    keep = slice(None) if k is None else rank <= k
    q = rows_q[keep]
    covered = np.bincount(q, weights=c.new[keep].astype(np.float64), minlength=n_q)
    read = np.bincount(q, weights=c.length[keep].astype(np.float64), minlength=n_q)
    counted = covered
    if c.counted is not None and c.counted is not c.new:
        counted = np.bincount(q, weights=c.counted[keep].astype(np.float64), minlength=n_q)
    return covered, read, c.evidence.astype(np.float64), counted


def evidence_recall(v: LevelView, k: int | None = None) -> np.ndarray:
    """Evidence recall@k: the share of the evidence characters the top k chunks hold,
    ``|E ∩ ∪_{r≤k} C_r| / |E|`` (Chroma's recall).

    >>> import ranklens
    >>> labels = ranklens.SpanLabels.from_spans({"q": [("d", 10, 30)]})
    >>> run = ranklens.Run.from_chunks({"q": [{"doc_id": "d", "start": 0, "end": 20}]})
    >>> ranklens.evaluate(labels, run, ["evidence_recall@5"])["evidence_recall@5"]
    0.5
    """
    covered, _, evidence, _ = _top(v, k)
    return safe_div(covered, evidence)


def evidence_precision(v: LevelView, k: int | None = None) -> np.ndarray:
    """Evidence precision@k: the share of the characters read in the top k chunks that are
    evidence, ``|E ∩ ∪_{r≤k} C_r| / Σ_{r≤k} |C_r|`` (Chroma's precision).

    >>> import ranklens
    >>> labels = ranklens.SpanLabels.from_spans({"q": [("d", 10, 30)]})
    >>> chunks = [{"doc_id": "d", "start": 0, "end": 20}, {"doc_id": "d", "start": 20, "end": 60}]
    >>> v = ranklens.judge(labels, ranklens.Run.from_chunks({"q": chunks})).view()
    >>> evidence_precision(v, 1), evidence_precision(v, 2)
    (array([0.5]), array([0.33333333]))
    """
    covered, read, _, _ = _top(v, k)
    return safe_div(covered, read)


def evidence_iou(v: LevelView, k: int | None = None) -> np.ndarray:
    """Evidence IoU@k: ``|E ∩ ∪C| / (Σ_{r≤k} |C_r| + |E| − |E ∩ ∪C|)`` (Chroma's IoU: the
    characters read plus the evidence not read).

    >>> import ranklens
    >>> labels = ranklens.SpanLabels.from_spans({"q": [("d", 10, 30)]})
    >>> chunks = [{"doc_id": "d", "start": 0, "end": 20}, {"doc_id": "d", "start": 20, "end": 60}]
    >>> v = ranklens.judge(labels, ranklens.Run.from_chunks({"q": chunks})).view()
    >>> evidence_iou(v, 2)
    array([0.33333333])
    """
    covered, read, evidence, counted = _top(v, k)
    return safe_div(covered, read + evidence - counted)


def precision_omega(v: LevelView, k: int | None = None) -> np.ndarray:
    """Chroma's precision-Ω: the precision a reader would reach retrieving exactly the
    chunks that hold evidence, ``|E ∩ U| / (|U| + |E \\ U|)`` with ``U`` the union of every
    chunk of the chunking (``chunking=``) that overlaps the evidence ``E``: the best the
    chunking allows, whatever the retriever does (Smith & Troynikov 2024).

    >>> import ranklens
    >>> labels = ranklens.SpanLabels.from_spans({"q": [("d", 10, 30)]})
    >>> chunks = [{"doc_id": "d", "start": 0, "end": 20}, {"doc_id": "d", "start": 20, "end": 60}]
    >>> run = ranklens.Run.from_chunks({"q": chunks[:1]})
    >>> v = ranklens.judge(labels, run, chunking={"d": [(0, 20), (20, 60)]}).view()
    >>> precision_omega(v)  # evidence / the characters of the chunks that hold it
    array([0.33333333])
    """
    c = _chars(v)
    if c.omega is None:
        raise MetricNameError(
            "precision_omega needs the whole chunking: evaluate(..., chunking={doc: "
            "[(start, end), ...]}) or chunking=<a run of every chunk>"
        )
    return safe_div(*c.omega)


def evidence_chars(v: LevelView, k: int | None = None) -> np.ndarray:
    """The number of evidence characters of each query, ``|E|`` (summed over queries).

    >>> import ranklens
    >>> labels = ranklens.SpanLabels.from_spans({"q": [("d", 10, 30)]})
    >>> chunks = [{"doc_id": "d", "start": 0, "end": 20}, {"doc_id": "d", "start": 20, "end": 60}]
    >>> v = ranklens.judge(labels, ranklens.Run.from_chunks({"q": chunks})).view()
    >>> evidence_chars(v)  # |E|
    array([20.])
    """
    evidence: np.ndarray = _chars(v).evidence.astype(np.float64)
    return evidence
