"""Text measures shared by synthesis and the dataset checks: word tokens, sentences with
their character offsets, word n-gram shingles as a sparse incidence matrix, and the two
overlap scores computed on it for many texts at once.

* **containment** of ``a`` in ``b`` (Broder, *On the resemblance and containment of
  documents*, 1997): ``|S(a) ∩ S(b)| / |S(a)|`` over word n-gram shingle sets ``S``; 1 when
  every n-gram of ``a`` occurs in ``b``. How much of a question copies a passage.
* **resemblance** (Jaccard): ``|S(a) ∩ S(b)| / |S(a) ∪ S(b)|``; near-duplicate questions.

Both are exact (no MinHash sketch): the intersections of every pair are one sparse matrix
product ``A · Bᵀ`` of 0/1 incidence matrices (scipy.sparse), so 10^4 questions against
10^5 passages is one product, not a Python loop over pairs.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])")


def normalise(text: str) -> str:
    """Lower-cased NFKC text with runs of whitespace and punctuation folded to one space:
    two questions equal after this are exact duplicates."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(WORD.findall(text))


def words(text: str) -> list[str]:
    """The lower-cased word tokens of ``text`` (letters, digits, inner apostrophes)."""
    return WORD.findall(unicodedata.normalize("NFKC", text).lower())


def sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of each sentence of ``text`` (split after ``.``,
    ``!`` or ``?`` followed by space and a capital or digit), surrounding spaces excluded."""
    out, start = [], 0
    for m in SENTENCE_END.finditer(text):
        out.append((start, m.start() + len(m.group(0).rstrip())))
        start = m.end()
    out.append((start, len(text)))
    spans = []
    for s, e in out:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
    return spans


def shingles(text: str, n: int = 2) -> set[str]:
    """The word n-grams of ``text`` (the words themselves for a text shorter than ``n``)."""
    w = words(text)
    if len(w) < n:
        return {" ".join(w)} if w else set()
    return {" ".join(w[i : i + n]) for i in range(len(w) - n + 1)}


class Shingled:
    """Texts as a sparse 0/1 matrix over one shingle vocabulary (rows: texts)."""

    def __init__(self, texts: Sequence[str], n: int = 2, vocab: dict[str, int] | None = None):
        from scipy import sparse

        self.vocab: dict[str, int] = {} if vocab is None else vocab
        rows, cols = [], []
        for i, t in enumerate(texts):
            for s in shingles(t, n):
                j = self.vocab.setdefault(s, len(self.vocab))
                rows.append(i)
                cols.append(j)
        self.n = n
        self.matrix = sparse.csr_matrix(
            (np.ones(len(rows), dtype=np.float32), (rows, cols)),
            shape=(len(texts), max(len(self.vocab), 1)),
        )
        self.sizes = np.asarray(self.matrix.sum(axis=1)).ravel()

    def against(self, other: Shingled) -> Any:
        """Sparse ``|S(a_i) ∩ S(b_j)|`` for every row ``i`` here and ``j`` of ``other``
        (built over the same vocabulary)."""
        a, b = self.matrix, other.matrix
        width = max(a.shape[1], b.shape[1])
        a.resize((a.shape[0], width))
        b.resize((b.shape[0], width))
        return (a @ b.T).tocsr()


def containment_pairs(a: Sequence[str], b: Sequence[str], n: int = 2) -> np.ndarray:
    """``containment(a[i], b[i])`` for aligned pairs (0 for an empty ``a[i]``)."""
    out = np.zeros(len(a))
    for i, (x, y) in enumerate(zip(a, b)):
        sx = shingles(x, n)
        if sx:
            out[i] = len(sx & shingles(y, n)) / len(sx)
    return out


def best_containment(
    queries: Sequence[str],
    passages: Sequence[str],
    n: int = 2,
    exclude: Sequence[set[int]] | None = None,
    chunk: int = 512,
) -> tuple[np.ndarray, np.ndarray]:
    """For each query, the highest containment in any passage (leaving out the passage
    indices in ``exclude[i]``) and that passage's index (-1 when none shares a shingle):
    sparse products over chunks of ``chunk`` queries, so memory stays bounded."""
    vocab: dict[str, int] = {}
    q = Shingled(queries, n, vocab)
    p = Shingled(passages, n, vocab)
    best = np.zeros(len(queries))
    where = np.full(len(queries), -1)
    width = max(q.matrix.shape[1], p.matrix.shape[1])
    q.matrix.resize((q.matrix.shape[0], width))
    p.matrix.resize((p.matrix.shape[0], width))
    pt = p.matrix.T.tocsc()
    for lo in range(0, len(queries), chunk):
        block = (q.matrix[lo : lo + chunk] @ pt).tocoo()
        rows, cols, x = block.row + lo, block.col, block.data.astype(np.float64)
        if exclude is not None:
            keep = np.array(
                [c not in exclude[r] for r, c in zip(rows.tolist(), cols.tolist())], dtype=bool
            )
            rows, cols, x = rows[keep], cols[keep], x[keep]
        if not len(x):
            continue
        share = x / np.maximum(q.sizes[rows], 1)
        order = np.lexsort((cols, -share, rows))
        rows, cols, share = rows[order], cols[order], share[order]
        first = np.r_[True, rows[1:] != rows[:-1]]
        best[rows[first]] = share[first]
        where[rows[first]] = cols[first]
    return best, where


def near_duplicates(texts: Sequence[str], threshold: float, n: int = 1) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, whose resemblance (Jaccard of word n-gram sets) is at
    least ``threshold``: one sparse self-product, upper triangle only."""
    s = Shingled(texts, n)
    inter = s.against(s)
    inter = inter.tocoo()
    keep = inter.row < inter.col
    i, j, x = inter.row[keep], inter.col[keep], inter.data[keep]
    union = s.sizes[i] + s.sizes[j] - x
    jac = np.divide(x, union, out=np.zeros_like(x, dtype=np.float64), where=union > 0)
    hit = jac >= threshold
    order = np.lexsort((j[hit], i[hit]))
    return list(zip(i[hit][order].tolist(), j[hit][order].tolist()))
