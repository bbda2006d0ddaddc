"""Finding a piece of text in a document: where evidence quotes and retrieved chunks stand.

:func:`locate` looks for ``text`` in ``doc`` exactly first, then with both normalised
(compatibility-decomposed, NFKD, and case folded, so that composed and decomposed
forms of one text meet; runs of whitespace as one space, :func:`normalised`), then normalised
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
    """``text`` normalised (NFKD per character, case folded: ``"é"`` and ``"e\u0301"``
    both read ``"e\u0301"``; each run of whitespace one
    space, leading and trailing whitespace kept as one space) with, per normalised
    character, the start and end offset of the original characters it came from.

    A long text is normalised once per distinct character and assembled with array
    operations; a short one character by character (the same result, less overhead)."""
    if len(text) > 200:
        return _normalised_arrays(text)
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
        for c in _fold(ch):
            out.append(c)
            starts.append(i)
            ends.append(i + 1)
    return "".join(out), np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


def _normalised_arrays(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
    uniq, inverse = np.unique(codes, return_inverse=True)
    chars = [chr(c) for c in uniq.tolist()]
    space_of = np.array([ch.isspace() for ch in chars], dtype=bool)
    reps = np.empty(len(chars), dtype=object)
    reps[:] = [" " if sp else _fold(ch) for ch, sp in zip(chars, space_of)]
    lengths = np.array([len(r) for r in reps], dtype=np.int64)
    space = space_of[inverse]
    follows = np.zeros(len(codes), dtype=bool)
    follows[1:] = space[:-1]
    kept = np.flatnonzero(~(space & follows))  # the first character of each whitespace run
    reach = kept + 1
    run_start = space[kept]
    if run_start.any():
        last = np.flatnonzero(space & ~np.append(space[1:], False))
        reach[run_start] = last + 1
    n = lengths[inverse[kept]]
    out = "".join(reps[inverse[kept]].tolist())
    return out, np.repeat(kept, n).astype(np.int64), np.repeat(reach, n).astype(np.int64)


@lru_cache(maxsize=4096)
def _fold(ch: str) -> str:
    """One character compatibility-decomposed and case folded (decomposed again: a case
    fold may compose)."""
    return unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())


def _whole(hay: str, starts: np.ndarray, at: int, n: int) -> bool:
    """Whether the normalised match ``hay[at:at + n]`` covers whole characters: it neither
    begins nor ends inside one (a decomposed letter's base without its accent), nor is
    followed by a combining mark (``"cafe"`` is not found in ``"café"``)."""
    end = at + n
    if at > 0 and starts[at] == starts[at - 1]:
        return False
    if end < len(hay) and (starts[end] == starts[end - 1] or unicodedata.combining(hay[end])):
        return False
    return not unicodedata.combining(hay[at])


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
    return locate_normalised(text, doc)


def locate_normalised(text: str, doc: str) -> Found:
    """Every place ``text`` stands in ``doc`` once both are normalised (:func:`normalised`;
    the text's leading and trailing whitespace left out), as ``doc``'s own offsets, exact
    matches included."""
    needle = normalised(text)[0].strip()
    if not needle:
        return Found((), (), "")
    hay, starts, ends = _normalised_cached(doc)
    hits = [h for h in _all(hay, needle) if _whole(hay, starts, h, len(needle))]
    if not hits:  # whitespace a splitter dropped ("end.Next" for "end. Next"), or added
        hay, starts, ends = _spaceless_cached(doc)
        needle = needle.replace(" ", "")
        found = _all(hay, needle) if needle else []
        hits = [h for h in found if _whole(hay, starts, h, len(needle))]
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


FUZZY = "fuzzy"


@dataclass(frozen=True)
class Near:
    """The best approximate places of a text in a document (:func:`locate_fuzzy`):
    ``starts``/``ends`` of each place (document offsets), the edit ``distance`` of the
    normalised forms (the same at every place) and each place's ``quality``."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    distance: int
    quality: tuple[float, ...]

    @property
    def best(self) -> float:
        """The highest quality of any place (0 when there is none)."""
        return max(self.quality, default=0.0)


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype="<u4")


def _edit_rows(
    needle: np.ndarray, hay: np.ndarray, free_start: bool, limit: int | None = None
) -> np.ndarray:
    """Last row of the edit-distance table of ``needle`` against prefixes of ``hay``:
    ``D[j]`` = the fewest edits turning ``needle`` into a substring of ``hay`` ending at
    ``j`` (``free_start``: starting anywhere, Sellers 1980) or into ``hay[:j]``.

    One vectorised step per needle character: with ``T[j] = min(D'[j-1] + (h_j ≠ p_i),
    D'[j] + 1)`` from the previous row ``D'``, the insertions along the row are
    ``D[j] = min_{k ≤ j} (T[k] + j − k)``, a running minimum of ``T − j``. A row's minimum
    never decreases down the table, so with ``limit`` the work stops (and that row is
    returned) as soon as every entry exceeds it."""
    n = len(hay)
    ar = np.arange(n + 1, dtype=np.int64)
    row = np.zeros(n + 1, dtype=np.int64) if free_start else ar.copy()
    step = np.empty(n + 1, dtype=np.int64)
    masks: dict[int, np.ndarray] = {}
    for i, c in enumerate(needle.tolist(), 1):
        miss = masks.get(c)
        if miss is None:
            miss = masks[c] = (hay != c).astype(np.int64)
        step[0] = i
        np.minimum(row[:-1] + miss, row[1:] + 1, out=step[1:])
        row = np.minimum.accumulate(step - ar) + ar
        if limit is not None and row.min() > limit:
            break
    return row


def locate_fuzzy(
    text: str, doc: str, lo: int = 0, hi: int | None = None, min_quality: float = 0.0
) -> Near:
    """The places of ``doc[lo:hi]`` closest to ``text`` by edit distance, both normalised
    (:func:`normalised`): approximate substring matching (Sellers 1980), one vectorised
    step per character of ``text``, O(|text| · (hi − lo)).

    Each place is a substring ``m`` of the document at the least Levenshtein distance
    ``d`` from the normalised ``text`` ``t``; its quality is ``1 − d / max(|t|, |m|)``
    (1: the same normalised text). Places closer to each other than half the text's length
    are one place; of equal alignments the one whose length is nearest ``|t|`` is taken.
    Several places at the same distance are all returned, so that a caller can refuse to
    pick one. With ``min_quality`` q > 0, the search stops once no place can reach it (a
    quality of q needs ``d ≤ (1 − q)·|t| / q``): nothing is returned, and ``distance`` is
    a lower bound."""
    needle = normalised(text)[0].strip()
    hay, starts, ends = _normalised_cached(doc)
    hi = len(doc) if hi is None else hi
    a, b = int(np.searchsorted(starts, lo, "left")), int(np.searchsorted(starts, hi, "left"))
    if not needle or b <= a:
        return Near((), (), -1, ())
    p, h = _codes(needle), _codes(hay[a:b])
    m = len(p)
    limit = int((1 - min_quality) * m / min_quality + 1e-9) if min_quality > 0 else None
    last = _edit_rows(p, h, True, limit)
    dist = int(last.min())
    if limit is not None and dist > limit:
        return Near((), (), dist, ())
    ends_at = np.flatnonzero(last == dist)
    cuts = np.flatnonzero(np.diff(ends_at) > max(1, m // 2)) + 1
    out_s: list[int] = []
    out_e: list[int] = []
    quality: list[float] = []
    for cluster in np.split(ends_at, cuts):
        best: tuple[int, int, int] | None = None
        for j in cluster[:8].tolist():
            w0 = max(0, j - m - dist - 1)
            back = _edit_rows(p[::-1], h[w0:j][::-1], False)
            for k in np.flatnonzero(back == dist).tolist():
                if best is None or abs(k - m) < abs(best[1] - best[0] - m):
                    best = (j - k, j, k)
        if best is None or best[1] <= best[0]:
            continue
        s, e = best[0] + a, best[1] + a
        out_s.append(int(starts[s]))
        out_e.append(int(ends[e - 1]))
        quality.append(1.0 - dist / max(m, e - s))
    return Near(tuple(out_s), tuple(out_e), dist, tuple(quality))
