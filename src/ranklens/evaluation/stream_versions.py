"""Document versions on the streamed path (``versions=``, ``as_of=``, ``freshness=``):
what :mod:`.stream_plan` does once, and what each chunk passes to judging.

Judging with versions (:mod:`ranklens.judging.freshness`) is per query once the labels
carry to versions, so a chunk of queries is judged on its own as ``evaluate`` judges the
whole run. The plan

* checks what ``evaluate`` checks (a :class:`~ranklens.Versions` table; plain labels, not
  grouped or span ones; an ``as_of`` naming no query the labels lack);
* carries the labels to versions once, over all the labels, so every chunk slices carried
  labels (carrying them again adds none) and ``labels_carried`` counts every labelled
  query, those absent from the run or left out included, as ``evaluate`` counts it;
* holds the table once, its ids looked up in a dictionary built once
  (:class:`IndexedVersions`; both travel to Ray workers with the plan), and the as-of
  times of its labelled queries, of which each chunk takes its own queries'.

The other counts (outdated, undated and future versions retrieved, outdated labels,
queries with versioned evidence) are per evaluated query and are summed over the chunks
by :func:`~.stream_plan.merge_counts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..judging import JudgeCounts, JudgeOptions
from ..judging.freshness import freshness_inputs, require_versions
from ..judging.freshness_rules import get_freshness_rule
from ..model import Qrels
from ..model.versions import Versions

VERSION_ROW_BYTES = 16
"""A chunk judged with versions holds about this many bytes per row of the versions table
beyond what the plan holds for every chunk (the table, its id dictionary and its rows by
group: :class:`IndexedVersions`, in the process's size when the plan measures it): the
temporaries of reading the table's times."""
COUNTS = ("outdated_retrieved", "undated_retrieved", "future_retrieved", "labels_carried",
          "labels_outdated", "versioned_queries")  # fmt: skip
"""The counts of judging with versions, in the order judging gives them."""


class IndexedVersions(Versions):
    """The table with what judging each chunk reads of it built once for every chunk: the
    table row of each of the labels' documents (every chunk's labels share the plan's
    vocabulary), a dictionary of its ids for a chunk's run ids (which
    :meth:`Versions.index` would build anew at each call when the ids are many), and its
    rows ordered by group (:meth:`Versions.members`, sorted anew at each call)."""

    __slots__ = ("by_group", "label_rows", "label_vocab", "rows")
    by_group: tuple[np.ndarray, np.ndarray]
    label_rows: np.ndarray
    label_vocab: np.ndarray | None
    rows: dict[str, int]

    @classmethod
    def of(cls, versions: Versions, label_vocab: np.ndarray) -> IndexedVersions:
        new = object.__new__(cls)
        for name in Versions.__slots__:
            setattr(new, name, getattr(versions, name))
        new.rows = {d: i for i, d in enumerate(versions.doc_ids.tolist())}
        new.label_vocab = None
        new.label_rows = new.index(label_vocab)
        new.label_vocab = label_vocab
        new.by_group = versions.members()
        return new

    def members(self) -> tuple[np.ndarray, np.ndarray]:
        return self.by_group

    def index(self, doc_ids: np.ndarray) -> np.ndarray:
        if doc_ids is self.label_vocab:  # a chunk of the plan's labels
            return self.label_rows
        if len(doc_ids) * 16 < len(self.doc_ids):  # few: bisection, as Versions does
            return super().index(doc_ids)
        get = self.rows.get
        return np.fromiter((get(d, -1) for d in doc_ids), dtype=np.int64, count=len(doc_ids))


@dataclass
class StreamVersions:
    """The versions of one streamed evaluation: the table, the as-of times (None, one time
    for every query, or ``{query id: time}`` of the plan's labelled queries) and the
    number of labels carried to versions over the plan's labels."""

    versions: Any
    as_of: Any
    carried: int

    def judge_kwargs(self, query_ids: Any) -> dict[str, Any]:
        """What :func:`~ranklens.judging.judge` takes for a chunk of ``query_ids``: the
        table, and those queries' as-of times."""
        as_of = self.as_of
        if isinstance(as_of, dict):
            as_of = {q: as_of[q] for q in map(str, query_ids) if q in as_of}
        return {"versions": self.versions, "as_of": as_of}

    def counts(self) -> JudgeCounts:
        """The plan's own count (labels carried), to be merged with the chunks'."""
        return JudgeCounts(freshness={k: self.carried if k == "labels_carried" else 0
                                      for k in COUNTS})  # fmt: skip

    def table_rows(self) -> int:
        return len(self.versions)


def split_versions(judge_options: Mapping[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    """``(other judging options, versions, as_of)``: the two keywords judging takes beside
    its options."""
    rest = dict(judge_options)
    return rest, rest.pop("versions", None), rest.pop("as_of", None)


def with_versions(
    Q: Qrels, opts: JudgeOptions, versions: Any, as_of: Any, check_as_of: bool = True
) -> tuple[Qrels, JudgeOptions, StreamVersions | None]:
    """The labels carried to versions, the options with the rule judging applies (what the
    notes describe), and the plan's :class:`StreamVersions`; without versions, all as given
    (``as_of`` or a rule without them is the error ``evaluate`` gives).
    ``check_as_of=False`` for one shard of the labels: the caller checks the whole set's
    query ids (:func:`~ranklens.judging.freshness.check_as_of_queries`)."""
    require_versions(versions, as_of, opts.freshness)
    if versions is None:
        return Q, opts, None
    rule = get_freshness_rule(opts.freshness)
    opts = replace(opts, freshness=rule)
    given = {str(k): v for k, v in as_of.items()} if isinstance(as_of, Mapping) else as_of
    if isinstance(given, dict) and not check_as_of:  # this shard's queries' times only
        ids = set(map(str, Q.query_ids))
        given = {q: t for q, t in given.items() if q in ids}
    Q, fin = freshness_inputs(Q, versions, given, rule)  # checks as evaluate does
    versions = IndexedVersions.of(versions, Q.doc_ids)  # interned: chunks share its vocabulary
    conv = opts.convention
    if check_as_of and conv.missing == "zero" and conv.no_relevant != "skip":
        # every labelled query is evaluated: their times read (and an as-of time before
        # every document named) once, as evaluate does, not chunk by chunk
        versions.as_of_times(Q.query_ids, given)
    return Q, opts, StreamVersions(versions, given, fin.carried)


__all__ = ["StreamVersions", "split_versions", "with_versions"]
