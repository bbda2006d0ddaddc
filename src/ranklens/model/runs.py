"""Retrieval runs (rankings per query), stored column-wise.

Rows are kept in the order given, each query's rows contiguous (queries in the order they
first appear; rows of a query met in several places are gathered, stably, by query id).
``query_ids``/``doc_ids`` are sorted
vocabularies and ``q``/``d`` index into them; ``score`` holds each row's score. A run built
from ranked lists without scores (``scored`` is False) gets descending pseudo-scores so that
the given order is the ranking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from pathlib import Path
from typing import Any, Union

import numpy as np

from ..declared import data, declare, flag, text
from ..errors import InputError
from ..text import shown
from .chunks import ChunkSpans
from .ids import DocIds, HoldsDocIds
from .mappings import (
    check_query_keys,
    check_score,
    flat_numbers,
    mixed_run_columns,
    run_columns,
)
from .ranking import RowOrder, input_order, trec_order
from .segments import run_start_index, seg_running_count, sorted_with_rows
from .vocab import encode_columns, encode_nested

RunLike = Union["Run", Mapping[str, Any], str, Path]


RUN_NAME = text("run", "the run's name (reports, notes and errors call it so)")
FROM_DICT = declare("Run.from_dict", {
    "run": data("{query: {doc: score}}, {query: [(doc, score), ...]} or ranked lists"),
    "name": RUN_NAME,
})  # fmt: skip
COERCE = declare("Run.coerce", {
    "obj": data("a Run or a dict of hits"),
    "name": text(None, "the run's name (None: the Run's own, else 'run')", none=True),
})  # fmt: skip
FROM_CHUNKS = declare("Run.from_chunks", {
    "chunks": data("{query: [chunk, ...]}, each chunk with doc_id, start, end"),
    "name": RUN_NAME,
    "ranked": flag(False, "rank the chunks as listed, whatever their scores"),
})  # fmt: skip


class Run(HoldsDocIds):
    """Rankings of documents for a set of queries.

    Build one with :meth:`from_dict`, :meth:`from_arrays`, :func:`ranklens.read_run` (files),
    or let :meth:`coerce` pick from a plain Python object.
    """

    __slots__ = (
        "_orders",
        "docs",
        "failures",
        "name",
        "q",
        "query_ids",
        "score",
        "scored",
        "spans",
        "unique_docs",
    )

    def __init__(
        self,
        query_ids: np.ndarray,
        doc_ids: np.ndarray | None,
        q: np.ndarray,
        d: np.ndarray | None,
        score: np.ndarray,
        scored: bool,
        name: str = "run",
        unique_docs: bool = False,
        docs: DocIds | None = None,
        spans: ChunkSpans | None = None,
    ) -> None:
        self.query_ids = query_ids
        # each row's document (codes into a sorted vocabulary, or parsed strings interned
        # only when asked: see ranklens.model.ids)
        self.docs = docs if docs is not None else DocIds(d, doc_ids)
        self.q = q
        self.score = score
        self.scored = scored
        self.name = name
        self.unique_docs = unique_docs  # True when no document can repeat within a query
        # queries whose retrieval failed (id -> {"type", "message"}): absent from the rows,
        # they are counted as failures rather than as missing when the run is judged
        self.failures: dict[str, dict[str, Any]] = {}
        self._orders: dict[tuple[str, bool], RowOrder] = {}
        # for a run of chunks: each row's source document and character range
        # (ranklens.model.spans); None for a run of documents
        self.spans = spans

    @classmethod
    def from_arrays(
        cls,
        query_ids: Sequence[Any] | np.ndarray,
        doc_ids: Sequence[Any] | np.ndarray,
        scores: Sequence[float] | np.ndarray | None = None,
        *,
        name: str = "run",
        empty_queries: Iterable[Any] = (),
        source: str = "run",
        encoded: tuple[np.ndarray, np.ndarray, np.ndarray | DocIds, np.ndarray | None]
        | None = None,
        unique_docs: bool = False,
        spans: ChunkSpans | None = None,
    ) -> Run:
        """Build a run from parallel columns (rows of one query need not be adjacent).

        Without ``scores`` the rows' order within each query is the ranking. ``empty_queries``
        lists queries that were asked but retrieved nothing. ``encoded`` (readers) gives
        ``(query codes, query vocabulary, document codes, document vocabulary)`` or
        ``(query codes, query vocabulary, DocIds, None)``. ``spans``: for a run of chunks,
        each row's source document and character range (:class:`ChunkSpans`).
        """
        if encoded is not None:
            qcode, query_vocab, dcode, doc_vocab = encoded
            n = len(qcode)
        else:
            if len(query_ids) != len(doc_ids):
                raise InputError(f"{source}: query and document columns differ in length")
            n = len(doc_ids)
            qcode, query_vocab, dcode, doc_vocab = encode_columns(
                query_ids, doc_ids, empty_queries, source
            )
        if scores is None:
            scored = False
            sc = None
        else:
            scored = True
            sc = np.asarray(scores, dtype=np.float64)
            if len(sc) != n:
                raise InputError(f"{source}: the score column differs in length")
        docs = dcode if isinstance(dcode, DocIds) else DocIds(dcode, doc_vocab)
        if spans is not None and len(spans.start) != n:
            raise InputError(f"{source}: the chunk position columns differ in length")
        if sc is not None:
            bad = np.flatnonzero(~np.isfinite(sc))
            if len(bad):
                i = int(bad[0])
                raise InputError(
                    f"{source}: score {shown(float(sc[i]))} of document "
                    f"{docs.strings(bad[:1])[0]!r} in query {query_vocab[qcode[i]]!r} is not a "
                    "finite number"
                )
        if n and np.any(qcode[1:] < qcode[:-1]) and not _contiguous(qcode):
            order = sorted_with_rows(qcode.astype(np.int64))[1]
            qcode, docs = qcode[order], docs.take(order)
            if sc is not None:
                sc = sc[order]
            if spans is not None:
                spans = spans.take(order)
        if sc is None:
            # Pseudo-scores: strictly decreasing within each query, so the given order ranks.
            sc = -np.arange(n, dtype=np.float64)
        if docs.interned:  # int32 codes halve the memory of large runs
            docs = DocIds(docs.codes()[0].astype(np.int32, copy=False), docs.codes()[1])
        qcode = qcode.astype(np.int32, copy=False)
        return cls(query_vocab, None, qcode, None, sc, scored, name, unique_docs, docs=docs,
                   spans=spans)  # fmt: skip

    @classmethod
    @FROM_DICT.checks
    def from_dict(cls, run: Mapping[Any, Any], *, name: str = "run") -> Run:
        """From ``{query: hits}``, each query's hits in one of three forms:
        ``{doc: score}`` or ``[(doc, score), ...]`` (scored, ranked by score as trec_eval
        ranks) or ``[doc, ...]`` (ranked: the list order is the ranking).

        Forms may differ from query to query: a ranked list gets scores that keep its order
        (``0, -1, -2, ...``), which rank it as given, since scores are compared only
        within a query. Anything else (``None``, a string, a generator, a number) is an
        :class:`~ranklens.errors.InputError` naming the query.
        """
        if not isinstance(run, Mapping):
            raise InputError(f"run: expected {{query: hits}}, got {type(run).__name__}")
        cols = run_columns(run)  # string ids: packed as bytes, never interned
        if cols is not None:
            qcode, query_vocab, docs, scores, unique = cols
            return cls.from_arrays(
                (), (), scores, name=name, encoded=(qcode, query_vocab, docs, None),
                unique_docs=unique,
            )  # fmt: skip
        check_query_keys(run, "run")
        values = list(run.values())
        if values and all(type(v) is dict for v in values):
            return cls._from_score_dicts(run, name)
        qs_l, ds_l, sc_l, empty = mixed_run_columns(run)
        return cls.from_arrays(qs_l, ds_l, sc_l, name=name, empty_queries=empty)

    @classmethod
    def _from_score_dicts(cls, run: Mapping[Any, dict[Any, Any]], name: str) -> Run:
        """Fast path of :meth:`from_dict` for ``{query: {doc: score}}`` (one pass in C; a
        query with no hits joins the query vocabulary without rows)."""
        qcode, query_vocab, dcode, doc_vocab, _ = encode_nested(run, "run")
        raw = list(chain.from_iterable(v.values() for v in run.values()))
        scores = flat_numbers(raw, "iuf")
        if scores is None:  # a score that is not a number (a string, a list): named
            for qid, v in run.items():
                for doc, s in v.items():
                    check_score(s, qid, doc)
            scores = np.array([float(x) for x in raw])
        # dict keys are unique, so no document repeats within a query, unless an integer
        # key and a string key read as one id ({1: .., "1": ..}): then checked as any run
        unique = all(all(map(isinstance, v, repeat(str))) for v in run.values())
        return cls.from_arrays(
            (), (), scores.astype(np.float64), name=name, source="run",
            encoded=(qcode, query_vocab, dcode, doc_vocab), unique_docs=unique,
        )  # fmt: skip

    @classmethod
    @FROM_CHUNKS.checks
    def from_chunks(
        cls,
        chunks: Mapping[Any, Sequence[Mapping[str, Any]]],
        *,
        name: str = "run",
        ranked: bool = False,
    ) -> Run:
        """A run of chunks from ``{query: [chunk, ...]}`` in rank order, each chunk a
        mapping with ``doc_id`` (its source document; None when unknown: it then finds no
        evidence, and is counted), ``start``/``end`` (character offsets into the
        document's text, or None), and optionally ``id`` (default ``doc_id@start-end``),
        ``score``, ``text`` and ``chars`` (the text's full length when ``text`` holds its
        beginning). With a score on every chunk the run is ranked by score, else (or
        with ``ranked=True``) as listed."""
        qs: list[Any] = []
        ids: list[Any] = []
        scores: list[float] = []
        docs: list[Any] = []
        starts: list[Any] = []
        ends: list[Any] = []
        texts: list[Any] = []
        chars: list[Any] = []
        positions: list[int] = []
        scored = True
        for qid, items in chunks.items():
            if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
                raise InputError(f"run: the chunks of query {qid!r} must be a list")
            for j, c in enumerate(items):
                if not isinstance(c, Mapping) or "doc_id" not in c:
                    raise InputError(f"run: chunk {j} of query {qid!r} needs a 'doc_id'")
                s, e = c.get("start"), c.get("end")
                qs.append(qid)
                positions.append(j)
                docs.append(c["doc_id"])
                starts.append(s)
                ends.append(e)
                texts.append(c.get("text"))
                chars.append(c.get("chars"))
                ids.append(c.get("id") or f"{c['doc_id']}@{s if s is not None else j}-{e}")
                if ranked or c.get("score") is None:
                    scored = False
                    scores.append(-float(j))
                else:
                    scores.append(check_score(c["score"], qid, ids[-1]))
        if not scored:
            scores = [-float(i) for i in range(len(qs))]  # as listed
        where = [f"run: chunk {j} of query {q!r}" for q, j in zip(qs, positions)]
        spans = ChunkSpans.of(docs, starts, ends, texts,
                              [c if c is not None else (len(t) if isinstance(t, str) else None)
                               for c, t in zip(chars, texts)], where=where)  # fmt: skip
        spans.doc_codes()  # interned once, as the rows' ids are
        return cls.from_arrays(qs, ids, scores if scored else None, name=name, spans=spans)

    @classmethod
    @COERCE.checks
    def coerce(cls, obj: Run | Mapping[Any, Any], *, name: str | None = None) -> Run:
        """Turn an in-memory ``obj`` into a :class:`Run`: a Run or a dict (see
        :meth:`from_dict`; paths: :func:`ranklens.io.coerce_run`)."""
        if isinstance(obj, Run):
            return obj
        if isinstance(obj, (str, Path)):
            raise InputError(
                f"Run.coerce takes objects, not files: read {str(obj)!r} with ranklens.read_run"
            )
        if isinstance(obj, Mapping):
            return cls.from_dict(obj, name=name or "run")
        raise InputError(f"cannot read a run from {type(obj).__name__}")

    # ------------------------------------------------------------------ ordering
    def order(self, score_precision: str = "float64") -> np.ndarray:
        """Row order that ranks each query trec_eval's way: score descending, then document
        id descending (byte order); rows of one query stay contiguous.

        ``score_precision="float32"`` compares scores as float32, as trec_eval 9 and
        pytrec_eval do. Runs without scores keep the given order.
        """
        return self.row_order(score_precision).array()

    def row_order(self, score_precision: str = "float64", ties: str = "trec") -> RowOrder:
        """:meth:`order` as a :class:`RowOrder` (cached): most runs are ranked already but
        for ties, and then only the tied rows move. ``ties="input"`` keeps tied rows in
        their input order instead of ordering them by id descending."""
        key = (score_precision, ties == "input")
        cached = self._orders.get(key)
        if cached is not None:
            return cached
        if not self.scored:
            order = RowOrder(len(self.q))
        else:
            sc = self.ranking_scores(score_precision)
            order = (
                input_order(self.q, sc) if ties == "input" else trec_order(self.q, sc, self.docs)
            )
        self._orders[key] = order
        return order

    def ranking_scores(self, score_precision: str = "float64") -> np.ndarray:
        """The scores as compared when ranking (float32 for trec_eval 9's precision)."""
        return self.score if score_precision == "float64" else self.score.astype(np.float32)

    def top(self, n: int, score_precision: str = "float64") -> Run:
        """The run cut to each query's first ``n`` rows in ranking order (:meth:`order`;
        trec_eval's ``-M n``). A run without scores keeps each query's first ``n`` rows."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InputError(f"the number of documents kept per query must be >= 1, got {n!r}")
        o = self.order(score_precision)
        keep = o[seg_running_count(self.q[o]) <= n]
        out = Run(
            self.query_ids, None, self.q[keep], None, self.score[keep], self.scored,
            self.name, self.unique_docs, docs=self.docs.take(keep),
            spans=None if self.spans is None else self.spans.take(keep),
        )  # fmt: skip
        out.failures = dict(self.failures)
        return out

    def subset(self, query_ids: Iterable[Any]) -> Run:
        """The run of the given queries only (rows, scores, chunk positions and recorded
        failures kept; queries the run does not have are left out), as
        :meth:`Qrels.subset <ranklens.Qrels.subset>` takes labels: pieces of a run judged
        query by query give the same per-query values as the whole."""
        want = np.asarray([str(q) for q in query_ids], dtype=object)
        have = np.asarray(self.query_ids).astype(str)
        keep_q = np.isin(have, want.astype(str))
        code = np.full(len(have), -1, dtype=np.int64)
        code[keep_q] = np.arange(int(keep_q.sum()))
        rows = np.flatnonzero(keep_q[self.q]) if len(self.q) else np.zeros(0, dtype=np.int64)
        out = Run(
            self.query_ids[keep_q], None, code[self.q[rows]].astype(np.int32), None,
            self.score[rows], self.scored, self.name, self.unique_docs,
            docs=self.docs.take(rows), spans=None if self.spans is None else self.spans.take(rows),
        )  # fmt: skip
        wanted = set(want.tolist())
        out.failures = {q: e for q, e in self.failures.items() if q in wanted}
        return out

    def __len__(self) -> int:
        return len(self.query_ids)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self.query_ids)} queries, {len(self.q)} rows)"

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query: {doc: score}}``, each query's documents in ranking order."""
        out: dict[str, dict[str, float]] = {str(qid): {} for qid in self.query_ids}
        o = self.order()
        ids = self.doc_ids.tolist()  # read once: the property interns on each access
        for qc, dc, s in zip(self.q[o].tolist(), self.d[o].tolist(), self.score[o].tolist()):
            out[self.query_ids[qc]].setdefault(ids[dc], s)
        return out

    def to_lists(self) -> dict[str, list[str]]:
        """``{query: [doc, ...]}`` in ranking order."""
        out: dict[str, list[str]] = {str(qid): [] for qid in self.query_ids}
        o = self.order()
        ids = self.doc_ids.tolist()  # read once: the property interns on each access
        for qc, dc in zip(self.q[o].tolist(), self.d[o].tolist()):
            out[self.query_ids[qc]].append(ids[dc])
        return out


def _contiguous(qcode: np.ndarray) -> bool:
    """True when each query's rows form one contiguous block (dicts, most files)."""
    block_q = qcode[run_start_index(qcode)]
    return len(np.unique(block_q)) == len(block_q)
