"""``ranklens.synthesize``: a test set from a corpus with any question generator (an LLM
call), run with the runner's machinery, every question keeping its provenance and every
filter counted.

Each passage is one runner "query" (its id the JSON of ``[doc_id, start, end]``, its text
the passage), so concurrency, the timeout per attempt, retries with backoff and the
resumable JSONL log come from :func:`ranklens.run_retriever`: a passage the generator answered is
never asked again on resume (a passage whose text changed is), and a generator that
raises, hangs or answers junk fails that passage only, recorded with its error.
"""

from __future__ import annotations

import inspect
import json
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..capture import Hit, RetrieverAdapter, state_digest
from ..capture import run_retriever as run_items
from ..capture.records import Retrieval
from ..declared import (
    AT_LEAST_ONE,
    CALLING,
    PROBABILITY,
    STATISTICS,
    ParameterError,
    Range,
    count,
    data,
    declare,
    function,
    mapping,
    number,
    shown,
    text,
)
from ..errors import InputError, RanklensWarning, RunFailuresWarning
from ..labelling.judges import CALLS, CALLS_OPTION
from ..settings import Calling, outside_stacklevel, settled
from .corpus import documents, passages
from .filters import apply_filters
from .parse import candidates, locate
from .provenance import Provenance, ProvenanceRow
from .result import Synthesis


class GeneratorAdapter(RetrieverAdapter):
    """A generator as the runner sees it: one "retrieval" per passage, answering a single
    hit whose id is the generator's output as JSON (junk is kept as its ``repr``)."""

    def __init__(self, generate: Callable[..., Any], name: str):
        self.generate, self.name = generate, name
        self.calls = 0
        self._lock = threading.Lock()
        self.is_async = inspect.iscoroutinefunction(generate) or inspect.iscoroutinefunction(
            getattr(generate, "__call__", None)  # noqa: B004 - an object with an async __call__
        )

    def _count(self) -> None:
        with self._lock:
            self.calls += 1

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        self._count()
        return [Hit(encode(self.generate(query)))]

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        self._count()
        return [Hit(encode(await self.generate(query)))]

    def config(self) -> dict[str, Any]:
        fn = getattr(self.generate, "func", self.generate)
        return {
            "generator": f"{getattr(fn, '__module__', '?')}."
            f"{getattr(fn, '__qualname__', type(fn).__name__)}",
            "state": state_digest(self.generate),
            "name": self.name,
        }


