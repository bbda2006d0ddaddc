"""The settings objects of :func:`ranklens.sweep` beside :class:`~ranklens.Statistics` and
:class:`~ranklens.Calling` (:mod:`ranklens.settings`), each a frozen dataclass checked once
when made by its declaration (:mod:`.params`):

* :class:`Selection`: how the winner is chosen (``baseline``, ``constraint``, ``folds``);
* :class:`Costs`: what a configuration costs (``cost``, ``cost_per_token``,
  ``count_tokens``);
* :class:`Execution`: where and how the configurations run (``backend``, ``ray_options``,
  ``lock_timeout``, ``retry_failed``);
* :class:`Retrieving`: how each configuration's answers are read (``k``, ``key``,
  ``fetch_k``);
* :class:`Naming`: how configurations are named and logged (``name``, ``config``).

:func:`grouped` turns the flat keywords a call gave (still taken for one release) into these
objects through :func:`ranklens.settings.settled`: each flat keyword warns with its new
spelling; a flat keyword beside its settings object is an error naming both.

>>> from ranklens.sweeps import Selection
>>> Selection(folds=10, constraint="p95 <= 200").folds
10
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, NamedTuple, TypeVar, cast

from ..capture import KeyLike, check_key
from ..declared import ParameterError, declare
from ..settings import Calling, Statistics, settled
from .params import EXECUTING, GROUPED, NAMING, PRICING, RETRIEVING, SELECTING, SWEEP

Price = float | Mapping[str, float] | Callable[[Mapping[str, Any]], float]
"""A price: a number, a mapping of configuration name to number, or a function of a
configuration's parameters."""


@declare("Selection", SELECTING).checks
@dataclass(frozen=True)
class Selection:
    """How a sweep chooses: ``baseline`` (the configuration the others are tested against,
    by name or parameters; None: the first), ``constraint`` (``"p95 <= 200"``, fields:
    :data:`~ranklens.sweeps.grid.CONSTRAINT_FIELDS`, or a function of a configuration's
    row, which the chosen configuration must satisfy), ``folds`` (cross-validation over
    queries for the held-out estimate)."""

    baseline: str | Mapping[str, Any] | None = None
    constraint: str | Callable[[Mapping[str, Any]], bool] | None = None
    folds: int = 5

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@declare("Costs", PRICING).checks
@dataclass(frozen=True)
class Costs:
    """What a configuration costs: ``cost``, the price of one retrieval call, and
    ``cost_per_token`` with ``count_tokens(text)`` (a query's tokens as the priced model
    counts them); each price a number, a mapping of configuration name to number, or a
    function of the parameters, finite and at least 0. Shown per 1,000 queries, every
    attempt counted, with a quality-against-cost frontier."""

    cost: Price | None = None
    cost_per_token: Price | None = None
    count_tokens: Callable[[str], int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@declare("Execution", EXECUTING).checks
@dataclass(frozen=True)
class Execution:
    """Where and how a sweep's configurations run: ``backend`` (``"local"``, one after
    another, or ``"ray"``: in parallel, one Ray task each, shared builds made once in the
    cluster) with ``ray_options`` (``num_cpus`` per configuration, ``actors``: at most that
    many at once, ``max_retries``, ``address``, ``num_gpus``); ``lock_timeout``: seconds
    to wait for another process's sweep in the same folder; ``retry_failed``: ask failed
    queries again when resuming a log."""

    backend: str = "local"
    ray_options: Mapping[str, Any] | None = None
    lock_timeout: float = 0.0
    retry_failed: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@declare("Retrieving", RETRIEVING).checks
@dataclass(frozen=True)
class Retrieving:
    """How each configuration's answers are read, as :func:`ranklens.run_retriever` reads
    them: ``k`` documents kept per query (None: all the retriever returns), ``key`` (which
    hit field identifies a document in the labels: ``"id"``, ``"parent"``,
    ``"meta.<field>"``, a function) and ``fetch_k`` (hits asked of the retriever, at least
    ``k``: more, when ``key`` merges chunks of one document)."""

    k: int | None = 10
    key: KeyLike = "id"
    fetch_k: int | None = None

    def __post_init__(self) -> None:
        check_key(self.key, "Retrieving")  # a misspelled key named when made
        if self.fetch_k is not None and self.k is not None and self.fetch_k < self.k:
            raise ParameterError(
                f"Retrieving: fetch_k must be at least k ({self.k}), got {self.fetch_k}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@declare("Naming", NAMING).checks
@dataclass(frozen=True)
class Naming:
    """How configurations are named and what names them in their logs: ``name``, a
    function of a configuration's parameters returning its name (default ``"p=v, q=w"``),
    and ``config``, facts naming what ``build`` closes over (``{"corpus": "v3"}``), kept in
    every log so that a log of other data is refused."""

    name: Callable[[dict[str, Any]], str] | None = None
    config: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The settings as keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


STATS = Statistics()
"""A sweep's statistics by default."""
CALLS = Calling(progress=False)
"""How a sweep calls retrievers by default (no progress bar: a line per configuration)."""


class Settings(NamedTuple):
    """The settings a sweep runs with, one object per group."""

    stats: Statistics
    calls: Calling
    selection: Selection
    costs: Costs
    execution: Execution
    retrieving: Retrieving
    naming: Naming


G = TypeVar("G")


def grouped(
    where: str,
    given: Mapping[str, Any],
    options: dict[str, Any],
    warn: bool = True,
) -> Settings:
    """The settings objects of a call: ``given`` (``stats=``, ``calls=``... as passed,
    None when not) with the flat keywords found in ``options`` (removed from it, checked
    by :data:`~ranklens.sweeps.params.SWEEP` first) applied on top. ``warn=False``: the
    flat keys of a TOML file, which are its spelling (no warning)."""
    flat: dict[str, dict[str, Any]] = {}
    for attribute, names in GROUPED.items():
        mine = {n: options.pop(n) for n in list(options) if n in names}
        flat[attribute] = SWEEP.check(mine, where)
    defaults: dict[str, Any] = {"stats": STATS, "calls": CALLS, "selection": Selection(),
                                "costs": Costs(), "execution": Execution(),
                                "retrieving": Retrieving(), "naming": Naming()}  # fmt: skip
    out: dict[str, Any] = {}
    for attribute, default in defaults.items():
        if warn:
            out[attribute] = settled(where, given.get(attribute), flat[attribute], default,
                                     attribute)  # fmt: skip
        else:
            own = given.get(attribute)
            out[attribute] = own if own is not None else _replace(default, flat[attribute])
    return Settings(**out)


def _replace(default: G, changes: Mapping[str, Any]) -> G:
    return cast(G, replace(cast(Any, default), **changes)) if changes else default
