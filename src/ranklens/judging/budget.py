"""Context budgets: a per-query rank cutoff from the lengths of the ranked chunks, so every
metric with a cutoff takes a budget unchanged (``recall@1024tok``, ``ndcg@2000char``).

A reader packs the top of the ranking into a context of ``B`` characters or tokens. With
``s_r`` the size of the chunk at rank ``r`` (its characters, or its tokens under
``budget_tokenizer``), the budget's cutoff of a query is

    ``c_q = max {c : Σ_{r≤c} s_r ≤ B}``  (``straddle="exclude"``, the default),

the number of leading chunks that fit whole. ``straddle="include"`` adds the chunk that
straddles the budget's end (the first with ``Σ_{r<c} s_r < B < Σ_{r≤c} s_r``); a metric
at a budget is then the metric at ``c_q``, query by query. ``straddle="partial"`` (the
evidence metrics only) keeps the straddling chunk's first ``B − Σ_{r≤c_q} s_r``
characters or tokens and counts exactly the evidence they hold
(:func:`partial_chars`).

Sizes come from the run's chunk columns (:class:`~ranklens.model.chunks.ChunkSpans`:
``chars``, or the chunk's text, or its range in its document's text) or from the judging
option ``texts={doc id: text}`` for runs of ids. Tokens are counted by the judging option
``budget_tokenizer`` (default: the span judging's ``tokenizer`` when given, else
``"words"``; any tokenizer :mod:`.tokens` takes). When span judging counts tokens with the
same tokenizer, a chunk's size is the number of its document's tokens it overlaps, the
unit its evidence is counted in. Sizes are computed only when a budget metric asks for
them (:meth:`Judged.budget_cutoffs <ranklens.judging.Judged.budget_cutoffs>`); the
ordinary paths pay nothing. A ranked chunk with no known size is an
:class:`~ranklens.errors.InputError` naming the run, query, rank and document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..declared import AT_LEAST_ONE, choice, count, declare
from ..errors import InputError
from ..model import Run
from ..model import segments as seg
from .tokens import token_offsets

Judged = Any
"""A :class:`~ranklens.judging.Judged` pair (this module sits below it: judged.py calls it)."""

UNITS = {
    "tok": "tok", "token": "tok", "tokens": "tok",
    "char": "char", "chars": "char", "characters": "char",
}  # fmt: skip
"""The spellings of a budget's unit and the unit each means (canonical: ``tok``, ``char``)."""

STRADDLE = ("exclude", "include", "partial")
"""What the chunk straddling a budget's end counts for."""


BUDGET = declare("Budget", {
    "amount": count(None, AT_LEAST_ONE, "the budget: how many characters or tokens"),
    "unit": choice("tok", ("tok", "char"), "tokens ('tok') or characters ('char')"),
})  # fmt: skip


@BUDGET.checks
@dataclass(frozen=True)
class Budget:
    """A context budget: ``amount`` characters (``unit="char"``) or tokens (``"tok"``).

    >>> Budget(1024, "tok"), str(Budget(2000, "char"))
    (Budget(amount=1024, unit='tok'), '2000char')
    """

    amount: int
    unit: str  # both checked by the declaration (BUDGET) before the instance is made

    def __str__(self) -> str:
        return f"{self.amount}{self.unit}"

    @property
    def words(self) -> str:
        """``"tokens"`` or ``"characters"``."""
        return "tokens" if self.unit == "tok" else "characters"


@dataclass
class RankedRows:
    """The join's kept ranked rows, as judging ranked them (recorded by reference only;
    read when a budget is asked for): ``rows`` maps positions to the run's rows,
    ``ev`` is each kept row's evaluated query, ``pos`` its position once ties moved it
    (None: its own) and ``first_row`` the position of each query's first row."""

    run: Run
    rows: Callable[..., Any]
    ev: np.ndarray
    first_row: np.ndarray
    pos: np.ndarray | None = None

    def ranks(self) -> np.ndarray:
        """Each kept row's rank (1-based) in its query."""
        pos = np.arange(len(self.ev), dtype=np.int64) if self.pos is None else self.pos
        ranks: np.ndarray = pos - self.first_row[self.ev] + 1
        return ranks


