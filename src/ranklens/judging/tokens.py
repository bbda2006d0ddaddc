"""Span judging in tokens instead of characters (``tokenizer=``): every character range, of
the evidence spans and of the chunks, becomes the range of the tokens it overlaps, so the
evidence metrics count tokens (Chroma counts tokens of the OpenAI ``cl100k`` encoding; any
tokenizer of one's own serves).

A tokenizer is ``"words"`` (runs of word characters, and each other visible character),
``"whitespace"`` (runs of non-space characters), or a callable ``text -> tokens`` returning
each token's character offsets ``[(start, end), ...]`` (as Hugging Face tokenizers'
``offset_mapping``) or the token strings in order (found one after the other in the text;
byte-level tokens that are not substrings are refused with a message). Offsets must be
whole numbers within the text, in order; empty tokens (special tokens' ``(0, 0)``) are left
out. A tokenizer that raises, returns None or anything but a list of tokens is named with
the document it was given.

Spans of one group that touch in characters may share a token (``[0, 5)`` and ``[5, 10)``
of ``"lighthouse"``): in tokens they are one range of the group, never an overlap to refuse.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InputError, closest
from ..model import Run
from ..model.chunks import ChunkSpans
from ..model.spans import SpanLabels

_BUILTIN = {"words": re.compile(r"\w+|[^\w\s]"), "whitespace": re.compile(r"\S+")}

Tokenizer = str | Callable[[str], Sequence[Any]]


def token_offsets(
    tokenizer: Tokenizer, text: str, doc: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """The character ``(starts, ends)`` of ``text``'s tokens (``doc``: the document's id,
    for messages)."""
    about = f" on document {doc!r}" if doc is not None else ""
    if isinstance(tokenizer, str):
        pattern = _BUILTIN.get(tokenizer)
        if pattern is None:
            near = closest(tokenizer, _BUILTIN)
            hint = f"; did you mean {near!r}?" if near else ""
            raise InputError(
                f"tokenizer: unknown tokenizer {tokenizer!r}{hint} ('words', 'whitespace' or "
                "a callable)"
            )
        spans = [m.span() for m in pattern.finditer(text)]
    elif not callable(tokenizer):
        raise InputError(
            f"tokenizer must be 'words', 'whitespace' or a callable, got {type(tokenizer).__name__}"
        )
    else:
        try:
            raw = tokenizer(text)
        except Exception as exc:  # a user's callable: its fault named, with the document
            raise InputError(
                f"tokenizer: {_name(tokenizer)} raised {type(exc).__name__}{about}: {exc}"
            ) from exc
        if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
            hint = ""
            if isinstance(raw, Mapping) and "offset_mapping" in raw:
                hint = (" (a Hugging Face encoding: pass lambda text: tok(text, "
                        "return_offsets_mapping=True)['offset_mapping'])")  # fmt: skip
            raise InputError(
                f"tokenizer: {_name(tokenizer)} returned {type(raw).__name__}{about}: a "
                "tokenizer returns a list of token strings or of (start, end) character "
                f"offsets{hint}"
            )
        out = list(raw)
        if out and isinstance(out[0], str):
            spans = _found(out, text, tokenizer, about)
        else:
            spans = _offsets(out, text, tokenizer, about)
    if not spans:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    arr = np.asarray(spans, dtype=np.int64)
    return arr[:, 0], arr[:, 1]


def _name(tokenizer: Any) -> str:
    return f"the tokenizer {getattr(tokenizer, '__name__', type(tokenizer).__name__)!r}"


def _found(out: list[Any], text: str, tokenizer: Any, about: str) -> list[tuple[int, int]]:
    """Token strings found one after the other in ``text``."""
    spans, at = [], 0
    for tok in out:
        if not isinstance(tok, str):
            raise InputError(
                f"tokenizer: {_name(tokenizer)} returned {tok!r} among token strings{about}"
            )
        i = text.find(tok, at) if tok else at
        if i < 0:
            raise InputError(
                f"the tokenizer returned {tok!r}, which is not in the text after "
                f"character {at}{about}: give a tokenizer returning character offsets "
                "[(start, end), ...] (byte-level tokens are not substrings)"
            )
        if tok:
            spans.append((i, i + len(tok)))
        at = i + len(tok)
    return spans


def _offsets(out: list[Any], text: str, tokenizer: Any, about: str) -> list[tuple[int, int]]:
    """``(start, end)`` pairs checked: whole numbers, ``0 <= start <= end <= len(text)``,
    in order; empty ones (special tokens) left out."""
    spans: list[tuple[int, int]] = []
    for j, pair in enumerate(out):
        ok = isinstance(pair, (tuple, list, np.ndarray)) and len(pair) == 2
        if ok:
            a, b = pair
            ok = all(
                not isinstance(x, bool)
                and isinstance(x, (int, np.integer, float, np.floating))
                and float(x).is_integer()
                for x in (a, b)
            )
        if not ok:
            raise InputError(
                f"tokenizer: {_name(tokenizer)} returned {pair!r} as token {j}{about}: a "
                "tokenizer returns token strings or (start, end) character offsets (whole "
                "numbers)"
            )
        a, b = int(a), int(b)
        if not 0 <= a <= b <= len(text):
            raise InputError(
                f"tokenizer: {_name(tokenizer)} returned token {j} at ({a}, {b}){about}, "
                f"outside the text's {len(text)} characters (0 <= start <= end <= length)"
            )
        if a == b:
            continue
        if spans and (a < spans[-1][0] or b < spans[-1][1]):
            raise InputError(
                f"tokenizer: {_name(tokenizer)} returned token {j} at ({a}, {b}) after one at "
                f"{spans[-1]}{about}: offsets must be in the order of the text"
            )
        spans.append((a, b))
    return spans


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
            self._cache[doc] = token_offsets(self.tokenizer, text, doc)
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
    it holds only whitespace). Spans of one group whose tokens overlap (they touch, or
    share a token, in characters) become one range: the group's evidence in tokens."""
    rows = Q.span_records()
    keep: list[dict[str, Any]] = []
    for r in rows:
        t = tm.interval(r["doc_id"], r["start"], r["end"])
        if t is None:
            raise InputError(
                f"tokens need the text of document {r['doc_id']!r} (query {r['query_id']!r})"
            )
        if t[1] > t[0]:
            keep.append({**r, "start": t[0], "end": t[1]})
    keep = _merged(keep)
    return SpanLabels.from_columns(
        [r["query_id"] for r in keep], [r["doc_id"] for r in keep],
        [r["start"] for r in keep], [r["end"] for r in keep], [r["grade"] for r in keep],
        [r["group"] for r in keep], source="span labels (in tokens)",
        empty_queries=[str(q) for q in Q.query_ids],
    )  # fmt: skip


def _merged(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of one (query, group, document) whose token ranges overlap, merged."""
    rows = sorted(rows, key=lambda r: (r["query_id"], r["group"], r["doc_id"], r["start"]))
    out: list[dict[str, Any]] = []
    for r in rows:
        last = out[-1] if out else None
        if (
            last is not None
            and (last["query_id"], last["group"], last["doc_id"])
            == (r["query_id"], r["group"], r["doc_id"])
            and r["start"] < last["end"]
        ):
            last["end"] = max(last["end"], r["end"])
            continue
        out.append(dict(r))
    return out


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
            length[i] = len(token_offsets(tm.tokenizer, text, doc)[0])
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
