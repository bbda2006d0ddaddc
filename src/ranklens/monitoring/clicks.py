"""Simulated users for planning and checking online comparisons: a cascade click model
with position bias (:class:`CascadeUser`).

The user scans the list top-down; at each position they examine the document, click it
with a probability set by its relevance grade, and after a click stop with a probability
set by the grade (else scan on); after a non-click they scan on. This is the dependent
click model (Guo, Liu & Wang, *Efficient multiple-click models in web search*, WSDM
2009) with grade-dependent parameters, the family of the "navigational" and
"informational" users of the interleaving literature (e.g. Hofmann, Whiteson & de Rijke,
CIKM 2011): position bias comes from the scan stopping. Interleaving beats an A/B split
exactly when users leave the list depending on relevance (Iizuka, Morita & Kato,
*Theoretical analysis on the efficiency of interleaved comparisons*, ECIR 2024).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..declared import PROBABILITY, ParameterError, declare
from .options import numbers_list

CASCADE = declare("CascadeUser", {
    "click": numbers_list((0.05, 0.5, 0.95), PROBABILITY,
                          "chance of clicking an examined document, by grade 0, 1, 2, ..."),
    "stop": numbers_list((0.2, 0.5, 0.9), PROBABILITY,
                         "chance of stopping after a click, by grade 0, 1, 2, ..."),
})  # fmt: skip
"""Every parameter of :class:`CascadeUser`."""


@CASCADE.checks
@dataclass(frozen=True)
class CascadeUser:
    """``click[g]``: chance of clicking an examined document of grade g (0, 1, 2, ...;
    higher grades use the last entry); ``stop[g]``: chance of stopping after clicking it."""

    click: tuple[float, ...] = (0.05, 0.5, 0.95)
    stop: tuple[float, ...] = (0.2, 0.5, 0.9)

    def __post_init__(self) -> None:
        checked = CASCADE.check({"click": self.click, "stop": self.stop})
        object.__setattr__(self, "click", checked["click"])
        object.__setattr__(self, "stop", checked["stop"])

    def clicks(self, grades: np.ndarray, rng: np.random.Generator,
               propensity: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """Clicks (``(n, k)`` booleans) of one user per row of ``grades`` (``(n, k)``
        integers; −1 marks an empty slot, never clicked); ``propensity`` (``(n,)``, in
        [0, 1]) scales each user's click probabilities (users differ)."""
        g = np.asarray(grades)
        if g.ndim != 2 or not (np.issubdtype(g.dtype, np.integer) or (
                np.issubdtype(g.dtype, np.floating) and np.all(np.isfinite(g))
                and np.all(g == np.round(g)))):  # fmt: skip
            raise ParameterError(
                "CascadeUser.clicks: grades must be an (n, k) array of whole grades (-1: an "
                f"empty slot), got {g.dtype} of shape {g.shape}"
            )
        g = g.astype(np.int64)
        if propensity is not None:
            try:
                propensity = np.asarray(propensity, dtype=np.float64)
            except (TypeError, ValueError):
                propensity = np.full(0, np.nan)  # refused below
            if propensity.shape != (g.shape[0],) or not np.all(
                (propensity >= 0) & (propensity <= 1)
            ):  # NaN fails both
                raise ParameterError(
                    f"CascadeUser.clicks: propensity must be {g.shape[0]} numbers in [0, 1] "
                    f"(one per row of grades), got shape {propensity.shape}"
                )
        idx = np.clip(g, 0, len(self.click) - 1)
        p_click = np.where(g >= 0, np.asarray(self.click)[idx], 0.0)
        if propensity is not None:
            p_click = p_click * propensity[:, None]
        p_stop = np.asarray(self.stop)[np.clip(g, 0, len(self.stop) - 1)]
        n, k = g.shape
        clicked = rng.random((n, k)) < p_click
        stops = clicked & (rng.random((n, k)) < p_stop)
        # examined up to and including the first stop
        stopped_before = np.cumsum(stops, axis=1) - stops > 0
        out: np.ndarray = clicked & ~stopped_before
        return out


CASCADE.target = CascadeUser

NAVIGATIONAL = CascadeUser((0.05, 0.5, 0.95), (0.2, 0.5, 0.9))
INFORMATIONAL = CascadeUser((0.4, 0.7, 0.9), (0.1, 0.3, 0.5))
