"""A labelled set of evidence spans from the shipped demo set, for the report, gate and hook
tests of span labels: each lighthouse's five passages joined into one document (about 900
characters), and each question's labelled passages its evidence spans in that document
(located by their text, graded as the passages are)."""

from __future__ import annotations

import ranklens
from ranklens.app.demo_data import load


def documents() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """``(texts, queries, passage -> document)``: one document per lighthouse."""
    ds = load()
    texts: dict[str, str] = {}
    parent: dict[str, str] = {}
    for pid, entry in ds.corpus.items():
        doc = pid.split("-")[0]
        parent[pid] = doc
        body = str(entry["text"])
        texts[doc] = f"{texts[doc]}\n\n{body}" if doc in texts else body
    return texts, dict(ds.queries), parent


def evidence_labels() -> tuple[ranklens.SpanLabels, dict[str, str], dict[str, str]]:
    """``(labels, texts, queries)``: each labelled passage of a question is an evidence span
    of its lighthouse's document, with the passage's grade (2: answers it, 1: related)."""
    ds = load()
    texts, queries, parent = documents()
    spans = {
        q: [{"doc_id": parent[p], "quote": str(ds.corpus[p]["text"]), "grade": g}
            for p, g in sorted(grades.items())]
        for q, grades in ds.qrels.to_dict().items()
    }  # fmt: skip
    return ranklens.SpanLabels.from_spans(spans, texts), texts, queries


def chunks(texts: dict[str, str], size: int, overlap: int = 0) -> list[dict]:
    """Fixed-size character chunks of every document, with their place."""
    out = []
    for doc, text in texts.items():
        step = max(size - overlap, 1)
        for s in range(0, len(text), step):
            e = min(s + size, len(text))
            out.append({"id": f"{doc}@{s}", "doc_id": doc, "start": s, "end": e,
                        "text": text[s:e]})  # fmt: skip
            if e == len(text):
                break
    return out


def bm25_retriever(items: list[dict], k: int = 10):
    """A BM25 retriever (bm25s) over ``items`` returning ranklens hits with their place."""
    import bm25s

    index = bm25s.BM25()
    index.index(bm25s.tokenize([c["text"] for c in items], stopwords="en", show_progress=False),
                show_progress=False)  # fmt: skip

    def retrieve(query: str) -> list[ranklens.Hit]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        docs, scores = index.retrieve(tokens, k=k, show_progress=False)
        return [
            ranklens.Hit(items[d]["id"], float(s), items[d]["text"], parent=items[d]["doc_id"],
                         start=items[d]["start"], end=items[d]["end"])
            for d, s in zip(docs[0].tolist(), scores[0].tolist())
        ]  # fmt: skip

    return retrieve
