"""Label repair: evidence spans relocated in a new version of their documents.

When documents change (re-ingestion, edits), the character offsets of span labels go
stale. :func:`reanchor` finds each span again by its old text and the text around it, in
five steps, the first that answers deciding:

1. **unchanged**: the old text still stands at the old offsets, and nowhere else with
   context that fits better;
2. **moved**: the exact old text stands elsewhere; of several places, the one whose
   surroundings agree best with the old ones (longest common suffix of the context before
   plus longest common prefix of the context after, ``context`` characters each, both
   normalised);
3. **normalised**: found once both texts are normalised (NFKD, case folded, whitespace
   runs as one space: :func:`~ranklens.model.anchors.locate_normalised`), offsets mapped
   back. Normalised places also compete with exact ones whenever no exact place keeps its
   whole context (the text re-spaced where it went, copied unchanged elsewhere); of equal
   contexts the exact place wins;
4. **fuzzy**: the closest substring by edit distance of the normalised forms
   (:func:`~ranklens.model.anchors.locate_fuzzy`) within ``window`` characters around
   where the span is expected, with quality ``1 − d / max(|old|, |match|)`` at least
   ``min_quality``;
5. **lost**: none of these, or its document is gone from the corpus.

Several places that are equally good at the step that finds the text make the span
**ambiguous**: it is reported with every place counted and left out of the new labels,
unless ``ambiguous="nearest"`` or ``"first"`` says how to pick. A span whose old text is
not known (labels without texts, no ``old_corpus``, records without ``text``) cannot be
checked beyond its offsets: **unverified** when they fit in the new document, else lost.
Nothing changes silently: every span has a row in :class:`~.reanchored.Reanchored` saying
where it was, where it is, how it was found and whether the new labels keep it.

This is judging's business for the reason span matching is: it looks documents' texts up
by id and places pieces of text in them, below every metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..declared import AT_LEAST_ONE, NONNEGATIVE, Range, choice, count, data, declare, flag, number
from ..errors import InputError
from ..model import Dataset
from ..model.anchors import EXACT, locate, locate_fuzzy, locate_normalised, normalised
from ..model.spans import SpanLabels
from ..text import clip
from .reanchored import STATUSES, Reanchored

KEEP = ("exact", "fuzzy")
AMBIGUOUS = ("report", "nearest", "first")


REANCHOR = declare("reanchor", {
    "labels": data("SpanLabels or span records with their old text"),
    "new_corpus": data("the documents' new texts"),
    "old_corpus": data("the documents' old texts (default: the labels' texts)"),
    "min_quality": number(0.9, Range(0, 1, "right"), "least quality of a fuzzy match"),
    "keep": choice("fuzzy", KEEP, "which relocated spans the new labels keep"),
    "ambiguous": choice("report", AMBIGUOUS, "a span equally good in several places"),
    "strict": flag(False, "raise when any span is left out"),
    "context": count(64, NONNEGATIVE, "characters of context on each side"),
    "window": count(20_000, AT_LEAST_ONE, "characters the fuzzy step searches around"),
})  # fmt: skip


@dataclass(frozen=True)
class Placed:
    """Where one span went: ``status`` (see :data:`~.reanchored.STATUSES`), the new
    ``start``/``end`` (None when nowhere), ``quality`` (1 exact or normalised, the fuzzy
    match's, or the best candidate's when lost), ``candidates`` (places found at the
    deciding step) and a ``note``."""

    status: str
    start: int | None = None
    end: int | None = None
    quality: float | None = 1.0
    candidates: int = 1
    note: str = ""


def corpus_texts(corpus: Any, what: str = "corpus") -> dict[str, str]:
    """``{doc_id: text}`` from a :class:`~ranklens.Dataset` (its documents' ``text``
    field), ``{id: text}``, ``{id: {"text": ...}}``, or a path :func:`ranklens.read_dataset`
    reads (a BEIR folder, or a ``corpus.jsonl`` of ``{"_id"/"doc_id", "text"}`` lines)."""
    if isinstance(corpus, (str, Path)):
        corpus = _read_corpus(Path(corpus), what)
    if isinstance(corpus, Dataset):
        if corpus.corpus is None:
            raise InputError(f"{what}: dataset {corpus.name!r} has no corpus (documents' texts)")
        corpus = corpus.corpus
    if not isinstance(corpus, Mapping):
        raise InputError(
            f"{what} must be a Dataset, {{doc_id: text}}, {{doc_id: {{'text': ...}}}} or a "
            f"path, got {type(corpus).__name__}"
        )
    out: dict[str, str] = {}
    for doc, value in corpus.items():
        text = value.get("text") if isinstance(value, Mapping) else value
        if not isinstance(text, str):
            raise InputError(f"{what}: the text of document {doc!r} must be a string, got "
                             f"{clip(repr(text), 60)}")  # fmt: skip
        out[str(doc)] = text
    return out


def _read_corpus(path: Path, what: str) -> Any:
    from ..io import read_dataset
    from ..io.beir import read_corpus

    if not path.exists():
        raise InputError(f"{what}: {path} does not exist")
    if path.is_dir():
        return read_dataset(path)
    if path.suffix.lower() == ".jsonl":
        from ..io.records import json_records

        docs: dict[str, str] = {}
        for lineno, rec in json_records(path):
            doc = rec.get("_id", rec.get("doc_id"))
            if doc is None or not isinstance(rec.get("text"), str):
                raise InputError(
                    f"{path}:{lineno}: a document needs '_id' (or 'doc_id') and a 'text' string"
                )
            if str(doc) in docs:
                raise InputError(f"{path}:{lineno}: document {doc!r} appears twice")
            docs[str(doc)] = rec["text"]
        return docs
    return read_corpus(path)


@REANCHOR.checks
def reanchor(
    labels: SpanLabels | Iterable[Mapping[str, Any]],
    new_corpus: Any,
    *,
    old_corpus: Any = None,
    min_quality: float = 0.9,
    keep: str = "fuzzy",
    ambiguous: str = "report",
    strict: bool = False,
    context: int = 64,
    window: int = 20_000,
) -> Reanchored:
    """Relocate every evidence span of ``labels`` in ``new_corpus`` (see the module
    docstring for the five steps) and return the new labels with a row per span.

    ``labels``: :class:`~ranklens.SpanLabels` (their ``texts`` are the old documents) or
    span records ``{"query_id", "doc_id", "start", "end", "grade", "group", "text"}``
    (``text``: the quoted evidence, as :meth:`SpanLabels.span_records` writes it).
    ``new_corpus`` / ``old_corpus``: a :class:`~ranklens.Dataset`, ``{doc_id: text}``,
    ``{doc_id: {"text": ...}}`` or a path; ``old_corpus`` (default: the labels' texts)
    gives each span its old text and context.
    ``min_quality``: the least quality of a fuzzy match (below it the span is lost).
    ``keep``: ``"fuzzy"`` keeps fuzzy matches in the new labels, ``"exact"`` keeps only
    spans found exactly or normalised (fuzzy ones are then reported and left out).
    ``ambiguous``: ``"report"`` leaves an ambiguous span out; ``"nearest"`` takes the place
    nearest where it was expected, ``"first"`` the first place (the row says so either way).
    ``strict``: raise :class:`~ranklens.InputError` when any span is left out.
    ``context``: characters of context on each side; ``window``: characters searched
    around the expected place by the fuzzy step (a bound on its O(|span| · window) cost).
    """
    rows, empty, old_texts = _spans(labels)
    if old_corpus is not None:
        old_texts = corpus_texts(old_corpus, "old corpus")
    new_texts = corpus_texts(new_corpus, "new corpus")
    opts: RelocateOptions = {"min_quality": float(min_quality), "ambiguous": ambiguous,
                             "context": int(context), "window": int(window)}  # fmt: skip
    placed = []
    for i, r in enumerate(rows):
        old_doc = old_texts.get(r["doc_id"]) if old_texts is not None else None
        text, before, after = _old_text(r, old_doc, i)
        new_doc = new_texts.get(r["doc_id"])
        if new_doc is None:
            placed.append(Placed("lost", quality=None, candidates=0,
                                 note="document removed from the corpus"))  # fmt: skip
        elif text is None:
            missing = old_texts is not None and r["doc_id"] not in old_texts
            placed.append(_unverified(r, new_doc, "not in the old corpus" if missing else ""))
        elif old_doc is not None and old_doc == new_doc:
            placed.append(Placed("unchanged", r["start"], r["end"]))
        else:
            placed.append(relocate(text, before, after, r["start"], old_doc, new_doc, **opts))
    return Reanchored.build(rows, placed, empty, new_texts, keep=keep, strict=strict,
                            settings={**opts, "keep": keep, "strict": strict})  # fmt: skip


REANCHOR.target = reanchor  # the public callable, checked


def _unverified(r: dict[str, Any], new_doc: str, why: str) -> Placed:
    """A span without its old text: kept as it is when its offsets fit the new document."""
    if r["end"] <= len(new_doc):
        note = "no old text to check" + (f" (its document is {why})" if why else "")
        return Placed("unverified", r["start"], r["end"], None, 1, note)
    return Placed("lost", None, None, None, 0, f"ends past its {len(new_doc)} characters")


def _spans(labels: Any) -> tuple[list[dict[str, Any]], list[str], dict[str, str] | None]:
    """The spans as records, the labels' queries without any, and the old texts."""
    if isinstance(labels, SpanLabels):
        rows = labels.span_records()
        have = {r["query_id"] for r in rows}
        empty = [q for q in map(str, labels.query_ids) if q not in have]
        return rows, empty, dict(labels.texts) if labels.texts is not None else None
    if isinstance(labels, (str, bytes, Mapping)) or not isinstance(labels, Iterable):
        raise InputError(
            "reanchor takes SpanLabels or span records {'query_id', 'doc_id', 'start', 'end', "
            f"'grade', 'group', 'text'}}, got {type(labels).__name__}"
        )
    rows = []
    for i, rec in enumerate(labels):
        if not isinstance(rec, Mapping):
            raise InputError(f"span {i}: expected a mapping, got {type(rec).__name__}")
        for key in ("query_id", "doc_id", "start", "end"):
            if rec.get(key) is None:
                raise InputError(f"span {i}: {key!r} is missing")
        start, end = rec["start"], rec["end"]
        if not (_integer(start) and _integer(end)) or not 0 <= int(start) < int(end):
            raise InputError(f"span {i} (query {rec['query_id']!r}): start {start!r} and end "
                             f"{end!r} must be integers with 0 <= start < end")  # fmt: skip
        if not _integer(rec.get("grade", 1)):
            raise InputError(f"span {i} (query {rec['query_id']!r}): 'grade' must be an "
                             f"integer, got {clip(repr(rec.get('grade')), 40)}")  # fmt: skip
        text = rec.get("text")
        if text is not None and (not isinstance(text, str) or len(text) != int(end) - int(start)):
            raise InputError(f"span {i} (query {rec['query_id']!r}): its 'text' must be the "
                             f"{int(end) - int(start)} characters from start to end")  # fmt: skip
        rows.append({"query_id": str(rec["query_id"]), "doc_id": str(rec["doc_id"]),
                     "start": int(start), "end": int(end), "grade": int(rec.get("grade", 1)),
                     "group": rec.get("group"), "text": text})  # fmt: skip
    return rows, [], None


def _integer(x: Any) -> bool:
    return (isinstance(x, int) and not isinstance(x, bool)) or (
        isinstance(x, float) and x.is_integer()
    )


def _old_text(r: dict[str, Any], old_doc: str | None, i: int) -> tuple[str | None, str, str]:
    """The span's old text and ``context`` before and after it (empty when unknown)."""
    quoted = r.get("text")
    if old_doc is None:
        return quoted, "", ""
    s, e = r["start"], r["end"]
    if e > len(old_doc):
        raise InputError(
            f"span {i} (query {r['query_id']!r}): [{s}, {e}) ends past the "
            f"{len(old_doc)} characters of document {r['doc_id']!r} in the old corpus: is it "
            "the version the labels were made on?"
        )
    text = old_doc[s:e]
    if quoted is not None and quoted != text:
        raise InputError(
            f"span {i} (query {r['query_id']!r}): its text {clip(quoted, 40)!r} is not what "
            f"the old corpus holds at [{s}, {e}) of {r['doc_id']!r} ({clip(text, 40)!r}): "
            "is it the version the labels were made on?"
        )
    return text, old_doc[max(0, s - 256) : s], old_doc[e : e + 256]


def _common(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def context_score(before: str, after: str, doc: str, a: int, b: int, n: int, norm: bool) -> int:
    """How well the surroundings of ``doc[a:b]`` agree with the old ones: the common suffix
    of the ``n`` characters ``before`` plus the common prefix of the ``n`` ``after`` (both
    normalised first with ``norm``)."""
    left, right = before[len(before) - n :] if n else "", after[:n]
    here_l, here_r = doc[max(0, a - n) : a], doc[b : b + n]
    if norm:
        left, right, here_l, here_r = (normalised(x)[0] for x in (left, right, here_l, here_r))
    return _common(left[::-1], here_l[::-1]) + _common(right, here_r)


def expected_start(before: str, after: str, old_start: int, length: int,
                   old_doc: str | None, new_doc: str) -> int:  # fmt: skip
    """Where the span should start in ``new_doc``: after the last 32 characters of its old
    context before when they stand once, else before the first 32 after, else the old
    offset scaled by the documents' lengths."""
    tail, head = before[-32:], after[:32]
    if len(tail) >= 8 and new_doc.count(tail) == 1:
        return new_doc.find(tail) + len(tail)
    if len(head) >= 8 and new_doc.count(head) == 1:
        return max(0, new_doc.find(head) - length)
    if old_doc:
        return round(old_start * len(new_doc) / max(1, len(old_doc)))
    return old_start


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _padded(text: str, doc: str, a: int, b: int) -> tuple[int, int]:
    """``[a, b)`` widened over the whitespace beside it where ``text`` begins or ends with
    whitespace (normalised matches are found without it)."""
    if text[:1].isspace():
        while a > 0 and doc[a - 1].isspace():
            a -= 1
    if text[-1:].isspace():
        while b < len(doc) and doc[b].isspace():
            b += 1
    return a, b


class RelocateOptions(TypedDict):
    """The keywords of :func:`relocate` that :func:`reanchor` passes to every span."""

    min_quality: float
    ambiguous: str
    context: int
    window: int


def relocate(text: str, before: str, after: str, old_start: int, old_doc: str | None,
             new_doc: str, *, min_quality: float = 0.9, ambiguous: str = "report",
             context: int = 64, window: int = 20_000) -> Placed:  # fmt: skip
    """Where one span's ``text`` stands in ``new_doc`` (the steps of the module docstring),
    given its old context and offset."""
    n = len(text)
    old = (old_start, old_start + n)
    if new_doc.startswith(text, old_start) and (
        context_score(before, after, new_doc, *old, context, False)
        == min(context, len(before)) + min(context, len(after))
    ):
        return Placed("unchanged", *old)
    found = locate(text, new_doc)
    quality, edits = 1.0, ""
    places = [(a, b, "moved" if found.how == EXACT else "normalised")
              for a, b in zip(found.starts, found.ends)]  # fmt: skip
    if found.how == EXACT and not _fits(before, after, new_doc, places, context):
        # the text may also stand, re-spaced or re-cased, where it truly went
        again = locate_normalised(text, new_doc)
        places += [(a, b, "normalised") for a, b in zip(again.starts, again.ends)
                   if not any(x <= a and b <= y for x, y, _ in places)]  # fmt: skip
    if not places:
        want = expected_start(before, after, old_start, n, old_doc, new_doc)
        lo, hi = max(0, want - window // 2), want + n + window // 2
        near = locate_fuzzy(text, new_doc, lo, hi, min_quality)
        if not near.starts:
            return Placed("lost", None, None, None, 0, f"every place needs {near.distance} "
                          f"edits or more (quality < {min_quality})")  # fmt: skip
        if near.best < min_quality:
            where = f"[{near.starts[0]}, {near.ends[0]})"
            return Placed("lost", None, None, near.best, 0, f"best match quality "
                          f"{near.best:.3f} at {where} < {min_quality}")  # fmt: skip
        places = [(a, b, "fuzzy") for a, b in zip(near.starts, near.ends)]
        quality, edits = near.best, f"{near.distance} edit{'s' * (near.distance != 1)}"
    # a normalised match leaves out the text's own leading or trailing whitespace
    places = [p if p[2] == "moved" else (*_padded(text, new_doc, p[0], p[1]), p[2])
              for p in places]  # fmt: skip
    if len(places) == 1:
        return _placed(places[0], old, quality, 1, edits)
    # contexts compared normalised, so that whitespace or case edited around a place cannot
    # make another place look better; of equal contexts an exact match beats a normalised one
    keys = [(context_score(before, after, new_doc, a, b, context, True), kind == "moved")
            for a, b, kind in places]  # fmt: skip
    top = max(keys)
    best = [p for p, k in zip(places, keys) if k == top]
    if len(best) == 1 or (*old, "moved") in best:
        chosen = best[0] if len(best) == 1 else (*old, "moved")
        note = _join(edits, f"stands {len(places)} times; chosen by its context")
        return _placed(chosen, old, quality, len(places), note)
    where = ", ".join(f"[{a}, {b})" for a, b, _ in best[:4]) + (" ..." if len(best) > 4 else "")
    if ambiguous == "report":
        return Placed("ambiguous", None, None, quality, len(best),
                      f"{len(best)} places fit equally: {where}")  # fmt: skip
    if ambiguous == "nearest":
        want = expected_start(before, after, old_start, n, old_doc, new_doc)
        a, b, _ = min(best, key=lambda p: (abs(p[0] - want), p[0]))
    else:
        a, b, _ = best[0]
    return Placed("ambiguous", a, b, quality, len(best),
                  f"{len(best)} places fit equally ({where}); the {ambiguous} taken")  # fmt: skip


def _placed(place: tuple[int, int, str], old: tuple[int, int], quality: float,
            candidates: int, note: str) -> Placed:  # fmt: skip
    a, b, kind = place
    status = "unchanged" if kind == "moved" and (a, b) == old else kind
    return Placed(status, a, b, quality, candidates, note)


def _fits(before: str, after: str, doc: str, places: list[tuple[int, int, str]], n: int) -> bool:
    """Whether the context around one of ``places`` agrees with the old one all along
    (normalised): no other place can then fit better."""
    full = len(normalised(before[len(before) - n :] if n else "")[0]) + len(
        normalised(after[:n])[0]
    )
    return any(context_score(before, after, doc, a, b, n, True) >= full for a, b, _ in places)


__all__ = ["STATUSES", "Placed", "Reanchored", "corpus_texts", "reanchor", "relocate"]
