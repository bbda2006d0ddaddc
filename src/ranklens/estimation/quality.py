"""How far a model judge can be trusted, measured: agreement with people per grade, and
whether its grade moves when nothing relevant changes (position and length bias).

* Agreement per grade: for each human grade ``g``, the pairs people graded ``g``, the share
  the judge graded ``g`` too (its recall of ``g``) and the judge's mean grade there; with
  Cohen's kappa (:func:`ranklens.agreement`).
* Position bias: the same pair shown with the passage before and after an unrelated
  filler passage (``passage + filler`` vs ``filler + passage``); an unbiased judge grades
  both alike (cf. Zheng et al., *Judging LLM-as-a-judge with MT-Bench and Chatbot
  Arena*, NeurIPS 2023, on position and verbosity bias).
* Length bias: the passage alone vs padded with the filler (twice as long, nothing more
  relevant).

Each bias is the mean grade change with a CLT interval and an exact two-sided sign test
over the pairs whose grade changed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ..declared import CALLING, STATISTICS, ParameterError, data, declare, function, mapping, text
from ..labelling import CALLS, CALLS_OPTION, GRADES, LabelPool, PoolPair, agreement, assess
from ..settings import Calling, Statistics, settled
from .ppi import z_value
from .records import GradeAgreement, JudgeAgreement, Record

JUDGE_BIAS = declare(
    "judge_bias",
    {
        "judge": function("judge(query, passage) -> grade, sync or async"),
        "pairs": data("PoolPairs with the query and passage text (at least 2)"),
        "stats": data("the statistics settings: a ranklens.Statistics, read for its confidence"),
        "calls": CALLS_OPTION,
        "source": text(None, "the provenance written on each judgment", none=True),
        "grades": GRADES,
        "config": mapping(
            None, "names the judge's configuration in its log", none=True, empty=True
        ),
        "confidence": STATISTICS["confidence"],
        **CALLING,
    },
)

SEP = "\n\n"


def per_grade(
    human: dict[tuple[str, str], int], judge: dict[tuple[str, str], int]
) -> list[GradeAgreement]:
    """Per human grade: the pairs, the share graded alike, the judge's mean grade."""
    out = []
    for g in sorted(set(human.values())):
        keys = [k for k, v in human.items() if v == g and k in judge]
        if not keys:
            continue
        got = np.array([judge[k] for k in keys], dtype=np.float64)
        out.append(GradeAgreement(g, len(keys), float(np.mean(got == g)), float(got.mean())))
    return out


def quality(
    human: Mapping[tuple[str, str], int],
    judge: Mapping[tuple[str, str], int],
    source: str,
    names: tuple[str, str] = ("human", "judge"),
) -> JudgeAgreement:
    """Agreement of ``judge`` (named ``source``) with ``human`` labels, each
    ``{(query, document): grade}``, on the pairs both graded (see the module docstring);
    ``n`` 0 when they share no pair."""
    common = human.keys() & judge.keys()
    if not common:
        return JudgeAgreement(source, 0)
    h = {k: human[k] for k in common}
    j = {k: judge[k] for k in common}
    a = agreement(_nested(h), _nested(j), names=names)  # on the shared pairs only
    return JudgeAgreement(
        source,
        a.n,
        kappa=a.kappa,
        weighted_kappa=a.weighted_kappa,
        observed=a.observed,
        per_grade=per_grade(h, j),
        confusion=a.confusion,
        grades=a.grades,
    )