@dataclass
class BudgetInputs:
    """What a budget reads besides the judged arrays, kept by reference when judging:
    ``rejoin`` (the columnar join of the inputs, to rank a run of dicts again, which the
    dict join does not keep), the judging
    options ``texts`` and ``budget_tokenizer``, the span judging's ``tokenizer`` and
    texts, and the placed character columns of a run of chunks judged in tokens."""

    texts: Mapping[str, str] | None = None
    tokenizer: Any = None
    span_tokenizer: Any = None
    label_texts: Mapping[str, str] | None = None
    char_spans: Any = None
    ranked: RankedRows | None = None
    rejoin: Callable[[], RankedRows | None] | None = None
    """(Kept only when something can size the rows: a run of chunks, or ``texts``; a run
    of ids without texts keeps no reference to the run.)"""
    cache: dict[Any, Any] = field(default_factory=dict)


def check_texts(texts: Any) -> Mapping[str, str] | None:
    """The judging option ``texts``: ``{doc id: text}`` (None: none given)."""
    if texts is None:
        return None
    if not isinstance(texts, Mapping):
        raise InputError(
            f"texts must map each document id to its text ({{doc id: text}}), got "
            f"{type(texts).__name__}"
        )
    for d, t in texts.items():
        if not isinstance(t, str):
            raise InputError(
                f"texts: document {d!r} must map to its text (a string), got {type(t).__name__}"
            )
    return {str(d): t for d, t in texts.items()}


def _ranked(judged: Judged, inputs: BudgetInputs) -> RankedRows:
    """The kept ranked rows; a pair joined on a run's own dicts is joined again in columns
    (only when a budget is asked for)."""
    if inputs.ranked is None and inputs.rejoin is not None:
        inputs.ranked = inputs.rejoin()
    if inputs.ranked is None:
        raise InputError(
            f"run {judged.run_name!r}: a budget needs the size of every ranked document, and "
            "this run of ids carries no text or length: give texts={doc id: text} to "
            "evaluate (or judge), or a run of chunks (ranklens.Run.from_chunks, a runner's "
            "result)"
        )
    return inputs.ranked


def _judged_in_tokens(inputs: BudgetInputs) -> bool:
    """Whether span judging counts tokens with the budget's tokenizer."""
    return inputs.span_tokenizer is not None and inputs.tokenizer in (None, inputs.span_tokenizer)


def budget_tokenizer(inputs: BudgetInputs) -> Any:
    """The tokenizer a budget in tokens counts with."""
    if inputs.tokenizer is not None:
        return inputs.tokenizer
    return inputs.span_tokenizer if inputs.span_tokenizer is not None else "words"


