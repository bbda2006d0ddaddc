"""Agreement between two judges on the pairs both judged: Cohen's kappa, weighted for
grades, and the confusion matrix; for calibrating a model judge on a human sample.

Cohen's kappa (Cohen, 1960): ``κ = (p_o − p_e) / (1 − p_e)`` with ``p_o`` the observed
agreement and ``p_e`` the agreement expected from the two judges' grade frequencies.
Weighted kappa (Cohen, 1968): ``κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij`` over the confusion
matrix ``O`` and its expectation ``E`` (outer product of the marginals), with disagreement
weights ``w_ij = |i − j|`` (linear) or ``(i − j)²`` (quadratic) over the ordered grades.
Equal to scikit-learn's ``cohen_kappa_score`` (``weights=None|"linear"|"quadratic"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..declared import choice, data, declare, names
from ..errors import InputError
from ..escape import terminal
from ..model import Qrels

WEIGHTS = (None, "linear", "quadratic")


@dataclass
class Agreement:
    """``n`` pairs judged by both; ``grades`` (sorted, every grade either judge used);
    ``confusion[i][j]``: pairs graded ``grades[i]`` by ``a`` and ``grades[j]`` by ``b``;
    ``kappa`` (unweighted), ``weighted_kappa`` (``weights``), ``observed`` (the fraction
    of equal grades); ``only_a``/``only_b``: pairs one judge graded and the other not."""

    n: int
    grades: list[int]
    confusion: list[list[int]]
    kappa: float
    weighted_kappa: float
    weights: str | None
    observed: float
    only_a: int
    only_b: int
    names: tuple[str, str] = ("a", "b")

    def __str__(self) -> str:
        a, b = (terminal(n) for n in self.names)  # file names shown as text
        width = max(len(str(g)) for g in self.grades) if self.grades else 1
        cell = max(width, *(len(str(x)) for row in self.confusion for x in row), 1) + 1
        head = " " * (len(a) + 3) + "".join(f"{g:>{cell}}" for g in self.grades) + f"  <- {b}"
        rows = [
            f"{a if i == 0 else ' ' * len(a)} {g:>{width}}" + "".join(f"{x:>{cell}}" for x in row)
            for i, (g, row) in enumerate(zip(self.grades, self.confusion))
        ]
        wk = (
            f", weighted ({self.weights}) {self.weighted_kappa:.3f}"
            if self.weights is not None else ""
        )  # fmt: skip
        lines = [
            f"{self.n} pairs judged by both ({self.only_a} by {a} only, {self.only_b} by {b} "
            f"only): agreement {self.observed:.3f}, Cohen's kappa {self.kappa:.3f}{wk}",
            head,
            *rows,
        ]
        return "\n".join(lines)


AGREEMENT = declare("agreement", {
    "a": data("labels: Qrels, a dict, a path or an Assessment"),
    "b": data("labels to compare with a"),
    "weights": choice("linear", ("linear", "quadratic"), "weighted kappa's weights (None: "
                      "unweighted)", none=True),
    "names": names(("a", "b"), "the two judges' names", check=lambda x: len(x) == 2,
                   rule="two names"),
})  # fmt: skip


@AGREEMENT.checks
def agreement(a: Any, b: Any, *, weights: str | None = "linear",
              names: tuple[str, str] = ("a", "b")) -> Agreement:  # fmt: skip
    """Agreement of two label sets (Qrels, dicts, paths, or an ``Assessment``) on the
    ``(query, document)`` pairs both judged (see the module docstring).

    >>> r = agreement({"q": {"a": 1, "b": 0, "c": 2}}, {"q": {"a": 1, "b": 1, "c": 2}})
    >>> r.n, round(r.kappa, 4), r.confusion
    (3, 0.5, [[0, 1, 0], [0, 1, 0], [0, 0, 1]])
    """
    names = (str(names[0]), str(names[1]))
    da, db = _grades(a), _grades(b)
    common = sorted(da.keys() & db.keys())
    if not common:
        raise InputError("the two label sets share no judged (query, document) pair")
    x = np.array([da[k] for k in common])
    y = np.array([db[k] for k in common])
    grades = sorted(set(x.tolist()) | set(y.tolist()))
    idx = {g: i for i, g in enumerate(grades)}
    k = len(grades)
    conf = np.zeros((k, k), dtype=np.int64)
    np.add.at(conf, ([idx[v] for v in x.tolist()], [idx[v] for v in y.tolist()]), 1)
    return Agreement(
        n=len(common),
        grades=grades,
        confusion=conf.tolist(),
        kappa=kappa(conf, None),
        weighted_kappa=kappa(conf, weights),
        weights=weights,
        observed=float(np.trace(conf) / conf.sum()),
        only_a=len(da.keys() - db.keys()),
        only_b=len(db.keys() - da.keys()),
        names=names,
    )


def kappa(confusion: np.ndarray, weights: str | None = None) -> float:
    """Cohen's kappa of a confusion matrix (weighted by grade distance for ``"linear"`` /
    ``"quadratic"``); NaN when no disagreement is expected (both judges used one and the
    same grade throughout: kappa is undefined, as in scikit-learn)."""
    o = np.asarray(confusion, dtype=np.float64)
    n = o.sum()
    k = o.shape[0]
    expected = np.outer(o.sum(axis=1), o.sum(axis=0)) / n
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(np.float64)
    elif weights == "linear":
        w = np.abs(i - j).astype(np.float64)
    else:
        w = ((i - j) ** 2).astype(np.float64)
    denom = float((w * expected).sum())
    if denom == 0:
        return float("nan")
    return 1.0 - float((w * o).sum()) / denom


def _grades(labels: Any) -> dict[tuple[str, str], int]:
    if hasattr(labels, "qrels") and hasattr(labels, "failures"):  # an Assessment
        labels = labels.qrels
    if not isinstance(labels, Qrels):
        from ..io import coerce_qrels

        labels = coerce_qrels(labels)
    return {(q, d): g for q, docs in labels.to_dict().items() for d, g in docs.items()}