def encode(output: Any) -> str:
    """A generator's output as the log keeps it: ``{"output": ...}`` when it is JSON,
    else ``{"junk": repr}``."""
    try:
        return json.dumps({"output": output}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps({"junk": repr(output)[:2000]}, ensure_ascii=False)


def generator_name(generate: Any) -> str:
    """The name recorded as each question's generator: its ``name`` attribute, else the
    function's or class's name."""
    name = getattr(generate, "name", None)
    if isinstance(name, str) and name:
        return name
    fn = getattr(generate, "func", generate)
    return getattr(fn, "__name__", type(fn).__name__)


SYNTHESIZE = declare(
    "synthesize",
    {
        "corpus": data("a Dataset, {doc_id: text}, {doc_id: {'text'}} or a BEIR corpus/folder"),
        "generate": function("generate(passage) -> question(s), sync or async"),
        "n": count(None, AT_LEAST_ONE, "passages drawn at random (None: every passage)", none=True),
        "seed": STATISTICS["seed"],
        "max_chars": count(
            2000, AT_LEAST_ONE, "passage size in characters (None: whole documents)", none=True
        ),
        "max_overlap": number(
            0.9,
            PROBABILITY,
            "drop questions whose word-bigram containment in their passage exceeds this "
            "(None: keep them all, the overlap still recorded)",
            none=True,
        ),
        "near_duplicate": number(
            0.9,
            Range(0, 1, "right"),
            "word-set Jaccard from which a question is a near-duplicate",
        ),
        "retriever": data("with it, questions many passages answer are dropped (ambiguous)"),
        "max_answerable": count(3, AT_LEAST_ONE, "other passages that make a question ambiguous"),
        "depth": count(10, AT_LEAST_ONE, "the retriever's top k searched for rival passages"),
        "name": text("synthetic", "the test set's name"),
        "calls": CALLS_OPTION,
        "config": mapping(
            None, "names the generator's configuration in its log", none=True, empty=True
        ),
        "cost": function("cost(output) -> float: what one answer cost", none=True),
        **CALLING,
    },
)


@SYNTHESIZE.checks
def synthesize(
    corpus: Any,
    generate: Callable[..., Any],
    *,
    n: int | None = None,
    seed: int | None = 0,
    max_chars: int | None = 2000,
    max_overlap: float | None = 0.9,
    near_duplicate: float = 0.9,
    retriever: Any = None,
    max_answerable: int = 3,
    depth: int = 10,
    name: str = "synthetic",
    calls: Calling | None = None,
    config: Mapping[str, Any] | None = None,
    cost: Callable[[Any], float] | None = None,
    **flat: Any,
) -> Synthesis:
    """Generate a test set from ``corpus`` with ``generate(passage) -> question(s)``.

    ``corpus``: a :class:`~ranklens.Dataset`, ``{doc_id: text}``, ``{doc_id: {"text"}}``
    or a BEIR ``corpus.jsonl``/folder. Each document is cut into passages of whole
    sentences up to ``max_chars`` (None: whole documents); ``n`` passages are drawn at
    random (``seed``; all when None). ``generate``: sync or ``async``; answers a string
    (one question per line), a list of strings, ``{"question", "evidence"}`` (evidence: a
    quote of the passage) or a list of those (:mod:`ranklens.synthesis.parse`).
    ``calls=Calling(concurrency=..., timeout=..., retries=..., retry_on=..., backoff=...,
    cache=..., progress=...)`` and ``config``: how the generator is called, as
    :func:`ranklens.run_retriever` calls a retriever (``cache``: the resumable log); the
    same keywords given flat still work for one release, with a ``DeprecationWarning``
    showing the new spelling, and beside ``calls=`` are an error naming both.
    ``cost(output) -> float``: what one answer cost (tokens, money), summed in the result.

    Filters, in order, each counted in ``Synthesis.counts`` and named per row of
    ``Synthesis.provenance``: ``failed`` (the generator raised or timed out), ``junk`` (an
    answer of no known shape), ``empty``, ``preamble``, ``duplicate`` (equal after
    normalisation), ``near_duplicate`` (Jaccard of word sets ≥ ``near_duplicate``),
    ``copies_passage`` (containment of the question's word bigrams in its passage above
    ``max_overlap``; None keeps them all, the overlap still recorded), and with
    ``retriever`` (anything :func:`ranklens.run_retriever` takes) ``ambiguous``: at least
    ``max_answerable`` other passages in its top ``depth`` hold as much of the question's
    words as its source does (the retriever is called with ``calls.concurrency``).

    Returns a :class:`~ranklens.synthesis.Synthesis`: ``dataset`` (queries, id labels:
    each question's source document, the corpus), ``provenance``, ``counts``, ``cost``.
    """
    calls = settled("synthesize", calls, SYNTHESIZE.check(flat), CALLS, "calls")
    docs = documents(corpus)
    items: dict[str, tuple[str, int, int]] = {}
    for doc, d in docs.items():
        for s, e in passages(d["text"], max_chars):
            items[json.dumps([doc, s, e])] = (doc, s, e)
    keys = list(items)
    if not keys:
        raise InputError(
            f"synthesize: the corpus holds no passage to generate from ({len(docs)} documents, "
            "every text empty)"
        )
    if n is not None and n < len(keys):
        pick = np.sort(np.random.default_rng(seed).choice(len(keys), n, replace=False))
        keys = [keys[i] for i in pick]
    gen_name = generator_name(generate)
    adapter = GeneratorAdapter(generate, gen_name)
    texts = {k: docs[items[k][0]]["text"][items[k][1] : items[k][2]] for k in keys}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunFailuresWarning)
        result = run_items(adapter, texts, calls=calls, name=f"generator {gen_name}", config=config)
    rows, spent = _rows(result.records, items, texts, gen_name, cost)
    rows = apply_filters(rows, texts, max_overlap, near_duplicate)
    if retriever is not None:
        from .filters import ambiguous_filter

        ambiguous_filter(rows, retriever, docs, depth, max_answerable, calls)
    prov = Provenance(rows)
    kept = prov.kept()
    from ..model import Dataset

    dataset = Dataset({str(r.query_id): str(r.query) for r in kept}, prov.to_labels(), docs, name)
    info = {
        "passages": len(keys),
        "passages_in_corpus": len(items),
        "generator": gen_name,
        "calls": adapter.calls,
        "resumed": int(result.info.get("resumed", 0)),
        "seconds": round(float(sum(r.latency_ms for r in result.records if r.ok)) / 1000, 3),
        "cost": spent,
        "max_overlap": max_overlap,
        "near_duplicate": near_duplicate,
    }
    dataset.info = {"synthesis": {**info, "counts": prov.counts()}}
    synthesis = Synthesis(dataset, prov, info)
    bad = synthesis.counts["failed"] + synthesis.counts["junk"]
    if bad:
        first = next(r for r in rows if r.status in ("failed", "junk"))
        warnings.warn(
            f"synthesize: the generator failed or answered junk on {bad} of {len(keys)} "
            f"passages (recorded per passage in the provenance); first, {first.doc_id!r}: "
            f"{first.detail}",
            RanklensWarning,
            stacklevel=outside_stacklevel(),
        )
    return synthesis


