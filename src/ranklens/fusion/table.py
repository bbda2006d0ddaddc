"""Several runs laid side by side: one row per (query, document) any run retrieved, one
column per run, with each run's score and rank (trec order: score descending, ties by id
descending) or NaN / 0 where that run did not retrieve the document.

Documents are matched across runs by a 64-bit hash of their id bytes, and every match is
then checked byte for byte (a hash collision is an error, never a silent merge). No id
becomes a Python string: every run's ids are stacked as byte slices of one body
(:meth:`~ranklens.model.ids.DocIds.stack`), which the fused run keeps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..model import Run
from ..model import segments as seg
from ..model.chunks import ChunkSpans
from ..model.ids import HASH_EXACT_BYTES, DocIds


@dataclass
class RunTable:
    """``query_ids`` (sorted), per row ``q`` (query index) and ``docs`` (its document);
    ``score``/``rank`` are ``(rows, runs)`` (NaN / 0 when absent; ranks are int32, so
    arithmetic that could pass 2^31 casts first); ``length`` is
    ``(queries, runs)``, each run's documents per query; ``names`` the runs' names. Rows
    are grouped by query."""

    query_ids: np.ndarray
    q: np.ndarray
    docs: DocIds
    score: np.ndarray
    rank: np.ndarray
    length: np.ndarray
    names: list[str]
    spans: ChunkSpans | None = None
    """Where each row's chunk stands (source document, range, text) when a run is a run of
    chunks (:class:`~ranklens.model.chunks.ChunkSpans`), so the fused run is one too."""

    @property
    def present(self) -> np.ndarray:
        return self.rank > 0

    @property
    def candidates(self) -> np.ndarray:
        """The number of distinct documents of each row's query (over all runs)."""
        out: np.ndarray = np.bincount(self.q, minlength=len(self.query_ids))[self.q]
        return out

    def to_run(self, scores: np.ndarray, name: str, rows: np.ndarray | None = None) -> Run:
        """The run scoring each row's document ``scores`` (the rows' ids, uninterned), or
        only ``rows`` (then ``scores`` holds theirs)."""
        q, docs = (self.q, self.docs) if rows is None else (self.q[rows], self.docs.take(rows))
        spans = self.spans if rows is None or self.spans is None else self.spans.take(rows)
        return Run.from_arrays(
            (), (), scores, name=name, encoded=(q.astype(np.int32), self.query_ids, docs, None),
            spans=spans,
        )  # fmt: skip


