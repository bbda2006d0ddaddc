"""Interning of string ids into integer codes that preserve the ids' sort order.

Codes are the rank of each id among the sorted distinct ids, so comparing codes compares
the ids by code point, which for UTF-8 is trec_eval's ``strcmp`` byte order.

Python sequences are interned with a dict (``dict.fromkeys`` runs at C speed and ``str``
objects cache their hash), and only the *distinct* ids are validated, so a run of 10^7
rows over 10^5 documents costs one pass plus a check of 10^5 keys. pyarrow arrays (from
the TREC reader) use pyarrow's hash-based dictionary encoding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import count
from typing import Any

import numpy as np

from ..text import shown


class BadIdError(Exception):
    """An id that is neither a non-empty string nor an integer (carries the value)."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


UNHASHABLE = object()
"""The value a :class:`BadIdError` carries for an unhashable id (a list or dict)."""


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _is_arrow(values: Any) -> bool:
    return type(values).__module__.startswith("pyarrow")


def describe_bad_id(value: Any, what: str) -> str:
    if isinstance(value, str):
        return f"empty {what}"
    if value is UNHASHABLE:
        return f"{what} must be a string or an integer, got an unhashable value"
    return f"{what} must be a string or an integer, got {shown(value)}"


def encode(
    values: Sequence[Any] | np.ndarray | Any, n: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Intern ``values`` into ``(codes, vocab)``: ``vocab`` is the sorted array of distinct
    ids (object dtype, ``str``), ``codes`` integers (int32 below 2^31 ids) with
    ``vocab[codes] == values``.

    ``values`` may be a one-shot iterable when its length ``n`` is given. Integers are
    converted with ``str``; anything else (None, floats, bytes, ``""``) raises
    :class:`BadIdError` with the offending value.
    """
    if _is_arrow(values):
        return encode_arrow(values)
    if isinstance(values, np.ndarray) and values.dtype.kind in "USiu":
        values = values.astype(str).astype(object)
    if n is None:
        n = len(values) if hasattr(values, "__len__") else -1
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    # one pass at C speed: a missing key gets the next number
    table: defaultdict[Any, int] = defaultdict(count().__next__)
    try:
        raw = np.fromiter(map(table.__getitem__, values), dtype=np.int64, count=n)
    except TypeError:  # an unhashable id (a list, a dict): encode_ids finds and names it
        raise BadIdError(UNHASHABLE) from None
    keys = list(table)
    if set(map(type, keys)) != {str} or "" in table:
        keys, remap = _normalise_keys(keys)
        raw = remap[raw]
    vocab = np.empty(len(keys), dtype=object)
    vocab[:] = keys
    return _sort_vocab(raw, vocab)


def _normalise_keys(keys: list[Any]) -> tuple[list[str], np.ndarray]:
    """Convert integer keys to str (merging e.g. 1 and "1"); reject anything else."""
    out: dict[str, int] = {}
    remap = np.empty(len(keys), dtype=np.int64)
    for i, k in enumerate(keys):
        if isinstance(k, str):
            if k == "":
                raise BadIdError(k)
            s = k
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            s = str(int(k))
        else:
            raise BadIdError(k)
        remap[i] = out.setdefault(s, len(out))
    return list(out), remap


def encode_arrow(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode` for a pyarrow string array or chunked array, or a dictionary-typed one
    (as pyarrow's CSV reader gives when asked: it encodes in parallel as it parses)."""
    import pyarrow as pa

    if pa.types.is_dictionary(values.type):
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        if not chunks:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
        first = chunks[0].dictionary
        if any(c.dictionary is not first and not c.dictionary.equals(first) for c in chunks):
            table = pa.Table.from_arrays([pa.chunked_array(chunks)], ["ids"])
            chunks = table.unify_dictionaries().column("ids").chunks
            first = chunks[0].dictionary
        raw = np.concatenate([arrow_to_numpy(c.indices) for c in chunks])
        dictionary = first
    else:
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            values = values.cast(pa.string())
        enc = values.dictionary_encode()
        raw = arrow_to_numpy(enc.indices).astype(np.int64, copy=False)
        dictionary = enc.dictionary
    keys = dictionary.to_pylist()  # to_numpy() on strings would import pandas
    if "" in keys:
        raise BadIdError("")
    vocab = np.empty(len(keys), dtype=object)
    vocab[:] = keys
    return _sort_vocab(raw, vocab)


def arrow_to_numpy(arr: Any) -> np.ndarray:
    """A null-free primitive pyarrow array as a numpy view of its data buffer.

    (pyarrow's own ``to_numpy`` imports pandas, which costs seconds in a fresh process.)
    """
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count:
        raise ValueError("array has nulls")
    dtype = np.dtype(arr.type.to_pandas_dtype())
    data = np.frombuffer(arr.buffers()[1], dtype=dtype)
    return data[arr.offset : arr.offset + len(arr)]


def _sort_vocab(raw: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(keys) == 0:
        return raw, keys
    order = sort_order(keys)
    # int32 codes halve the memory traffic of large columns
    rank = np.empty(len(keys), dtype=np.int32 if len(keys) < 1 << 31 else np.int64)
    rank[order] = np.arange(len(keys))
    return rank[raw], keys[order]


def sort_order(keys: Any) -> np.ndarray:
    """The permutation that sorts distinct string ``keys`` by code point (UTF-8 byte order,
    trec_eval's ``strcmp``): one numpy sort, whose fixed-width strings cannot tell ``"a"``
    from ``"a\\0"``; keys it found equal (ids ending in zero characters) are then ordered
    by Python's comparison."""
    arr = np.asarray(keys, dtype=object).astype(str)
    order = np.argsort(arr, kind="stable")
    s = arr[order]
    same = np.flatnonzero(s[1:] == s[:-1]).tolist()
    keys_l = None
    while same:  # each run of keys numpy saw as one, sorted exactly in place
        a = b = same.pop(0)
        while same and same[0] == b + 1:
            b = same.pop(0)
        if keys_l is None:
            keys_l = np.asarray(keys, dtype=object)
        order[a : b + 2] = sorted(order[a : b + 2].tolist(), key=keys_l.__getitem__)
    return order


def translate(src_vocab: np.ndarray, dst_vocab: np.ndarray) -> np.ndarray:
    """For each id of ``src_vocab``, its code in ``dst_vocab`` or -1 where absent."""
    if len(src_vocab) == 0:
        return np.zeros(0, dtype=np.int64)
    if len(dst_vocab) == 0:
        return np.full(len(src_vocab), -1, dtype=np.int64)
    if len(src_vocab) == len(dst_vocab) and bool(np.all(src_vocab == dst_vocab)):
        return np.arange(len(src_vocab), dtype=np.int64)  # the same ids (the commonest case)
    if len(src_vocab) * 16 < len(dst_vocab):
        # Few ids to look up in a large sorted vocabulary: bisection.
        pos = np.minimum(np.searchsorted(dst_vocab, src_vocab), len(dst_vocab) - 1)
        return np.where(dst_vocab[pos] == src_vocab, pos, -1).astype(np.int64)
    table = {v: i for i, v in enumerate(dst_vocab)}
    get = table.get
    return np.fromiter((get(v, -1) for v in src_vocab), dtype=np.int64, count=len(src_vocab))


def encode_ids(
    values: Sequence[Any] | np.ndarray | Any,
    what: str,
    context: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode`, turning a bad id into an :class:`~ranklens.errors.InputError` that
    names it, its position and (through ``context(position)``, e.g. ``"in query 'q1'"``)
    where it stands."""
    from ..errors import InputError

    try:
        return encode(values)
    except BadIdError as exc:
        bad = exc.value
        where = ""
        if not _is_arrow(values):
            for i, v in enumerate(values):
                if bad is UNHASHABLE and not _hashable(v):
                    bad = v
                if v is bad or (type(v) is type(bad) and v == bad):
                    where = f" {context(i)}" if context is not None else f" at position {i}"
                    break
        raise InputError(describe_bad_id(bad, what) + where) from None


def encode_columns(
    query_ids: Sequence[Any] | np.ndarray,
    doc_ids: Sequence[Any] | np.ndarray,
    empty_queries: Any,
    source: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intern parallel query and document columns: ``(query code per row, query vocab, doc
    code per row, doc vocab)``. ``empty_queries`` join the query vocabulary without rows; a
    bad id is an InputError naming it and (for documents) its query, in ``source``."""
    extra = list(empty_queries)
    all_q = list(query_ids) + extra if extra else query_ids
    qcode_all, query_vocab = encode_ids(all_q, f"query id in {source}")
    qcode = qcode_all[: len(doc_ids)]
    dcode, doc_vocab = encode_ids(
        doc_ids,
        f"document id in {source}",
        lambda i: f"in query {query_vocab[qcode[i]]!r}",
    )
    return qcode, query_vocab, dcode, doc_vocab


def encode_nested(
    nested: Any, what: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intern ``{query: {doc: value}}`` (or ``{query: [doc, ...]}``) in one pass.

    Returns ``(qcode per row, query vocab, doc code per row, doc vocab, rows per query)``,
    rows in the mapping's order; a bad id is an InputError naming it and its query
    (``what`` is e.g. ``"run"``).
    """
    from itertools import chain

    values = list(nested.values())
    lens = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    qcode_u, query_vocab = encode_ids(list(nested.keys()), f"query id in {what}")
    qcode = np.repeat(qcode_u, lens)
    try:
        dcode, doc_vocab = encode(chain.from_iterable(values), int(lens.sum()))
    except BadIdError:
        dcode, doc_vocab = encode_ids(
            list(chain.from_iterable(values)),
            f"document id in {what}",
            lambda i: f"in query {query_vocab[qcode[i]]!r}",
        )
    return qcode, query_vocab, dcode, doc_vocab, lens
