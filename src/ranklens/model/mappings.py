"""Python mappings read as columns without interning a document id: ``{query: hits}`` runs
(``{doc: score}``, ``[(doc, score), ...]`` or ``[doc, ...]`` per query, forms may differ
between queries) and ``{query: labels}`` (``{doc: grade}`` or ``[doc, ...]``).

The documents of every query are joined into one UTF-8 buffer in a single pass
(:meth:`~ranklens.model.ids.DocIds.from_strings`) and kept as packed byte slices, hashed
with vectorised numpy for the join, as a TREC file's are: no dictionary of millions of
ids is built and no vocabulary is sorted. These readers take only what they can read
exactly as the general constructors (:meth:`Run.from_dict <ranklens.Run.from_dict>`,
:meth:`Qrels.from_dict <ranklens.Qrels.from_dict>`) would: string ids, numbers of the
kinds those accept; anything else (integer ids, a bad id or score, a list of lists, a hit
that is not a pair) returns None, and the general constructor converts it or names the
fault. The grades and scores are checked exactly as there: one ``np.array`` of all of
them, whose kind decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import numpy as np

from ..errors import InputError
from ..text import shown
from . import native as compiled
from .ids import DocIds
from .vocab import sort_order

_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def query_codes(mapping: Mapping[Any, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(code of each key, the keys sorted, an object array)`` of a mapping whose keys
    are all non-empty strings, sorted as :func:`~ranklens.model.vocab.encode` sorts them
    (:func:`~ranklens.model.vocab.sort_order`); else None (the general path converts
    integers and names bad ids)."""
    keys = list(mapping)
    if not keys or not all(map(isinstance, keys, repeat(str))) or "" in mapping:
        return None
    order = sort_order(keys)
    codes = np.empty(len(keys), dtype=np.int64)
    codes[order] = np.arange(len(keys))
    vocab = np.empty(len(keys), dtype=object)
    vocab[:] = keys
    return codes, vocab[order]


def check_query_keys(mapping: Mapping[Any, Any], what: str) -> None:
    """Refuse two keys of ``mapping`` that name one query once integers are read as strings
    (``{1: ..., "1": ...}``): their documents would be merged into one query silently."""
    if all(map(isinstance, mapping, repeat(str))):
        return
    seen: dict[str, Any] = {}
    for key in mapping:
        as_id = str(key) if isinstance(key, int | np.integer) else key
        if not isinstance(as_id, str):
            continue  # not an id at all: the reader names it
        if as_id in seen:
            raise InputError(
                f"{what}: query keys {seen[as_id]!r} and {key!r} both name query {as_id!r} "
                "(integer ids are read as strings); give each query one key, all strings or "
                "all integers"
            )
        seen[as_id] = key


DICT_KEYS, ITEMS, FIRST_ITEMS = 0, 1, 2
"""What :func:`_packed` reads of each group: a dict's keys, a list's items, its pairs' ids."""


def _packed(groups: list[Any], n: int, kind: int = ITEMS) -> DocIds | None:
    """The ids of the non-empty ``groups`` (each query's documents), ``n`` in all, as
    packed bytes (``kind``: what each group holds); None when one is not a non-empty
    string. The compiled helpers copy the bytes straight from each string; else the
    groups are joined with newlines and encoded once."""
    native = compiled.NATIVE
    got = None if native is None else native.pack_ids(groups, kind, n)
    if got is not None:
        body, lens, nul = got
        length = np.frombuffer(lens, dtype=np.int32)
        start = np.zeros(len(length), dtype=np.int64)
        np.cumsum(length[:-1], out=start[1:])
        return DocIds.slices(np.frombuffer(body, np.uint8), start, length, nul, len(body) - 8)
    if kind == FIRST_ITEMS:
        groups = [list(map(_FIRST, v)) for v in groups]
    try:
        packed = DocIds.from_groups(groups, n)
        if packed is None:  # an id holds a newline
            packed = DocIds.from_strings(chain.from_iterable(groups))
    except (TypeError, UnicodeEncodeError):
        return None
    if n and int(packed.lengths().min()) == 0:
        return None
    return packed


