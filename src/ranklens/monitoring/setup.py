"""The Monitor's settings declared and checked once, when it is made (:data:`MONITOR`, the
table every ``Monitor(...)`` call is checked by): window and duration settings, the
labelled set (queries matched by id or normalised text, their labels, the ids the index
should know) and which signals are tested."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..capture import label_matcher
from ..declared import (
    AT_LEAST_ONE,
    STATISTICS,
    ParameterError,
    UnknownParameterError,
    choice,
    count,
    data,
    declare,
    flag,
    names,
    renamed_option,
    text,
)
from ..errors import closest
from ..io import coerce_qrels
from ..metrics import parse_metrics
from ..settings import Statistics, outside_stacklevel
from .groups import FLAT, FLAT_OPTIONS, DriftTests, G, ModelJudge, Windowing, regrouped
from .options import callables, duration, exporters, group, ids, key, records, rule
from .windows import DISTRIBUTION_SIGNALS, JUDGED, RATE_SIGNALS

RECORDS = records("e.g. read from a run log with Retrieval.from_dict")
_GROUPS = {"drift": "DriftTests", "judge": "ModelJudge", "windowing": "Windowing"}


def _new_spelling(flat: str) -> str:
    """A flat keyword's new spelling: ``judge=ModelJudge(calls=Calling(timeout=...))``."""
    attribute, name = FLAT[flat]
    inner = f"calls=Calling({name.removeprefix('calls.')}=...)" if "." in name else f"{name}=..."
    return f"{attribute}={_GROUPS[attribute]}({inner})"


MONITOR_STATS = Statistics(alpha=0.001, seed=0)
"""The Monitor's statistics unless told: a false-alarm rate of 0.001 per window over its
signals (Holm), seed 0. It reads ``alpha`` and ``seed``; each signal has its own test."""

_FIXED = ("test", "correction", "n_resamples", "ci", "confidence")

MONITOR = declare("Monitor", {
    "source": data("a Recorder, what a hook's instrument() returns, or None (a new Recorder)"),
    "window": duration("15m", "each window's span of wall time, or its count of retrievals",
                       seconds=False, retrievals=True),
    "labels": data("a Dataset or qrels: labelled metrics and the labelled share", none=True),
    "metrics": names(("ndcg@10", "recall@10"), "metrics on the labelled retrievals",
                     single=True),
    "corpus": ids(None, "the document ids the index should hold (the unknown-id rate)",
                  none=True),
    "key": key(None, "which hit field names a document (None: the recorder's)", none=True),
    "match": choice("auto", ("auto", "id", "text"), "how a live query finds its labels"),
    "relevance_level": count(1, AT_LEAST_ONE, "the least grade that counts as relevant"),
    "stats": group(MONITOR_STATS, (Statistics,), "a ranklens.Statistics", "alpha: false-alarm "
                   "rate per window over its signals (Holm); seed: the sampling seed",
                   none=True),
    "drift": group(DriftTests(), (DriftTests,), "a ranklens.DriftTests", "the signals tested, "
                   "the baseline windows and the samples behind the tests", none=True),
    "judge": group(None, (ModelJudge,), "a ranklens.ModelJudge", "a model judge grading a "
                   "sample of retrievals (a callable: ModelJudge(callable))", none=True,
                   callables=True),
    "windowing": group(Windowing(), (Windowing,), "a ranklens.Windowing", "background thread, "
                       "lateness, history, queue size, flush interval and clock", none=True),
    "on_alert": callables((), "callables taking an Alert"),
    "exporters": exporters((), "where closed windows go (OTel, Prometheus, MLflow, f(window))"),
    "name": text("ranklens", "the monitor's name in logs and exported metrics"),
    # the flat keywords of 0.2, still checked (deprecated: each says its new spelling)
    "alpha": renamed_option(STATISTICS["alpha"], default=0.001, description="deprecated: "
                            "stats=Statistics(alpha=...)"),
    "seed": renamed_option(STATISTICS["seed"], description="deprecated: "
                           "stats=Statistics(seed=...)"),
    **{name: renamed_option(option, description=f"deprecated: {_new_spelling(name)}")
       for name, option in FLAT_OPTIONS.items()},
    "baseline": count(1, AT_LEAST_ONE, f"deprecated: {_new_spelling('baseline')}, or "
                      "monitor.set_baseline(records)", also=RECORDS),
})  # fmt: skip
"""Every parameter of :class:`~ranklens.Monitor`."""

