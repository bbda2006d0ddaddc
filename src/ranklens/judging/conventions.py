"""Conventions: named sets of switches that reproduce what each tool reports.

ranklens reports trec_eval's numbers by default. A RAG team that sees different MRR in
LlamaIndex, Haystack and AutoRAG for the same retriever can ask for each tool's convention
and see which switch makes the numbers differ (``ranklens explain``). A convention is data:
a frozen set of switches that act in the judging step and in a few denominators, never in
the metric code's lookups. Derive your own with :meth:`Convention.with_`.

Switches (trec_eval's value first):

* ``ordering``: ``"score"`` (score descending, ties by document id descending) or
  ``"given"`` (the list order as retrieved; scores are not read: list tools).
* ``duplicates``: a document twice in one query's list: ``"error"``; ``"first"`` (drop the
  later occurrences); ``"redundant"`` (they keep their rank but are never relevant again:
  Haystack); ``"count"`` (every occurrence of a relevant document counts again: LlamaIndex,
  AutoRAG).
* ``precision_denominator``: ``"k"`` (P@k divides by k), ``"retrieved"`` (by the length of the
  list, duplicates included: AutoRAG), ``"unique_retrieved"`` (by the distinct documents
  retrieved: LlamaIndex). The numerator is always the distinct relevant documents.
* ``unit_average``: ``False``: RR is 1/rank of the first hit and AP sums precision at each
  relevant unit ÷ R. ``True`` (AutoRAG): both are averages over ground-truth groups: RR =
  mean over groups of 1/rank of the group's first member; AP = mean over groups of the mean
  precision (counted within the group) at the ranks of the group's members.
* ``gain``: ``"linear"`` (the grade), ``"exp"`` (2^g − 1) or ``"binary"`` (1 for any relevant
  document: LlamaIndex, AutoRAG).
* ``ideal``: nDCG's ideal ranking: ``"qrels_cut"`` (all positive grades of the qrels, cut at
  k), ``"qrels"`` (all of them, not cut: LlamaIndex, Haystack), ``"min_gt_retrieved"``
  (min(#ground-truth ids, #retrieved) ones: AutoRAG).
* ``gain_level``: ``False`` (every positive grade earns nDCG gain and enters the ideal
  ranking whatever the relevance level ℓ: trec_eval) or ``True`` (only grades ≥ ℓ do, so
  nDCG's relevant documents are every other metric's: the frameworks, whose ground truth is
  the set of relevant documents; their gains are then the grades, or 1 under binary gain).
* ``negative_gain``: ``False`` (negative grades give no gain, trec_eval) or ``True`` (a
  negative grade is a negative gain, as Haystack treats a ground-truth document with a
  negative score; qrels negatives are not ground truth there, so the preset leaves it off).
* ``no_relevant``: a labelled query without any relevant document: ``"zero"`` (scored 0,
  counted) or ``"skip"`` (left out and counted: AutoRAG returns None for it, LlamaIndex
  raises ValueError).
* ``missing``: a labelled query absent from the run: ``"zero"`` or ``"skip"``.

Switches of span labels (:mod:`.spanmatch`; ranklens' value first, then Chroma's chunking
evaluation's, ``chunking_evaluation``'s ``BaseEvaluation``):

* ``evidence_total``: what the evidence counts for the character metrics: ``"union"`` (the
  characters of the union of a query's spans, an overlapping character once) or
  ``"summed"`` (the spans' summed lengths, and IoU's uncovered evidence summed per span:
  Chroma).
* ``omega_chunks``: the chunks of the chunking that precision-Ω reads: ``"overlapping"``
  (sharing a character with the evidence) or ``"touching"`` (touching it too: Chroma's
  closed-range intersection).
* ``placement``: a chunk located by its text that stands in several places: ``"unique"``
  (left unplaced and counted) or ``"first"`` (its first occurrence: Chroma's
  ``str.find``).

The ``chroma`` preset sets these three and takes the chunks in the order retrieved
(``ordering="given"``): Chroma's recall, precision, IoU and precision-Ω exactly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

from ..declared import choice, data, declare, flag, text
from ..errors import InputError, closest


@dataclass(frozen=True)
class Convention:
    """A named, frozen set of judging switches (see the module docstring)."""

    name: str = "trec"
    ordering: Literal["score", "given"] = "score"
    duplicates: Literal["error", "first", "redundant", "count"] = "error"
    precision_denominator: Literal["k", "retrieved", "unique_retrieved"] = "k"
    unit_average: bool = False
    gain: Literal["linear", "exp", "binary"] = "linear"
    ideal: Literal["qrels_cut", "qrels", "min_gt_retrieved"] = "qrels_cut"
    gain_level: bool = False
    negative_gain: bool = False
    no_relevant: Literal["zero", "skip"] = "zero"
    missing: Literal["zero", "skip"] = "zero"
    evidence_total: Literal["union", "summed"] = "union"
    omega_chunks: Literal["overlapping", "touching"] = "overlapping"
    placement: Literal["unique", "first"] = "unique"

    def __post_init__(self) -> None:
        allowed = {
            "ordering": ("score", "given"),
            "duplicates": ("error", "first", "redundant", "count"),
            "precision_denominator": ("k", "retrieved", "unique_retrieved"),
            "gain": ("linear", "exp", "binary"),
            "ideal": ("qrels_cut", "qrels", "min_gt_retrieved"),
            "no_relevant": ("zero", "skip"),
            "missing": ("zero", "skip"),
            "evidence_total": ("union", "summed"),
            "omega_chunks": ("overlapping", "touching"),
            "placement": ("unique", "first"),
        }
        for key, values in allowed.items():
            if getattr(self, key) not in values:
                got = getattr(self, key)
                near = closest(got, values) if isinstance(got, str) else None
                hint = f"; did you mean {near!r}?" if near else ""
                raise InputError(
                    f"convention {self.name!r}: {key} must be one of {', '.join(values)}; "
                    f"got {got!r}{hint}"
                )
        for key in ("unit_average", "gain_level", "negative_gain"):
            if not isinstance(getattr(self, key), bool):
                raise InputError(
                    f"convention {self.name!r}: {key} must be True or False; "
                    f"got {getattr(self, key)!r}"
                )

    def with_(self, **changes: Any) -> Convention:
        """A derived convention with some switches changed (named ``base+changes`` unless a
        ``name`` is given)."""
        if "name" not in changes:
            changes["name"] = self.name + "+" + ",".join(f"{k}={v}" for k, v in changes.items())
        return replace(self, **changes)

    def switches(self) -> dict[str, Any]:
        """The switches as a dict (without the name)."""
        d = asdict(self)
        d.pop("name")
        return d

    def differences(self, other: Convention) -> dict[str, tuple[Any, Any]]:
        """Switches whose values differ: ``{switch: (self's, other's)}``."""
        return {
            f.name: (getattr(self, f.name), getattr(other, f.name))
            for f in fields(self)
            if f.name != "name" and getattr(self, f.name) != getattr(other, f.name)
        }


CONVENTION = declare("Convention", {
    "name": text("trec", "the convention's name (shown in notes and explain)"),
    "ordering": choice("score", ("score", "given"), "ranking order"),
    "duplicates": choice("error", ("error", "first", "redundant", "count"),
                         "a document twice in one query's list"),
    "precision_denominator": choice("k", ("k", "retrieved", "unique_retrieved"),
                                    "what precision divides by"),
    "unit_average": flag(False, "RR and AP averaged over ground-truth groups"),
    "gain": choice("linear", ("linear", "exp", "binary"), "nDCG gain"),
    "ideal": choice("qrels_cut", ("qrels_cut", "qrels", "min_gt_retrieved"),
                    "nDCG's ideal ranking"),
    "gain_level": flag(False, "only grades >= the relevance level earn nDCG gain"),
    "negative_gain": flag(False, "negative grades as negative gain"),
    "no_relevant": choice("zero", ("zero", "skip"), "a query without relevant documents"),
    "missing": choice("zero", ("zero", "skip"), "a labelled query absent from the run"),
    "evidence_total": choice("union", ("union", "summed"),
                             "span labels: the evidence as the union or the summed spans"),
    "omega_chunks": choice("overlapping", ("overlapping", "touching"),
                           "span labels: the chunks of the chunking precision-Ω reads"),
    "placement": choice("unique", ("unique", "first"),
                        "span labels: a chunk's text found in several places"),
})  # fmt: skip
CONVENTION.checks(Convention)

TREC = Convention("trec")
LLAMAINDEX = Convention(
    "llamaindex",
    ordering="given",
    duplicates="count",
    precision_denominator="unique_retrieved",
    gain="binary",
    ideal="qrels",
    gain_level=True,
    no_relevant="skip",
)
HAYSTACK = Convention(
    "haystack",
    ordering="given",
    duplicates="redundant",
    ideal="qrels",
    gain_level=True,
)
AUTORAG = Convention(
    "autorag",
    ordering="given",
    duplicates="count",
    precision_denominator="retrieved",
    unit_average=True,
    gain="binary",
    ideal="min_gt_retrieved",
    gain_level=True,
    no_relevant="skip",
)

CHROMA = Convention(
    "chroma",
    ordering="given",
    evidence_total="summed",
    omega_chunks="touching",
    placement="first",
)
"""Chroma's chunking evaluation (``chunking_evaluation``, Smith & Troynikov 2024) on span
labels: recall over the summed span lengths, IoU's uncovered evidence per span,
precision-Ω over the chunks touching the evidence, text placed at its first occurrence."""

PRESETS: dict[str, Convention] = {c.name: c for c in (TREC, LLAMAINDEX, HAYSTACK, AUTORAG, CHROMA)}


GET_CONVENTION = declare("get_convention", {
    "value": data("a preset's name (trec, llamaindex, haystack, autorag, chroma; any case), "
                  "a Convention, or None (trec): checked here, a misspelling naming the closest"),
})  # fmt: skip


@GET_CONVENTION.checks
def get_convention(value: str | Convention | None) -> Convention:
    """A :class:`Convention` from a preset name (``trec``, ``llamaindex``, ``haystack``,
    ``autorag``, ``chroma``) or itself."""
    if value is None:
        return TREC
    if isinstance(value, Convention):
        return value
    if not isinstance(value, str):
        raise InputError(
            f"convention must be a preset name ({', '.join(PRESETS)}) or a Convention, "
            f"got {type(value).__name__}"
        )
    conv = PRESETS.get(value.lower())
    if conv is None:
        near = closest(value.lower(), PRESETS)
        hint = f"; did you mean {near!r}?" if near else ""
        raise InputError(f"unknown convention {value!r}{hint}; presets: {', '.join(PRESETS)}")
    return conv


_SWITCH_HELP = {
    "ordering": "ranking order",
    "duplicates": "a document twice in one list",
    "precision_denominator": "precision divides by",
    "unit_average": "RR and AP averaged over ground-truth groups",
    "gain": "nDCG gain",
    "ideal": "nDCG ideal ranking",
    "gain_level": "only grades >= the relevance level earn nDCG gain",
    "negative_gain": "negative grades as negative gain",
    "no_relevant": "query without relevant documents",
    "missing": "labelled query absent from the run",
    "evidence_total": "span labels: evidence counted as the union or the summed spans",
    "omega_chunks": "span labels: chunks precision-Ω reads",
    "placement": "span labels: a chunk's text found in several places",
}


def conventions_table(presets: dict[str, Convention] | None = None) -> str:
    """The presets side by side as a Markdown table, generated from the switches (the docs'
    table is this function's output; a test keeps them equal)."""
    presets = presets or PRESETS
    names = list(presets)
    lines = ["| switch | meaning | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for key, meaning in _SWITCH_HELP.items():
        cells = [str(getattr(presets[n], key)) for n in names]
        lines.append(f"| `{key}` | {meaning} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
