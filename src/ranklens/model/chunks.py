"""Where each chunk of a run of chunks stands: :class:`ChunkSpans`, the columns a
:class:`~ranklens.model.runs.Run` of retrieved chunks carries beside its rows (each chunk's
source document, character range, length and text), so judging can tell which evidence
spans (:mod:`ranklens.model.spans`) each chunk covers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

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
    ) -> ChunkSpans:
        """Columns from sequences (``None`` offsets become ``-1``; ``chars`` from the
        offsets, else from the text)."""
        n = len(docs)
        s = np.array([-1 if x is None else int(x) for x in starts], dtype=np.int64)
        e = np.array([-1 if x is None else int(x) for x in ends], dtype=np.int64)
        t = np.empty(n, dtype=object)
        t[:] = list(texts) if texts is not None else [None] * n
        if chars is not None:
            c = np.array([-1 if x is None else int(x) for x in chars], dtype=np.int64)
        else:
            c = np.array([len(x) if isinstance(x, str) else -1 for x in t], dtype=np.int64)
        known = (s >= 0) & (e > s)
        c = np.where(known, e - s, c)
        d = np.empty(n, dtype=object)
        d[:] = [None if x is None else str(x) for x in docs]
        return cls(d, s, e, c, t)
