"""``ranklens.interleave(a, b)``: compare two retrievers online by interleaving their results.

Each query asks both retrievers, serves one interleaved list (:mod:`.interleave`: team
draft or probabilistic) and records an *impression*: which ranker contributed each hit
(or, probabilistic, the chance that each did). The app then reports what users or the
downstream model did with the hits: :meth:`Interleaving.record_click` (a click, or "the
answer cited this chunk"), :meth:`Interleaving.record_feedback` (the hits an answer used),
and :func:`~.preference.interleaving_result` gives the preference with a test and an
interval. Each hit served carries ``ranklens_impression`` and ``ranklens_doc`` in its
metadata, so feedback can name the hit itself.

An :class:`Interleaving` is a retriever: ``ranklens.run_retriever`` takes it, and it is callable.
For framework retrievers, ``ranklens.interleave`` returns the framework's own kind of
retriever (a LlamaIndex ``BaseRetriever``, a LangChain ``BaseRetriever``, a Haystack
component), built by the framework package's adapter plugin around an Interleaving.
"""

from __future__ import annotations

import asyncio
import json
import numbers
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..capture import Hit, KeyLike, RetrieverAdapter, as_retriever, key_function
from ..capture.contract import plugin_of
from ..declared import (
    AT_LEAST_ONE,
    POSITIVE,
    STATISTICS,
    count,
    data,
    declare,
    extend,
    function,
    names,
    number,
    path,
    renamed_option,
)
from .interleave import TAU, probabilistic, team_draft
from .options import aliased, ids, key

METHODS = ("team-draft", "probabilistic")
IMPRESSION, DOC = "ranklens_impression", "ranklens_doc"

INTERLEAVE = declare("interleave", {
    "a": data("ranker A: a function, an adapter or a framework's retriever"),
    "b": data("ranker B, as a"),
    "method": aliased("team-draft", METHODS, {"teamdraft": "team-draft", "tdi": "team-draft",
                      "pi": "probabilistic"}, "team draft or probabilistic interleaving"),
    "k": count(10, AT_LEAST_ONE, "hits served per query"),
    "names": names(("a", "b"), "the two rankers' names in results: two different texts",
                   check=lambda n: len(n) == 2 and n[0] != n[1]),
    "key": key("id", "which hit field identifies a document in both lists"),
    "tau": number(TAU, POSITIVE, "the probabilistic method's softmax exponent"),
    "seed": renamed_option(STATISTICS["seed"], default=None),
    "max_impressions": count(100_000, AT_LEAST_ONE, "impressions kept for feedback"),
})  # fmt: skip
"""Every parameter of :func:`interleave` (and of :class:`Interleaving`)."""

INTERLEAVING = extend(INTERLEAVE, "Interleaving")
FEEDBACK = declare("Interleaving.record_feedback", {
    "impression": data("an impression id or a served hit"),
    "used": ids(None, "the served documents used: ids or 0-based positions",
                positions=True, empty=True, also=function("(doc_id, position) -> bool")),
})  # fmt: skip
TO_JSONL = declare("Interleaving.to_jsonl", {"path": path(None, "the JSONL file written")})