def row_sizes(judged: Judged, unit: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per kept ranked row: its evaluated query, its rank, and its size in ``unit``
    (``"char"`` or ``"tok"``); cached on the judged pair."""
    inputs = judged.budget_inputs
    if inputs is None:
        raise InputError(
            f"run {judged.run_name!r}: this judged pair keeps no chunk sizes (it was not made "
            "by ranklens.judge); judge the run again to evaluate budget metrics"
        )
    key = ("sizes", unit)
    if key in inputs.cache:
        out: tuple[np.ndarray, np.ndarray, np.ndarray] = inputs.cache[key]
        return out
    rk = _ranked(judged, inputs)
    rows = rk.rows(np.arange(len(rk.ev), dtype=np.int64))
    ranks = rk.ranks()
    R = rk.run
    sizes = np.full(len(rows), -1, dtype=np.int64)
    spans = inputs.char_spans if inputs.char_spans is not None else R.spans
    if spans is not None and unit == "char":
        sizes = np.asarray(spans.chars, dtype=np.int64)[rows].copy()
    elif spans is not None and _judged_in_tokens(inputs):
        tok_spans = R.spans
        assert tok_spans is not None  # judged in tokens: a run of chunks
        sizes = np.asarray(tok_spans.chars, dtype=np.int64)[rows].copy()
        # a chunk with no place in a text whose length is only known in characters
        sizes[np.asarray(spans.chars)[rows] < 0] = -1
    unknown = np.flatnonzero(sizes < 0)
    if len(unknown):
        _fill(judged, inputs, R, spans, rows, ranks, unit, sizes, unknown)
    out = (rk.ev.astype(np.int64), ranks.astype(np.int64), sizes)
    inputs.cache[key] = out
    return out


def _fill(judged: Judged, inputs: BudgetInputs, R: Run, spans: Any, rows: np.ndarray,
          ranks: np.ndarray, unit: str, sizes: np.ndarray, todo: np.ndarray) -> None:  # fmt: skip
    """Sizes from texts: a chunk's own text (whole), its range of its document's text, or
    the option ``texts`` by the row's id; else an error naming the row."""
    tokenizer = budget_tokenizer(inputs)
    rk = _ranked(judged, inputs)
    labels = inputs.label_texts or {}
    given = inputs.texts or {}
    if spans is None:  # a run of ids: each distinct document sized once
        codes, vocab = R.docs.codes()
        present, inv = np.unique(codes[rows[todo]], return_inverse=True)
        inv = inv.reshape(-1)
        first = np.full(len(present), len(todo), dtype=np.int64)
        np.minimum.at(first, inv, np.arange(len(todo), dtype=np.int64))
        per = np.zeros(len(present), dtype=np.int64)
        for u in np.argsort(first, kind="stable").tolist():  # errors name the first row
            i, doc = int(todo[first[u]]), str(vocab[present[u]])
            text = given.get(doc)
            qid = str(judged.query_ids[int(rk.ev[i])])
            what = f"document {doc!r}"
            if text is None:
                raise InputError(_no_size(judged.run_name, qid, int(ranks[i]), what))
            per[u] = (
                len(text)
                if unit == "char"
                else count_tokens(tokenizer, text, judged.run_name, qid, int(ranks[i]), what)
            )
        sizes[todo] = per[inv]
        return
    ids = R.docs.strings(rows[todo])
    memo: dict[str, int] = {}
    for j, i in enumerate(todo.tolist()):
        row, rid = int(rows[i]), ids[j]
        text, doc = None, rid
        if spans is not None:
            doc = spans.doc[row] if spans.doc[row] is not None else rid
            own, chars = spans.text[row], int(spans.chars[row])
            a, b = int(spans.start[row]), int(spans.end[row])
            if isinstance(own, str) and chars in (-1, len(own)):
                text = own
            elif 0 <= a < b and isinstance(labels.get(doc), str):
                text = labels[doc][a:b]
            elif chars >= 0 and unit == "char":
                sizes[i] = chars
                continue
        if text is None:
            text = given.get(rid)
            if text is None and doc != rid:
                text = given.get(str(doc))
        qid = str(judged.query_ids[int(rk.ev[i])])
        if text is None:
            raise InputError(_no_size(judged.run_name, qid, int(ranks[i]), _what(spans, rid, doc)))
        if unit == "char":
            sizes[i] = len(text)
            continue
        if text in memo:  # the same text (a chunk retrieved for several queries)
            sizes[i] = memo[text]
            continue
        sizes[i] = memo[text] = count_tokens(tokenizer, text, judged.run_name, qid,
                                             int(ranks[i]), _what(spans, rid, doc))  # fmt: skip


def _no_size(run: str, qid: str, rank: int, what: str) -> str:
    return (
        f"run {run!r}: query {qid!r}, rank {rank}: the budget needs the length of {what}, "
        "and neither the run nor the judging options give it: give the chunks' texts or "
        "offsets in the run (hits with text= or start=/end=), or texts={doc id: text} to "
        "evaluate"
    )


def _what(spans: Any, rid: str, doc: Any) -> str:
    if spans is None or doc == rid:
        return f"document {rid!r}"
    return f"chunk {rid!r} of document {doc!r}"


def count_tokens(tokenizer: Any, text: str, run: str, qid: str, rank: int, what: str) -> int:
    """The tokens of ``text`` (the chunk at ``rank`` of query ``qid``); a tokenizer that
    fails, or finds no token in a text that is not blank, is an error naming the row."""
    where = f"run {run!r}: query {qid!r}, rank {rank} ({what})"
    try:
        n = len(token_offsets(tokenizer, text)[0])
    except InputError as exc:
        raise InputError(
            f"{where}: budget_tokenizer failed: {exc} (give budget_tokenizer='words', "
            "'whitespace' or a callable text -> tokens)"
        ) from exc
    if n == 0 and text.strip():
        raise InputError(
            f"{where}: budget_tokenizer found no token in its text of {len(text)} characters; "
            "a tokenizer returns the tokens of the text it is given"
        )
    return n


def cutoffs(judged: Judged, budget: Budget, straddle: str = "exclude") -> np.ndarray:
    """Per evaluated query, the budget's rank cutoff ``c_q`` (see the module docstring);
    ``straddle="include"`` counts the straddling chunk in. Queries whose budget holds no
    chunk of a non-empty list are counted (``JudgeCounts.budget_empty``)."""
    if straddle not in STRADDLE:
        raise InputError(f"straddle must be one of {', '.join(STRADDLE)}; got {straddle!r}")
    _refuse(judged)
    used, cut, _ = _fit(judged, budget)
    lens = judged.lens.astype(np.int64)
    if straddle == "include":
        cut = np.where((used < budget.amount) & (cut < lens), cut + 1, cut)
    if straddle == "exclude":
        judged.counts.count_budget(str(budget), int(((cut == 0) & (lens > 0)).sum()))
    return cut


def _refuse(judged: Judged) -> None:
    opts = judged.options
    if opts.ties == "expected":
        raise InputError(
            "a budget cutoff depends on the order of the chunks: ties='expected' averages over "
            "orders; use ties='trec', 'input', 'best' or 'worst' with budget metrics"
        )
    if opts.judged_only:
        raise InputError(
            "judged_only removes unjudged chunks from the list a reader would read: a budget "
            "counts every chunk; evaluate budget metrics without judged_only"
        )


def _fit(judged: Judged, budget: Budget) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """Per query the size used by the chunks that fit whole, their number, and the rows
    in (query, rank) order (query, rank, size)."""
    key = ("fit", budget)
    inputs = judged.budget_inputs
    if inputs is not None and key in inputs.cache:
        hit: tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]] = inputs.cache[key]
        return hit
    q, rank, size = row_sizes(judged, budget.unit)
    o = seg.order_by(q, rank) if len(q) else np.zeros(0, dtype=np.int64)
    q, rank, size = q[o], rank[o], size[o]
    n_q = judged.n_queries
    off = np.searchsorted(q, np.arange(n_q + 1)).astype(np.int64)
    cum = seg.seg_cumsum(size, off) if len(size) else size
    fits = cum <= budget.amount
    cut = np.bincount(q[fits], minlength=n_q).astype(np.int64)
    used = np.bincount(q[fits], weights=size[fits].astype(np.float64), minlength=n_q)
    out = (used.astype(np.int64), cut, (q, rank, size))
    assert inputs is not None
    inputs.cache[key] = out
    return out


