"""Label repair timed against its anchors in one run (CPU time, ratios):

* ``ranklens``: :func:`ranklens.reanchor` of 10^4 evidence spans (sentences of SciFact
  abstracts, two per query) in a copy of the corpus edited as re-ingestion edits it: a
  third of the documents changed (an intro paragraph, a paragraph in the middle, whitespace
  inside a sentence, a letter changed, a sentence deleted, the abstract ingested twice, the
  document removed);
* ``difflib``: the usual diff-based repair, each span's offsets mapped through
  ``difflib.SequenceMatcher(old, new).get_opcodes()`` of its document (a span whose ends
  fall in replaced text is lost), the stdlib's answer;
* ``find``: ``str.find`` of each span's old text in its new document, exact only (a floor
  on the time of any repair that reads the text).

For each, the share of spans put back on their true place (known from the edits) and the
spans put on a wrong one (silently, for the anchors; ranklens reports ambiguity instead).

    uv run python benchmarks/bench_reanchor.py [--spans 10000] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import random
import re
import time
from pathlib import Path

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact" / "corpus.jsonl"
INTRO = "Editor's note: this abstract was revised after publication.\n\n"
EXTRA = " A paragraph added on re-ingestion, which says nothing of the claims at all."
EDITS = ("intro", "middle", "spaces", "typo", "delete", "repeat", "remove")


def cpu(fn, *args, **kwargs):
    t = time.process_time()
    out = fn(*args, **kwargs)
    return time.process_time() - t, out


def sentences(text: str) -> list[tuple[int, int]]:
    cuts = [0, *(m.end() for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z])", text)), len(text)]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b - a > 40]


def make(path: Path, n_spans: int, seed: int = 0):
    """Old texts, spans ``(query, doc, start, end)``, the edited texts and each span's true
    new place (None when it is gone)."""
    rng = random.Random(seed)
    texts = {}
    for line in path.open(encoding="utf-8"):
        rec = json.loads(line)
        texts[str(rec["_id"])] = rec["text"]
    docs = [d for d in texts if len(sentences(texts[d])) >= 3]
    spans = []
    while len(spans) < n_spans:
        d = rng.choice(docs)
        for s, e in rng.sample(sentences(texts[d]), 2):
            spans.append((f"q{len(spans) // 2}", d, s, e))
    used = sorted({d for _, d, _, _ in spans})
    edited = {d: rng.choice(EDITS) for d in rng.sample(used, len(used) // 3)}
    new = dict(texts)
    cut = {}  # the edited sentence of each edited document, and the length change there
    for d, how in edited.items():
        t = texts[d]
        sent = sentences(t)
        a, b = sent[len(sent) // 2]
        cut[d] = (a, b, 0)
        if how == "intro":
            new[d] = INTRO + t
        elif how == "middle":
            new[d] = t[:a] + EXTRA.strip() + " " + t[a:]
        elif how == "spaces":
            piece = t[a:b].replace(" ", "  ", 2).replace(" ", "\n", 1)
            new[d] = t[:a] + piece + t[b:]
            cut[d] = (a, b, len(piece) - (b - a))
        elif how == "typo":
            i = next(i for i in range((a + b) // 2, b) if t[i].islower())
            new[d] = t[:i] + ("q" if t[i] != "q" else "z") + t[i + 1 :]
        elif how == "delete":
            new[d] = t[:a] + t[b:]
            cut[d] = (a, b, a - b)
        elif how == "repeat":
            new[d] = INTRO + t + "\n\n" + t
        else:
            del new[d]
    truth = {(q, d, s): true_place(edited.get(d), cut.get(d), s, e) for q, d, s, e in spans}
    return texts, spans, new, truth, edited


def true_place(how, cut, s, e):
    """Where a span ``[s, e)`` truly went under its document's edit (None: nowhere, or
    two equally good places: the abstract ingested twice)."""
    if how is None or how == "typo":
        return (s, e)
    if how in ("repeat", "remove"):
        return None
    a, _, k = cut
    if how == "intro":
        return (s + len(INTRO), e + len(INTRO))
    if how == "middle":
        return (s + len(EXTRA), e + len(EXTRA)) if s >= a else (s, e)
    if s == a:
        return None if how == "delete" else (s, e + k)
    return (s + k, e + k) if s > a else (s, e)


def by_difflib(texts, spans, new):
    out = []
    maps = {}
    for _, d, s, e in spans:
        if d not in new:
            out.append(None)
            continue
        if d not in maps:
            old = texts[d]
            same = [("equal", 0, len(old), 0, len(old))]
            matcher = difflib.SequenceMatcher(None, old, new[d], autojunk=False)
            maps[d] = same if old == new[d] else matcher.get_opcodes()
        out.append(_through(maps[d], s, e))
    return out


def _through(ops, s, e):
    def one(x, end):
        for tag, i1, i2, j1, _ in ops:
            if i1 <= x < i2 or (end and i1 < x <= i2):
                return j1 + (x - i1) if tag == "equal" else None
        return None

    a, b = one(s, False), one(e, True)
    return (a, b) if a is not None and b is not None and b > a else None


def by_find(texts, spans, new):
    out = []
    for _, d, s, e in spans:
        doc = new.get(d)
        at = doc.find(texts[d][s:e]) if doc is not None else -1
        out.append((at, at + e - s) if at >= 0 else None)
    return out


def score(found, truth):
    right = sum(f is not None and f == t for f, t in zip(found, truth))
    wrong = sum(f is not None and f != t for f, t in zip(found, truth))
    return right, wrong


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=10_000)
    ap.add_argument("--corpus", type=Path, default=SCIFACT, help="a BEIR corpus.jsonl")
    args = ap.parse_args()
    import ranklens
    from ranklens.model.spans import SpanLabels

    texts, spans, new, truth, edited = make(args.corpus, args.spans)
    labels = SpanLabels.from_columns([q for q, *_ in spans], [d for _, d, _, _ in spans],
                                     [s for *_, s, _ in spans], [e for *_, e in spans],
                                     texts=texts)  # fmt: skip
    records = labels.span_records()  # the labels' row order
    spans = [(r["query_id"], r["doc_id"], r["start"], r["end"]) for r in records]
    truth = [truth[q, d, s] for q, d, s, _ in spans]
    print(f"{len(spans)} spans in {len({d for _, d, _, _ in spans})} SciFact abstracts; "
          f"{len(edited)} edited: "
          + ", ".join(f"{sum(v == k for v in edited.values())} {k}" for k in EDITS))  # fmt: skip
    t_ours, result = cpu(ranklens.reanchor, labels, new)
    ours = [(r["new_start"], r["new_end"]) if r["kept"] else None for r in result.rows]
    t_diff, diff = cpu(by_difflib, texts, spans, new)
    t_find, found = cpu(by_find, texts, spans, new)
    print(result.summary())
    fz = result.by_status("fuzzy")
    print(f"{'':10} {'CPU s':>8} {'right':>7} {'wrong':>7}  (of {len(spans)}; wrong = a place "
          "other than the true one, or one where there is none)")  # fmt: skip
    for name, t, got in (("ranklens", t_ours, ours), ("difflib", t_diff, diff),
                         ("find", t_find, found)):  # fmt: skip
        right, wrong = score(got, truth)
        print(f"{name:10} {t:8.3f} {right:7d} {wrong:7d}")
    print(f"ranklens / difflib: {t_ours / t_diff:.2f}x the time; ranklens / find: "
          f"{t_ours / max(t_find, 1e-9):.1f}x; {len(fz)} fuzzy spans")  # fmt: skip


if __name__ == "__main__":
    main()
