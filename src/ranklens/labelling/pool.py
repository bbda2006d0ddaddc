"""Pooling: the unjudged (query, document) pairs in the top K of any run, to be judged.

TREC builds its labels by pooling (Voorhees & Harman, *TREC: Experiment and Evaluation in
Information Retrieval*, 2005, ch. 2): the union of every run's top K per query is judged.
:func:`pool` gives that union less what the labels already judge, one :class:`PoolPair`
per pair with the runs that retrieved it and where, and the query and document text when
known (a :class:`~ranklens.Dataset`'s queries and corpus, or the hits a runner kept).

Order (and, with ``max_pairs``, what is kept): each query's pairs are ordered by the
strategy, then the pool takes every query's first pair, then every query's second, ...
so a budget spreads over the queries instead of exhausting the first ones.

* ``topk``: by best rank in any run, then by how many runs retrieved the pair, then id;
* ``rrf``: by reciprocal rank fusion over the runs (``Σ 1 / (60 + rank)``; Cormack, Clarke
  & Büttcher, SIGIR 2009), then id: documents several runs rank high come first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..declared import AT_LEAST_ONE, ParameterError, choice, count, data, declare, mapping, path
from ..errors import InputError
from ..io import coerce_qrels, coerce_run
from ..io.records import json_records
from ..model import Dataset, Qrels, Run

STRATEGIES = ("topk", "rrf")
RRF_K = 60

POOL = declare("pool", {
    "labels": data("the labels: anything ranklens.evaluate takes, or a Dataset"),
    "runs": data("{name: run} or a list of runs"),
    "depth": count(10, AT_LEAST_ONE, "top K pooled per run"),
    "strategy": choice("topk", STRATEGIES, "order of each query's pairs: best rank or RRF"),
    "max_pairs": count(None, AT_LEAST_ONE, "a budget, spent level by level over the queries "
                       "(None: every pair)", none=True),
    "queries": mapping(None, "{query id: text}", none=True, empty=True),
    "corpus": mapping(None, "{doc id: text or {text, title}}", none=True, empty=True),
})  # fmt: skip
POOL_FROM_JSONL = declare("LabelPool.from_jsonl", {
    "path": path(None, "a pool written by LabelPool.to_jsonl"),
})  # fmt: skip
POOL_TO_JSONL = declare("LabelPool.to_jsonl", {"path": path(None, "the JSONL file to write")})


@dataclass(frozen=True)
class PoolPair:
    """One unjudged pair: ``runs`` maps each run that retrieved the document to its rank
    there (1-based); ``query``/``text`` are None when unknown."""

    query_id: str
    doc_id: str
    runs: dict[str, int]
    query: str | None = None
    text: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query_id": self.query_id, "doc_id": self.doc_id}
        if self.query is not None:
            out["query"] = self.query
        if self.text is not None:
            out["text"] = self.text
        out["runs"] = dict(self.runs)
        return out


@dataclass
class LabelPool:
    """The pairs to judge, in pool order, and what pooling saw (``info``: the depth and
    strategy, the queries pooled, the judged documents met in the top K, the pairs left out
    by the budget, the run queries without labels)."""

    pairs: list[PoolPair]
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.pairs)

    def __iter__(self) -> Iterator[PoolPair]:
        return iter(self.pairs)

    def __repr__(self) -> str:
        return (
            f"LabelPool({len(self.pairs)} pairs in {len({p.query_id for p in self.pairs})} queries)"
        )

    def keys(self) -> list[tuple[str, str]]:
        """``(query id, document id)`` of every pair, in pool order."""
        return [(p.query_id, p.doc_id) for p in self.pairs]

    @POOL_TO_JSONL.checks
    def to_jsonl(self, path: str | Path) -> Path:
        """One JSON object per line: ``query_id``, ``doc_id``, ``query`` and ``text`` when
        known, ``runs`` (run name -> rank); a missing folder is named."""
        from ..comparison.report import write_output

        lines = "".join(json.dumps(p.to_json(), ensure_ascii=False) + "\n" for p in self.pairs)
        return write_output(lines, path, "LabelPool.to_jsonl")

    @classmethod
    @POOL_FROM_JSONL.checks
    def from_jsonl(cls, path: str | Path) -> LabelPool:
        """Read a pool written by :meth:`to_jsonl` (or by hand: ``query_id`` and
        ``doc_id`` are required); a bad line is an error naming the file and line."""
        path = Path(path)
        pairs, seen = [], set()
        for n, obj in json_records(path):
            where = f"{path}:{n}"
            pairs.append(_pair_from_json(obj, where))
            key = (pairs[-1].query_id, pairs[-1].doc_id)
            if key in seen:
                raise InputError(f"{where}: pair {key} appears twice")
            seen.add(key)
        return cls(pairs, {"source": str(path)})

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame([p.to_json() for p in self.pairs])


def _pair_from_json(obj: dict[str, Any], where: str) -> PoolPair:
    for f in ("query_id", "doc_id"):
        if not isinstance(obj.get(f), (str, int)) or isinstance(obj.get(f), bool) or obj[f] == "":
            raise InputError(f"{where}: field {f!r} must be a non-empty string")
    for f in ("query", "text"):
        if obj.get(f) is not None and not isinstance(obj[f], str):
            raise InputError(f"{where}: field {f!r} must be a string")
    runs = obj.get("runs") or {}
    if not isinstance(runs, dict) or not all(
        isinstance(r, int) and not isinstance(r, bool) and r >= 1 for r in runs.values()
    ):
        raise InputError(f"{where}: field 'runs' must map run names to ranks >= 1")
    return PoolPair(str(obj["query_id"]), str(obj["doc_id"]), dict(runs), obj.get("query"),
                    obj.get("text"))  # fmt: skip


@POOL.checks
def pool(
    labels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    depth: int = 10,
    strategy: str = "topk",
    *,
    max_pairs: int | None = None,
    queries: Mapping[str, str] | None = None,
    corpus: Mapping[str, Any] | None = None,
) -> LabelPool:
    """The unjudged pairs in the top ``depth`` of any of ``runs``, for the labelled queries.

    ``labels``: anything :func:`ranklens.evaluate` takes, or a :class:`~ranklens.Dataset`
    (its query texts and corpus fill ``query``/``text``). A document with any label for the
    query (negative grades and grouped ground truth included) is judged; everything else a
    run ranks in its top ``depth`` is pooled. ``runs``: ``{name: run}`` or a list, of
    anything ``evaluate`` takes (a runner's ``RunResult`` gives its hits' text too).
    ``strategy``: ``"topk"`` or ``"rrf"`` (see the module docstring). ``max_pairs``: a
    budget, spent level by level over the queries. ``queries``/``corpus``: texts by id
    (``corpus`` values: a string or ``{"text": ..., "title": ...}``).

    >>> p = pool({"q": ["a"]}, {"bm25": {"q": ["a", "b", "c"]}, "dense": {"q": ["c", "d"]}},
    ...          depth=2)
    >>> [(x.doc_id, x.runs) for x in p]
    [('c', {'dense': 1}), ('b', {'bm25': 2}), ('d', {'dense': 2})]
    """
    texts: dict[str, str] = {}
    docs: Mapping[str, Any] = dict(corpus or {})
    if isinstance(labels, Dataset):
        texts = dict(labels.queries)
        docs = {**(labels.corpus or {}), **docs}
        labels = labels.qrels
    texts.update(queries or {})
    qrels: Qrels = coerce_qrels(labels)
    judged = _judged_docs(qrels)
    named = _named(runs)
    hit_text: dict[tuple[str, str], str] = {}
    ranked: dict[str, dict[str, list[str]]] = {}
    for name, run in named.items():
        if hasattr(run, "records") and hasattr(run, "run"):  # a runner's RunResult
            hit_text.update(run.hit_texts())
            run = run.run
        r: Run = coerce_run(run)
        ranked[name] = {q: docs_[:depth] for q, docs_ in r.top(depth).to_lists().items()}
    per_query: dict[str, dict[str, dict[str, int]]] = {}
    met_judged = 0
    unlabelled = set()
    for name, lists in ranked.items():
        for qid, top in lists.items():
            if qid not in judged:
                unlabelled.add(qid)
                continue
            for rank, doc in enumerate(top, 1):
                if doc in judged[qid]:
                    met_judged += 1
                    continue
                per_query.setdefault(qid, {}).setdefault(doc, {})[name] = rank
    ordered = {q: _order(found, strategy) for q, found in sorted(per_query.items())}
    levels: list[PoolPair] = []
    total = sum(len(v) for v in ordered.values())
    level = 0
    while len(levels) < total and (max_pairs is None or len(levels) < max_pairs):
        for qid, items in ordered.items():
            if level < len(items) and (max_pairs is None or len(levels) < max_pairs):
                doc, where = items[level]
                text = _doc_text(docs, doc) or hit_text.get((qid, doc))
                levels.append(PoolPair(qid, doc, where, texts.get(qid), text))
        level += 1
    return LabelPool(
        levels,
        {
            "depth": depth,
            "strategy": strategy,
            "runs": list(named),
            "queries_pooled": len(ordered),
            "labelled_queries": len(judged),
            "judged_in_top": met_judged,
            "unjudged_pairs": total,
            "left_out_by_budget": total - len(levels),
            "run_queries_without_labels": len(unlabelled),
        },
    )


def _order(found: dict[str, dict[str, int]], strategy: str) -> list[tuple[str, dict[str, int]]]:
    if strategy == "topk":
        return sorted(found.items(), key=lambda item: (min(item[1].values()), -len(item[1]),
                                                       item[0]))  # fmt: skip
    return sorted(found.items(), key=lambda item: (-_fused(item[1]), item[0]))


def _fused(ranks: dict[str, int]) -> float:
    """Reciprocal rank fusion of a pair's ranks across runs."""
    return sum(1.0 / (RRF_K + r) for r in ranks.values())