def partial_pair(judged: Judged, budget: Budget) -> Judged:
    """The judged pair whose span characters hold, per query, the chunks that fit the
    budget whole and the first ``B − used`` characters or tokens of the straddling one,
    with the evidence that prefix covers first counted exactly (a set of characters or
    tokens, never a proportion): the evidence metrics at no cutoff on it are their values
    at the budget with ``straddle="partial"``."""
    inputs = judged.budget_inputs
    c = judged.chars
    if c is None or c.q is None or c.a is None or inputs is None:
        raise InputError(
            "straddle=partial counts the evidence in part of a chunk: it needs span labels "
            "and a run of chunks (ranklens.SpanLabels, docs/spans.md)"
        )
    _refuse(judged)
    in_tokens = inputs.span_tokenizer is not None
    if in_tokens != (budget.unit == "tok") or (in_tokens and not _judged_in_tokens(inputs)):
        judging = "tokens of the span tokenizer" if in_tokens else "characters"
        raise InputError(
            f"straddle=partial keeps the straddling chunk's first {budget.words} and counts "
            f"its evidence in the judging's unit ({judging}): give a budget in that unit "
            "(and budget_tokenizer= the span tokenizer), or straddle=exclude"
        )
    used, cut, _ = _fit(judged, budget)
    # SpanChars rows are the join's kept rows, in the same order as the ranked rows
    row_q, row_rank = c.q, c.rank
    assert row_rank is not None
    keep = row_rank <= cut[row_q]
    straddle = (row_rank == cut[row_q] + 1) & (used[row_q] < budget.amount)
    new = np.where(keep, c.new, 0).astype(np.int64)
    counted_src = c.counted if c.counted is not None else c.new
    counted = np.where(keep, counted_src, 0).astype(np.int64)
    length = np.where(keep, c.length, 0).astype(np.int64)
    for r in np.flatnonzero(straddle).tolist():
        q = int(row_q[r])
        rem = int(budget.amount - used[q])
        n_new, n_counted, prefix = partial_chars(c, r, rem, row_q == q, keep)
        new[r], counted[r], length[r] = n_new, n_counted, prefix
    sel = keep | straddle
    chars = replace(
        c, new=new[sel], length=length[sel], counted=counted[sel], q=row_q[sel],
        rank=row_rank[sel], a=None, b=None, doc=None, ev_spans=None,
    )  # fmt: skip
    out: Judged = replace(judged, chars=chars, _views={}, condensed_cache=None,
                          filled_cache=None)  # fmt: skip
    return out


