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
import inspect
import json
import math
import numbers
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ..capture import (
    FunctionRetriever,
    Hit,
    KeyLike,
    RetrieverAdapter,
    as_retriever,
    coerce_hit,
    key_function,
    plain_hit,
    plugin_of,
)
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
from ..model import native as compiled
from .interleave import TAU, probabilistic_row, team_draft_row
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
        self._calls: tuple[_Call | None, _Call | None] = (None, None)
        self._by_id = key == "id"
        self.is_async = False
        self.interleaving = self  # as the framework retrievers name it

    # ------------------------------------------------------------ serving
    def interleave_hits(self, query: str, query_id: str | None, hits_a: Sequence[Hit],
                        hits_b: Sequence[Hit]) -> list[Hit]:  # fmt: skip
        """Interleave two rankers' hits for one query and record the impression; the hits
        served (the originals, each with the impression and document id in metadata)."""
        return self._serve(query, query_id, hits_a, hits_b)

    def _serve(self, query: str, query_id: str | None, items_a: Sequence[Any],
               items_b: Sequence[Any]) -> list[Hit]:  # fmt: skip
        """:meth:`interleave_hits` of hits or of what a plain function returned (ids,
        ``(id, score)`` pairs, dicts, hits): an item is read (its key found, made a hit)
        only when the draft reaches it, and made a :class:`Hit` only when served."""
        qid: Any = query_id  # as the runner names the query in a hit's error
        with self._lock:
            if self.method == "team-draft":
                draws = self._rng.random(self.k).tolist()
            else:
                draws = self._rng.random(2 * self.k).tolist()
            self._count += 1
            imp_id = f"{self._prefix}-{self._count}"
        native = compiled.NATIVE
        joined = None
        if (self._by_id and type(items_a) is list and type(items_b) is list
                and native is not None and hasattr(native, "pair_rows")):  # fmt: skip
            # plain (id, score) pairs or hits with text ids: numbered in C as _row numbers
            # them (keys: each document's id; row_b: B's ranking; from_b: each of B's new
            # documents in B)
            joined = native.pair_rows(items_a, items_b, Hit)
        if joined is not None:
            keys, row_b, from_b = joined
            na = len(items_a)
            chosen, extra = self._draft(list(range(na)), row_b, len(keys), draws)
            served = []
            for d in chosen:
                item = items_a[d] if d < na else items_b[from_b[d - na]]
                served.append(
                    plain_hit(item[0], item[1], {IMPRESSION: imp_id, DOC: keys[d]})
                    if type(item) is tuple
                    else _tagged(item, imp_id, keys[d])
                )
        else:
            index: dict[str, int] = {}
            items: list[tuple[Any, int, bool]] = []
            # A's items all read first (a document both rankings hold is served as A's
            # hit, and an unnamed hit's stand-in id counts the documents before it)
            row_a = self._row(items_a, qid, index, items)
            if self.method == "team-draft":  # B read lazily, as far as the draft reaches
                chosen, extra = self._draft(row_a, self._read(items_b, qid, index, items), 0,
                                            draws)  # fmt: skip
            else:
                row_b = self._row(items_b, qid, index, items)
                chosen, extra = self._draft(row_a, row_b, len(items), draws)
            keys = list(index)
            served = [
                plain_hit(items[d][0][0], items[d][0][1], {IMPRESSION: imp_id, DOC: keys[d]})
                if items[d][2]  # a plain (id, score) pair, checked when read (else a hit)
                else _served(items[d][0], items[d][1], qid, imp_id, keys[d])
                for d in chosen
            ]
        record = {"id": imp_id, "method": self.method, "names": list(self.names),
                  "query": query, "query_id": query_id, "time": time.time(),
                  "docs": [keys[d] for d in chosen], **extra, "clicks": []}  # fmt: skip
        self._store(record)
        return served

    def _draft(self, row_a: list[int], b: Iterable[int], n_docs: int,
               draws: list[float]) -> tuple[list[int], dict[str, Any]]:  # fmt: skip
        """The documents served and the impression's credit (``teams`` or ``share_a``):
        ``row_a`` A's ranking, ``b`` B's (an iterator read as far as team draft reaches, a
        list for the probabilistic method), ``n_docs`` the documents numbered (read by
        the probabilistic method only), ``draws`` this impression's random numbers."""
        if self.method == "team-draft":
            chosen, teams = team_draft_row(iter(row_a), iter(b), self.k, [c < 0.5 for c in draws])
            return chosen, {"teams": teams}
        chosen, share = probabilistic_row(row_a, list(b), max(n_docs, 1), self.k, draws,
                                          self.tau)  # fmt: skip
        return chosen, {"share_a": share}

    def _doc(self, item: Any, qid: Any, rank: int) -> str | None:
        """The key of one item (a hit or a plain function's item; ``rank`` 1-based)."""
        if self._by_id:
            if type(item) is tuple and len(item) == 2 and _plain_pair(item):
                return item[0]  # type: ignore[no-any-return]  # a str, tested
            if type(item) is str and item:
                return item
        if not isinstance(item, Hit):
            item = coerce_hit(item, qid, rank)
        return self._key(item)

    def _row(self, side: Sequence[Any], qid: Any, index: dict[str, int],
             items: list[tuple[Any, int, bool]]) -> list[int]:  # fmt: skip
        """One ranking's document indices in rank order without repeats, every item read:
        a list of plain ``(id, score)`` pairs or of hits keyed by ``id`` checked and keyed
        at once, else item by item (:meth:`_read`)."""
        ids = _plain_ids(side) if self._by_id else None
        if ids is None:
            return list(dict.fromkeys(self._read(side, qid, index, items)))
        pairs = type(side[0]) is tuple  # else hits, served as tagged copies
        new = [d for d in ids if d not in index] if index else ids
        start = len(items)
        index.update(zip(new, range(start, start + len(new))))
        if len(index) != start + len(new):  # a repeat within the ranking: item by item
            for d in new:
                index.pop(d, None)
            return list(dict.fromkeys(self._read(side, qid, index, items)))
        if len(new) == len(ids):
            items.extend(zip(side, range(1, len(ids) + 1), repeat(pairs)))
            return list(range(start, start + len(ids)))
        where = dict(zip(ids, range(len(ids))))
        items.extend((side[where[d]], where[d] + 1, pairs) for d in new)
        return list(dict.fromkeys(map(index.__getitem__, ids)))

    def _read(self, side: Sequence[Any], qid: Any, index: dict[str, int],
              items: list[tuple[Any, int, bool]]) -> Iterator[int]:  # fmt: skip
        """One ranking's document indices in rank order, its items read (keyed, each new
        document's item kept) as they are asked for; an unnamed hit gets a stand-in id of
        its own."""
        by_id, doc_of = self._by_id, self._doc
        for i, item in enumerate(side):
            if (by_id and type(item) is tuple and len(item) == 2 and type(item[0]) is str
                    and item[0] and type(item[1]) is float and item[1] - item[1] == 0):  # fmt: skip
                doc = item[0]  # what _doc gives, inline: the common case of a plain function
            else:
                doc = doc_of(item, qid, i + 1) or f"\x00{len(items)}:{i}"
            j = index.get(doc)
            if j is None:
                j = index[doc] = len(items)
                items.append((item, i + 1, False))
            yield j

    def _answers(self, query: str, query_id: str | None,
                 k: int | None) -> tuple[Sequence[Any], Sequence[Any]]:  # fmt: skip
        """Both rankers' answers: a plain function's list as it returned it (read item by
        item as the draft needs), any other ranker's hits from its adapter."""
        out = []
        for adapter, call in zip(self._pair(), self._calls):
            if call is None:
                out.append(_sync(adapter, query, query_id, k))
                continue
            answer = call(query, query_id, k)
            if type(answer) is not list and type(answer) is not tuple:
                # anything else is read (or refused) exactly as the runner reads it
                given = FunctionRetriever(lambda query, _answer=answer: _answer)
                answer = given.retrieve(query, query_id, k)  # type: ignore[arg-type]
            out.append(answer)
        return out[0], out[1]

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
            self._calls = (_plain_call(self._adapters[0]), _plain_call(self._adapters[1]))
        return self._adapters

    def retrieve(self, query: str, query_id: str | None = None, k: int | None = None) -> list[Hit]:
        items_a, items_b = self._answers(query, query_id, k)
        return self._serve(query, query_id, items_a, items_b)

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


