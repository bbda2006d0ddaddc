"""The judging floor: the one place where documents are looked up.

:func:`judge` joins a run with its qrels and turns the pair into flat per-rank arrays (CSR
layout: query ``i`` owns ranks ``off[i]:off[i+1]``). Every metric is then a vectorised
function of those arrays and never touches a document id.

Rules (each one is trec_eval's unless an option says otherwise):

* **Ordering.** A scored run is ranked by score descending, then document id descending in
  byte order (trec_eval's ``comp_sim_docno``); the rank column of a TREC file is ignored.
  A run of ranked lists without scores keeps the given order.
* **Relevance.** A document is relevant at level ℓ when its grade is at least ℓ
  (trec_eval ``-l``); ℓ applies to the binary measures only: nDCG's gains are the raw grades.
* **Negative grades** are judged (they count for ``judged@k``) but never relevant, have zero
  gain, and are neither relevant nor non-relevant for bpref (trec_eval's "pooled but
  unjudged").
* **Duplicates.** A document twice in one query of a run is an error naming both by
  default; ``duplicates="first"`` keeps its highest-ranked occurrence and counts the rest
  (conventions may keep them: see :mod:`ranklens.judging.conventions`).
* **Missing queries.** A query with labels but absent from the run is scored 0 and counted
  in the mean (trec_eval ``-c``) by default; ``missing="skip"`` leaves it out. Queries of
  the run with no labels are ignored. Both counts are reported.
* **Grouped ground truth.** Each group is one unit: it is found at the rank of its first
  retrieved member, where it counts once (one relevant document, the group's grade as
  gain); later members of a found group are redundant (not relevant, no gain, and not
  non-relevant for bpref either). A document that belongs to several groups finds all of
  them at its rank: the rank counts as one relevant document for precision, as the number of
  groups it newly finds for recall and AP, and its gain is the highest grade among them.
  This keeps every measure within [0, 1] (the ideal ranking holds one group per rank).

The judged arrays are sparse: besides each query's list length, only the retrieved documents
that have a label are kept (with their rank), so every metric costs time in proportion to
the judged documents retrieved, not to the length of the run.

Layout: :mod:`.conventions` (the switches and presets), :mod:`.options` (options and
counts), :mod:`.join` and :mod:`.docmatch` (matching a run with its qrels: one columnar join
for every input form, Python dicts and lists read into columns with their ids kept as
bytes by :mod:`ranklens.model.mappings`; a run of ``{doc: score}`` dicts is joined on its
own dicts instead, :mod:`.dict_join`, in a fraction of the memory), :mod:`.build` (the
arrays), :mod:`.judged` (:class:`Judged` and its per-level :class:`LevelView`). Imports the
io floor (to read paths) and the model below it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..io import coerce_qrels, coerce_run
from ..model import QrelsLike, Run, RunLike
from ..model.spans import SpanLabels
from .budget import Budget, BudgetInputs, RankedRows, check_texts
from .build import build, condensed_pair, filled_pair
from .condense import condense
from .conventions import PRESETS, Convention, get_convention
from .dict_join import join_dicts
from .freshness import freshness_inputs, require_versions
from .freshness_rules import FreshnessRule, get_freshness_rule
from .join import Join, join_columnar
from .judged import Judged, LevelView
from .options import JUDGE, JudgeCounts, JudgeOptions, counts_notes
from .overlap_check import no_shared_query
from .spanmatch import place_chunks
from .tokens import TokenMap, run_in_tokens, spans_in_tokens


def span_inputs(
    Q: SpanLabels, run: Any, opts: JudgeOptions, tokenizer: Any, chunking: Any
) -> tuple[SpanLabels, Run, dict[str, np.ndarray] | None, int, int, Any]:
    """What span labels judge: the run of chunks (a runner's or recorder's result gives its
    chunk-level hits, ``chunk_run()``), every chunk placed in its document
    (:func:`~.spanmatch.place_chunks`); with a ``tokenizer`` the labels, chunks and
    ``chunking`` in tokens (:mod:`.tokens`); ``(labels, run, chunking, unlocated,
    relocated, the placed chunks' character columns)``."""
    if opts.ties in ("expected", "best", "worst"):
        raise InputError(f"ties={opts.ties!r} is not defined for span labels (chunks, not ids)")
    if opts.judged_only:
        raise InputError("judged_only is not defined for span labels: every chunk is scored")
    chunk_run = getattr(run, "chunk_run", None)
    R = chunk_run() if callable(chunk_run) else coerce_run(run)
    R, unlocated, relocated = place_chunks(R, Q, opts.convention.placement)
    char_spans = R.spans
    table = chunking_table(chunking) if chunking is not None else None
    if tokenizer is not None:
        if Q.texts is None:
            raise InputError("tokens need the documents' texts: give the labels texts=")
        tm = TokenMap(tokenizer, Q.texts)
        Q, R = spans_in_tokens(Q, tm), run_in_tokens(R, tm)
        if table is not None:
            table = {d: np.array([t for a, b in c if (t := tm.interval(d, a, b))], dtype=np.int64)
                     .reshape(-1, 2) for d, c in table.items()}  # fmt: skip
    return Q, R, table, unlocated, relocated, char_spans


def chunking_table(chunking: Any) -> dict[str, np.ndarray]:
    """``{document: [[start, end], ...]}`` of a chunking: every chunk a chunker cut from
    each document (a mapping of ranges, or a run of chunks such as ``chunk_run()``)."""
    if isinstance(chunking, Run) and chunking.spans is not None:
        sp = chunking.spans
        out: dict[str, list[tuple[int, int]]] = {}
        for d, a, b in zip(sp.doc, sp.start.tolist(), sp.end.tolist()):
            if d is not None and 0 <= a < b:
                out.setdefault(str(d), []).append((a, b))
        chunking = out
    if not isinstance(chunking, Mapping):
        raise InputError(
            "chunking must map each document to its chunks' (start, end) ranges, or be a run "
            f"of chunks; got {type(chunking).__name__}"
        )
    table = {}
    for d, ranges in chunking.items():
        if isinstance(ranges, (str, bytes)) or not isinstance(ranges, Iterable):
            raise InputError(
                f"chunking: document {d!r} must map to (start, end) ranges, got {ranges!r}"
            )
        pairs = []
        for item in ranges:
            ok = (
                not isinstance(item, (str, bytes))
                and isinstance(item, Sequence)
                and len(item) == 2
                and all(_whole(x) for x in item)
            )
            if not ok:
                raise InputError(
                    f"chunking: document {d!r} has a chunk {item!r} that is not a (start, end) "
                    "pair of whole numbers"
                )
            pairs.append((int(item[0]), int(item[1])))
        arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if len(arr) and ((arr[:, 0] < 0) | (arr[:, 1] <= arr[:, 0])).any():
            raise InputError(f"chunking: document {d!r} has a chunk that is not 0 <= start < end")
        table[str(d)] = np.unique(arr, axis=0)
    return table


def _whole(x: Any) -> bool:
    """Whether ``x`` is a whole number (an int, numpy's too, or a float with no fraction)."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        return False
    return bool(np.isfinite(x)) and float(x).is_integer()


@JUDGE.checks
def judge(
    qrels: QrelsLike,
    run: RunLike,
    options: JudgeOptions | None = None,
    *,
    require_shared: bool = True,
    name: str | None = None,
    tokenizer: Any = None,
    chunking: Any = None,
    versions: Any = None,
    as_of: Any = None,
    texts: Any = None,
    budget_tokenizer: Any = None,
    **kwargs: Any,
) -> Judged:
    """Judge ``run`` against ``qrels`` into the arrays every metric works on.

    ``qrels`` and ``run``: anything :func:`ranklens.evaluate` takes (objects, dicts or
    paths). ``options`` (or keyword arguments: ``relevance_level``, ``score_precision``,
    ``convention``, ``judged_only`` and any convention switch such as
    ``duplicates="first"``) set the rules;
    see the module docstring for each rule and its default.

    A run that answers no labelled query (and records no failed retrieval for one) is a
    :class:`~ranklens.errors.NoSharedQueryError`: a mean over no answered query is never
    returned. ``require_shared=False`` allows it (a part of a run judged on its own).
    ``name``: what errors and notes call the run (default: the run's own name).
    For span labels: ``tokenizer`` counts the evidence metrics in tokens
    (:mod:`~ranklens.judging.tokens`), ``chunking`` (every chunk of the chunking, as
    ``{document: [(start, end), ...]}`` or a run of chunks) gives ``precision_omega``.
    With document versions: ``versions`` (a :class:`~ranklens.Versions` table) and ``as_of``
    (one time for every query, or ``{query: time}``; default: the table's newest version)
    judge outdated versions by the ``freshness`` rule (:mod:`.freshness`).
    For context budgets (``recall@1024tok``, :mod:`.budget`): ``texts`` (``{doc id:
    text}``, the sizes of a run of ids) and ``budget_tokenizer`` (what a budget in tokens
    counts: default the span ``tokenizer`` when given, else ``"words"``); read only when
    a budget metric asks.
    """
    opts = JudgeOptions.build(options, **kwargs)
    require_versions(versions, as_of, opts.freshness)
    inputs = BudgetInputs(check_texts(texts), budget_tokenizer, tokenizer)
    # Judging creates no reference cycles; pausing the cyclic collector keeps it from walking
    # every object of a large input (10^7 dict entries) while temporary lists are allocated.
    paused = gc.isenabled()
    gc.disable()
    try:
        # the dict join reads plain ids only: versions, tokenizers and chunkings (span labels,
        # or the error saying they are for span labels) go the columnar way
        plain = versions is None and tokenizer is None and chunking is None
        joined = join_dicts(qrels, run, opts) if plain else None
        if joined is None:
            Q = coerce_qrels(qrels)
            placed: Sequence[int] = (0, 0)
            table, fresh = None, None
            if versions is not None:  # the rule applied is the one the options record
                rule = get_freshness_rule(opts.freshness)
                opts = replace(opts, freshness=rule)
                Q, fresh = freshness_inputs(Q, versions, as_of, rule)
            if isinstance(Q, SpanLabels):
                inputs.label_texts = Q.texts
                Q, R, table, *placed, char_spans = span_inputs(Q, run, opts, tokenizer, chunking)
                inputs.char_spans = char_spans if tokenizer is not None else None
            elif tokenizer is not None or chunking is not None:
                raise InputError("tokenizer= and chunking= are for span labels (SpanLabels)")
            else:
                R = coerce_run(run)
            joined = join_columnar(Q, R, opts, name, table, fresh)
            if joined.chars is not None:
                joined.chars.unlocated, joined.chars.relocated = placed
        elif inputs.texts is not None:  # the dict join keeps no rows: a budget joins again
            at = opts

            def rejoin() -> RankedRows | None:
                return join_columnar(coerce_qrels(qrels), coerce_run(run), at, name).ranked

            inputs.rejoin = rejoin
        if joined.ranked is not None and joined.ranked.run.spans is None and inputs.texts is None:
            joined.ranked = None  # a run of ids without texts= has no sizes: keep nothing of it
        inputs.ranked = joined.ranked
        if name is not None:
            joined.run_name = name
        if require_shared and len(joined.missing) and joined.missing.all() and not joined.failures:
            raise no_shared_query(
                name or joined.run_name, joined.ignored_ids, [str(q) for q in joined.query_ids]
            )
        if opts.judged_only:
            joined = condense(joined)
        joined.budget = inputs
        return build(joined, opts)
    finally:
        if paused:
            gc.enable()


__all__ = [
    "PRESETS",
    "Budget",
    "Convention",
    "FreshnessRule",
    "Join",
    "JudgeCounts",
    "JudgeOptions",
    "Judged",
    "LevelView",
    "condensed_pair",
    "counts_notes",
    "filled_pair",
    "get_convention",
    "judge",
]
