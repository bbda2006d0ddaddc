"""Span judging in tokens instead of characters (``tokenizer=``): every character range, of
the evidence spans and of the chunks, becomes the range of the tokens it overlaps, so the
evidence metrics count tokens (Chroma counts tokens of the OpenAI ``cl100k`` encoding; any
tokenizer of one's own serves).

A tokenizer is ``"words"`` (runs of word characters, and each other visible character),
``"whitespace"`` (runs of non-space characters), or a callable ``text -> tokens`` returning
each token's character offsets ``[(start, end), ...]`` (as Hugging Face tokenizers'
``offset_mapping``) or the token strings in order (found one after the other in the text;
byte-level tokens that are not substrings are refused with a message).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Run
from ..model.chunks import ChunkSpans
from ..model.spans import SpanLabels

_BUILTIN = {"words": re.compile(r"\w+|[^\w\s]"), "whitespace": re.compile(r"\S+")}

Tokenizer = str | Callable[[str], Sequence[Any]]


def token_offsets(tokenizer: Tokenizer, text: str) -> tuple[np.ndarray, np.ndarray]:
    """The character ``(starts, ends)`` of ``text``'s tokens."""
    if isinstance(tokenizer, str):
        pattern = _BUILTIN.get(tokenizer)
        if pattern is None:
            raise InputError(
                f"unknown tokenizer {tokenizer!r}: 'words', 'whitespace' or a callable"
            )
        spans = [m.span() for m in pattern.finditer(text)]
    else:
        out = list(tokenizer(text))
        if out and isinstance(out[0], str):
            spans, at = [], 0
            for tok in out:
                i = text.find(tok, at) if tok else at
                if i < 0:
                    raise InputError(
                        f"the tokenizer returned {tok!r}, which is not in the text after "
                        f"character {at}: give a tokenizer returning character offsets "
                        "[(start, end), ...] (byte-level tokens are not substrings)"
                    )
                spans.append((i, i + len(tok)))
                at = i + len(tok)
        else:
            try:
                spans = [(int(a), int(b)) for a, b in out]
            except (TypeError, ValueError):
                raise InputError(
                    "a tokenizer must return token strings or (start, end) character offsets"
                ) from None
    if not spans:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    arr = np.asarray(spans, dtype=np.int64)
    return arr[:, 0], arr[:, 1]


class TokenMap:
    """Each document's token offsets, computed once per document."""

    def __init__(self, tokenizer: Tokenizer, texts: Mapping[str, str]):
        self.tokenizer, self.texts = tokenizer, texts
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def offsets(self, doc: str) -> tuple[np.ndarray, np.ndarray] | None:
        if doc not in self._cache:
            text = self.texts.get(doc)
            if text is None:
                return None
            self._cache[doc] = token_offsets(self.tokenizer, text)
        return self._cache[doc]

    def interval(self, doc: str, a: int, b: int) -> tuple[int, int] | None:
        """The tokens ``[i, j)`` that the characters ``[a, b)`` of ``doc`` overlap."""
        offs = self.offsets(doc)
        if offs is None:
            return None
        ts, te = offs
        return int(np.searchsorted(te, a, "right")), int(np.searchsorted(ts, b, "left"))


def spans_in_tokens(Q: SpanLabels, tm: TokenMap) -> SpanLabels:
    """``Q`` with every span as the range of its tokens (a span over no token is dropped:
    it holds only whitespace)."""
    rows = Q.span_records()
    keep = []
    for r in rows:
        t = tm.interval(r["doc_id"], r["start"], r["end"])
        if t is None:
            raise InputError(f"tokens need the text of document {r['doc_id']!r}")
        if t[1] > t[0]:
            keep.append({**r, "start": t[0], "end": t[1]})
    return SpanLabels.from_columns(
        [r["query_id"] for r in keep], [r["doc_id"] for r in keep],
        [r["start"] for r in keep], [r["end"] for r in keep], [r["grade"] for r in keep],
        [r["group"] for r in keep], source="span labels (in tokens)",
        empty_queries=[str(q) for q in Q.query_ids],
    )  # fmt: skip


def run_in_tokens(R: Run, tm: TokenMap) -> Run:
    """``R``'s chunks as token ranges of their documents, their lengths in tokens (a chunk
    of a document without text is measured by its own text, when whole)."""
    sp = R.spans
    assert sp is not None
    n = len(sp.start)
    start, end, length = np.full(n, -1), np.full(n, -1), np.zeros(n, dtype=np.int64)
    for i in range(n):
        doc, a, b = sp.doc[i], int(sp.start[i]), int(sp.end[i])
        t = tm.interval(doc, a, b) if doc is not None and a >= 0 and b > a else None
        if t is not None:
            start[i], end[i], length[i] = t[0], t[1], t[1] - t[0]
            continue
        text = sp.text[i]
        if isinstance(text, str) and (sp.chars[i] < 0 or sp.chars[i] == len(text)):
            length[i] = len(token_offsets(tm.tokenizer, text)[0])
        elif sp.chars[i] > 0:
            raise InputError(
                f"run {R.name!r}: tokens need the text of document {doc!r} (a chunk of it "
                "has no place there and only its beginning is known): give the corpus"
            )
    spans = ChunkSpans(sp.doc, start.astype(np.int64), end.astype(np.int64), length, sp.text,
                       sp.codes)  # fmt: skip
    out = Run(R.query_ids, None, R.q, None, R.score, R.scored, R.name, R.unique_docs,
              docs=R.docs, spans=spans)  # fmt: skip
    out.failures = dict(R.failures)
    return out
