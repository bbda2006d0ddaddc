"""How a (qrels, run) pair is judged (:class:`JudgeOptions`) and what judging counted
(:class:`JudgeCounts`, with the one wording of those counts every output uses)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..declared import (
    NONNEGATIVE,
    Option,
    ParameterError,
    choice,
    count,
    data,
    declare,
    flag,
    text,
)
from ..errors import UnknownOptionError, closest, suggest
from .conventions import CONVENTION as CONVENTION_TABLE
from .conventions import PRESETS, TREC, Convention, get_convention
from .freshness_rules import FreshnessRule, get_freshness_rule
from .overlap import OverlapRule, get_rule

_SWITCHES = set(Convention.__dataclass_fields__) - {"name"}
OPTIONS = (
    "relevance_level", "score_precision", "convention", "judged_only", "ties", "overlap",
    "freshness",
)  # fmt: skip
"""The judging options (:class:`JudgeOptions`' fields); the convention switches are the
other keywords :meth:`JudgeOptions.build` takes."""
_FORWARDED = (
    "options", "tokenizer", "chunking", "trec_eval_version", "memory", "texts", "budget_tokenizer",
)  # fmt: skip
"""Keywords of the functions that pass their other keywords to judging (judge, evaluate):
a misspelling of one is suggested too."""


def unknown_options(names: list[str]) -> str:
    """The message of unknown judging options: each with the closest valid keyword, and
    every keyword judging takes.

    >>> print(unknown_options(["relevance_levle"]))  # doctest: +ELLIPSIS
    unknown judging option 'relevance_levle'; did you mean 'relevance_level'? (judging takes ...
    """
    valid = [*OPTIONS, *sorted(_SWITCHES), *_FORWARDED]
    if len(names) == 1:
        each = f"{names[0]!r}{suggest(names[0], valid)}"
    else:
        near = [closest(name, valid) for name in names]
        each = ", ".join(
            f"{n!r}" + (f" (did you mean {c!r}?)" if c else "") for n, c in zip(names, near)
        )
    plural = "s" if len(names) > 1 else ""
    return (
        f"unknown judging option{plural} {each} (judging takes {', '.join(OPTIONS)}, and the "
        f"convention switches {', '.join(sorted(_SWITCHES))}; see ranklens.JudgeOptions)"
    )


TIES = ("trec", "input", "expected", "best", "worst")
"""How tied scores are ordered (:attr:`JudgeOptions.ties`)."""


@dataclass(frozen=True)
class ConventionOption(Option):
    """A convention: a preset's name in any case (:data:`~.conventions.PRESETS`) or a
    :class:`~.conventions.Convention`."""

    def _own_words(self) -> str:
        return "a Convention or " + super()._own_words()

    def _accepts(self, value: Any) -> tuple[bool, Any]:
        if isinstance(value, Convention):
            return True, value
        if isinstance(value, str) and value.lower() in self.choices:
            return True, value
        return False, None


CONVENTION_OPTION = ConventionOption("choice", "trec", "a preset of switches (or a Convention)",
                              choices=tuple(PRESETS))  # fmt: skip


SWITCHES: dict[str, Option] = {k: o for k, o in CONVENTION_TABLE.options.items() if k != "name"}
"""The convention switches, each one given directly (``duplicates="first"``): the
declarations of :class:`~.conventions.Convention`'s own fields."""

JUDGE_OPTIONS = declare("JudgeOptions", {
    "relevance_level": count(1, NONNEGATIVE, "the smallest grade counted relevant (trec_eval -l)"),
    "score_precision": choice("float64", ("float64", "float32"),
                              "scores compared as float64, or float32 (trec_eval 9)"),
    "convention": CONVENTION_OPTION,
    "judged_only": flag(False, "condensed lists: unjudged documents removed (trec_eval -J)"),
    "ties": choice("trec", TIES, "how tied scores are ordered"),
    "overlap": data("span labels: when a chunk finds a span (a rule or its text)"),
    "freshness": data("document versions: how an outdated version is judged (a rule)"),
})  # fmt: skip
""":class:`JudgeOptions`' fields, declared once: the dataclass checks itself with it."""

BUDGET_OPTIONS: dict[str, Option] = {
    "texts": data("context budgets: {doc id: text}, the sizes of a run of ids"),
    "budget_tokenizer": data("context budgets in tokens: 'words', 'whitespace' or a callable "
                             "(default: the span tokenizer, else 'words')"),
}  # fmt: skip
"""What context budgets (``recall@1024tok``) read besides the run: keywords of
:func:`~ranklens.judging.judge` that are not :class:`JudgeOptions` fields."""

JUDGING: dict[str, Option] = {**JUDGE_OPTIONS.options, **SWITCHES, **BUDGET_OPTIONS}
"""Every judging keyword (the options, the switches and the budgets' inputs) that judge,
evaluate and the functions passing keywords to judging take."""

JUDGE = declare("judge", {
    "qrels": data("the labels (anything evaluate takes)"),
    "run": data("the run (anything evaluate takes)"),
    "options": data("a JudgeOptions (None: the defaults and the keywords)"),
    "require_shared": flag(True, "a run answering no labelled query is an error"),
    "name": text(None, "what errors and notes call the run", none=True),
    "tokenizer": data("span labels: count the evidence metrics in tokens"),
    "chunking": data("span labels: every chunk of the chunking, for precision_omega"),
    "versions": data("document versions (a Versions table)"),
    "as_of": data("the time of every query, or {query: time}"),
    **JUDGING,
    "kwargs": data("the judging options and switches above, as keywords"),
})  # fmt: skip


def check_options(options: Any, where: str) -> JudgeOptions | None:
    """``options`` if it is a :class:`JudgeOptions` or None, else a :class:`ParameterError`
    naming ``where``."""
    if options is not None and not isinstance(options, JudgeOptions):
        raise ParameterError(
            f"{where}: options must be a JudgeOptions or None, got {type(options).__name__}"
        )
    return options


def check_judging(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Judging keywords checked by their declarations for the entry point ``where`` (names
    that are not judging keywords pass through: the caller refuses them with the closest)."""
    out = dict(values)
    for name, value in values.items():
        option = JUDGING.get(name)
        if option is not None:
            out[name] = option.validate(value, name, where)
    return out


@JUDGE_OPTIONS.checks
@dataclass(frozen=True)
class JudgeOptions:
    """How a (qrels, run) pair is judged.

    Attributes:
        relevance_level: ℓ, the smallest grade that counts as relevant for binary measures
            (trec_eval ``-l``; default 1). A metric may override it (``P(rel=2)@10``).
        score_precision: ``"float64"`` (default, trec_eval 10) or ``"float32"`` (scores
            compared as float32 when ranking, as trec_eval 9 and pytrec_eval do).
        convention: the switches of :mod:`ranklens.judging.conventions` (default ``trec``); any
            switch may also be given directly, e.g. ``duplicates="first"``,
            ``missing="skip"``.
        judged_only: evaluate condensed lists: retrieved documents without a label >= 0
            are removed and the judged ones move up (trec_eval ``-J``, ir_measures'
            ``judged_only``, Sakai's condensed-list metrics).
        ties: documents with equal scores: ``"trec"`` (default: by document id
            descending, trec_eval's order), ``"input"`` (in the order given), or
            ``"expected"`` (each metric's expected value over every order of the tied
            documents, McSherry & Najork, ECIR 2008: P, recall, success, RR, AP, DCG,
            nDCG and the order-free measures); ``"best"`` and ``"worst"`` order each run
            of tied documents in the run's favour (judged documents by grade descending,
            unjudged last) or against it (unjudged first, then by grade ascending): the
            bounds of every measure that rewards higher grades earlier over all tie
            orders.
        overlap: for span labels, when a chunk finds an evidence span
            (:mod:`ranklens.judging.overlap`: ``"any"``, the default, ``"evidence_half"``,
            ``"evidence>=0.5,chunk>=0.2"``...).
        freshness: with document versions (``versions=``), how an outdated version is
            judged (:mod:`ranklens.judging.freshness_rules`: ``"zero"``, the default,
            ``"keep"``, ``"demote"``, ``"half"``, ``"factor=0.3"``, ``"half_life=90d"``).
    """

    relevance_level: int = 1
    score_precision: str = "float64"
    convention: Convention = TREC  # frozen: one shared default
    judged_only: bool = False
    ties: str = "trec"
    overlap: OverlapRule | str | None = None
    freshness: FreshnessRule | str | None = None

    def __post_init__(self) -> None:
        level = JUDGE_OPTIONS.value("relevance_level", self.relevance_level)
        object.__setattr__(self, "relevance_level", level)
        for name in ("score_precision", "convention", "judged_only", "ties"):
            JUDGE_OPTIONS.value(name, getattr(self, name))
        if not isinstance(self.convention, Convention):
            object.__setattr__(self, "convention", get_convention(self.convention))
        if not isinstance(self.overlap, OverlapRule):
            object.__setattr__(self, "overlap", get_rule(self.overlap))
        if self.freshness is not None and not isinstance(self.freshness, FreshnessRule):
            object.__setattr__(self, "freshness", get_freshness_rule(self.freshness))

    @classmethod
    def build(cls, options: JudgeOptions | None = None, **kwargs: Any) -> JudgeOptions:
        """Options from a base plus keyword arguments; convention switches given by name
        (``duplicates="first"``) derive a convention from the base one."""
        opts = check_options(options, "judge") or cls()
        kwargs = check_judging(kwargs, "judge")
        for key in BUDGET_OPTIONS:  # judge()'s own keywords, not options
            kwargs.pop(key, None)
        switches = {k: kwargs.pop(k) for k in list(kwargs) if k in _SWITCHES}
        if "convention" in kwargs:
            kwargs["convention"] = get_convention(kwargs["convention"])
        unknown = sorted(set(kwargs) - set(OPTIONS))
        if unknown:
            raise UnknownOptionError(unknown_options(unknown))
        opts = replace(opts, **kwargs) if kwargs else opts
        if switches:
            changed = {k: v for k, v in switches.items() if getattr(opts.convention, k) != v}
            if changed:
                opts = replace(opts, convention=opts.convention.with_(**changed))
        return opts

    @property
    def duplicates(self) -> str:
        return self.convention.duplicates

    @property
    def missing(self) -> str:
        return self.convention.missing


@dataclass
class JudgeCounts:
    """What judging left out or changed, so nothing is silently dropped."""

    queries_evaluated: int = 0
    queries_missing: int = 0
    queries_ignored: int = 0
    queries_no_relevant_skipped: int = 0
    duplicates_dropped: int = 0
    duplicates_kept: int = 0
    missing_ids: list[str] = field(default_factory=list)
    ignored_ids: list[str] = field(default_factory=list)
    no_relevant_ids: list[str] = field(default_factory=list)
    hits_retrieved: int = 0
    hits_labelled: int = 0
    failed_ids: list[str] = field(default_factory=list)
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    tied_documents: int = 0
    tie_queries: int = 0
    queries_without_relevant: int = 0
    without_relevant_ids: list[str] = field(default_factory=list)
    labelled_documents: int = 0
    chunks_unlocated: int = 0
    chunks_relocated: int = 0
    span_alternatives: int = 0
    freshness: dict[str, int] | None = None
    budget_empty: list[tuple[str, int]] = field(default_factory=list)
    """Per context budget asked for (``"1024tok"``), the queries whose budget holds no
    chunk of their list (the first is larger): they score 0 at that budget. A list of
    ``(budget, queries)`` so that the counts of parts of a run judged apart add up."""

    def count_budget(self, budget: str, n: int) -> None:
        """Record ``n`` queries whose ``budget`` holds no chunk (once per budget)."""
        self.budget_empty[:] = [(b, k) for b, k in self.budget_empty if b != budget]
        if n:
            self.budget_empty.append((budget, n))

    @property
    def queries_failed(self) -> int:
        """Labelled queries whose retrieval failed (they are among the missing ones)."""
        return len(self.failed_ids)

    def failure_summary(self) -> dict[str, Any]:
        """``{"count", "types": {error type: n}, "first": "Type: message"}`` of the failed
        queries (empty when none failed)."""
        return failure_summary(self.failures)

    def as_dict(self) -> dict[str, Any]:
        return {
            "queries_evaluated": self.queries_evaluated,
            "queries_missing": self.queries_missing,
            "queries_ignored": self.queries_ignored,
            "queries_no_relevant_skipped": self.queries_no_relevant_skipped,
            "duplicates_dropped": self.duplicates_dropped,
            "duplicates_kept": self.duplicates_kept,
            "hits_retrieved": self.hits_retrieved,
            "hits_labelled": self.hits_labelled,
            "queries_failed": self.queries_failed,
            "failures": self.failure_summary(),
            "tied_documents": self.tied_documents,
            "tie_queries": self.tie_queries,
            "queries_without_relevant": self.queries_without_relevant,
            "labelled_documents": self.labelled_documents,
            **({"chunks_unlocated": self.chunks_unlocated} if self.chunks_unlocated else {}),
            **({"chunks_relocated": self.chunks_relocated} if self.chunks_relocated else {}),
            **({"span_alternatives": self.span_alternatives} if self.span_alternatives else {}),
            **(self.freshness or {}),
            **({"budget_empty": _summed(self.budget_empty)} if self.budget_empty else {}),
        }


def _summed(pairs: list[tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, n in pairs:
        out[key] = out.get(key, 0) + n
    return out


def failure_summary(failures: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Failed queries (id -> ``{"type", "message"}``) as ``{"count", "types", "first"}``:
    the one summary every evaluation, report and summary line shows."""
    if not failures:
        return {}
    types: dict[str, int] = {}
    for err in failures.values():
        types[str(err.get("type"))] = types.get(str(err.get("type")), 0) + 1
    qid, err = next(iter(failures.items()))
    first = f"{qid}: {err.get('type')}: {err.get('message')}"
    return {"count": len(failures), "types": types, "first": first}


def failure_note(summary: Mapping[str, Any], verb: str = "scored 0") -> str:
    """``"3 failed in the retriever (scored 0; TimeoutError 2, ValueError 1; first: q7:
    ...)"``."""
    kinds = ", ".join(f"{t} {n}" for t, n in summary["types"].items())
    return (
        f"{summary['count']} failed in the retriever ({verb}; {kinds}; first: {summary['first']})"
    )


def counts_notes(
    counts: Mapping[str, Any],
    missing: str = "zero",
    convention: str = "trec",
    duplicates: str = "error",
    evaluated: bool = True,
    freshness: str | None = None,
) -> list[str]:
    """The judging counts (:meth:`JudgeCounts.as_dict`) as phrases, the one wording used by
    :meth:`Evaluation.to_table <ranklens.Evaluation.to_table>` and the reports
    (``freshness``: the freshness rule's description, with document versions)."""
    notes = []
    if evaluated and counts.get("queries_evaluated") is not None:
        notes.append(f"{plural(counts['queries_evaluated'], 'query', 'queries')} evaluated")
    verb = "scored 0" if missing == "zero" else "skipped"
    failed = counts.get("failures") or {}
    absent = (counts.get("queries_missing") or 0) - (failed.get("count") or 0)
    if failed:
        notes.append(failure_note(failed, verb))
    if absent:
        notes.append(f"{absent} labelled but absent from the run ({verb})")
    if counts.get("queries_ignored"):
        notes.append(f"{counts['queries_ignored']} in the run without labels (ignored)")
    n_zero = counts.get("queries_without_relevant") or 0
    every = bool(n_zero) and n_zero == counts.get("queries_evaluated")
    if n_zero:
        if every:
            who = (
                "the only labelled query has"
                if n_zero == 1
                else f"all {n_zero:,} labelled queries have"
            )
        else:
            who = plural(n_zero, "labelled query has", "labelled queries have")
        notes.append(
            f"{who} no relevant document (scored 0 by every relevance metric; "
            "no_relevant='skip' leaves them out)"
        )
    if counts.get("queries_no_relevant_skipped"):
        notes.append(
            f"{counts['queries_no_relevant_skipped']} without relevant documents (left out "
            f"by the {convention} convention)"
        )
    if counts.get("duplicates_dropped"):
        notes.append(f"{counts['duplicates_dropped']} duplicate documents dropped")
    if counts.get("duplicates_kept"):
        notes.append(f"{counts['duplicates_kept']} duplicate documents kept ({duplicates})")
    if counts.get("tied_documents"):
        n_q = counts.get("tie_queries") or 0
        notes.append(
            f"{counts['tied_documents']} documents with tied scores in {n_q} "
            f"{'query' if n_q == 1 else 'queries'}"
        )
    if counts.get("chunks_unlocated"):
        notes.append(
            f"{plural(counts['chunks_unlocated'], 'chunk', 'chunks')} without a place in "
            "their document (no offsets, and their text not found there): they find no "
            "evidence"
        )
    if counts.get("chunks_relocated"):
        notes.append(
            f"{plural(counts['chunks_relocated'], 'chunk', 'chunks')} whose offsets "
            "disagreed with their text: placed where the text stands, or nowhere"
        )
    if counts.get("span_alternatives"):
        notes.append(
            f"{plural(counts['span_alternatives'], 'query has', 'queries have')} groups of "
            "alternative spans: the character metrics count every alternative as evidence"
        )
    if "outdated_retrieved" in counts:
        notes.append(freshness_note(counts, freshness))
    for budget, n in (counts.get("budget_empty") or {}).items():
        amount = budget.rstrip("chartok")
        unit = "tokens" if budget.endswith("tok") else "characters"
        notes.append(
            f"{plural(n, 'query', 'queries')} whose budget of {amount} {unit} holds no whole chunk "
            "(its first chunk is larger; scored 0 at that budget)"
        )
    total = counts.get("hits_retrieved")
    if total:
        labelled = counts.get("hits_labelled") or 0
        note = f"{labelled:,} of {total:,} retrieved ids have a label"
        if labelled == 0 and counts.get("labelled_documents", 1) == 0:
            note += " (none: the labels of the evaluated queries name no document)"
        elif labelled == 0 and not every:
            note += (
                " (none: are the run's ids the labels' ids? chunk or node ids against "
                "document ids need key=; see docs/hit-identity.md)"
            )
        notes.append(note)
    return notes


def plural(n: int, one: str, many: str) -> str:
    """``"1 query"``, ``"3 queries"`` (``n`` with thousands separators)."""
    return f"{n:,} {one if n == 1 else many}"


def freshness_note(counts: Mapping[str, Any], rule: str | None = None) -> str:
    """What judging with document versions counted, as one phrase: the rule (as
    :meth:`FreshnessRule.describe` words it), the retrieved outdated, undated and future
    versions, the labels carried to versions, and the queries with versioned evidence."""
    head = f"freshness ({rule})" if rule else "freshness"
    bits = [f"{counts.get('outdated_retrieved', 0):,} outdated retrieved"]
    if counts.get("undated_retrieved"):
        bits.append(f"{counts['undated_retrieved']:,} without a time (not current; undated@k)")
    if counts.get("future_retrieved"):
        bits.append(f"{counts['future_retrieved']:,} from after the query's as-of time")
    if counts.get("labels_carried"):
        bits.append(f"{plural(counts['labels_carried'], 'label', 'labels')} carried to versions")
    n, total = counts.get("versioned_queries", 0), counts.get("queries_evaluated")
    of = f" of {total:,}" if total is not None else ""
    bits.append(f"{n:,}{of} {'query' if (total or n) == 1 else 'queries'} with versioned evidence")
    return f"{head}: " + ", ".join(bits)
