"""The demo's span-label section: one labelled set (the words that answer each question),
three chunkings of the same corpus (whole passages, sentences, 60-character windows), one
BM25 retriever each, compared with paired tests on the ranking metrics and on how much of
the evidence the top 5 chunks hold and how much of what they hold is evidence."""

from __future__ import annotations

import re
import textwrap
from typing import Any

METRICS = ["recall@5", "evidence_recall@5", "evidence_precision@5", "evidence_iou@5"]


def chunkings(corpus: dict[str, dict[str, Any]]) -> dict[str, list[tuple[str, int, int]]]:
    """``{chunking: [(doc, start, end), ...]}`` of the corpus's texts."""
    out: dict[str, list[tuple[str, int, int]]] = {"passages": [], "sentences": [], "windows": []}
    for d, v in corpus.items():
        t = v["text"]
        out["passages"].append((d, 0, len(t)))
        out["sentences"] += [(d, m.start(), m.end()) for m in re.finditer(r"[^.!?]+[.!?]?", t)
                             if m.group().strip()]  # fmt: skip
        out["windows"] += [(d, s, min(s + 60, len(t))) for s in range(0, len(t), 45)]
    return out


def spans_section() -> str:
    """The section's text (empty when no framework package offers a BM25 retriever over
    chunks: the LlamaIndex one does, through its adapter plugin)."""
    from ..capture import plugins, run_retriever
    from ..comparison import ReportContents, compare
    from ..settings import Calling, Statistics
    from .demo_data import load_spans

    bm25 = next((p.bm25 for _, p in plugins() if p.bm25 is not None), None)
    if bm25 is None:
        return ""
    ds = load_spans()
    results = {}
    for name, chunks in chunkings(ds.corpus).items():
        texts = [(d, s, e, ds.corpus[d]["text"][s:e]) for d, s, e in chunks]
        results[name] = run_retriever(bm25(texts, 5), ds, key="parent", name=name,
                                      calls=Calling(progress=False))  # fmt: skip
    report = compare(ds, results, METRICS, baseline="passages", stats=Statistics(test="t", ci="t"),
                     contents=ReportContents(hole_range=False, tie_range=False, curves=False,
                                             drilldown=None))  # fmt: skip
    rows = []
    for r in report.runs:
        beats = {c.metric: c for c in report.comparisons if c.run == r}
        cells = []
        for m in METRICS:
            mark = " *" if m in beats and beats[m].significant else ""
            cells.append(f"{report.value(r, m):.3f}{mark}")
        rows.append(f"  {r:<10} " + "  ".join(f"{c:>9}" for c in cells))
    head = (
        "Span labels: the same 40 questions labelled by the words that answer them "
        f"({ds.qrels.n_spans} evidence spans; ranklens.SpanLabels, docs/spans.md), the corpus "
        "cut three ways, BM25 (LlamaIndex) on each, key='parent'. The labels do not change "
        "with the chunking: recall@5 counts the evidence spans found, evidence_recall and "
        "evidence_precision the characters (Chroma's definitions); * differs from passages "
        "(paired t test, Holm)."
    )
    shown = ("recall@5", "ev.rec@5", "ev.prec@5", "ev.IoU@5")
    header = "  " + " " * 10 + " " + "  ".join(f"{m:>9}" for m in shown)
    v = report.value
    tail = (
        f"Whole passages find {v('passages', 'recall@5'):.0%} of the answers in the top 5, "
        f"but only {v('passages', 'evidence_precision@5'):.0%} of what they hold is the "
        f"answer; sentences read {v('sentences', 'evidence_precision@5'):.0%} evidence and "
        f"find {v('sentences', 'recall@5'):.0%} of the answers: the trade a chunk size makes, "
        "measured on labels that stay the same."
    )
    return (
        "\n" + "\n".join(textwrap.wrap(head, 92)) + "\n\n" + header + "\n" + "\n".join(rows)
        + "\n" + "\n".join(textwrap.wrap(tail, 92)) + "\n"
    )  # fmt: skip