class Interleaving(RetrieverAdapter):
    """Two rankers interleaved (see the module docstring). ``k``: hits served; ``names``:
    the rankers' names in results; ``key``: which hit field identifies a document in both
    lists (``"id"``, ``"parent"``, ``"meta.<field>"``, a function: as for the runner);
    ``tau``: the probabilistic method's softmax exponent; ``max_impressions``: the
    impressions kept for feedback (older ones are let go and counted)."""

    @INTERLEAVING.checks
    def __init__(self, a: Any, b: Any, method: str = "team-draft", *, k: int = 10,
                 names: Sequence[str] = ("a", "b"), key: KeyLike = "id", tau: float = TAU,
                 seed: int | None = None, max_impressions: int = 100_000):  # fmt: skip
        self.method = method
        self.rankers = (a, b)
        self.names = (str(names[0]), str(names[1]))
        self.k, self.tau, self.key = int(k), float(tau), key
        self._key = key_function(key)
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self._prefix = uuid.uuid4().hex[:8]
        self._count = 0
        self.impressions: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._latest: dict[str, str] = {}
        self.max_impressions = max_impressions
        self.counts = {"impressions": 0, "evicted": 0, "clicks": 0, "unknown_feedback": 0,
                       "unattributed_clicks": 0}  # fmt: skip
        self._adapters: tuple[RetrieverAdapter, RetrieverAdapter] | None = None
        self.is_async = False
        self.interleaving = self  # as the framework retrievers name it

    # ------------------------------------------------------------ serving
    def interleave_hits(self, query: str, query_id: str | None, hits_a: Sequence[Hit],
                        hits_b: Sequence[Hit]) -> list[Hit]:  # fmt: skip
        """Interleave two rankers' hits for one query and record the impression; the hits
        served (the originals, each with the impression and document id in metadata)."""
        index: dict[str, int] = {}
        originals: list[Hit] = []
        rows = []
        for hits in (hits_a, hits_b):
            row = []
            for i, h in enumerate(hits):
                doc = self._key(h) or f"\x00{len(originals)}:{i}"  # unnamed: unique
                if doc not in index:
                    index[doc] = len(originals)
                    originals.append(h)
                if index[doc] not in row:
                    row.append(index[doc])
            rows.append(row)
        width = max(1, *(len(r) for r in rows))
        a, b = (np.array([r + [-1] * (width - len(r))]) for r in rows)
        with self._lock:
            if self.method == "team-draft":
                coins = self._rng.random((1, self.k)) < 0.5
                docs, teams = team_draft(a, b, self.k, coins, len(originals))
                extra: dict[str, list[int] | list[float]] = {
                    "teams": [int(t) for t, d in zip(teams[0], docs[0]) if d >= 0]
                }
            else:
                docs, share = probabilistic(a, b, self.k, max(len(originals), 1), self._rng,
                                            self.tau)  # fmt: skip
                extra = {"share_a": [float(s) for s, d in zip(share[0], docs[0]) if d >= 0]}
            self._count += 1
            imp_id = f"{self._prefix}-{self._count}"
        ids = list(index)
        chosen = [int(d) for d in docs[0] if d >= 0]
        served = [_tagged(originals[d], imp_id, ids[d]) for d in chosen]
        record = {"id": imp_id, "method": self.method, "names": list(self.names),
                  "query": query, "query_id": query_id, "time": time.time(),
                  "docs": [ids[d] for d in chosen], **extra, "clicks": []}  # fmt: skip
        self._store(record)
        return served

    def _store(self, record: dict[str, Any]) -> None:
        with self._lock:
            self.impressions[record["id"]] = record
            if record["query_id"] is not None:
                self._latest[str(record["query_id"])] = record["id"]
            self.counts["impressions"] += 1
            while len(self.impressions) > self.max_impressions:
                self.impressions.popitem(last=False)
                self.counts["evicted"] += 1

    def _pair(self) -> tuple[RetrieverAdapter, RetrieverAdapter]:
        if self._adapters is None:
            self._adapters = (as_retriever(self.rankers[0]), as_retriever(self.rankers[1]))
        return self._adapters

    def retrieve(self, query: str, query_id: str | None = None, k: int | None = None) -> list[Hit]:
        a, b = self._pair()
        return self.interleave_hits(query, query_id, _sync(a, query, query_id, k),
                                    _sync(b, query, query_id, k))  # fmt: skip

    async def aretrieve(self, query: str, query_id: str | None = None,
                        k: int | None = None) -> list[Hit]:  # fmt: skip
        a, b = self._pair()
        ha, hb = await asyncio.gather(_async(a, query, query_id, k), _async(b, query, query_id, k))
        return self.interleave_hits(query, query_id, ha, hb)

    def __call__(self, query: str, query_id: str | None = None) -> list[Hit]:
        return self.retrieve(query, query_id)

    def config(self) -> dict[str, Any]:
        a, b = self._pair()
        return {"interleaving": self.method, "names": list(self.names), "k": self.k,
                "a": a.config(), "b": b.config()}  # fmt: skip

    # ------------------------------------------------------------ feedback
    def impression(self, ref: Any) -> dict[str, Any] | None:
        """The impression of ``ref``: its id, a served hit (or a framework object whose
        metadata carries it), or ``query_id=`` form via :meth:`latest`."""
        imp = _metadata(ref).get(IMPRESSION) if not isinstance(ref, str) else ref
        return self.impressions.get(imp) if imp is not None else None

    def latest(self, query_id: str) -> str | None:
        """The id of the latest impression served for ``query_id``."""
        return self._latest.get(str(query_id))

    def record_click(self, hit_or_impression: Any, doc: Any = None) -> bool:
        """Credit a click (or any positive signal: the answer cited it) on a served hit:
        the hit itself (its metadata names the impression and document), or an impression
        id and the document (an id, or a 0-based position). False, and counted in
        ``counts["unknown_feedback"]``, for an impression or document it does not know."""
        imp = self.impression(hit_or_impression)
        if doc is None:
            doc = _metadata(hit_or_impression).get(DOC)
        with self._lock:
            if imp is None or doc is None:
                self.counts["unknown_feedback"] += 1
                return False
            docs = imp["docs"]
            if isinstance(doc, numbers.Integral) and not isinstance(doc, bool):
                pos = int(doc) if 0 <= int(doc) < len(docs) else None
            else:
                pos = docs.index(str(doc)) if str(doc) in docs else None
            if pos is None:
                self.counts["unknown_feedback"] += 1
                return False
            if pos not in imp["clicks"]:
                imp["clicks"].append(pos)
                self.counts["clicks"] += 1
                if imp.get("teams") and imp["teams"][pos] < 0:
                    self.counts["unattributed_clicks"] += 1
            return True

    @FEEDBACK.checks
    def record_feedback(self, impression: Any, used: Iterable[Any] | Callable[..., Any]) -> int:
        """Credit every served document the downstream step used: ``used`` is document
        ids, or a function ``(doc_id, position) -> bool`` (e.g. "the answer quotes it").
        The number credited."""
        imp = self.impression(impression)
        if imp is None:
            with self._lock:
                self.counts["unknown_feedback"] += 1
            return 0
        if callable(used):
            chosen = [i for i, d in enumerate(imp["docs"]) if used(d, i)]
        else:
            chosen = list(used)
        return sum(self.record_click(imp["id"], d) for d in chosen)

    def snapshot(self) -> list[dict[str, Any]]:
        """Copies of the kept impressions, with their clicks so far."""
        with self._lock:
            return [dict(r, clicks=list(r["clicks"])) for r in self.impressions.values()]

    def result(self, **kwargs: Any) -> Any:
        """:func:`~.preference.interleaving_result` of this interleaving's impressions
        (``stats=ranklens.Statistics(alpha=..., n_resamples=...)`` passed on)."""
        from .preference import interleaving_result

        return interleaving_result(self, **kwargs)

    @TO_JSONL.checks
    def to_jsonl(self, path: str | Path) -> Path:
        """Every kept impression (with its clicks), one JSON object a line;
        :func:`~.preference.interleaving_result` reads the file back."""
        rows = [json.dumps(r, ensure_ascii=False) for r in self.snapshot()]
        Path(path).write_text("".join(r + "\n" for r in rows), encoding="utf-8")
        return Path(path)

    def __repr__(self) -> str:
        c = self.counts
        return (f"Interleaving({self.method}: {self.names[0]} vs {self.names[1]}, "
                f"{c['impressions']} impressions, {c['clicks']} clicks)")  # fmt: skip


