"""Settings objects for the groups of parameters that many entry points share, as scipy.stats'
method objects group a method's settings (``scipy.stats.BootstrapMethod``,
``PermutationMethod``) and scikit-learn validates an estimator's parameters once:

* :class:`Statistics`: how differences are tested and intervals drawn (``test``,
  ``correction``, ``alpha``, ``n_resamples``, ``ci``, ``confidence``, ``seed``), taken by
  compare, the gate, snapshots, sweeps, fusion tuning and interleaving results;
* :class:`Calling`: how retrievers, generators and judges are called (``concurrency``,
  ``timeout``, ``retries``, ``retry_on``, ``backoff``, ``cache``, ``progress``), taken by the
  runner, sweeps, judges and synthesis.

Each is a frozen dataclass whose fields are the declarations of :mod:`ranklens.declared`
(:data:`~ranklens.declared.STATISTICS`, :data:`~ranklens.declared.CALLING`), checked once
when it is made. An entry point takes ``stats=Statistics(...)`` / ``calls=Calling(...)``;
the flat keywords of the group still work for one release, with a ``DeprecationWarning``
that shows the new spelling (:func:`settled`); giving both is an error naming both.

>>> from ranklens.settings import Statistics
>>> Statistics(n_resamples=2000, seed=1).n_resamples
2000
>>> Statistics(alpha=1.5)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ranklens.declared.ParameterError: Statistics: alpha must be a finite number in (0, 1) ... got 1.5
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from .declared import CALLING, STATISTICS, ParameterError, declare

S = TypeVar("S")

TRANSIENT: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError)
"""The errors a call retries by default: time-outs and connection failures (the runner's)."""


@declare("Statistics", STATISTICS).checks
@dataclass(frozen=True)
class Statistics:
    """How differences are tested and intervals drawn.

    ``test``: the paired test (``"randomization"``: Fisher's sign flips; ``"bootstrap"``,
    ``"t"``, ``"wilcoxon"``); ``correction``: over the comparisons of one metric
    (``"holm"``, ``"bonferroni"``, ``"bh"``, ``"none"``/None); ``alpha``: the significance
    level; ``n_resamples``: resamples of the bootstrap and randomization; ``ci``: the
    interval of each mean (``"bootstrap"``, ``"t"`` or None); ``confidence``: its level;
    ``seed``: the random seed (None: fresh entropy).
    """

    test: str = "randomization"
    correction: str | None = "holm"
    alpha: float = 0.05
    n_resamples: int = 10_000
    ci: str | None = "bootstrap"
    confidence: float = 0.95
    seed: int | None = 0

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@declare("Calling", CALLING).checks
@dataclass(frozen=True)
class Calling:
    """How retrievers, generators and judges are called.

    ``concurrency``: calls in flight; ``timeout``: seconds per attempt (None: no limit);
    ``retries``: retries of an error in ``retry_on`` after ``backoff · 2^i`` seconds (with
    jitter); ``cache``: the JSONL log written and resumed from; ``progress``: a progress bar
    (None: when stderr is a terminal).
    """

    concurrency: int = 8
    timeout: float | None = None
    retries: int = 2
    retry_on: Any = TRANSIENT
    backoff: float = 0.2
    cache: Any = None
    progress: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def settled(
    where: str,
    given: S | None,
    flat: Mapping[str, Any],
    default: S,
    attribute: str,
) -> S:
    """The settings an entry point runs with: ``given`` (a settings object, or None for
    ``default``) with the flat keywords of the group that were passed (``flat``: only those
    the caller gave) applied on top. Each flat keyword warns once with its new spelling
    (``stats=Statistics(n_resamples=2000)``); a flat keyword and a settings object together
    are an error naming both.
    """
    kind = type(default)
    if given is not None and not isinstance(given, kind):
        raise ParameterError(
            f"{where}: {attribute} must be a ranklens.{kind.__name__}, got {type(given).__name__}"
        )
    if not flat:
        return given if given is not None else default
    if given is not None:
        both = ", ".join(sorted(flat))
        raise ParameterError(
            f"{where}: both {attribute}= and {both}= were given; put "
            f"{'them' if len(flat) > 1 else 'it'} in {attribute}={kind.__name__}(...)"
        )
    spelled = ", ".join(f"{k}={v!r}" for k, v in flat.items())
    warnings.warn(
        f"{where}({', '.join(f'{k}=' for k in flat)}...) is deprecated: write "
        f"{where}(..., {attribute}=ranklens.{kind.__name__}({spelled}))",
        DeprecationWarning,
        stacklevel=outside_stacklevel(),
    )
    return replace(default, **dict(flat))  # type: ignore[type-var]


def outside_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside ranklens (the user's call), so that a
    warning points at the user's line whatever wrappers lie between (Python's default filter
    shows a ``DeprecationWarning`` only when it is attributed to ``__main__`` or a test)."""
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    frame: Any = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    return level