def _grouped(
    q: np.ndarray, h: np.ndarray, n_queries: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, q, first)``: an order of the rows grouping equal ``(q, h)`` with queries
    ascending, the rows' queries in that order, and where each group starts.

    One ``np.sort`` of 64-bit keys ``(query, top bits of the hash, row)`` (a value sort is
    several times faster than an argsort; the row in the low bits gives the order). Rows
    whose query and top hash bits agree but whose full hashes differ are then re-sorted
    by the full hash within their block, so the grouping is exact."""
    n = len(q)
    q_bits = max(int(n_queries).bit_length(), 1)
    row_bits = max(int(n - 1).bit_length(), 1)
    h_bits = 63 - q_bits - row_bits
    if h_bits < 1 or n < 2:
        o = np.lexsort((h, q))
        return o, q[o], seg.run_starts(q[o], h[o])
    key = np.arange(n, dtype=np.int64)
    key |= (h >> np.uint64(64 - h_bits)).astype(np.int64) << row_bits
    key |= q.astype(np.int64) << (h_bits + row_bits)
    key.sort()
    o = key & ((1 << row_bits) - 1)
    g = key >> row_bits  # (query, top hash bits)
    hs = h[o]
    same_g = g[1:] == g[:-1]
    split = same_g & (hs[1:] != hs[:-1])
    if split.any():  # top bits shared by different hashes: order those blocks by hash
        starts = np.flatnonzero(np.concatenate(([True], ~same_g)))
        ends = np.append(starts[1:], n)
        bad = np.unique(np.searchsorted(starts, np.flatnonzero(split), side="right") - 1)
        size = ends[bad] - starts[bad]
        rows = np.repeat(starts[bad] - np.cumsum(size) + size, size) + np.arange(size.sum())
        block = np.repeat(np.arange(len(bad)), size)
        sub = rows[np.lexsort((hs[rows], block))]
        o[rows], hs[rows] = o[sub], hs[sub]
    first = np.ones(n, dtype=bool)
    first[1:] = ~same_g | (hs[1:] != hs[:-1])
    return o, g >> h_bits, first


def build_table(runs: list[Run], names: list[str]) -> RunTable:
    """The :class:`RunTable` of ``runs`` (see the module docstring)."""
    query_ids = np.unique(np.concatenate([r.query_ids.astype(str) for r in runs]))
    n_q, n_runs = len(query_ids), len(runs)
    keys_q, parts, src, ranks, scores = [], [], [], [], []
    length = np.zeros((n_q, n_runs), dtype=np.int64)
    offset = 0
    for i, run in enumerate(runs):
        order = run.order()
        q_codes = np.searchsorted(query_ids, run.query_ids.astype(str))[run.q[order]]
        keys_q.append(q_codes.astype(np.int64))
        length[:, i] = np.bincount(q_codes, minlength=n_q)
        run.docs.hashes()
        parts.append(run.docs.sliced())  # stacked as stored; ``src`` reads them in order
        src.append(order + offset)
        offset += len(order)
        ranks.append(seg.seg_running_count(q_codes).astype(np.int32))
        scores.append(run.score[order].astype(np.float64))
    docs = DocIds.stack(parts)
    rows_src = np.concatenate(src)  # each table input row's index into ``docs``
    q, h = np.concatenate(keys_q), docs.hashes()[rows_src]
    o, q, first = _grouped(q, h, n_q)
    n = len(o)
    pair = np.cumsum(first) - 1
    n_pairs = int(pair[-1]) + 1 if n else 0
    heads = rows_src[o[first]]
    later = np.flatnonzero(~first)
    a, b = heads[pair[later]], rows_src[o[later]]
    n_bytes = docs.lengths()
    unsure = (n_bytes[a] != n_bytes[b]) | (n_bytes[b] > HASH_EXACT_BYTES)
    if unsure.any() and not docs.same(a[unsure], docs, b[unsure]).all():
        raise InputError("two different document ids share a 64-bit hash; rename one")
    # each input row's cell of the (rows, runs) tables, stored column by column (each run's
    # column contiguous); rows are read in input order, so the scores and ranks are written
    # without gathering them first
    sizes = [len(x) for x in src]
    bounds = np.cumsum([0, *sizes]).tolist()
    cell = np.empty(n, dtype=np.int64)
    cell[o] = pair
    for i in range(n_runs):
        cell[bounds[i] : bounds[i + 1]] += i * n_pairs
    table_rank = np.zeros((n_runs, n_pairs), dtype=np.int32)
    table_rank.reshape(-1)[cell] = np.concatenate(ranks)
    if np.count_nonzero(table_rank) < n:  # two rows of one run in one cell
        _raise_repeat(cell, sizes, names, docs, rows_src, query_ids, np.concatenate(keys_q))
    table_score = np.full((n_runs, n_pairs), np.nan)
    table_score.reshape(-1)[cell] = np.concatenate(scores)
    spans = stacked_spans(runs)
    return RunTable(query_ids, q[first], docs.take(heads), table_score.T, table_rank.T, length,
                    names, None if spans is None else spans.take(heads))  # fmt: skip


def stacked_spans(runs: list[Run]) -> ChunkSpans | None:
    """Every run's :class:`ChunkSpans` stacked in the runs' stored rows (as their ids are),
    when any run is a run of chunks (None otherwise): a run of documents stands for whole
    documents, its rows' source document the id itself with no range. Once per call, never
    per row of a run of documents fused with another."""
    if all(r.spans is None for r in runs):
        return None
    cols: list[list[np.ndarray]] = [[], [], [], [], []]
    for r in runs:
        sp = r.spans
        if sp is None:
            n = len(r.score)
            doc = np.empty(n, dtype=object)
            doc[:] = r.docs.strings(np.arange(n))
            none = np.full(n, -1, dtype=np.int64)
            sp = ChunkSpans(doc, none, none, none, np.full(n, None, dtype=object))
        for c, x in zip(cols, (sp.doc, sp.start, sp.end, sp.chars, sp.text)):
            c.append(np.asarray(x))
    doc, start, end, chars, text = (np.concatenate(c) for c in cols)
    return ChunkSpans(doc.astype(object), start, end, chars, text.astype(object))


def _raise_repeat(
    cell: np.ndarray, sizes: list[int], names: list[str], docs: DocIds,
    rows_src: np.ndarray, query_ids: np.ndarray, q_in: np.ndarray,
) -> None:  # fmt: skip
    """The error for a run that retrieves a document twice for a query (the first such
    input row, in input order)."""
    o = np.argsort(cell, kind="stable")
    dup = o[1:][cell[o][1:] == cell[o][:-1]]
    i = int(dup.min())
    run = int(np.searchsorted(np.cumsum(sizes), i, side="right"))
    raise InputError(
        f"run {names[run]!r} retrieves document {docs.strings(np.array([rows_src[i]]))[0]!r} "
        f"twice for query {str(query_ids[q_in[i]])!r}; fusion needs each document once per "
        "query and run"
    )