def _tagged(hit: Hit, impression: str, doc: str) -> Hit:
    return replace(hit, metadata={**hit.metadata, IMPRESSION: impression, DOC: doc})


def _metadata(obj: Any) -> dict[str, Any]:
    """The metadata of a hit or a framework object (``metadata``, ``meta`` or a LlamaIndex
    node's)."""
    for holder in (obj, getattr(obj, "node", None)):
        for attr in ("metadata", "meta"):
            m = getattr(holder, attr, None)
            if isinstance(m, dict):
                return m
    return obj if isinstance(obj, dict) else {}


def _sync(adapter: RetrieverAdapter, query: str, qid: Any, k: int | None) -> list[Hit]:
    if adapter.is_async:
        return asyncio.run(adapter.aretrieve(query, qid, k))
    return adapter.retrieve(query, qid, k)


async def _async(adapter: RetrieverAdapter, query: str, qid: Any, k: int | None) -> list[Hit]:
    if adapter.is_async:
        return await adapter.aretrieve(query, qid, k)
    return await asyncio.to_thread(adapter.retrieve, query, qid, k)


@INTERLEAVE.checks
def interleave(a: Any, b: Any, method: str = "team-draft", *, k: int = 10,
               names: Sequence[str] = ("a", "b"), key: KeyLike = "id", tau: float = TAU,
               seed: int | None = None, max_impressions: int = 100_000) -> Any:  # fmt: skip
    """Interleave retrievers ``a`` and ``b`` (see the module docstring; keyword arguments
    as :class:`Interleaving`'s). Two retrievers of one framework give that framework's
    own kind of retriever (through its package's adapter plugin); anything else (plain
    functions, adapters, a mix) gives the :class:`Interleaving`, a retriever
    ``ranklens.run_retriever`` takes. Either way, feedback and results go through
    ``.interleaving`` (the Interleaving itself has it too)."""
    core = Interleaving(a, b, method, k=k, names=names, key=key, tau=tau, seed=seed,
                        max_impressions=max_impressions)  # fmt: skip
    plugin = plugin_of(a)
    if plugin is not None and plugin.interleave is not None and plugin_of(b) is plugin:
        return plugin.interleave(a, b, core)
    return core


# the public callables the tables check
INTERLEAVE.target, INTERLEAVING.target = interleave, Interleaving
FEEDBACK.target, TO_JSONL.target = Interleaving.record_feedback, Interleaving.to_jsonl
