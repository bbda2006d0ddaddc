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

from ..comparison.stats import bootstrap_interval, randomization
from ..errors import InputError
from .interleave import probabilistic_outcome, team_draft_outcome


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
        a, b = self.names
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
    """The outcome of each impression with a click (see the module docstring)."""
    out = []
    for imp in impressions:
        clicks = sorted(set(imp.get("clicks") or ()))
        n = len(imp["docs"])
        if not clicks or n == 0:
            continue
        mask = np.zeros((1, n), dtype=bool)
        mask[0, [c for c in clicks if 0 <= c < n]] = True
        if imp.get("method", "team-draft") == "team-draft":
            out.append(team_draft_outcome(np.array([imp["teams"]]), mask)[0])
        else:
            out.append(probabilistic_outcome(np.array([imp["share_a"]], dtype=float), mask)[0])
    return np.array(out, dtype=np.float64)


def _impressions(source: Any) -> tuple[list[dict[str, Any]], str, tuple[str, str]]:
    if hasattr(source, "interleaving"):
        source = source.interleaving
    if hasattr(source, "snapshot"):
        return source.snapshot(), source.method, tuple(source.names)
    if isinstance(source, (str, Path)):
        lines = Path(source).read_text(encoding="utf-8").splitlines()
        source = []
        for i, line in enumerate(lines, 1):
            if line.strip():
                try:
                    source.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputError(f"impressions file, line {i}: not JSON ({exc})") from None
    imps = list(source)
    if not imps:
        raise InputError("no impressions to compare: serve queries through the interleaving")
    methods = {i.get("method", "team-draft") for i in imps}
    names = {tuple(i.get("names") or ("a", "b")) for i in imps}
    if len(methods) > 1 or len(names) > 1:
        raise InputError(f"impressions of different experiments mixed: {methods} {names}")
    return imps, methods.pop(), names.pop()


def interleaving_result(
    source: Any,
    *,
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> InterleavingResult:
    """The preference of an interleaving experiment (see the module docstring):
    ``source`` is what :func:`ranklens.interleave` returned, its impressions (dicts) or a
    JSONL file :meth:`~.interleaving.Interleaving.to_jsonl` wrote."""
    imps, method, names = _impressions(source)
    o = outcomes_of(imps)
    n = len(o)
    wins, losses = int((o > 0).sum()), int((o < 0).sum())
    ties = n - wins - losses
    if n == 0:
        return InterleavingResult(method, names, len(imps), 0, 0, 0, 0, math.nan, math.nan,
                                  1.0, (math.nan, math.nan), alpha, o)  # fmt: skip
    p = float(randomization(o, n_resamples, seed)[0])
    lo, hi = bootstrap_interval(o, confidence, n_resamples, seed)
    delta = (wins + ties / 2) / n - 0.5
    return InterleavingResult(method, names, len(imps), n, wins, losses, ties, float(o.mean()),
                              delta, p, (float(lo[0]), float(hi[0])), alpha, o)  # fmt: skip