_Call = Callable[[str, "str | None", "int | None"], Any]


def _plain_ids(items: Sequence[Any]) -> list[str] | None:
    """The ids of a list of plain ``(id, score)`` pairs (each as :func:`_plain_pair`) or
    of hits (their ``id``: ``key="id"``), checked all at once; None when any item is
    something else or an id is not a non-empty text."""
    if not items:
        return None
    kinds = set(map(type, items))
    if kinds == {Hit}:
        hit_ids = [h.id for h in items]
        return hit_ids if set(map(type, hit_ids)) == {str} and "" not in hit_ids else None
    if kinds != {tuple} or set(map(len, items)) != {2}:
        return None
    ids, scores = zip(*items)
    if set(map(type, ids)) != {str} or "" in ids or set(map(type, scores)) != {float}:
        return None
    if not all(map(math.isfinite, scores)):
        return None
    return list(ids)


def _plain_pair(item: tuple[Any, Any]) -> bool:
    """An ``(id, score)`` pair that :func:`~ranklens.capture.hits.coerce_hit` takes as it
    is: a non-empty text id and a finite float score (anything else is read by it)."""
    d, s = item
    return type(d) is str and d != "" and type(s) is float and s - s == 0


def _served(item: Any, rank: int, qid: str, impression: str, doc: str) -> Hit:
    """The hit served for ``item``, tagged with its impression and document."""
    tags = {IMPRESSION: impression, DOC: doc}
    if type(item) is tuple and len(item) == 2 and _plain_pair(item):
        return plain_hit(item[0], item[1], tags)
    if type(item) is str and item:
        return plain_hit(item, None, tags)
    hit = item if isinstance(item, Hit) else coerce_hit(item, qid, rank)
    return _tagged(hit, impression, doc)


def _tagged(hit: Hit, impression: str, doc: str) -> Hit:
    """A copy of ``hit`` with the impression and document in its metadata (its fields
    copied as they are: they were checked when it was made)."""
    new = object.__new__(Hit)
    new.__dict__.update(hit.__dict__)
    new.metadata = {**hit.metadata, IMPRESSION: impression, DOC: doc}
    return new


def _plain_call(adapter: RetrieverAdapter) -> _Call | None:
    """For a plain synchronous function, a call returning its answer unread (with
    ``query_id`` and ``k`` passed as :class:`~ranklens.capture.FunctionRetriever` passes
    them); None for any other ranker."""
    if type(adapter) is not FunctionRetriever or adapter.is_async:
        return None
    fn = adapter.fn
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = MappingProxyType({})
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    pass_id, pass_k = var_kw or "query_id" in params, adapter.takes_k
    if pass_id and pass_k:
        return lambda q, qid, k: fn(q, query_id=qid, k=k)
    if pass_id:
        return lambda q, qid, k: fn(q, query_id=qid)
    if pass_k:
        return lambda q, qid, k: fn(q, k=k)
    return lambda q, qid, k: fn(q)


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
