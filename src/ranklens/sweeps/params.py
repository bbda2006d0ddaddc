"""The declared parameters of :func:`ranklens.sweep`, of :class:`SweepResult`'s methods and
of ``ranklens sweep`` (:mod:`ranklens.declared`): each checked on every call, in the TOML
file (types checked, not coerced) and on the command line, from one declaration.

A cost (``cost=``, ``cost_per_token=``) takes one of three forms, which no single
declaration of :mod:`ranklens.declared` expresses: a number, a mapping of configuration name
to number, or a function of a configuration's parameters returning a number. Every number
(given, in the mapping, or returned) must be finite and at least 0 (:class:`CostOption`,
:func:`resolve_costs`)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..capture import KEY
from ..declared import (
    AT_LEAST_ONE,
    CALLING,
    NONNEGATIVE,
    STATISTICS,
    Option,
    ParameterError,
    Range,
    choice,
    count,
    data,
    declare,
    flag,
    function,
    mapping,
    names,
    number,
    path,
    renamed_option,
    shown,
    text,
)
from ..errors import closest


@dataclass(frozen=True)
class CostOption(Option):
    """A price: a finite number >= 0, a mapping of configuration name to such a number, or
    a function of a configuration's parameters returning one (checked per configuration
    by :func:`resolve_costs`, before anything runs)."""

    def _own_words(self) -> str:
        return (
            "a price (a finite number >= 0), a mapping of configuration name to a price, or "
            "a function of a configuration's parameters returning a price"
        )

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if callable(value) and not isinstance(value, Mapping):
            return True, value
        if isinstance(value, Mapping):
            if not value or not all(isinstance(k, str) for k in value):
                return False, None
            out = {}
            for k, v in value.items():
                ok, out[k] = price(v)
                if not ok:
                    return False, None
            return True, out
        return price(value)


def price(value: Any) -> tuple[bool, float | None]:
    """``(True, value as float)`` for a finite real number >= 0, else ``(False, None)``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False, None
    x = float(value)
    if not math.isfinite(x) or x < 0:
        return False, None
    return True, x


def cost_option(description: str) -> CostOption:
    return CostOption("number", None, description, range=NONNEGATIVE, none=True)


SELECTING: dict[str, Option] = {
    "baseline": text(
        None,
        "the configuration the others are tested against, by name or parameters (None: the first)",
        none=True,
        also=mapping(None, "a configuration's parameters"),
    ),
    "constraint": text(
        None,
        "what the chosen configuration must satisfy ('p95 <= 200') or a function of its row",
        none=True,
        also=function("a function of a configuration's row"),
    ),
    "folds": count(5, Range(2, None), "cross-validation folds over queries for the held-out value"),
}
"""How a sweep chooses (:class:`~ranklens.sweeps.groups.Selection`)."""

PRICING: dict[str, Option] = {
    "cost": cost_option("the price of one retrieval call"),
    "cost_per_token": cost_option("the price of one token of the query (with count_tokens)"),
    "count_tokens": function("a text's number of tokens (with cost_per_token)", none=True),
}
"""What a sweep's configurations cost (:class:`~ranklens.sweeps.groups.Costs`)."""

EXECUTING: dict[str, Option] = {
    "backend": choice("local", ("local", "ray"), "where the queries run"),
    "ray_options": mapping(
        None,
        "the Ray backend's options (num_cpus, actors, max_retries, address, num_gpus)",
        none=True,
        empty=True,
    ),
    "lock_timeout": number(
        0.0,
        NONNEGATIVE,
        "seconds to wait for another process's sweep in the same cache= folder "
        "(0: stop at once, naming it)",
    ),
    "retry_failed": flag(True, "ask failed queries again when resuming a log"),
}
"""Where and how a sweep's configurations run (:class:`~ranklens.sweeps.groups.Execution`)."""

SWEEP_CALLING: dict[str, Option] = {
    "cache": renamed_option(
        CALLING["cache"],
        description="the sweep folder: one run log per configuration, resumable",
    ),
    **{n: CALLING[n] for n in ("concurrency", "timeout", "retries", "retry_on")},
    "progress": renamed_option(CALLING["progress"], default=False),
}
"""The keywords of :class:`~ranklens.Calling` a sweep took flat (``cache``: the sweep folder;
``progress`` off by default)."""

