"""How often a verdict is wrong, by simulation with known truth: queries drawn from a
per-query distribution whose mean is known exactly, a target set at that mean (the hardest
case: any *met* is false, and so is any *missed*), and the share of wrong verdicts over
many draws for each number of queries, every draw bounded at once (one matrix per
``n``). The point-estimate floor (``mean >= target``) is measured beside them.

``python -m ranklens.comparison.simulation`` prints the table of ``docs/use-cases.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .bounds import mean_bounds


@dataclass(frozen=True)
class Shape:
    """A per-query distribution on [0, 1]: point masses ``at_zero`` and ``at_one`` and the
    rest Beta(``a``, ``b``); or, with ``values``/``weights``, a discrete one."""

    name: str
    at_zero: float = 0.0
    at_one: float = 0.0
    a: float = 1.0
    b: float = 1.0
    values: tuple[float, ...] = ()
    weights: tuple[float, ...] = ()

    @property
    def mean(self) -> float:
        if self.values:
            return float(np.dot(self.values, self.weights))
        return self.at_one + (1 - self.at_zero - self.at_one) * self.a / (self.a + self.b)

    def draw(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        if self.values:
            idx = rng.choice(len(self.values), size=shape, p=np.asarray(self.weights))
            return np.asarray(self.values)[idx]
        u = rng.random(shape)
        x = rng.beta(self.a, self.b, shape)
        x[u < self.at_zero] = 0.0
        x[(u >= self.at_zero) & (u < self.at_zero + self.at_one)] = 1.0
        return x


def reciprocal_ranks(first: float, name: str) -> Shape:
    """RR@10 when the first relevant document is at rank 1 with probability ``first``,
    at ranks 2-10 with 60% of the rest (halving each rank) and missing otherwise."""
    rest = 1 - first
    tail = 0.5 ** np.arange(9)
    weights = np.r_[first, rest * 0.6 * tail / tail.sum(), rest * 0.4]
    values = np.r_[1 / np.arange(1, 11), 0.0]
    return Shape(name, values=tuple(values), weights=tuple(weights / weights.sum()))


SHAPES = (
    Shape("0/1, rate 0.9 (P@1, success@k)", at_zero=0.1, at_one=0.9),
    reciprocal_ranks(0.7, "RR@10, 70% first"),
    reciprocal_ranks(0.85, "RR@10, 85% first"),
    Shape("nDCG, 70% perfect", at_zero=0.02, at_one=0.7, a=5, b=1),
    Shape("nDCG, spread", at_zero=0.1, at_one=0.3, a=2, b=2),
    Shape("nDCG, no failures", a=8, b=2),
    Shape("nDCG, mostly low", at_zero=0.3, at_one=0.05, a=1, b=4),
)
"""Per-query distributions shaped like real ones: binary hits, reciprocal ranks with a
mass at 1, nDCG with masses at 0 and 1 around a Beta."""


@dataclass(frozen=True)
class Rates:
    """Over ``draws`` draws of ``n`` queries from ``shape`` with the target at the true
    mean: the share of (false) *met* and *missed* verdicts per method, and of point-floor
    passes (``mean >= target``)."""

    shape: str
    n: int
    draws: int
    met: dict[str, float]
    missed: dict[str, float]
    point: float


def wrong_verdicts(
    shape: Shape,
    n: int,
    methods: Sequence[str] = ("auto", "t"),
    confidence: float = 0.95,
    draws: int = 4000,
    seed: int = 0,
) -> Rates:
    """The share of wrong verdicts for ``n`` queries from ``shape`` (target = true mean)."""
    rng = np.random.default_rng(seed)
    values = shape.draw(rng, (n, draws))
    mu = shape.mean
    met, missed = {}, {}
    for method in methods:
        lo, hi, _ = mean_bounds(values, 1 - confidence, method, True, n_resamples=1000, seed=seed)
        met[method] = float(np.mean(lo > mu))
        missed[method] = float(np.mean(hi < mu))
    point = float(np.mean(values.mean(axis=0) >= mu - 1e-12))
    return Rates(shape.name, n, draws, met, missed, point)


def table(
    sizes: Sequence[int] = (20, 50, 100, 200, 500),
    methods: Sequence[str] = ("auto", "t", "wilson"),
    draws: int = 20_000,
) -> str:
    """The Markdown table of false *met* rates (method by method) and point-floor passes,
    per shape and number of queries."""
    lines = [
        "| per-query values (true mean = target) | queries | "
        + " | ".join(f"`{m}` false met" for m in methods)
        + " | point floor passes |",
        "|---|---|" + "---|" * (len(methods) + 1),
    ]
    for i, shape in enumerate(SHAPES):
        for n in sizes:
            usable = [m for m in methods if m != "wilson" or i == 0]
            r = wrong_verdicts(shape, n, usable, draws=draws, seed=1000 * i + n)
            cells = [f"{100 * r.met[m]:.1f}%" if m in r.met else "–" for m in methods]
            lines.append(
                f"| {shape.name} (mean {shape.mean:.3f}) | {n} | "
                + " | ".join(cells)
                + f" | {100 * r.point:.0f}% |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(table())
