"""Quality of a window's live retrievals where labels or a judge can tell.

* :func:`labelled_values`: each retrieval of a labelled query scored by the usual metrics
  (:func:`ranklens.evaluate`, trec_eval's definitions, grouped labels as judged
  everywhere). A query asked several times counts each time: identical rankings are
  scored once, and a query's other rankings under names of their own, labelled as it is
  (:meth:`~ranklens.Qrels.copies`), all in one evaluation; a labelled retrieval that
  failed or found nothing scores 0, as the runner scores a failed query.
* :func:`judged_values`: a sample of retrievals whose top hits a model judge grades
  (:func:`ranklens.assess`: concurrency, timeouts and retries from the runner, off the
  request path); per retrieval the share graded relevant, and, where the labels grade
  every one of those hits, the share the labels call relevant.
* :func:`uncalibrated`: the default estimate of the judged share (its mean with a t
  interval); an ``estimator=`` callable replaces it, e.g. a prediction-powered estimate
  that corrects the judge's bias with the retrievals both the judge and the labels grade.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..comparison import stats
from ..evaluation import evaluate
from ..io import coerce_qrels
from ..model import Run
from ..settings import Calling

JUDGE_CALLING = Calling(concurrency=4)
"""How :func:`judged_values` calls a judge unless told: 4 calls in flight, no time limit."""

Estimator = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[float, float, float]]
"""``estimator(judged, judged_on_labelled, labels_on_labelled) -> (estimate, low, high)``:
per-retrieval shares of relevant hits by the judge on every judged retrieval, and by the
judge and by the labels on the judged retrievals the labels grade fully."""


def labelled_values(
    qrels: Any,
    samples: Sequence[tuple[str, tuple[str, ...]]],
    metrics: Sequence[str],
    relevance_level: int = 1,
) -> dict[str, np.ndarray]:
    """Per-retrieval values of each metric, in the order of ``samples`` (``(label query
    id, ranked doc ids)``), binary metrics counting grades from ``relevance_level``; see
    the module docstring."""
    out = {m: np.zeros(len(samples)) for m in metrics}
    if not samples or not metrics:
        return out
    slots: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for i, pair in enumerate(samples):
        if pair[1]:
            slots.setdefault(pair, []).append(i)
    if not slots:  # every labelled retrieval failed or found nothing: each scores 0
        return out
    asked = [qid for qid, _ in slots]
    if len(set(asked)) < len(asked):
        # a query asked again with another ranking: the k-th of its rankings named
        # "k\x1fquery" (no two share a name), labelled as the query is (Qrels.copies:
        # grades, groups and intents kept), so that all are scored in one evaluation
        depth: dict[str, int] = {}
        names = []
        for qid in asked:
            depth[qid] = depth.get(qid, -1) + 1
            names.append(f"{depth[qid]}\x1f{qid}")
        qrels = coerce_qrels(qrels).copies(dict(zip(names, asked)))
    else:
        names = asked
    run_dict = {name: list(docs) for name, (_, docs) in zip(names, slots)}
    places = dict(zip(names, slots.values()))
    ev = evaluate(qrels, Run.from_dict(run_dict), list(metrics), missing="skip",
                  duplicates="first", relevance_level=relevance_level)  # fmt: skip
    # first rank wins, as the Recorder maps hits
    for m, name in zip(metrics, ev.metrics):
        for q, v in zip(ev.query_ids, ev.per_query[name.name]):
            out[m][places[q]] = v
    return out


def judged_values(
    judge: Callable[..., Any],
    samples: Sequence[tuple[str, str | None, list[tuple[str, str]]]],
    labels: dict[str, dict[str, int]] | None,
    *,
    relevance_level: int = 1,
    calls: Calling = JUDGE_CALLING,
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(judged, by_labels, failed)``: per sampled retrieval (``(query, label query id,
    [(doc id, text), ...])``) the share of its hits the judge grades at least
    ``relevance_level`` (NaN when every call failed), the share the labels grade so (NaN
    unless the labels grade every hit), and the judge calls that failed. ``calls``: how the
    judge is called (:func:`ranklens.assess`'s calling settings; never a progress bar)."""
    from ..labelling import LabelPool, PoolPair, assess

    pairs, owner = [], []
    for i, (query, _, hits) in enumerate(samples):
        for doc, text in hits:
            pairs.append(PoolPair(f"r{i}", str(doc), {}, query, text))
            owner.append(i)
    judged = np.full(len(samples), np.nan)
    human = np.full(len(samples), np.nan)
    if not pairs:
        return judged, human, 0
    result = assess(LabelPool(pairs), judge, calls=replace(calls, progress=False),
                    source="model:monitor")  # fmt: skip
    grades = result.grades
    rel: list[list[float]] = [[] for _ in samples]
    for pair, i in zip(pairs, owner):
        g = grades.get((pair.query_id, pair.doc_id))
        if g is not None:
            rel[i].append(float(g >= relevance_level))
    for i, (_, label, hits) in enumerate(samples):
        if rel[i]:
            judged[i] = float(np.mean(rel[i]))
        graded = (labels or {}).get(label or "", {})
        if label is not None and hits and all(d in graded for d, _ in hits):
            human[i] = float(np.mean([graded[d] >= relevance_level for d, _ in hits]))
    return judged, human, len(result.failures)


def uncalibrated(
    judged: np.ndarray, judged_labelled: np.ndarray, labels: np.ndarray
) -> tuple[float, float, float]:
    """The judge's own mean share of relevant hits with a 95% Student t interval (no
    correction of the judge's bias: pass ``estimator=`` for one)."""
    if len(judged) == 0:
        return math.nan, math.nan, math.nan
    lo, hi = stats.t_interval(judged)
    return float(judged.mean()), float(lo[0]), float(hi[0])
