"""``ranklens.assess``: grade a pool with any ``(query, passage) -> grade`` callable (an LLM
judge, a cross-encoder, a thresholded embedding similarity), through the runner's machinery:
bounded concurrency, a timeout per attempt, retries with backoff for transient errors, a
resumable JSONL log (a judge whose code or settings changed refuses the old log), a
progress bar; a pair whose judge call fails is recorded with its error and the rest go on.

Each pool pair is one runner "query": its id is the JSON of ``[query_id, doc_id]`` and its
text the query and the passage, so a pair whose texts changed is judged again on resume.
"""

from __future__ import annotations

import inspect
import json
import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..capture import Hit, RetrieverAdapter, state_digest
from ..capture import run_retriever as run_queries
from ..declared import (
    CALLING,
    ParameterError,
    data,
    declare,
    function,
    items,
    mapping,
    shown,
    text,
)
from ..errors import InputError, RanklensWarning, RunFailuresWarning
from ..model import Qrels
from ..settings import TRANSIENT, Calling, outside_stacklevel, settled
from .pool import LabelPool, PoolPair

SEP = "\n\u241e\n"  # between query and passage in the runner's text (for change detection)


def whole_number(value: Any) -> tuple[bool, int | None]:
    """``(True, int)`` for a whole number (an ``int``, a numpy integer, a finite whole
    float); ``(False, None)`` for anything else (``True``, ``"1"``, ``2.5``, NaN)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False, None
    x = float(value)
    if not math.isfinite(x) or not x.is_integer():
        return False, None
    return True, int(x)


def a_callable(value: Any) -> tuple[bool, Any]:
    """``(True, value)`` for a callable."""
    return callable(value), value


GRADES = items(
    None,
    words="whole-number grades",
    description="the grades the judge may answer (the scale); an answer outside is that "
    "pair's failure",
    none=True,
    item=whole_number,
    example=[0, 1],
)
"""The ``grades=`` declaration of :func:`assess` and :func:`ranklens.estimate`."""

CALLS = Calling(retry_on=TRANSIENT)
"""How a judge is called unless ``calls=`` says otherwise: :class:`~ranklens.Calling`'s
defaults, retrying the runner's transient errors (time-outs and connection failures)."""

CALLS_OPTION = data("how the judge is called: a ranklens.Calling (None: the defaults)")
"""The ``calls=`` declaration of the entry points that call a judge or a generator."""

ASSESS = declare(
    "assess",
    {
        "pool": data("a LabelPool, its JSONL file, or PoolPairs with the query and passage text"),
        "judge": function("judge(query, passage) -> grade, sync or async"),
        "source": text(None, "the provenance written on each judgment", none=True),
        "grades": GRADES,
        "calls": CALLS_OPTION,
        **CALLING,
        "config": mapping(
            None, "names the judge's configuration in its log", none=True, empty=True
        ),
    },
)


class JudgeAdapter(RetrieverAdapter):
    """A judge callable as the runner sees it: one "retrieval" per pool pair, answering a
    single hit whose id is the grade."""

    def __init__(self, judge: Callable[..., Any], pairs: Mapping[str, PoolPair],
                 grades: frozenset[int] | None, source: str):  # fmt: skip
        self.judge, self.pairs, self.grades, self.source = judge, pairs, grades, source
        self.is_async = inspect.iscoroutinefunction(judge) or inspect.iscoroutinefunction(
            getattr(judge, "__call__", None)  # noqa: B004 - an object with an async __call__
        )

    def _args(self, pair_id: str) -> tuple[str, str]:
        p = self.pairs[pair_id]
        if p.query is None or p.text is None:
            missing = "query text" if p.query is None else "document text"
            raise InputError(
                f"pair ({p.query_id!r}, {p.doc_id!r}) has no {missing}: pool from a Dataset "
                "or give queries=/corpus= to pool()"
            )
        return p.query, p.text

    def _hit(self, grade: Any, pair_id: str) -> list[Hit]:
        return [Hit(str(checked_grade(grade, self.pairs[pair_id], self.grades)))]

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        return self._hit(self.judge(*self._args(query_id)), query_id)

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        return self._hit(await self.judge(*self._args(query_id)), query_id)

    def config(self) -> dict[str, Any]:
        fn = getattr(self.judge, "func", self.judge)
        return {
            "judge": f"{getattr(fn, '__module__', '?')}."
            f"{getattr(fn, '__qualname__', type(fn).__name__)}",
            "state": state_digest(self.judge),
            "source": self.source,
            "grades": sorted(self.grades) if self.grades is not None else None,
        }


def checked_grade(value: Any, pair: PoolPair, grades: frozenset[int] | None) -> int:
    """A judge's answer as an integer grade (True/False are 1/0; a numpy integer counts; a
    float must be whole and finite); anything else (a text such as ``"7"`` or ``"Relevant:
    yes"``, None, a dict, NaN) is a TypeError, and a grade outside ``grades`` (the scale) a
    ValueError, each naming the pair and the value: recorded as that pair's failure,
    never taken."""
    if isinstance(value, bool):
        g = int(value)
    else:
        ok, whole = whole_number(value)
        if not ok:
            shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
            raise TypeError(
                f"the judge returned {shown} for ({pair.query_id!r}, {pair.doc_id!r}); "
                "expected an integer grade (threshold a score yourself)"
            )
        g = int(whole)  # type: ignore[arg-type]
    if grades is not None and g not in grades:
        raise ValueError(
            f"the judge returned grade {g} for ({pair.query_id!r}, {pair.doc_id!r}), outside "
            f"the scale (allowed: {sorted(grades)})"
        )
    return g


