"""``ranklens explain``: one metric under several conventions, side by side, and the switch
that makes each differ from trec_eval's number.

For every convention and every switch in which it differs from the baseline, the metric is
recomputed with that one switch applied to the baseline; the switches that move the number
are named with their effect.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import RanklensError
from ..evaluation import evaluate, tie_bounds
from ..io import coerce_qrels, coerce_run
from ..judging import Convention, get_convention
from ..metrics import FAMILIES, fmt_value, parse_metric
from ..metrics.params import STRADDLE
from ..model import Qrels, QrelsLike, Run, RunLike

# The tricky case of the reference notes: exact score ties, a negative label, a duplicate
# document, a query with no relevant document, a query missing from the run, one only in it.
EXAMPLE_QRELS: dict[str, dict[str, int]] = {
    "q1": {"d1": 3, "d2": 2, "d3": 1, "d4": 0, "d5": -1, "d6": 2, "d7": 1},
    "q2": {"e1": 0, "e2": 0},
    "q3": {"f1": 1, "f2": 1, "f3": 1},
    "q4": {"g1": 1, "g2": 1},
    "q5": {"h1": 1},
}
EXAMPLE_RUN: dict[str, list[tuple[str, float]]] = {
    "q1": [
        ("d4", 0.9),
        ("d2", 0.9),
        ("d5", 0.8),
        ("d9", 0.7),
        ("d1", 0.6),
        ("d3", 0.6),
        ("d8", 0.5),
        ("d7", 0.4),
    ],
    "q2": [("e1", 0.9), ("e3", 0.8)],
    "q3": [("f2", 0.9), ("f9", 0.8)],
    "q4": [("g1", 0.9), ("g1", 0.8), ("g3", 0.7), ("g2", 0.6)],
    "q6": [("x1", 0.5)],
}

# each document's text in the example, for budget metrics (recall@20tok): lengths differ so
# that a budget cuts each list at a different rank
_LENGTHS = (3, 9, 5, 14, 2, 7, 11, 4)
EXAMPLE_TEXTS: dict[str, str] = {
    doc: " ".join([f"{doc}:"] + ["word"] * _LENGTHS[i % len(_LENGTHS)])
    for i, doc in enumerate(sorted({d for q in EXAMPLE_QRELS.values() for d in q}
                                   | {d for q in EXAMPLE_RUN.values() for d, _ in q}))
}  # fmt: skip


@dataclass
class Explanation:
    """Values per convention, the baseline the differences are measured from, and per row
    the switches that move the number (each applied alone to the baseline)."""

    metric: str
    baseline: Convention
    baseline_value: float
    rows: list[Row]


@dataclass
class Row:
    convention: Convention
    value: float | None
    error: str | None = None
    effects: list[tuple[str, Any, float | None]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    note: str | None = None
    tie_range: tuple[float, float] | None = None


def _value(qrels: Qrels, run: Run, metric: str, conv: Convention, **opts: Any) -> Any:
    ev = evaluate(qrels, run, [metric], convention=conv, **opts)
    return ev[metric], ev.counts


def explain(
    metric: str,
    qrels: QrelsLike | None = None,
    run: RunLike | None = None,
    conventions: Sequence[str | Convention] = ("trec", "llamaindex", "haystack", "autorag"),
    **options: Any,
) -> Explanation:
    """Compute ``metric`` under each convention and attribute each difference from the first
    (baseline) convention to the switches that cause it. Without qrels and run, the built-in
    tricky example is used."""
    if parse_metric(metric).budget is not None and qrels is None and "texts" not in options:
        options = {**options, "texts": EXAMPLE_TEXTS}  # the example's documents' sizes
    Q = coerce_qrels(EXAMPLE_QRELS if qrels is None else qrels)
    R = coerce_run(EXAMPLE_RUN if run is None else run)
    convs = [get_convention(c) for c in conventions]
    base = convs[0]
    refused = None
    try:
        base_value, _ = _value(Q, R, metric, base, **options)
    except RanklensError as exc:
        # e.g. trec_eval stops on a duplicate document: compare against its 'first' variant
        refused = str(exc)
        base = base.with_(duplicates="first")
        base_value, _ = _value(Q, R, metric, base, **options)
    rows: list[Row] = []
    for i, conv in enumerate(convs):
        try:
            if i == 0 and refused is not None:  # the baseline row shows the variant it uses
                value, counts = _value(Q, R, metric, base, **options)
                row = Row(conv, value, counts=counts)
                row.note = f"with duplicates=first: {conv.name} alone refuses this run ({refused})"
                if counts.get("tied_documents"):
                    row.tie_range = _tie_range(Q, R, metric, base, options)
                rows.append(row)
                continue
            else:
                value, counts = _value(Q, R, metric, conv, **options)
                row = Row(conv, value, counts=counts)
        except RanklensError as exc:
            rows.append(Row(conv, None, error=str(exc)))
            continue
        if counts.get("tied_documents"):
            row.tie_range = _tie_range(Q, R, metric, base if i == 0 else conv, options)
        for switch, (_, theirs) in base.differences(conv).items():
            try:
                alone, _ = _value(Q, R, metric, base.with_(**{switch: theirs}), **options)
            except RanklensError:
                alone = None
            if alone is None or abs(alone - base_value) > 1e-12:
                row.effects.append((switch, theirs, alone))
        rows.append(row)
    return Explanation(metric, base, base_value, rows)


def _tie_range(
    Q: Qrels, R: Run, metric: str, conv: Convention, options: dict[str, Any]
) -> tuple[float, float] | None:
    """The metric's least and greatest value over every order of the run's tied documents
    (``ties="worst"`` and ``"best"``), or None when they cannot be computed."""
    try:
        worst, best = tie_bounds(Q, R, [metric], convention=conv, **options)
    except RanklensError:
        return None
    low, high = worst[metric], best[metric]
    return min(low, high), max(low, high)


def format_explanation(ex: Explanation, example: bool) -> str:
    """The table printed by ``ranklens explain``."""
    lines = [
        f"{ex.metric} under each convention"
        + (
            " (built-in example: ties, a duplicate, a negative label, a query without "
            "relevant documents, a query missing from the run)"
            if example
            else ""
        )
    ]
    width = max(len(r.convention.name) for r in ex.rows)
    pad = " " * (width + 4)
    for r in ex.rows:
        if r.value is None:
            lines.append(f"  {r.convention.name.ljust(width)}     error: {r.error}")
            continue
        lines.append(f"  {r.convention.name.ljust(width)}  {r.value:8.4f}")
        if r.note:
            lines.append(f"{pad}  {r.note}")
        if r.counts.get("queries_no_relevant_skipped"):
            lines.append(
                f"{pad}  {r.counts['queries_no_relevant_skipped']} queries without "
                "relevant documents left out"
            )
        if r.tie_range is not None:
            low, high = r.tie_range
            c = r.counts
            lines.append(
                f"{pad}  ties: {low:.4f} to {high:.4f} over every order of the "
                f"{c['tied_documents']} documents with tied scores ({c['tie_queries']} "
                f"{'query' if c['tie_queries'] == 1 else 'queries'})"
            )
        for switch, value, alone in r.effects:
            if alone is None:
                lines.append(f"{pad}  {switch}={value}: cannot be computed alone")
            else:
                lines.append(
                    f"{pad}  {switch}={value} alone: {alone:.4f} ({alone - ex.baseline_value:+.4f})"
                )
    if all(r.convention != ex.baseline for r in ex.rows if r.value is not None):
        lines.append(
            f"  differences are measured from {ex.baseline.name} = {ex.baseline_value:.4f}"
        )
    lines.append("")
    lines.append(
        "Each line under a convention is one of its switches applied alone to the "
        "baseline; switches that leave the number unchanged here are not shown."
    )
    lines += budget_lines(ex.metric)
    lines += parameter_lines(ex.metric)
    return "\n".join(lines) + "\n"


def budget_lines(metric: str) -> list[str]:
    """For a metric at a context budget, what the budget means: the cutoff's formula, the
    sizes it reads and what the straddling chunk counts for (nothing for other metrics).

    >>> for line in budget_lines("recall@1024tok"):  # doctest: +ELLIPSIS
    ...     print(line)
    <BLANKLINE>
    recall@1024tok is recall at each query's own cutoff c_q, the number of leading chunks
    that fit a context of 1024 tokens:
        c_q = max { c : s_1 + ... + s_c <= 1024 }
    ...
    """
    mt = parse_metric(metric)
    b = mt.budget
    if b is None:
        return []
    size = (
        "its characters (the run's chunk lengths, the chunk's text, or texts={doc id: text})"
        if b.unit == "char"
        else "its tokens under budget_tokenizer (default: the span judging's tokenizer when "
        "given, else 'words'), counted on the chunk's text or texts={doc id: text}"
    )
    straddle = {
        "exclude": "the chunk straddling the budget's end is left out (straddle=exclude)",
        "include": "the chunk straddling the budget's end is read whole (straddle=include: "
        "c_q + 1 when it exists)",
        "partial": f"the straddling chunk's first {b.amount} - (s_1 + ... + s_c) {b.words} "
        "are read, and the evidence in them counted exactly (straddle=partial)",
    }[mt.straddle]
    lines = [
        "",
        *textwrap.wrap(
            f"{mt.canonical()} is {mt.family} at each query's own cutoff c_q, the number of "
            f"leading chunks that fit a context of {b.amount} {b.words}:",
            88,
        ),
        f"    c_q = max {{ c : s_1 + ... + s_c <= {b.amount} }}",
    ]
    lines += textwrap.wrap(
        f"with s_r the size of the chunk at rank r: {size}; {straddle}. A query whose first "
        f"chunk is larger than the budget scores 0 at it, and the notes count it.",
        88,
    )
    lines += textwrap.wrap(STRADDLE.summary("straddle"), 88, initial_indent="  ",
                           subsequent_indent="     ")  # fmt: skip
    return lines


def parameter_lines(metric: str) -> list[str]:
    """What the metric's family takes, each parameter from its declaration (type, range,
    default, description, reference), with the values this name sets.

    >>> for line in parameter_lines("rbp(p=0.8)")[1:]:  # doctest: +NORMALIZE_WHITESPACE
    ...     print(line)
    Parameters of rbp (this name sets p=0.8):
      p: a number in (0, 1), default 0.9: persistence, the chance that a user reads on to
         the next rank (Moffat & Zobel, TOIS 2008)
      gains: grade:gain pairs with distinct grades >= 0, written like {1:3.5,2:9}: the gain
         of each listed grade; other grades gain their own value (trec_eval 10, ndcg.1=3.5,2=9)
    """
    mt = parse_metric(metric)
    fam = FAMILIES[mt.family]
    if not fam.params:
        besides = " besides rel= (its own relevance level)" if fam.uses_level else ""
        return ["", f"{fam.name} takes no parameter{besides}."]
    set_here = [f"{k}={fmt_value(v)}" for k, v in mt.params if v != fam.params[k].default]
    head = f"Parameters of {fam.name}" + (
        f" (this name sets {', '.join(set_here)}):" if set_here else ":"
    )
    lines = ["", head]
    for key, param in fam.params.items():
        lines += textwrap.wrap(
            param.summary(key), 88, initial_indent="  ", subsequent_indent="     "
        )
    return lines