def flat_numbers(raw: list[Any], kinds: str) -> np.ndarray | None:
    """``np.array(raw)`` when its kind is one of ``kinds`` (else None: the general path
    checks each value and names a bad one), as the general constructors read them."""
    try:
        arr = np.array(raw) if raw else np.zeros(0, dtype=np.int64)
    except (ValueError, TypeError, OverflowError):
        return None  # ragged or odd values: the general path names the bad one
    return arr if arr.dtype.kind in kinds and arr.shape == (len(raw),) else None


def _plain_numbers(values: Any) -> bool:
    """Whether every value is a Python or numpy integer or float (what :meth:`Run.from_dict`
    takes as a score when it checks them one by one; a numpy bool is not)."""
    return all(
        t in (float, int, bool) or issubclass(t, (np.integer, np.floating))
        for t in set(map(type, values))
    )


def _native_pair_scores(values: list[Any]) -> bytes | None:
    """The pairs' scores read in C (each hit checked to be a pair), or None."""
    native = compiled.NATIVE
    return None if native is None else native.pair_scores(values)


def _forms(values: list[Any]) -> list[str] | None:
    """Each query's form: ``"scores"``, ``"pairs"``, ``"ranked"`` or ``"empty"`` (by its
    first hit, as :meth:`Run.from_dict` reads it); None for anything else."""
    forms = []
    for v in values:
        if isinstance(v, dict):
            forms.append("scores" if v else "empty")
        elif type(v) is list or type(v) is tuple:
            if not v:
                forms.append("empty")
            else:
                forms.append("pairs" if isinstance(v[0], (tuple, list)) else "ranked")
        else:
            return None
    return forms


def run_columns(
    run: Mapping[Any, Any],
) -> tuple[np.ndarray, np.ndarray, DocIds, np.ndarray | None, bool] | None:
    """``(query code per row, query vocabulary, documents, scores or None, unique)`` of
    ``{query: hits}``, rows in the mapping's order; ``scores`` is None when no query has
    scores (ranked lists: the order is the ranking), else a ranked list's query gets
    ``0, -1, -2, ...``; ``unique`` when every query is a dict (no document can repeat).
    None when the general path must read it (see the module docstring)."""
    coded = query_codes(run)
    if coded is None:
        return None
    values = list(run.values())
    if all(type(v) is dict for v in values):
        forms = None  # all {doc: score}: one pass each for ids and scores
    else:
        forms = _forms(values)
        if forms is None:
            return None
    try:
        lens = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    except TypeError:
        return None
    n = int(lens.sum())
    scores: np.ndarray | None = None
    raw: list[Any] | None = None
    native = None
    if forms is not None and "pairs" in forms and set(forms) <= {"pairs", "empty"}:
        native = _native_pair_scores(values)  # every hit a pair, every score plain: in C
    if forms is None:
        docs = _packed([v for v in values if v], n, DICT_KEYS)
        raw = list(chain.from_iterable(map(dict.values, values)))
    elif native is not None:
        docs = _packed([v for v in values if v], n, FIRST_ITEMS)
        scores = np.frombuffer(native, dtype=np.float64)
    else:
        pairs = [v for v, f in zip(values, forms) if f == "pairs"]
        hits = list(chain.from_iterable(pairs))
        if not all(map(isinstance, hits, repeat((tuple, list)))) or set(map(len, hits)) - {2}:
            return None  # the general path names the hit that is not a pair
        docs = _packed([
            list(map(_FIRST, v)) if f == "pairs" else v for v, f in zip(values, forms) if v
        ], n)  # fmt: skip
        scored = {"scores", "pairs"} & set(forms)
        raw = list(chain.from_iterable(
            v.values() if f == "scores" else map(_SECOND, v) if f == "pairs"
            else map(float.__neg__, map(float, range(len(v))))
            for v, f in zip(values, forms)
        )) if scored else None  # fmt: skip
        if raw is not None and not _plain_numbers(raw):
            return None  # mixed forms' scores are checked one by one there
    if docs is None:
        return None
    if raw is not None:
        scores = flat_numbers(raw, "iuf")
        if scores is None:
            return None
        scores = scores.astype(np.float64)
    qcode = np.repeat(coded[0], lens)
    return qcode, coded[1], docs, scores, forms is None