def _cost(cost: Callable[[Any], float], output: Any, doc: str) -> float:
    """What ``cost(output)`` says one answer cost: a finite number >= 0, else a named error."""
    got = cost(output)
    ok, value = number(None, Range(0, None))._accepts(got)
    if not ok:
        raise ParameterError(
            f"synthesize: cost(output) must return a finite number >= 0, got {shown(got)} "
            f"(for the answer on a passage of {doc!r})"
        )
    return float(value)


def _rows(
    records: Sequence[Retrieval],
    items: Mapping[str, tuple[str, int, int]],
    texts: Mapping[str, str],
    gen_name: str,
    cost: Callable[[Any], float] | None,
) -> tuple[list[ProvenanceRow], float | None]:
    rows: list[ProvenanceRow] = []
    spent = 0.0 if cost is not None else None
    number = 0
    for rec in records:
        key = str(rec.query_id)
        doc, start, end = items[key]
        if not rec.ok:
            err = rec.error or {}
            rows.append(
                ProvenanceRow(
                    None,
                    None,
                    evidence=[],
                    evidence_text="",
                    raw="",
                    status="failed",
                    detail=f"{err.get('type')}: {err.get('message')}",
                    doc_id=doc,
                    passage=[start, end],
                    generator=gen_name,
                )
            )
            continue
        payload = json.loads(rec.doc_ids[0])
        output = payload.get("output")
        raw = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        found = candidates(output) if "output" in payload else None
        if found is None:
            shown = payload.get("junk", raw)
            rows.append(
                ProvenanceRow(
                    None,
                    None,
                    evidence=[],
                    evidence_text="",
                    raw=shown,
                    status="junk",
                    detail=f"an answer of no known shape: {shown[:80]}",
                    doc_id=doc,
                    passage=[start, end],
                    generator=gen_name,
                )
            )
            continue
        if spent is not None and cost is not None:
            spent += _cost(cost, output, doc)
        passage = texts[key]
        for c in found:
            number += 1
            at = locate(c.evidence, passage) if c.evidence else None
            s, e = (start + at[0], start + at[1]) if at else (start, end)
            status = "kept" if c.status == "ok" else c.status
            rows.append(
                ProvenanceRow(
                    f"syn-{number:05d}",
                    c.text,
                    evidence=[[doc, s, e]],
                    evidence_text=passage[s - start : e - start],
                    raw=raw,
                    status=status,
                    evidence_located=at is not None or not c.evidence,
                    doc_id=doc,
                    passage=[start, end],
                    generator=gen_name,
                )
            )
    return rows, spent
