"""``ranklens.interleaving_result``: which ranker users prefer, with a test and an interval.

Each impression with at least one credited click gives an outcome ``o`` in [−1, 1]
(positive: ranker A preferred): the sign of A's clicks minus B's for team draft, the
expected sign over the possible assignments for probabilistic interleaving
(:mod:`.interleave`). Impressions without a click carry no preference and are counted,
not scored.

* ``preference``: the mean outcome, in [−1, 1];
* ``delta``: Chapelle et al.'s ``Δ_AB = (wins_A + ties/2) / (wins_A + wins_B + ties) −
  1/2``, in [−½, ½] (*Large-scale validation and analysis of interleaved search
  evaluation*, TOIS 2012), with wins and ties counted on the sign of the outcome;
* ``p``: two-sided randomization test that the outcomes are symmetric about 0 (under
  "no preference" each outcome's sign is a fair coin: Fisher's sign flips,
  :func:`ranklens.comparison.stats.randomization`; for team draft's ±1 outcomes this is
  the sign test);
* ``ci``: percentile bootstrap interval of the mean outcome.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..comparison import stats as stat_tests
from ..declared import STATISTICS, UnknownParameterError, data, declare, renamed_option
from ..errors import InputError, closest
from ..escape import terminal
from ..settings import Statistics
from .groups import regrouped
from .interleave import probabilistic_outcome, team_draft_outcome
from .options import group, rule

FLAT_STATISTICS = ("alpha", "confidence", "n_resamples", "seed")
"""The flat keywords of 0.2 that ``stats=Statistics(...)`` replaces."""

INTERLEAVING_RESULT = declare("interleaving_result", {
    "source": data("what interleave() returned, its impressions (dicts) or a JSONL file of them"),
    "stats": group(Statistics(), (Statistics,), "a ranklens.Statistics", "alpha, confidence, "
                   "n_resamples and seed of the sign-flip test and the bootstrap interval",
                   none=True),
    **{k: renamed_option(STATISTICS[k], description=f"deprecated: stats=Statistics({k}=...)")
       for k in FLAT_STATISTICS},
})  # fmt: skip
"""Every parameter of :func:`interleaving_result` (``alpha``, ``confidence``,
``n_resamples``, ``seed``: the deprecated flat spelling of ``stats``)."""


@dataclass
class InterleavingResult:
    """See the module docstring. ``names``: (A, B); ``winner``: the preferred ranker's
    name when ``p < alpha``, else None."""

    method: str
    names: tuple[str, str]
    impressions: int
    with_clicks: int
    wins: int
    losses: int
    ties: int
    preference: float
    delta: float
    p: float
    ci: tuple[float, float]
    alpha: float
    outcomes: np.ndarray

    @property
    def winner(self) -> str | None:
        if not (self.p < self.alpha) or self.preference == 0:
            return None
        return self.names[0] if self.preference > 0 else self.names[1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method, "names": list(self.names), "impressions": self.impressions,
            "with_clicks": self.with_clicks, "wins": self.wins, "losses": self.losses,
            "ties": self.ties, "preference": self.preference, "delta": self.delta,
            "p": self.p, "ci": list(self.ci), "winner": self.winner,
        }  # fmt: skip

    def __str__(self) -> str:
        a, b = (terminal(n) for n in self.names)  # names are user text
        if not self.with_clicks:
            return (
                f"interleaving ({self.method}): {a} vs {b} over {self.impressions} impressions, "
                "none with a click: no preference can be measured yet"
            )
        verdict = (f"{self.winner} preferred" if self.winner
                   else f"no significant preference at alpha={self.alpha:g}")  # fmt: skip
        return (
            f"interleaving ({self.method}): {a} vs {b} over {self.impressions} impressions, "
            f"{self.with_clicks} with clicks: {a} wins {self.wins}, {b} wins {self.losses}, "
            f"ties {self.ties}; preference {self.preference:+.3f} "
            f"[{self.ci[0]:+.3f}, {self.ci[1]:+.3f}] (positive: {a}), "
            f"delta_AB {self.delta:+.3f}, p={self.p:.2g}: {verdict}"
        )


def outcomes_of(impressions: list[dict[str, Any]]) -> np.ndarray:
    """The outcome of each impression with a click (see the module docstring); each
    impression as :func:`check_impression` accepts it."""
    out = []
    for imp in impressions:
        clicks = sorted(set(imp.get("clicks") or ()))
        n = len(imp["docs"])
        if not clicks or n == 0:
            continue
        mask = np.zeros((1, n), dtype=bool)
        mask[0, clicks] = True
        if imp.get("method", "team-draft") == "team-draft":
            out.append(team_draft_outcome(np.array([imp["teams"]]), mask)[0])
        else:
            out.append(probabilistic_outcome(np.array([imp["share_a"]], dtype=float), mask)[0])
    return np.array(out, dtype=np.float64)


def _whole(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def check_impression(imp: Any, where: str) -> None:
    """An impression as :meth:`~.interleaving.Interleaving.snapshot` makes it, or an
    :class:`InputError` naming ``where`` (the impression, or the file and line) and the
    field: ``docs`` a list; ``clicks`` positions in it; ``teams`` (team draft) 0, 1 or -1
    per document; ``share_a`` (probabilistic) a number in [0, 1] per document."""

    def bad(field: str, allowed: str, got: Any) -> InputError:
        return InputError(f"interleaving_result: {where}: {field} must be {allowed}, got "
                          f"{got!r:.80}")  # fmt: skip

    if not isinstance(imp, dict):
        raise bad("the impression", "a JSON object (a dict)", imp)
    method = imp.get("method", "team-draft")
    if method not in ("team-draft", "probabilistic"):
        raise bad("method", "'team-draft' or 'probabilistic'", method)
    docs = imp.get("docs")
    if not isinstance(docs, list):
        raise bad("docs", "a list of the documents served", docs)
    n = len(docs)
    clicks = imp.get("clicks") or []
    if not isinstance(clicks, list) or not all(_whole(c) and 0 <= c < n for c in clicks):
        raise bad("clicks", f"a list of positions 0 to {n - 1} of docs", clicks)
    if method == "team-draft":
        teams = imp.get("teams")
        if not (isinstance(teams, list) and len(teams) == n
                and all(_whole(t) and t in (-1, 0, 1) for t in teams)):  # fmt: skip
            raise bad("teams", f"a list of {n} teams (0: A, 1: B, -1: neither)", teams)
    else:
        share = imp.get("share_a")
        ok = isinstance(share, list) and len(share) == n and all(
            isinstance(x, (int, float)) and not isinstance(x, bool)
            and (math.isnan(x) or 0 <= x <= 1) for x in share
        )  # fmt: skip
        if not ok:
            raise bad("share_a", f"a list of {n} probabilities that A placed each", share)
    names = imp.get("names")
    if names is not None and not (isinstance(names, list | tuple) and len(names) == 2
                                  and all(isinstance(x, str) for x in names)):  # fmt: skip
        raise bad("names", "two texts", names)


def _impressions(source: Any) -> tuple[list[dict[str, Any]], str, tuple[str, str]]:
    if hasattr(source, "interleaving"):
        source = source.interleaving
    if hasattr(source, "snapshot"):
        return source.snapshot(), source.method, tuple(source.names)
    where: list[str] = []
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise InputError(f"interleaving_result: source {str(path)!r} is not a file")
        lines = path.read_text(encoding="utf-8").splitlines()
        source = []
        for i, line in enumerate(lines, 1):
            if line.strip():
                try:
                    source.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputError(f"interleaving_result: {path}, line {i}: not JSON ({exc})"
                                     ) from None  # fmt: skip
                where.append(f"{path}, line {i}")
    elif isinstance(source, (bytes, dict)) or not hasattr(source, "__iter__"):
        raise InputError(
            "interleaving_result: source must be what interleave() returned, a list of "
            f"impressions or a JSONL file, got {type(source).__name__}"
        )
    imps = list(source)
    if not imps:
        raise InputError(
            "interleaving_result: no impressions to compare: serve queries through the interleaving"
        )
    for i, imp in enumerate(imps):
        check_impression(imp, where[i] if where else f"impression {i}")
    methods = {i.get("method", "team-draft") for i in imps}
    names = {tuple(i.get("names") or ("a", "b")) for i in imps}
    if len(methods) > 1 or len(names) > 1:
        raise InputError(
            f"interleaving_result: impressions of different experiments mixed: {methods} {names}"
        )
    return imps, methods.pop(), names.pop()


def _statistics(stats: Statistics | None, flat: dict[str, Any]) -> Statistics:
    """The statistics ``interleaving_result`` runs with (the flat keywords checked, applied
    with a warning); its test is the sign-flip randomization and its interval the
    bootstrap, so ``test`` and ``ci`` must say so (``correction``: one comparison, none
    applies)."""
    for name in flat:
        if name not in FLAT_STATISTICS:
            near = closest(name, ["source", "stats", *FLAT_STATISTICS])
            hint = f"; did you mean {near!r}?" if near else ""
            raise UnknownParameterError(f"interleaving_result: no parameter {name!r}{hint} "
                                        "(it takes: source, stats)")  # fmt: skip
    checked = INTERLEAVING_RESULT.check(flat)
    out = regrouped("interleaving_result", "stats", stats, checked, Statistics(),
                    {k: k for k in FLAT_STATISTICS})  # fmt: skip
    if out.test != "randomization":
        raise rule("interleaving_result", "stats.test", "'randomization' (the sign-flip "
                   "test of the outcomes)", out.test)  # fmt: skip
    if out.ci != "bootstrap":
        raise rule("interleaving_result", "stats.ci", "'bootstrap' (the percentile "
                   "interval of the mean outcome)", out.ci)  # fmt: skip
    return out


@INTERLEAVING_RESULT.checks
def interleaving_result(
    source: Any, *, stats: Statistics | None = None, **flat: Any
) -> InterleavingResult:
    """The preference of an interleaving experiment (see the module docstring):
    ``source`` is what :func:`ranklens.interleave` returned, its impressions (dicts) or a
    JSONL file :meth:`~.interleaving.Interleaving.to_jsonl` wrote. ``stats``: a
    :class:`~ranklens.Statistics` whose ``alpha``, ``confidence``, ``n_resamples`` and
    ``seed`` the test and the interval use (``alpha=``, ``confidence=``,
    ``n_resamples=``, ``seed=`` alone are the deprecated spelling of 0.2)."""
    st = _statistics(stats, flat)
    alpha, confidence, n_resamples, seed = st.alpha, st.confidence, st.n_resamples, st.seed
    imps, method, names = _impressions(source)
    o = outcomes_of(imps)
    n = len(o)
    wins, losses = int((o > 0).sum()), int((o < 0).sum())
    ties = n - wins - losses
    if n == 0:
        return InterleavingResult(method, names, len(imps), 0, 0, 0, 0, math.nan, math.nan,
                                  1.0, (math.nan, math.nan), alpha, o)  # fmt: skip
    p = float(stat_tests.randomization(o, n_resamples, seed)[0])
    lo, hi = stat_tests.bootstrap_interval(o, confidence, n_resamples, seed)
    delta = (wins + ties / 2) / n - 0.5
    return InterleavingResult(method, names, len(imps), n, wins, losses, ties, float(o.mean()),
                              delta, p, (float(lo[0]), float(hi[0])), alpha, o)  # fmt: skip


INTERLEAVING_RESULT.target = interleaving_result
