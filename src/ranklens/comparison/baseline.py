"""Gate baselines: the fingerprint of a labelled set a baseline report records (for span
labels, each span's place and evidence text), the check that names what changed, and the
relevant documents each query found in the top k (for span labels, the evidence spans:
:func:`.evidence.found_evidence`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InputError
from ..model import Qrels, Run
from ..model.spans import SpanLabels
from .report import Report


def fingerprint(
    qrels: Qrels, report: Report, judged: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What a baseline must share with a gated run: hashes of the query ids and of the
    labels, the metric names and the judging options; with ``judged`` (the judging
    keywords), hashes of the document versions table and the as-of times, which change
    what is outdated without changing a label."""
    judged = judged or {}
    versions, as_of = judged.get("versions"), judged.get("as_of")
    extra: dict[str, Any] = {}
    if versions is not None and hasattr(versions, "digest"):
        extra["versions"] = versions.digest()
    if as_of is not None:
        items = sorted((str(k), str(v)) for k, v in as_of.items()) if isinstance(
            as_of, Mapping) else [("*", str(as_of))]  # fmt: skip
        extra["as_of"] = _digest([f"{k}\t{v}" for k, v in items])
    spans = isinstance(qrels, SpanLabels)
    if spans:  # each span's place and, when the texts are known, its evidence text
        rows = sorted(
            f"{r['query_id']}\t{r['group']}\t{r['doc_id']}\t{r['start']}\t{r['end']}\t"
            f"{r['grade']}\t{_digest([r['text']]) if 'text' in r else ''}"
            for r in qrels.span_records()  # type: ignore[attr-defined]
        )
    else:
        grades = qrels.group_grades()  # once: it walks every label
        rows = sorted(
            f"{q}\t{u}\t{d}\t{g}"
            for q, groups in qrels.to_groups().items()
            for u, (docs, g) in enumerate(zip(groups, grades[q]))
            for d in docs
        )
    return {
        "queries": _digest(sorted(report.query_ids)),
        "n_queries": len(report.query_ids),
        "labels": _digest(rows),
        **({"spans": True} if spans else {}),
        "metrics": list(report.metrics),
        "options": {"convention": report.metadata.get("convention"), **_opts(report)},
        **extra,
    }


def _opts(report: Report) -> dict[str, Any]:
    o = dict(report.metadata.get("options") or {})
    return {k: o[k] for k in sorted(o)}


def _with_new_switches(options: Any) -> Any:
    """A baseline's judging options with the convention switches added since it was saved
    at their defaults (the behaviour every convention had before the switch existed), so a
    baseline written by an earlier release still gates on an unchanged set."""
    if not isinstance(options, Mapping) or not isinstance(options.get("switches"), Mapping):
        return options
    from dataclasses import MISSING, fields

    from ..judging.conventions import Convention

    defaults = {f.name: f.default for f in fields(Convention) if f.default is not MISSING}
    switches = dict(options["switches"])
    for name, value in defaults.items():
        if name != "name" and name not in switches and name in _NEW_SWITCHES:
            switches[name] = value
    return {**options, "switches": switches}


_NEW_SWITCHES = ("evidence_total", "omega_chunks", "placement")
"""Switches added after baselines were first written (each defaults to the old behaviour)."""


def _digest(lines: Sequence[str]) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()[:16]


def check_fingerprint(
    saved: Mapping[str, Any], now: Mapping[str, Any], base: Report, report: Report, path: str
) -> None:
    """An error naming everything that differs between the baseline's labelled set and
    this one (queries added or removed, labels, metrics, options)."""
    changes = []
    if saved.get("queries") != now["queries"]:
        before, after = set(base.query_ids), set(report.query_ids)
        added, removed = sorted(after - before), sorted(before - after)
        changes.append(
            f"queries: {len(added)} added{_eg(added)}, {len(removed)} removed{_eg(removed)}"
        )
    if saved.get("spans") != now.get("spans"):
        changes.append(
            "the labels are evidence spans " + ("now" if now.get("spans") else "in the baseline")
            + ", documents " + ("in the baseline" if now.get("spans") else "now")
        )  # fmt: skip
    elif saved.get("labels") != now["labels"]:
        changes.append(
            "the labels (evidence spans: one moved, was added or removed, or its text changed)"
            " differ"
            if now.get("spans")
            else "the labels (qrels) differ"
        )
    for key, what in (("versions", "the document versions table"), ("as_of", "the as-of time")):
        if saved.get(key) != now.get(key):
            where = "baseline" if saved.get(key) is not None else "run"
            changes.append(
                f"{what} differs" if saved.get(key) is not None and now.get(key) is not None
                else f"{what} is given for the {where} only"
            )  # fmt: skip
    if _with_new_switches(saved.get("options")) != now["options"]:
        changes.append(f"options: baseline {saved.get('options')}, now {now['options']}")
    if changes:
        raise InputError(
            f"{path}: the baseline was made on a different labelled set ("
            + "; ".join(changes)
            + "); gate on the same set, or rewrite the baseline with --update-baseline"
        )
    missing = [m for m in now["metrics"] if m not in set(saved.get("metrics") or [])]
    if missing:
        raise InputError(
            f"{path}: the baseline has no values of {', '.join(missing)} (it holds "
            f"{', '.join(saved.get('metrics') or []) or 'no metric'}); gate on those, or add "
            "the metric to the baseline with --update-baseline"
        )


def _eg(ids: list[str]) -> str:
    return f" (e.g. {', '.join(repr(i) for i in ids[:3])})" if ids else ""


def found_relevant(qrels: Qrels, run: Run, k: int, level: int = 1) -> dict[str, list[str]]:
    """Per query, the relevant documents (grade >= ``level``) in the run's top ``k``."""
    labels = qrels.to_dict()
    top = run.top(k).to_dict()
    return {q: sorted(d for d in top.get(q, {}) if labels[q].get(d, 0) >= level) for q in labels}
