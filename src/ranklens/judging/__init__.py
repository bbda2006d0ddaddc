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
own dicts instead, :mod:`.dicts`, in a fraction of the memory), :mod:`.build` (the
arrays), :mod:`.judged` (:class:`Judged` and its per-level :class:`LevelView`). Imports the
io floor (to read paths) and the model below it.
"""

from __future__ import annotations

import gc
from typing import Any

from ..io import coerce_qrels, coerce_run
from ..model import QrelsLike, RunLike
from .build import build, condensed_pair, filled_pair
from .condense import condense
from .conventions import PRESETS, Convention, get_convention
from .dicts import join_dicts
from .join import Join, join_columnar
from .judged import Judged, LevelView
from .options import JudgeCounts, JudgeOptions, counts_notes


def judge(
    qrels: QrelsLike,
    run: RunLike,
    options: JudgeOptions | None = None,
    **kwargs: Any,
) -> Judged:
    """Judge ``run`` against ``qrels`` into the arrays every metric works on.

    ``qrels`` and ``run``: anything :func:`ranklens.evaluate` takes (objects, dicts or
    paths). ``options`` (or keyword arguments: ``relevance_level``, ``score_precision``,
    ``convention``, ``judged_only`` and any convention switch such as
    ``duplicates="first"``) set the rules;
    see the module docstring for each rule and its default.
    """
    opts = JudgeOptions.build(options, **kwargs)
    # Judging creates no reference cycles; pausing the cyclic collector keeps it from walking
    # every object of a large input (10^7 dict entries) while temporary lists are allocated.
    paused = gc.isenabled()
    gc.disable()
    try:
        joined = join_dicts(qrels, run, opts)
        if joined is None:
            joined = join_columnar(coerce_qrels(qrels), coerce_run(run), opts)
        if opts.judged_only:
            joined = condense(joined)
        return build(joined, opts)
    finally:
        if paused:
            gc.enable()


__all__ = [
    "PRESETS",
    "Convention",
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