SET_BASELINE = declare("Monitor.set_baseline", {
    "source": count(1, AT_LEAST_ONE, "the next windows with traffic that form the baseline",
                    also=RECORDS),
})  # fmt: skip
OBSERVE = declare("Monitor.observe", {"records": RECORDS})
REPLAY = declare("Monitor.replay", {"records": RECORDS})
FLUSH = declare("Monitor.flush", {
    "close": flag(False, "close every open window too (marked partial)"),
})  # fmt: skip
CLOSE = declare("Monitor.close", {
    "flush": flag(True, "process what is queued and close the open windows first"),
})  # fmt: skip


def flat_keywords(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The deprecated flat keywords given to ``Monitor(...)``, each checked by its
    declaration; a keyword the Monitor does not take is refused naming the closest."""
    for name in flat:
        if name not in FLAT:
            takes = [n for n in MONITOR.options if n not in FLAT]
            near = closest(name, list(MONITOR.options))
            hint = f"; did you mean {near!r}?" if near else ""
            raise UnknownParameterError(
                f"Monitor: no parameter {name!r}{hint} (it takes: {', '.join(takes)})"
            )
    return MONITOR.check(flat)


def grouped(
    stats: Statistics | None,
    drift: DriftTests | None,
    judge: ModelJudge | Callable[..., Any] | None,
    windowing: Windowing | None,
    flat: Mapping[str, Any],
) -> tuple[Statistics, DriftTests, ModelJudge | None, Windowing, Any]:
    """The Monitor's settings groups: each given object (or its default) with the
    deprecated flat keywords of ``flat`` applied (:func:`~.groups.regrouped`, the warning
    pointed at the line that made the Monitor); a judge given as its callable is its
    :class:`~.groups.ModelJudge`. Last, the retrievals of a deprecated
    ``baseline=records`` (None without), which the Monitor reads as
    :meth:`~ranklens.Monitor.set_baseline` does."""
    given = flat_keywords(flat)
    records = None
    if "baseline" in given and not isinstance(given["baseline"], int):
        records = given.pop("baseline")
        warnings.warn("Monitor(baseline=records) is deprecated: write monitor = "
                      "ranklens.Monitor(...); monitor.set_baseline(records)",
                      DeprecationWarning, stacklevel=outside_stacklevel())  # fmt: skip

    def group_of(attribute: str, obj: G | None, default: G) -> G:
        return regrouped("Monitor", attribute, obj, given, default)

    model: ModelJudge | None = None
    if isinstance(judge, ModelJudge):
        model = group_of("judge", judge, judge)
    elif judge is not None:  # a callable: its ModelJudge, with any flat judge_* keywords
        model = group_of("judge", None, ModelJudge(judge))
    elif unused := [k for k in given if FLAT[k][0] == "judge"]:  # checked; no judge to use them
        warnings.warn(f"Monitor({'=, '.join(unused)}=...) is deprecated and does nothing "
                      "without a judge: write Monitor(..., judge=ranklens.ModelJudge(judge, "
                      "...))", DeprecationWarning, stacklevel=outside_stacklevel())  # fmt: skip
    return (
        monitor_stats(group_of("stats", stats, MONITOR_STATS)),
        group_of("drift", drift, DriftTests()),
        model,
        group_of("windowing", windowing, Windowing()),
        records,
    )


def cross_checks(labels: Any, match: str) -> None:
    """What no one declaration says: matching by text needs query texts."""
    if match == "text" and labels is not None and getattr(labels, "queries", None) is None:
        raise rule("Monitor", "labels", "a Dataset (query texts) with match='text'",
                   type(labels).__name__)  # fmt: skip


def monitor_stats(stats: Statistics) -> Statistics:
    """``stats`` if the Monitor can honour it: it reads ``alpha`` and ``seed``; the drift
    tests are fixed per signal (exact, KS, Welch; Holm over a window's signals), so the
    other fields must be left as :data:`MONITOR_STATS` has them."""
    for name in _FIXED:
        if getattr(stats, name) != getattr(MONITOR_STATS, name):
            raise rule("Monitor", f"stats.{name}", f"{getattr(MONITOR_STATS, name)!r} (each "
                       "signal has its own test, Holm over a window's signals; the monitor "
                       "reads alpha and seed)", getattr(stats, name))  # fmt: skip
    return stats


def window_of(window: Any) -> tuple[float | None, int | None]:
    """``(seconds, None)`` for a window of wall time, ``(None, n)`` for one of n
    retrievals (``window`` as :data:`MONITOR` normalised it, a float of seconds or an int
    of retrievals, or the default's text)."""
    if not isinstance(window, (int, float)):
        window = MONITOR.value("window", window)
    if isinstance(window, int):
        return None, window
    return float(window), None


class Labels:
    """The labelled set as the monitor uses it: ``lookup(query_id, text)`` (the label
    query id of a live retrieval, by id else by normalised text; :func:`label_matcher`),
    ``qrels``, ``graded`` (``{query: {doc: grade}}``), ``metrics`` (checked names) and
    ``known`` (the ids the index should return: ``corpus`` or the Dataset's corpus,
    else None)."""

    def __init__(self, labels: Any, match: str, metrics: Sequence[str],
                 corpus: Iterable[str] | None, relevance_level: int):  # fmt: skip
        self.qrels = coerce_qrels(labels)
        self.graded = self.qrels.to_dict()
        queries = getattr(labels, "queries", None)
        self._matches = label_matcher(queries, match, ids=self.graded)
        self.metrics = [str(m) for m in metrics]
        parse_metrics(self.metrics)  # a bad name is an error now, not at the first window
        if corpus is not None:
            self.known: set[str] | None = {str(d) for d in corpus}
        elif getattr(labels, "corpus", None):
            self.known = {str(d) for d in labels.corpus}
        else:
            self.known = None
        self.relevance_level = relevance_level

    def lookup(self, query_id: str | None, text: str) -> str | None:
        """The label query id of a live retrieval (the first labelled query with its text
        when several share it), or None."""
        found = self._matches(query_id, text)
        return found[0] if found else None


def default_signals(
    signals: Sequence[str] | None, labels: Labels | None, known: Any, judge: Any
) -> list[str]:
    """The signals tested: every one the monitor can compute (rates; latency and top score;
    with labels the labelled share and each metric; with a corpus the unknown-id rate;
    with a judge its share of relevant hits), or those named (each checked)."""
    available = ["error_rate", "timeout_rate", "empty_rate"]
    if known is not None:
        available.append("unknown_rate")
    if labels is not None:
        available.append("labelled_rate")
    available += list(DISTRIBUTION_SIGNALS)
    if labels is not None:
        available += labels.metrics
    if judge is not None:
        available.append(JUDGED)
    if signals is None:
        return available
    out = []
    for s in signals:
        if s not in available:
            every = [*RATE_SIGNALS, *DISTRIBUTION_SIGNALS, "a metric of metrics=", JUDGED]
            near = closest(s, available)
            raise ParameterError(
                f"Monitor: signals must name signals available here ({', '.join(available)}; "
                f"signals in general: {', '.join(every)}), got {s!r}"
                + (f"; did you mean {near!r}?" if near else "")
            )
        out.append(s)
    return out