SWEEP_STATISTICS: dict[str, Option] = {
    n: STATISTICS[n] for n in ("seed", "test", "correction", "alpha", "n_resamples", "ci",
                               "confidence")
}  # fmt: skip
"""The keywords of :class:`~ranklens.Statistics` a sweep took flat (``ci``/``confidence``
were passed on to ``compare``)."""

RETRIEVING: dict[str, Option] = {
    "k": count(10, AT_LEAST_ONE, "documents kept per query (None: all)", none=True),
    "key": KEY,
    "fetch_k": count(None, AT_LEAST_ONE, "hits asked of the retriever, at least k", none=True),
}
"""How each configuration's answers are read (:class:`~ranklens.sweeps.groups.Retrieving`):
the runner's ``k``, ``key`` and ``fetch_k``."""

NAMING: dict[str, Option] = {
    "name": function("names a configuration from its parameters", none=True),
    "config": mapping(
        None, "facts naming what build closes over, kept in every log", none=True, empty=True
    ),
}
"""How configurations are named and what names them in their logs
(:class:`~ranklens.sweeps.groups.Naming`)."""

GROUPED: dict[str, dict[str, Option]] = {
    "stats": SWEEP_STATISTICS,
    "calls": SWEEP_CALLING,
    "selection": SELECTING,
    "costs": PRICING,
    "execution": EXECUTING,
    "retrieving": RETRIEVING,
    "naming": NAMING,
}
"""Each settings object of :func:`ranklens.sweep` and the flat keywords it replaces (still
taken for one release, with a ``DeprecationWarning``; the TOML file's keys)."""

SWEEP = declare(
    "sweep",
    {
        "build": function("returns a configuration's retriever from its parameters"),
        "grid": data("a dict of lists (every combination) or a list of dicts"),
        "dataset": data("the labelled set whose queries are asked (a Dataset or a path)"),
        "metrics": names(
            ["ndcg@10", "recall@10", "mrr@10"],
            "metric names; the first is the primary one",
            single=True,
        ),
        "labels": data("what the runs are scored against (default: the dataset's labels)"),
        "queries": choice(
            "labelled",
            ("labelled", "all"),
            "which of the dataset's queries are asked: those with labels (the others are "
            "counted and said) or all",
        ),
        "query_params": names(
            [], "grid parameters that only affect the query", single=True, empty=True
        ),
        "verbose": flag(False, "a line per configuration as it finishes"),
        "stats": data("a ranklens.Statistics: the paired tests and intervals"),
        "calls": data(
            "a ranklens.Calling: how retrievers are called (cache: the sweep folder; "
            "progress off by default)"
        ),
        "selection": data("a Selection: baseline, constraint, folds"),
        "costs": data("a Costs: cost, cost_per_token, count_tokens"),
        "execution": data("an Execution: backend, ray_options, lock_timeout, retry_failed"),
        "retrieving": data(
            "a Retrieving: k, key, fetch_k (how each configuration's hits are read)"
        ),
        "naming": data("a Naming: name, config (how configurations are named and logged)"),
        **{n: o for group in GROUPED.values() for n, o in group.items()},
    },
    "Every configuration of a grid built, run and compared; the choice cross-validated. "
    "The flat keywords of the settings objects (stats, calls, selection, costs, execution, "
    "retrieving, naming) still work for one release, with a DeprecationWarning.",
)
"""The parameters of :func:`ranklens.sweep`."""

FILE_KEYS = ("build", "dataset", "grid")
"""What the TOML file of ``ranklens sweep`` must give; its other keys are :data:`SWEEP`'s."""

NOT_IN_FILE = ("build", "grid", "name", "cost", "cost_per_token", "count_tokens", "retry_on",
               "stats", "calls", "selection", "costs", "execution", "retrieving",
               "naming")  # fmt: skip
"""Parameters a TOML file cannot give (functions, types) or gives in its own form."""