def _nested(pairs: Mapping[tuple[str, str], int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (q, d), g in pairs.items():
        out.setdefault(q, {})[d] = g
    return out


@dataclass(frozen=True)
class BiasShift(Record):
    """One bias measured: over ``pairs`` pairs graded both ways, ``changed`` changed grade;
    the ``mean_shift`` of the grade with its interval ``lo``/``hi`` and the sign test's
    ``p_value`` (NaN throughout when no pair was graded both ways)."""

    pairs: int
    changed: int
    mean_shift: float
    lo: float
    hi: float
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class BiasCheck:
    """``position`` and ``length``: each a :class:`BiasShift` (shift: grade when the
    passage comes first minus when it comes last; padded minus alone); ``failures``: judge
    calls that failed."""

    position: BiasShift
    length: BiasShift
    failures: int

    def __str__(self) -> str:
        def one(name: str, d: BiasShift, what: str) -> str:
            return (
                f"{name}: {d.changed} of {d.pairs} pairs changed grade ({what}); mean "
                f"shift {d.mean_shift:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}], sign test "
                f"p = {d.p_value:.3g}"
            )

        return "\n".join(
            [
                one("position", self.position, "passage first vs last"),
                one("length", self.length, "padded vs alone"),
            ]
            + ([f"({self.failures} judge calls failed, left out)"] if self.failures else [])
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position.to_dict(),
            "length": self.length.to_dict(),
            "failures": self.failures,
        }


@JUDGE_BIAS.checks
def judge_bias(
    judge: Callable[..., Any],
    pairs: Iterable[PoolPair],
    *,
    stats: Statistics | None = None,
    calls: Calling | None = None,
    source: str | None = None,
    grades: Iterable[int] | None = None,
    config: Mapping[str, Any] | None = None,
    **flat: Any,
) -> BiasCheck:
    """Show ``judge`` each pair (with query and passage text) four ways: passage then a
    filler, filler then passage, alone, and padded; the filler of pair ``i`` is the
    passage of pair ``i + 1`` (of another query where possible). Returns a
    :class:`BiasCheck` (see the module docstring), its intervals at ``stats.confidence``
    (``stats=Statistics(confidence=0.9)``; default 0.95); the calls go through
    :func:`ranklens.assess` with ``calls=Calling(...)``, ``source``, ``grades`` and
    ``config`` (``Calling(cache=...)`` resumes them). The flat keywords ``confidence``
    (now ``stats=``) and ``concurrency``, ``timeout``, ``retries``, ``retry_on``,
    ``backoff``, ``cache``, ``progress`` (now ``calls=``) still work for one release, with
    a ``DeprecationWarning`` showing the new spelling."""
    flat = JUDGE_BIAS.check(flat)
    confidence = settled(
        "judge_bias", stats, {k: v for k, v in flat.items() if k == "confidence"},
        Statistics(), "stats",
    ).confidence  # fmt: skip
    calls = settled(
        "judge_bias", calls, {k: v for k, v in flat.items() if k in CALLING}, CALLS, "calls"
    )
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise ParameterError(f"judge_bias: pairs must be a list of PoolPairs, got {pairs!r:.60}")
    pairs = list(pairs)
    wrong = next((p for p in pairs if not isinstance(p, PoolPair)), None)
    if wrong is not None:
        raise ParameterError(
            f"judge_bias: pairs must be a list of PoolPairs, got an item {wrong!r:.60}"
        )
    pairs = [p for p in pairs if p.query is not None and p.text is not None]
    if len(pairs) < 2:
        from ..errors import InputError

        raise InputError(
            f"judge_bias: a bias check needs at least 2 pairs with query and passage text, "
            f"got {len(pairs)}"
        )
    shown = []
    for i, p in enumerate(pairs):
        own = p.text or ""
        filler = (
            next(
                (o.text for o in pairs[i + 1 :] + pairs[:i] if o.query_id != p.query_id),
                pairs[(i + 1) % len(pairs)].text,
            )
            or ""
        )
        for form, passage in (
            ("first", own + SEP + filler),
            ("last", filler + SEP + own),
            ("alone", own),
            ("padded", own + SEP + filler),
        ):
            shown.append(PoolPair(p.query_id, f"{p.doc_id}\u241f{form}", {}, p.query, passage))
    a = assess(LabelPool(shown), judge, source=source, grades=grades, calls=calls, config=config)
    g = a.grades

    def shift(x: str, y: str) -> BiasShift:
        keys = [
            ((p.query_id, f"{p.doc_id}\u241f{x}"), (p.query_id, f"{p.doc_id}\u241f{y}"))
            for p in pairs
        ]
        d = np.array([g[a] - g[b] for a, b in keys if a in g and b in g], dtype=np.float64)
        if not len(d):
            return BiasShift(0, 0, math.nan, math.nan, math.nan, math.nan)
        half = z_value(confidence) * d.std() / math.sqrt(len(d))
        return BiasShift(
            pairs=len(d),
            changed=int(np.count_nonzero(d)),
            mean_shift=float(d.mean()),
            lo=float(d.mean() - half),
            hi=float(d.mean() + half),
            p_value=sign_test(d),
        )

    return BiasCheck(shift("first", "last"), shift("padded", "alone"), len(a.failures))


def sign_test(d: np.ndarray) -> float:
    """Exact two-sided sign test of the non-zero differences (1 when none)."""
    from scipy.stats import binomtest

    pos, neg = int(np.sum(d > 0)), int(np.sum(d < 0))
    if pos + neg == 0:
        return 1.0
    return float(binomtest(pos, pos + neg, 0.5).pvalue)
