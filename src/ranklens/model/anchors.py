"""Finding a piece of text in a document: where evidence quotes and retrieved chunks stand.

:func:`locate` looks for ``text`` in ``doc`` exactly first, then with both normalised
(NFKC, case folded, runs of whitespace as one space, :func:`normalised`), then normalised
without any whitespace (a splitter that glued sentences: ``"end.Next"`` for ``"end. Next"``),
and maps a normalised match back to the document's own character offsets. It returns every
place the text stands, so that a caller can refuse an ambiguous quote instead of guessing.

Offsets are Python string indices (code points) into the document's text, half-open
``[start, end)``, as ``doc[start:end]`` reads them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

EXACT = "exact"
NORMALISED = "normalised"


@dataclass(frozen=True)
class Found:
    """Where a text stands in a document: ``starts``/``ends`` of every occurrence, and
    ``how`` it was found (``"exact"``, ``"normalised"``, or ``""`` when not at all)."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    how: str

    @property
    def unique(self) -> bool:
        return len(self.starts) == 1

    @property
    def span(self) -> tuple[int, int]:
        """The one occurrence (callers check :attr:`unique` first)."""
        return self.starts[0], self.ends[0]


def normalised(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """``text`` normalised (NFKC per character, case folded, each run of whitespace one
    space, leading and trailing whitespace kept as one space) with, per normalised
    character, the start and end offset of the original characters it came from."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if space:
                ends[-1] = i + 1
                continue
            out.append(" ")
            starts.append(i)
            ends.append(i + 1)
            space = True
            continue
        space = False
        for c in unicodedata.normalize("NFKC", ch).casefold():
            out.append(c)
            starts.append(i)
            ends.append(i + 1)
    return "".join(out), np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


@lru_cache(maxsize=256)
def _normalised_cached(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    return normalised(text)


@lru_cache(maxsize=256)
def _spaceless_cached(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """:func:`normalised` without its spaces (and their offsets)."""
    hay, starts, ends = _normalised_cached(text)
    keep = np.array([c != " " for c in hay], dtype=bool)
    return hay.replace(" ", ""), starts[keep], ends[keep]


def _all(haystack: str, needle: str) -> list[int]:
    out, at = [], haystack.find(needle)
    while at >= 0:
        out.append(at)
        at = haystack.find(needle, at + 1)
    return out


def locate(text: str, doc: str, near: int | None = None) -> Found:
    """Every place ``text`` stands in ``doc``: exact matches, else matches of the
    normalised forms (with whitespace collapsed, else removed) mapped back to ``doc``'s
    offsets (see the module docstring). With ``near``, an exact match starting there is
    preferred alone (a chunk whose recorded offset agrees with its text)."""
    if not text:
        return Found((), (), "")
    if near is not None and doc.startswith(text, near):
        return Found((near,), (near + len(text),), EXACT)
    hits = _all(doc, text)
    if hits:
        return Found(tuple(hits), tuple(h + len(text) for h in hits), EXACT)
    needle = normalised(text)[0].strip()
    if not needle:
        return Found((), (), "")
    hay, starts, ends = _normalised_cached(doc)
    hits = _all(hay, needle)
    if not hits:  # whitespace a splitter dropped ("end.Next" for "end. Next"), or added
        hay, starts, ends = _spaceless_cached(doc)
        needle = needle.replace(" ", "")
        hits = _all(hay, needle) if needle else []
    if not hits:
        return Found((), (), "")
    return Found(
        tuple(int(starts[h]) for h in hits),
        tuple(int(ends[h + len(needle) - 1]) for h in hits),
        NORMALISED,
    )


def agrees(text: str, doc: str, start: int, end: int) -> bool:
    """Whether ``doc[start:end]`` is ``text`` (exactly, or once both are normalised): a
    chunk's recorded offsets checked against its own text."""
    piece = doc[start:end]
    if piece == text:
        return True
    return normalised(piece)[0].strip() == normalised(text)[0].strip()