@dataclass
class Assessment:
    """What a judge said: ``qrels`` (the grades, each row's source ``source``), the pairs it
    failed on (``failures``: ``(query, doc) -> {"type", "message"}``), and per pair the
    latency in ms and the attempts."""

    qrels: Qrels
    source: str
    failures: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    latency_ms: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)
    resumed: int = 0

    @property
    def grades(self) -> dict[tuple[str, str], int]:
        """``(query, doc) -> grade`` of every judged pair."""
        return {(q, d): g for q, docs in self.qrels.to_dict().items() for d, g in docs.items()}

    def summary_line(self) -> str:
        n = len(self.grades)
        failed = f", {len(self.failures)} failed" if self.failures else ""
        return f"{self.source}: {n} pairs judged{failed}" + (
            f" ({self.resumed} from the log)" if self.resumed else ""
        )


@ASSESS.checks
def assess(
    pool: LabelPool | Iterable[PoolPair] | str | Path,
    judge: Callable[..., Any],
    *,
    source: str | None = None,
    grades: Iterable[int] | None = None,
    calls: Calling | None = None,
    config: Mapping[str, Any] | None = None,
    **flat: Any,
) -> Assessment:
    """Grade every pair of ``pool`` with ``judge(query, passage) -> grade``.

    ``pool``: a :class:`~ranklens.labelling.LabelPool` (or its JSONL file, or pairs) whose pairs
    carry the query and document text. ``judge``: sync or ``async``; returns an integer
    grade (``True``/``False`` count as 1/0). ``source``: the provenance written on each
    judgment (default ``"model:<judge's name>"``). ``grades``: the allowed grades (an answer
    outside is that pair's failure). ``calls=Calling(concurrency=..., timeout=..., retries=...,
    retry_on=..., backoff=..., cache=..., progress=...)``: how the judge is called, as
    :func:`ranklens.run_retriever` calls a retriever (``cache`` is the resumable log: judged
    pairs are not asked again; a judge whose code, closure values or settings changed
    refuses the old log, and ``config={...}`` names the configuration yourself when the
    judge keeps mutable state, such as a counter or a client). The same keywords given flat
    (``assess(pool, judge, concurrency=4)``) still work for one release, with a
    ``DeprecationWarning`` showing the new spelling; flat keywords beside ``calls=`` are an
    error naming both.

    A judge that raises, times out or answers something that is not a grade fails that
    pair only; the failures are in ``Assessment.failures`` and a warning names the first.

    >>> from ranklens.labelling import pool
    >>> p = pool({"q": ["a"]}, {"r": {"q": ["a", "b", "c"]}}, queries={"q": "cats"},
    ...          corpus={"b": "about cats", "c": "about dogs"})
    >>> from ranklens.settings import Calling
    >>> a = assess(p, lambda query, passage: query in passage, calls=Calling(progress=False))
    >>> a.grades
    {('q', 'b'): 1, ('q', 'c'): 0}
    """
    calls = settled("assess", calls, ASSESS.check(flat), CALLS, "calls")
    if isinstance(pool, (str, Path)):
        pool = LabelPool.from_jsonl(pool)
    if isinstance(pool, (bytes, Mapping)) or not isinstance(pool, Iterable):
        raise ParameterError(
            "assess: pool must be a LabelPool, its JSONL file or a list of PoolPairs, got "
            f"{shown(pool)}"
        )
    pairs = list(pool)
    wrong = next((p for p in pairs if not isinstance(p, PoolPair)), None)
    if wrong is not None:
        raise ParameterError(
            f"assess: pool must be a LabelPool, its JSONL file or a list of PoolPairs, got an "
            f"item {shown(wrong)}"
        )
    name = getattr(getattr(judge, "func", judge), "__name__", type(judge).__name__)
    source = source or f"model:{name}"
    allowed = frozenset(grades) if grades is not None else None
    by_id = {json.dumps([p.query_id, p.doc_id]): p for p in pairs}
    if len(by_id) != len(pairs):
        raise InputError("the pool holds a (query, document) pair twice")
    adapter = JudgeAdapter(judge, by_id, allowed, source)
    items = {pid: f"{p.query or ''}{SEP}{p.text or ''}" for pid, p in by_id.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunFailuresWarning)
        result = run_queries(adapter, items, calls=calls, name=source, config=config)
    q_ids, d_ids, g = [], [], []
    failures, latency = {}, {}
    for rec in result.records:
        p = by_id[str(rec.query_id)]
        key = (p.query_id, p.doc_id)
        latency[key] = rec.latency_ms
        if rec.ok:
            q_ids.append(p.query_id)
            d_ids.append(p.doc_id)
            g.append(int(rec.doc_ids[0]))
        else:
            failures[key] = dict(rec.error or {})
    qrels = Qrels.from_arrays(q_ids, d_ids, g, source=f"judgments of {source}")
    qrels = Qrels.merge(qrels, sources=[source])
    if failures:
        (q, d), err = next(iter(failures.items()))
        warnings.warn(
            f"{source}: {len(failures)} of {len(pairs)} pairs could not be judged; first "
            f"({q!r}, {d!r}): {err.get('type')}: {err.get('message')}",
            RanklensWarning,
            stacklevel=outside_stacklevel(),
        )
    return Assessment(qrels, source, failures, latency, resumed=result.info.get("resumed", 0))
