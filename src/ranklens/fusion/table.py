"""Several runs laid side by side: one row per (query, document) any run retrieved, one
column per run, with each run's score and rank (trec order: score descending, ties by id
descending) or NaN / 0 where that run did not retrieve the document.

Documents are matched across runs by a 64-bit hash of their id bytes, and every match is
then checked byte for byte (a hash collision is an error, never a silent merge)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..model import Run
from ..model import segments as seg


@dataclass
class RunTable:
    """``query_ids`` (sorted), per row ``q`` (query index) and its document as
    ``(run, row)`` of the first run that retrieved it (``src_run``, ``src_row``);
    ``score``/``rank`` are ``(rows, runs)`` (NaN / 0 when absent); ``length`` is
    ``(queries, runs)``, each run's documents per query; ``runs`` the runs, ``names``
    their names. Rows are grouped by query."""

    query_ids: np.ndarray
    q: np.ndarray
    src_run: np.ndarray
    src_row: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    length: np.ndarray
    runs: list[Run]
    names: list[str]

    @property
    def present(self) -> np.ndarray:
        return self.rank > 0

    @property
    def candidates(self) -> np.ndarray:
        """The number of distinct documents of each row's query (over all runs)."""
        return np.bincount(self.q, minlength=len(self.query_ids))[self.q]

    def doc_strings(self, rows: np.ndarray | None = None) -> list[str]:
        """The document id of each row (or of ``rows``)."""
        rows = np.arange(len(self.q)) if rows is None else rows
        out: list[str] = [""] * len(rows)
        for i, run in enumerate(self.runs):
            sel = np.flatnonzero(self.src_run[rows] == i)
            for j, s in zip(sel.tolist(), run.docs.strings(self.src_row[rows[sel]])):
                out[j] = s
        return out


def build_table(runs: list[Run], names: list[str]) -> RunTable:
    """The :class:`RunTable` of ``runs`` (see the module docstring)."""
    query_ids = np.unique(np.concatenate([r.query_ids.astype(str) for r in runs]))
    keys_q, keys_h, run_of, row_of, ranks, scores = [], [], [], [], [], []
    for i, run in enumerate(runs):
        order = run.order()
        q_codes = np.searchsorted(query_ids, run.query_ids.astype(str))[run.q[order]]
        keys_q.append(q_codes.astype(np.int64))
        keys_h.append(run.docs.hashes()[order])
        run_of.append(np.full(len(order), i, dtype=np.int64))
        row_of.append(order.astype(np.int64))
        ranks.append(seg.seg_running_count(q_codes))
        scores.append(run.score[order].astype(np.float64))
    q = np.concatenate(keys_q)
    h = np.concatenate(keys_h)
    src_run, src_row = np.concatenate(run_of), np.concatenate(row_of)
    rank, score = np.concatenate(ranks), np.concatenate(scores)
    o = np.lexsort((src_run, h, q))
    q, h, src_run, src_row, rank, score = (x[o] for x in (q, h, src_run, src_row, rank, score))
    first = seg.run_starts(q, h)
    pair = np.cumsum(first) - 1
    dup = np.concatenate(([False], seg.repeats(q, h, src_run)))  # one run twice
    if dup.any():
        at = int(np.flatnonzero(dup)[0])
        doc = runs[int(src_run[at])].docs.strings(src_row[at : at + 1])[0]
        raise InputError(
            f"run {names[int(src_run[at])]!r} retrieves document {doc!r} twice for query "
            f"{query_ids[q[at]]!r}; fusion needs each document once per query and run"
        )
    _check_matches(runs, first, pair, src_run, src_row)
    n_pairs, n_runs = int(pair[-1]) + 1 if len(pair) else 0, len(runs)
    table_score = np.full((n_pairs, n_runs), np.nan)
    table_rank = np.zeros((n_pairs, n_runs), dtype=np.int64)
    table_score[pair, src_run] = score
    table_rank[pair, src_run] = rank
    length = np.zeros((len(query_ids), n_runs), dtype=np.int64)
    np.add.at(length, (q, src_run), 1)
    return RunTable(query_ids, q[first], src_run[first], src_row[first], table_score,
                    table_rank, length, runs, names)  # fmt: skip


def _check_matches(runs, first, pair, src_run, src_row) -> None:
    """Every row matched to an earlier one by hash names the same id bytes."""
    later = np.flatnonzero(~first)
    if not len(later):
        return
    head = np.flatnonzero(first)[pair[later]]
    for a in range(len(runs)):
        for b in range(len(runs)):
            sel = (src_run[head] == a) & (src_run[later] == b)
            if sel.any() and not np.all(
                runs[a].docs.same(src_row[head[sel]], runs[b].docs, src_row[later[sel]])
            ):
                raise InputError("two different document ids share a 64-bit hash; rename one")