def label_columns(
    labels: Mapping[Any, Any],
) -> tuple[np.ndarray, np.ndarray, DocIds, np.ndarray, bool] | None:
    """``(query code per row, query vocabulary, documents, grades, unique)`` of ``{query:
    {doc: grade}}`` or ``{query: [doc, ...]}`` (grade 1), rows grouped by query in the
    vocabulary's order, each query's in the mapping's; ``unique`` when every query is a
    dict. None when the general path must read it."""
    coded = query_codes(labels)
    if coded is None:
        return None
    ordered = coded[1]
    values = list(map(labels.__getitem__, ordered.tolist()))  # rows in the sorted ids' order
    dicts = all(map(isinstance, values, repeat(dict)))
    if not dicts and set(map(type, values)) - {list, tuple}:
        return None  # a mix of forms, or other containers: the general path
    lens = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    docs = _packed([v for v in values if v], int(lens.sum()), DICT_KEYS if dicts else ITEMS)
    if docs is None:
        return None  # integer ids, groups (lists of lists), a bad id
    if dicts:
        grades = flat_numbers(list(chain.from_iterable(map(dict.values, values))), "iub")
        if grades is None:
            return None
    else:
        grades = np.ones(len(docs), dtype=np.int64)
    qcode = np.repeat(np.arange(len(values), dtype=np.int64), lens)
    return qcode, ordered, docs, grades.astype(np.int64), dicts


def hits_form(qid: Any, hits: Any) -> str:
    """How a query's hits are given: ``"scores"`` ({doc: score}), ``"pairs"`` ([(doc,
    score)]), ``"ranked"`` ([doc]) or ``"empty"``; anything else is an InputError."""
    if isinstance(hits, Mapping):
        return "scores" if len(hits) else "empty"
    if isinstance(hits, (list, tuple)) or (
        isinstance(hits, Sequence) and not isinstance(hits, (str, bytes, bytearray, memoryview))
    ):
        if len(hits) == 0:
            return "empty"
        return "pairs" if isinstance(hits[0], (tuple, list)) else "ranked"
    kind = "a string" if isinstance(hits, (str, bytes)) else type(hits).__name__
    hint = " (materialise it with list())" if isinstance(hits, Iterable) else ""
    raise InputError(
        f"run: hits of query {qid!r} must be {{doc: score}}, [(doc, score), ...] or "
        f"[doc, ...]; got {kind}{hint}"
    )


def check_score(score: Any, qid: Any, doc: Any) -> float:
    """A score as a float: ints and floats (numpy's too); strings are refused (in every
    input form), so ``"10" < "9"`` can never rank anything."""
    what = "is not a number"
    if isinstance(score, (int, float, np.integer, np.floating)):
        try:
            return float(score)
        except OverflowError:
            what = "is beyond the range of a float (about 1.8e308)"
    raise InputError(f"run: score {shown(score)} of document {doc!r} in query {qid!r} {what}")


def mixed_run_columns(
    run: Mapping[Any, Any],
) -> tuple[list[Any], list[Any], list[float] | None, list[Any]]:
    """``(query per row, document per row, scores or None, queries without hits)`` of a run
    whose queries may each take another form (:func:`hits_form`), every id and score
    checked one by one: the general reader behind :func:`run_columns`. A ranked list gets
    scores that keep its order (``0, -1, -2, ...``); scores are None when no query has any."""
    qs: list[Any] = []
    ds: list[Any] = []
    sc: list[float] = []
    empty: list[Any] = []
    any_scored = False
    for qid, hits in run.items():
        form = hits_form(qid, hits)
        if form == "empty":
            empty.append(qid)
            continue
        if form == "scores":
            items = list(hits.items())
            ds.extend(d for d, _ in items)
            sc.extend(check_score(s, qid, d) for d, s in items)
            any_scored = True
        elif form == "pairs":
            for j, hit in enumerate(hits):
                if not isinstance(hit, (tuple, list)) or len(hit) != 2:
                    raise InputError(
                        f"run: hit {j} of query {qid!r} must be a (doc, score) pair like "
                        "the query's first hit"
                    )
                ds.append(hit[0])
                sc.append(check_score(hit[1], qid, hit[0]))
            any_scored = True
        else:
            for j, hit in enumerate(hits):
                if isinstance(hit, (tuple, list)):
                    raise InputError(
                        f"run: hit {j} of query {qid!r} is a pair but the query's first "
                        "hit is a plain id"
                    )
            ds.extend(hits)
            sc.extend(-float(j) for j in range(len(hits)))
        qs.extend([qid] * len(hits))
    return qs, ds, sc if any_scored else None, empty