def _judged_docs(qrels: Qrels) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {str(q): set() for q in qrels.query_ids}
    doc_ids = qrels.docs.strings(np.arange(len(qrels.q))) if len(qrels.q) else []
    for qc, d in zip(qrels.q.tolist(), doc_ids):
        out[str(qrels.query_ids[qc])].add(d)
    return out


def _named(runs: Mapping[str, Any] | Sequence[Any]) -> dict[str, Any]:
    if isinstance(runs, Mapping):
        named = {str(k): v for k, v in runs.items()}
    elif isinstance(runs, (str, bytes, Path)) or not isinstance(runs, (list, tuple)):
        raise ParameterError(
            f"pool: runs must be {{name: run}} or a list of runs, got {type(runs).__name__} "
            f"{runs!r:.60}"
        )
    else:
        named = {}
        for i, r in enumerate(runs, 1):
            name = getattr(r, "name", None) or (
                Path(r).stem if isinstance(r, (str, Path)) else None
            )
            named[str(name or f"run{i}")] = r
    if not named:
        raise InputError("pool needs at least one run")
    return named


def _doc_text(corpus: Mapping[str, Any], doc: str) -> str | None:
    entry = corpus.get(doc)
    if entry is None:
        return None
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping):
        title, text = entry.get("title"), entry.get("text")
        parts = [str(x) for x in (title, text) if x]
        return "\n".join(parts) if parts else None
    return str(entry)
