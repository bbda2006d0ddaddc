"""The two label sets an estimate needs: the judge's grades of every run's top ``depth``
(one judge through :func:`ranklens.assess`, or an ensemble combined per pair) and the
human sample that calibrates them; and per query the metric on each."""

from __future__ import annotations

import math
import numbers
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..declared import ParameterError, shown
from ..errors import InputError, RanklensWarning
from ..evaluation import evaluate
from ..io import coerce_qrels
from ..labelling import Assessment, LabelPool, PoolPair, assess
from ..model import Dataset, Qrels, Run
from ..settings import Calling

COMBINE = ("majority", "mean", "median")


def top_keys(
    dataset: Any, runs: Mapping[str, Run], depth: int
) -> dict[tuple[str, str], dict[str, int]]:
    """Every (query, document) pair in any run's top ``depth`` for the dataset's queries,
    with its rank in each run that retrieved it."""
    found: dict[tuple[str, str], dict[str, int]] = {}
    queries = dataset.queries
    for name, run in runs.items():
        top = run.top(depth)
        order = top.order()  # ranking order, each query's rows together
        q = top.q[order]
        first = np.r_[True, q[1:] != q[:-1]] if len(q) else np.zeros(0, dtype=bool)
        at = np.arange(len(q))
        ranks = at - np.maximum.accumulate(np.where(first, at, 0)) + 1
        qs = top.query_ids[q].tolist()
        ds = top.doc_ids[top.d[order]].tolist()
        for key, rank in zip(zip(qs, ds), ranks.tolist()):
            if key[0] in queries:
                got = found.get(key)
                if got is None:
                    found[key] = {name: rank}
                else:
                    got[name] = rank
    return found


def top_pairs(
    dataset: Any, found: Mapping[tuple[str, str], dict[str, int]], texts: bool = True
) -> list[PoolPair]:
    """The pairs of :func:`top_keys` with both texts. ``texts``: the judge will read the
    pairs, so a retrieved document without text is an error naming it; False (labels
    given, no judge asked): a document without text is kept with ``text=None``."""
    corpus = dataset.corpus or {}
    missing = [d for _, d in found if d not in corpus]
    if missing and texts:
        raise InputError(
            f"{len(missing)} retrieved documents have no text in the dataset's corpus, e.g. "
            f"{missing[0]!r}: the judge cannot read them (give a dataset with its corpus)"
        )
    return [
        PoolPair(
            q, d, ranks, dataset.queries[q], corpus[d].get("text", "") if d in corpus else None
        )
        for (q, d), ranks in found.items()
    ]


def _text(corpus: Mapping[str, Any], doc: str) -> str | None:
    return corpus[doc].get("text", "") if doc in corpus else None


def judge_labels(
    pairs: list[PoolPair],
    judges: Sequence[Callable[..., Any]],
    combine: str,
    calls: Calling,
    grades: frozenset[int] | None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[Qrels, list[Assessment]]:
    """Each judge's assessment of ``pairs``, called as ``calls`` says (resumable:
    ``calls.cache`` is the log, one per judge of an ensemble, ``name-<i>.jsonl``), and the
    grades combined per pair."""
    if combine not in COMBINE:
        raise InputError(f"combine must be one of {', '.join(COMBINE)}, got {combine!r}")
    pool = LabelPool(pairs)
    out = []
    for i, j in enumerate(judges):
        log = None
        if calls.cache is not None:
            p = Path(calls.cache)
            log = p if len(judges) == 1 else p.with_name(f"{p.stem}-{i}{p.suffix or '.jsonl'}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RanklensWarning)
            out.append(
                assess(pool, j, grades=grades, calls=replace(calls, cache=log), config=config)
            )
    if len(out) == 1:
        return out[0].qrels, out
    return combined([a.grades for a in out], combine), out


def combined(grades: Sequence[Mapping[tuple[str, str], int]], how: str) -> Qrels:
    """An ensemble's grade per pair from its members' (those that answered): the most
    frequent (ties to the lower grade), the rounded mean (halves up) or the lower median."""
    keys = sorted(set().union(*grades))
    q, d, g = [], [], []
    for key in keys:
        got = sorted(m[key] for m in grades if key in m)
        if how == "majority":
            c = Counter(got)
            top = max(c.values())
            grade = min(x for x, k in c.items() if k == top)
        elif how == "mean":
            grade = int(np.floor(np.mean(got) + 0.5))
        else:
            grade = got[(len(got) - 1) // 2]
        q.append(key[0])
        d.append(key[1])
        g.append(grade)
    return Qrels.from_arrays(q, d, g, source=f"judge ensemble ({how})")


def human_labels(human: Any, dataset: Dataset, seed: int | None) -> Qrels:
    """The human sample: labels (anything :func:`ranklens.evaluate` takes, or an
    ``Assessment``), a list of query ids (their labels taken from the dataset), or a
    number of queries drawn from the dataset's labels at random (``seed``)."""
    if isinstance(human, Assessment):
        return human.qrels
    if isinstance(human, (bool, np.bool_)) or (
        isinstance(human, numbers.Real) and not isinstance(human, numbers.Integral)
        and not (math.isfinite(float(human)) and float(human).is_integer())
    ):  # fmt: skip
        raise _refused(human)
    if isinstance(human, numbers.Real):
        count = int(float(human))
        if count < 1:
            raise _refused(human)
        pool = sorted(str(q) for q in dataset.qrels.query_ids)
        if count > len(pool):
            raise InputError(
                f"estimate: human={count} queries asked, the dataset labels {len(pool)}"
            )
        pick = np.random.default_rng(seed).choice(len(pool), count, replace=False)
        return dataset.qrels.subset([pool[i] for i in sorted(pick)])
    if isinstance(human, (list, tuple, set, frozenset)):
        if not human or not all(isinstance(x, str) and x.strip() for x in human):
            raise _refused(human)
        known = set(map(str, dataset.qrels.query_ids))
        unknown = [q for q in human if q not in known]
        if unknown:
            raise InputError(
                f"estimate: {len(unknown)} human query ids have no labels in the dataset, "
                f"e.g. {unknown[0]!r}"
            )
        return dataset.qrels.subset(list(human))
    return coerce_qrels(human)


def _refused(human: Any) -> ParameterError:
    return ParameterError(
        "estimate: human must be labels (a file, a mapping, Qrels, an Assessment), a "
        "non-empty list of query ids, or a whole number of queries >= 1, got "
        f"{shown(human)}"
    )


def per_query(
    qrels: Qrels, run: Run, metrics: list[str], queries: list[str], level: int
) -> np.ndarray:
    """``(len(queries), len(metrics))``: each metric per query on these labels (a query
    the labels do not hold is 0: nothing it retrieved is relevant)."""
    out = np.zeros((len(queries), len(metrics)))
    if not len(qrels):
        return out
    ev = evaluate(qrels, run, metrics, relevance_level=level)
    at = {q: i for i, q in enumerate(queries)}
    rows = [(at[q], i) for i, q in enumerate(ev.query_ids) if q in at]
    if rows:
        dst, src = map(list, zip(*rows))
        for j, m in enumerate(metrics):
            out[dst, j] = ev.per_query[m][src]
    return out
