"""``ranklens.check_dataset``: leakage and label-quality checks of a labelled set, one
report, each finding naming its queries.

* ``query_in_relevant``: the query's text is contained in a passage it labels relevant
  (containment of its word bigrams ≥ ``containment``; ``exact`` when the normalised query
  is a substring): a lexical retriever finds it by construction, the flaw of generated
  questions that copy their passage.
* ``query_in_corpus``: contained in a passage it does *not* label: a leak, or a missing
  label (the passage may answer it).
* ``duplicate_queries``: two queries equal after normalisation, or near-equal (Jaccard of
  word sets ≥ ``near``): one counts twice in every mean.
* ``cross_split``: a query equal or near-equal to one of another split (``against``):
  train/test contamination.
* ``missing_documents``: labels pointing at documents the corpus does not hold (they can
  never be retrieved).
* ``no_relevant``: queries with labels, none at or above ``relevance_level``: every
  metric is 0 for them whatever the retriever does.

Queries with no label at all are *unlabelled*, not a finding: a BEIR folder's
``queries.jsonl`` holds every split's queries and a split's qrels label some of them, so
the reader keeps the rest; no evaluation counts them. They are counted once
(``checked["unlabelled"]``), said once, and left out of every check (a split is checked
against another split's labelled queries only, for the same reason).

The findings are kept on the dataset (``dataset.info["checks"]``), and every evaluation of
that :class:`~ranklens.Dataset` object (evaluate, compare, gate, the runner's results)
warns with them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..declared import ParameterError, Range, count, data, declare, flag, mapping, number, shown
from ..errors import InputError
from ..model import Dataset
from .corpus import documents
from .text import best_containment, containment_pairs, near_duplicates, normalise

KINDS = (
    "query_in_relevant",
    "query_in_corpus",
    "duplicate_queries",
    "cross_split",
    "missing_documents",
    "no_relevant",
)


@dataclass
class Finding:
    """One kind of problem: ``kind`` (see :data:`KINDS`), ``message`` (one line),
    ``queries`` (every query it concerns) and per query what was found (``details``)."""

    kind: str
    message: str
    queries: list[str]
    details: dict[str, Any] = field(default_factory=dict)

    def line(self, shown: int = 5) -> str:
        more = f" (+{len(self.queries) - shown} more)" if len(self.queries) > shown else ""
        return f"{self.message}: {', '.join(self.queries[:shown])}{more}"

    def to_dict(self) -> dict[str, Any]:
        """``{"kind", "message", "queries", "details"}``: the finding as plain data."""
        return asdict(self)


@dataclass
class DatasetCheck:
    """The checks of one dataset: ``findings`` (empty when clean) and ``checked`` (what
    could be checked: queries, documents, splits; the checks skipped and why)."""

    dataset: str
    findings: list[Finding]
    checked: dict[str, Any]

    @property
    def ok(self) -> bool:
        return not self.findings

    def __getitem__(self, kind: str) -> Finding | None:
        return next((f for f in self.findings if f.kind == kind), None)

    def lines(self) -> list[str]:
        """One line per finding."""
        return [f.line() for f in self.findings]

    def __str__(self) -> str:
        c = self.checked
        unlabelled = c.get("unlabelled", 0)
        head = (
            f"Checked {self.dataset!r}: {c['queries']} labelled queries, "
            + (f"{c['documents']} documents" if c.get("documents") is not None else "no corpus")
            + (f", against {', '.join(c['against'])}" if c.get("against") else "")
            + "."
            + (
                f" {unlabelled} queries have no label at all (unlabelled: not evaluated, "
                "not checked)."
                if unlabelled
                else ""
            )
        )
        skipped = [f"  (skipped: {s})" for s in c.get("skipped", [])]
        if not self.findings:
            return "\n".join([head, "  no findings", *skipped])
        return "\n".join([head, *(f"  - {x}" for x in self.lines()), *skipped])

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "checked": self.checked,
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_pandas(self) -> Any:
        """One row per (finding, query): ``kind``, ``query`` and what was found there
        (``details``: the document, the containment, the query it repeats, ...)."""
        import pandas as pd

        return pd.DataFrame(
            [
                {"kind": f.kind, "query": q, "details": f.details.get(q)}
                for f in self.findings
                for q in f.queries
            ],
            columns=["kind", "query", "details"],
        )

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)


_SHARE = Range(0, 1, "right")
CHECK_DATASET = declare(
    "check_dataset",
    {
        "dataset": data("a Dataset or a path read_dataset reads"),
        "corpus": data("the documents (None: the dataset's own)"),
        "against": mapping(
            None,
            "other splits, {name: Dataset | {id: text} | path}",
            none=True,
            empty=True,
        ),
        "containment": number(
            0.8, _SHARE, "share of a query's word bigrams in a passage that counts as contained"
        ),
        "near": number(0.9, _SHARE, "word-set Jaccard from which two queries are near-equal"),
        "relevance_level": count(1, None, "the grade from which a label counts as relevant"),
        "attach": flag(True, "keep the findings on the dataset, so its evaluations warn"),
    },
)


@CHECK_DATASET.checks
def check_dataset(
    dataset: Any,
    corpus: Any = None,
    *,
    against: Mapping[str, Any] | None = None,
    containment: float = 0.8,
    near: float = 0.9,
    relevance_level: int = 1,
    attach: bool = True,
) -> DatasetCheck:
    """Check ``dataset`` (a :class:`~ranklens.Dataset` or a path :func:`ranklens.read_dataset`
    reads) for leakage and label defects (see the module docstring). ``corpus``: the
    documents (default: the dataset's own; without one the text checks are skipped and
    said so). ``against``: other splits, ``{name: Dataset | {id: text} | path}``.
    ``attach``: keep the findings on the dataset, so its evaluations warn with them.
    Queries with no label at all are counted as unlabelled and left out of every check
    (see the module docstring); a query whose text is not a text is an error naming it.
    """
    if isinstance(dataset, (str, Path)):
        from ..io import read_dataset

        dataset = read_dataset(dataset)
    if not isinstance(dataset, Dataset):
        raise InputError(f"check_dataset takes a Dataset or a path, got {type(dataset).__name__}")
    docs = (
        documents(corpus)
        if corpus is not None
        else (documents(dataset) if dataset.corpus is not None else None)
    )
    labels = dataset.qrels.to_dict()
    every = list(dataset.queries)
    qids = [q for q in every if q in labels]
    texts = _texts(dataset.queries, qids, "dataset")
    findings: list[Finding] = []
    skipped: list[str] = []
    rel = {q: [d for d, g in labels.get(q, {}).items() if g >= relevance_level] for q in qids}
    none = [q for q in qids if not rel[q]]
    if none:
        findings.append(
            Finding(
                "no_relevant",
                f"{len(none)} queries have no relevant label "
                f"(grade >= {relevance_level}): every metric is 0 for them",
                none,
            )
        )
    if docs is None:
        skipped.append("no corpus: leakage into passages and missing documents not checked")
    else:
        findings += _corpus_findings(qids, texts, rel, labels, docs, containment)
    findings += _duplicate_findings(qids, texts, near)
    for name, other in (against or {}).items():
        f = _cross_split(name, other, qids, texts, near)
        if f is not None:
            findings.append(f)
    checked = {
        "queries": len(qids),
        "unlabelled": len(every) - len(qids),
        "documents": None if docs is None else len(docs),
        "against": list(against or {}),
        "containment": containment,
        "near": near,
        "skipped": skipped,
    }
    order = {k: i for i, k in enumerate(KINDS)}
    findings.sort(key=lambda f: order[f.kind])
    result = DatasetCheck(dataset.name, findings, checked)
    if attach:
        dataset.info = {**dataset.info, "checks": result.lines()}
    return result


def _corpus_findings(
    qids: list[str],
    texts: list[str],
    rel: Mapping[str, list[str]],
    labels: Mapping[str, Mapping[str, Any]],
    docs: Mapping[str, Mapping[str, Any]],
    threshold: float,
) -> list[Finding]:
    out: list[Finding] = []
    missing = {q: sorted(d for d in labels.get(q, {}) if d not in docs) for q in qids}
    missing = {q: m for q, m in missing.items() if m}
    if missing:
        n = sum(len(m) for m in missing.values())
        out.append(
            Finding(
                "missing_documents",
                f"{n} labels in {len(missing)} queries point at documents the corpus does not hold",
                list(missing),
                missing,
            )
        )
    pairs = [(i, d) for i, q in enumerate(qids) for d in rel[q] if d in docs]
    scores = containment_pairs([texts[i] for i, _ in pairs], [docs[d]["text"] for _, d in pairs])
    inside: dict[str, dict[str, Any]] = {}
    for (i, d), s in zip(pairs, scores):
        exact = normalise(texts[i]) in normalise(docs[d]["text"])
        if (s >= threshold or exact) and s >= inside.get(qids[i], {}).get("containment", -1):
            inside[qids[i]] = {"doc": d, "containment": round(float(s), 4), "exact": exact}
    if inside:
        n_exact = sum(v["exact"] for v in inside.values())
        out.append(
            Finding(
                "query_in_relevant",
                f"{len(inside)} queries are contained in a "
                f"passage they label relevant ({n_exact} exactly, the rest with >= "
                f"{threshold:.0%} of their word bigrams): a lexical retriever finds "
                "them by construction",
                list(inside),
                inside,
            )
        )
    ids = list(docs)
    index = {d: i for i, d in enumerate(ids)}
    exclude = [{index[d] for d in labels.get(q, {}) if d in index} for q in qids]
    best, where = best_containment(texts, [docs[d]["text"] for d in ids], exclude=exclude)
    leak = {
        qids[i]: {"doc": ids[where[i]], "containment": round(float(best[i]), 4)}
        for i in range(len(qids))
        if where[i] >= 0 and best[i] >= threshold
    }
    if leak:
        out.append(
            Finding(
                "query_in_corpus",
                f"{len(leak)} queries are contained in a passage "
                "they do not label (a leak, or a missing label)",
                list(leak),
                leak,
            )
        )
    return out


def _duplicate_findings(qids: list[str], texts: list[str], near: float) -> list[Finding]:
    first: dict[str, str] = {}
    same: dict[str, str] = {}
    for q, t in zip(qids, texts):
        key = normalise(t)
        if key in first:
            same[q] = first[key]
        else:
            first[key] = q
    close = {
        qids[j]: qids[i]
        for i, j in near_duplicates(texts, near)
        if qids[j] not in same and qids[i] not in same
    }
    details = {q: {"same_as": o, "exact": True} for q, o in same.items()}
    details.update({q: {"same_as": o, "exact": False} for q, o in close.items()})
    if not details:
        return []
    return [
        Finding(
            "duplicate_queries",
            f"{len(same)} queries repeat another exactly and "
            f"{len(close)} nearly (Jaccard >= {near})",
            list(details),
            details,
        )
    ]


def _cross_split(
    name: str, other: Any, qids: list[str], texts: list[str], near: float
) -> Finding | None:
    if isinstance(other, (str, Path)):
        from ..io import read_dataset

        other = read_dataset(other)
    queries = other.queries if isinstance(other, Dataset) else other
    if not isinstance(queries, Mapping):
        raise ParameterError(
            f"check_dataset: against[{name!r}] must be a Dataset, {{id: text}} or a path, got "
            f"{shown(other)}"
        )
    oids = list(queries)
    if isinstance(other, Dataset):  # its labelled queries: the split it is
        held = other.qrels.to_dict()
        oids = [q for q in oids if q in held]
    otexts = _texts(queries, oids, f"against[{name!r}]")
    seen = {normalise(t): q for q, t in zip(oids, otexts)}
    hits = {
        q: {"split": name, "same_as": seen[normalise(t)], "exact": True}
        for q, t in zip(qids, texts)
        if normalise(t) in seen
    }
    both = texts + otexts
    for i, j in near_duplicates(both, near):
        if i < len(texts) <= j and qids[i] not in hits:
            hits[qids[i]] = {"split": name, "same_as": oids[j - len(texts)], "exact": False}
    if not hits:
        return None
    return Finding(
        "cross_split",
        f"{len(hits)} queries also appear (equal or near-equal) in "
        f"split {name!r}: train/test contamination",
        list(hits),
        hits,
    )


def _texts(queries: Mapping[Any, Any], ids: list[Any], where: str) -> list[str]:
    """The texts of ``ids``; a query whose text is not a text is an error naming it."""
    out = []
    for q in ids:
        t = queries[q]
        if not isinstance(t, str):
            raise InputError(f"check_dataset: {where} query {q!r} must have a text, got {shown(t)}")
        out.append(t)
    return out