CLI = declare(
    "ranklens sweep",
    {
        "config": path(None, "the sweep's description (TOML)"),
        "html": path(None, "write the HTML report (charts, drill-down)", none=True),
        "json": path(None, "save the sweep as JSON", none=True),
        "cache": path(None, "the sweep folder (overrides the file's cache)", none=True),
        "lock_timeout": EXECUTING["lock_timeout"],
        "format": choice("text", ("text", "markdown", "json", "none"), "what to print"),
        "quiet": flag(False, "no line per configuration"),
    },
)
"""The flags of ``ranklens sweep``."""

RESULT_ROW = declare(
    "SweepResult.row", {"name": text(None, "a configuration's name")}
)  # fmt: skip
RESULT_CHOSEN = declare(
    "SweepResult.chosen_name",
    {"metric": text(None, "one of the sweep's metrics (None: the primary one)", none=True)},
)
RESULT_SAVE = declare("SweepResult.save", {"path": path(None, "the JSON file to write")})
RESULT_JSON = declare(
    "SweepResult.to_json",
    {"indent": count(2, NONNEGATIVE, "spaces of indentation (None: one line)", none=True)},
)
RESULT_HTML = declare(
    "SweepResult.to_html",
    {
        "path": path(None, "the HTML file to write (None: return the page)", none=True),
        "options": data("the report's HTML options"),
    },
)


def one_of(where: str, param: str, got: str, known: Sequence[str], what: str) -> ParameterError:
    """A name that is not one of ``known``: named, with the closest."""
    near = closest(got, known)
    hint = f"; did you mean {near!r}?" if near else ""
    shown_known = ", ".join(map(repr, list(known)[:8])) + (", ..." if len(known) > 8 else "")
    return ParameterError(
        f"{where}: {param} must be {what} ({shown_known}), got {shown(got)}{hint}"
    )


def resolve_costs(
    option: str,
    given: Any,
    configs: Sequence[Any],
) -> dict[str, float] | None:
    """Each configuration's price from ``given`` (a number, a mapping of configuration
    name to number, or a function of the parameters), each checked: finite and >= 0; a
    mapping must name every configuration and no other. None when ``given`` is None."""
    if given is None:
        return None
    where = "sweep"
    names_ = [c.name for c in configs]
    if isinstance(given, Mapping):
        unknown = [n for n in given if n not in names_]
        if unknown:
            raise one_of(where, f"{option} key", unknown[0], names_, "a configuration's name")
        missing = [n for n in names_ if n not in given]
        if missing:
            raise ParameterError(
                f"{where}: {option} gives no price for {len(missing)} configuration"
                f"{'s' if len(missing) > 1 else ''}, e.g. {missing[0]!r}: give every "
                "configuration's (0 for a free one)"
            )
        return {n: float(given[n]) for n in names_}
    if callable(given):
        out: dict[str, float] = {}
        for c in configs:
            try:
                got = given(dict(c.params))
            except Exception as exc:
                raise ParameterError(
                    f"{where}: {option} raised {type(exc).__name__} for configuration "
                    f"{c.name!r}: {exc}"
                ) from exc
            ok, value = price(got)
            if not ok or value is None:
                raise ParameterError(
                    f"{where}: {option} must return a finite number >= 0 for every "
                    f"configuration; for {c.name!r} it returned {shown(got)}"
                )
            out[c.name] = value
        return out
    return {n: float(given) for n in names_}


def check_tokens(count_tokens: Callable[[str], Any], texts: Mapping[str, str]) -> dict[str, int]:
    """``count_tokens`` of each query text, each checked: a whole number >= 0."""
    out: dict[str, int] = {}
    for q, t in texts.items():
        try:
            n = count_tokens(t)
        except Exception as exc:
            raise ParameterError(
                f"sweep: count_tokens raised {type(exc).__name__} on query {q!r}: {exc}"
            ) from exc
        if (
            isinstance(n, bool)
            or not isinstance(n, numbers.Real)
            or not math.isfinite(float(n))
            or not float(n).is_integer()
            or n < 0
        ):
            raise ParameterError(
                f"sweep: count_tokens must return a whole number >= 0; on query {q!r} it "
                f"returned {shown(n)}"
            )
        out[q] = int(float(n))
    return out