def partial_chars(c: Any, r: int, rem: int, of_query: np.ndarray,
                  before: np.ndarray) -> tuple[int, int, int]:  # fmt: skip
    """For the straddling row ``r`` kept to its first ``rem`` units: the evidence it covers
    that no chunk before it covered (as a set: ``|E ∩ P \\ C|``), the same counted per span
    (``Σ_span |span ∩ P \\ C|``: the ``summed`` evidence total), and the prefix's length.
    ``P = [a, a + min(rem, b − a))``, ``E`` the query's evidence in the row's document,
    ``C`` the union of the query's earlier chunks there (``before``)."""
    a, b, doc = int(c.a[r]), int(c.b[r]), int(c.doc[r])
    prefix = min(rem, int(c.length[r]))
    if a < 0 or b <= a or doc < 0:
        return 0, 0, prefix
    p = (a, a + min(rem, b - a))
    sq, sd, ss, se = c.ev_spans
    q = int(c.q[r])
    mine = (sq == q) & (sd == doc)
    earlier = np.flatnonzero(of_query & before & (c.doc == doc) & (c.a >= 0) & (c.b > c.a))
    covered = _union(list(zip(c.a[earlier].tolist(), c.b[earlier].tolist())))
    spans = list(zip(ss[mine].tolist(), se[mine].tolist()))
    as_set = _length(_minus(_clip(_union(spans), p), covered))
    per_span = sum(_length(_minus(_clip([s], p), covered)) for s in spans)
    summed = c.counted is not None and c.counted is not c.new
    return as_set, (per_span if summed else as_set), prefix


def _union(iv: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _clip(iv: list[tuple[int, int]], p: tuple[int, int]) -> list[tuple[int, int]]:
    return [(max(s, p[0]), min(e, p[1])) for s, e in iv if min(e, p[1]) > max(s, p[0])]


def _minus(iv: list[tuple[int, int]], cut: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for s, e in iv:
        pieces = [(s, e)]
        for cs, ce in cut:
            pieces = [x for ps, pe in pieces for x in ((ps, min(pe, cs)), (max(ps, ce), pe))
                      if x[1] > x[0]]  # fmt: skip
        out += pieces
    return out


def _length(iv: list[tuple[int, int]]) -> int:
    return sum(e - s for s, e in iv)
