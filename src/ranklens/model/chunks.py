"""Where each chunk of a run of chunks stands: :class:`ChunkSpans`, the columns a
:class:`~ranklens.model.runs.Run` of retrieved chunks carries beside its rows (each chunk's
source document, character range, length and text), so judging can tell which evidence
spans (:mod:`ranklens.model.spans`) each chunk covers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .vocab import encode

NO_DOC = "\x00no document"
"""What a chunk without a source document is interned as (no label can name it)."""


@dataclass
class ChunkSpans:
    """Where each row of a run of chunks stands: ``doc`` (the source document's id),
    ``start``/``end`` (character offsets into its text; ``-1`` when unknown),
    ``chars`` (the chunk's length in characters; ``-1`` when unknown) and ``text`` (the
    chunk's text or its first characters, None when unknown), aligned with the run's rows."""

    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    chars: np.ndarray
    text: np.ndarray
    codes: tuple[np.ndarray, np.ndarray] | None = None

    def doc_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, vocabulary)`` of the source documents (interned once; a chunk without
        one has the code of :data:`NO_DOC`)."""
        if self.codes is None:
            self.codes = encode(np.where(self.doc == None, NO_DOC, self.doc))  # noqa: E711
        return self.codes

    def take(self, rows: np.ndarray) -> ChunkSpans:
        codes = None if self.codes is None else (self.codes[0][rows], self.codes[1])
        return ChunkSpans(self.doc[rows], self.start[rows], self.end[rows], self.chars[rows],
                          self.text[rows], codes)  # fmt: skip

    @classmethod
    def of(
        cls,
        docs: Sequence[Any],
        starts: Sequence[Any],
        ends: Sequence[Any],
        texts: Sequence[Any] | None = None,
        chars: Sequence[Any] | None = None,
        where: Sequence[str] | None = None,
    ) -> ChunkSpans:
        """Columns from sequences (``None`` offsets become ``-1``; ``chars`` from the
        offsets, else from the text). An offset or length that is not a whole number >= 0
        (NaN, 2.5, a text, True, -3), an end before its start or a text that is not a
        string is an :class:`~ranklens.errors.InputError` naming the chunk (``where``: each
        row's name, ``"chunk 2 of query 'q'"``; default ``"chunk row 2"``)."""
        n = len(docs)

        def name(i: int) -> str:
            return where[i] if where is not None else f"chunk row {i}"

        s = _offsets(starts, "start", name)
        e = _offsets(ends, "end", name)
        t = np.empty(n, dtype=object)
        t[:] = list(texts) if texts is not None else [None] * n
        for i, x in enumerate(t.tolist()):
            if x is not None and not isinstance(x, str):
                raise InputError(
                    f"{name(i)} (document {docs[i]!r}): its text must be a string or None, "
                    f"got {type(x).__name__}"
                )
        backwards = np.flatnonzero((s >= 0) & (e >= 0) & (e < s))
        if len(backwards):
            i = int(backwards[0])
            raise InputError(
                f"{name(i)} (document {docs[i]!r}): its range [{s[i]}, {e[i]}) ends before it "
                "starts (offsets are [start, end), start <= end)"
            )
        if chars is not None:
            c = _offsets(chars, "chars", name)
        else:
            c = np.array([len(x) if isinstance(x, str) else -1 for x in t], dtype=np.int64)
        known = (s >= 0) & (e > s)
        c = np.where(known, e - s, c)
        for i, x in enumerate(docs):
            if x is not None and (isinstance(x, bool) or not isinstance(x, (str, int, np.integer))):
                raise InputError(
                    f"{name(i)}: its document id must be a string or an integer (or None: "
                    f"unknown), got {type(x).__name__} {x!r}"[:300]
                )
        d = np.empty(n, dtype=object)
        d[:] = [None if x is None else str(x) for x in docs]
        return cls(d, s, e, c, t)


def _offsets(values: Sequence[Any], what: str, name: Any) -> np.ndarray:
    """Whole numbers >= 0 (None: ``-1``, unknown) as int64, else an error naming the row."""
    out = np.empty(len(values), dtype=np.int64)
    for i, x in enumerate(values):
        if x is None:
            out[i] = -1
            continue
        ok = not isinstance(x, (bool, np.bool_)) and isinstance(
            x, (int, np.integer, float, np.floating)
        )
        if ok and isinstance(x, (float, np.floating)):
            ok = bool(np.isfinite(x)) and float(x).is_integer()
        if not ok or x < 0:
            raise InputError(
                f"{name(i)}: its {what} must be a whole number >= 0 (a character offset) or "
                f"None, got {x!r}"
            )
        out[i] = int(x)
    return out
