"""What retrievers return, and how each hit is mapped to the ids the labels use.

Labels name documents; retrievers return chunks, nodes and Documents whose ids are often
regenerated at ingestion. A :class:`Hit` keeps what a retriever gave (id, score, text,
metadata, parent document id); a *key* says which of these names the labelled document:

* ``"id"``: the hit's own id (node id, ``Document.id``);
* ``"parent"``: the parent document (LlamaIndex ``ref_doc_id``, Haystack
  ``meta["source_id"]``, LangChain ``metadata["doc_id"]``), as the adapters fill it;
* ``"meta.<field>"`` / ``"metadata.<field>"``: a metadata field, nested with dots
  (``"meta.doc.id"``);
* ``"text"``: the normalised text (NFKC, lower case, whitespace collapsed), for labels
  that are passages; ``"text_hash"``: its SHA-1 (:func:`text_hash` gives the labels' side);
* any function ``Hit -> str | None``.

:func:`map_hits` applies a key to one ranked list: when several chunks map to one document,
the document keeps its first rank and the later ones are dropped and counted; hits with no
value for the key are dropped and counted too.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..declared import (
    NONNEGATIVE,
    ParameterError,
    UnknownParameterError,
    count,
    data,
    declare,
    function,
    number,
    renamed_option,
    text,
)
from ..errors import InputError, closest

KeyLike = str | Callable[["Hit"], Any]

KEY = text(
    "id",
    "how a hit names a labelled document: 'id', 'parent', 'meta.<field>', 'text', "
    "'text_hash' or a function Hit -> id",
    also=function(),
)
"""The ``key=`` of the runner, the recorder and the hooks, declared once."""

TEXT_HASH = declare("text_hash", {"text": text(None, "a labelled passage's text", empty=True)})

LightHit = tuple[Any, ...]
"""The hooks' light form of one hit, ``(id, score, text, parent, metadata)`` and, when the
converter's ``needs`` hold ``"positions"``, a sixth value ``(start, end)`` (the chunk's
character range in its source document, either end None when unknown): plain values a hook
copies in the app's request path instead of building a :class:`Hit`
(:meth:`Hit.from_light` builds it when the records are read). ``parent`` and ``metadata``
are None unless the converter's ``needs`` ask for them."""

Converter = Callable[[Any, frozenset[str]], LightHit]
"""``convert(framework_object, needs) -> LightHit``: each framework package's ``to_light``.
``needs`` (``Recorder.needs``) holds ``"parent"`` and/or ``"metadata"`` when
the recorder's key reads them; nothing else need be copied."""

ALL_FIELDS = frozenset({"metadata", "parent", "positions"})
"""The ``needs`` that make a converter copy everything, for a full :class:`Hit`."""

EVERYTHING = ALL_FIELDS  # the earlier name of ALL_FIELDS


_ID = text(None, "the hit's own id (node id, Document.id)", none=True, empty=True,
           also=count(None))  # fmt: skip
HIT = declare("Hit", {
    "id": _ID,
    "score": number(None, None, "the retriever's score (None: none given)", none=True),
    "text": text(None, "the hit's text", none=True, empty=True),
    "metadata": data("the hit's metadata: a dict (None: empty)"),
    "parent": renamed_option(_ID, description="the id of the document it was cut from"),
    "start": count(None, NONNEGATIVE, "the chunk's first character in its document",
                   none=True),
    "end": count(None, NONNEGATIVE, "the character after the chunk's last", none=True),
})  # fmt: skip


@dataclass
class Hit:
    """One retrieved item: ``id``, ``score`` (None when the retriever gives none), ``text``,
    ``metadata``, ``parent`` (the id of the document it was cut from, if known) and, for a
    chunk, ``start``/``end``: its character range in that document's text (span labels
    judge chunks by it; docs/spans.md)."""

    id: str | None
    score: float | None = None
    text: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None
    start: int | None = None
    end: int | None = None

    def __post_init__(self) -> None:
        # checked by the declaration (HIT) where a field is not already of its usual type:
        # a hit is made per document, so the common case costs a few type tests only
        s, i, p, t, a, b = self.score, self.id, self.parent, self.text, self.start, self.end
        if s is not None and not (type(s) is float and s - s == 0):  # NaN and inf fail s - s
            self.score = HIT.value("score", s)
        if i is not None and type(i) is not str:
            self.id = HIT.value("id", i)
        if p is not None and type(p) is not str:
            self.parent = HIT.value("parent", p)
        if t is not None and type(t) is not str:
            self.text = HIT.value("text", t)
        if a is not None and (type(a) is not int or a < 0):
            self.start = HIT.value("start", a)
        if b is not None and (type(b) is not int or b < 0):
            self.end = HIT.value("end", b)
        if type(self.metadata) is not dict:
            self._metadata()

    def _metadata(self) -> None:
        if self.metadata is None:
            self.metadata = {}
        elif not isinstance(self.metadata, Mapping):
            raise ParameterError(
                f"Hit: metadata must be a dict (the hit's metadata), got {self.metadata!r:.80}"
            )

    @classmethod
    def from_light(cls, light: LightHit) -> Hit:
        """A hit from a :data:`LightHit`."""
        id_, score, text, parent, metadata = light[:5]
        start, end = light[5] if len(light) > 5 and light[5] is not None else (None, None)
        return cls(id_, None if score is None else float(score), text, metadata or {}, parent,
                   _offset(start), _offset(end))  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Hit:
        """A hit from its record in a run log (:meth:`to_json`; the text as kept there)."""
        return cls(data.get("id"), data.get("score"), data.get("text"),
                   dict(data.get("metadata") or {}), data.get("parent"),
                   _offset(data.get("start")), _offset(data.get("end")))  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """The chunk-level record kept in the run log (text shortened to 200 characters,
        with its full length in ``chars``; the chunk's ``start``/``end`` when known; of the
        metadata, the first 20 fields holding an id-like value: a string of at most 200
        characters or an integer, so a wrong ``key=`` can be spotted afterwards)."""
        out: dict[str, Any] = {"id": self.id, "score": self.score}
        if self.parent is not None:
            out["parent"] = self.parent
        if self.start is not None:
            out["start"] = self.start
        if self.end is not None:
            out["end"] = self.end
        if self.text is not None:
            out["text"] = self.text[:200]
            out["chars"] = len(self.text)
        if self.metadata:  # (most hits have none: no copy of nothing)
            ids = {
                k: v
                for k, v in list(self.metadata.items())[:20]
                if isinstance(k, str) and ((isinstance(v, str) and len(v) <= 200) or type(v) is int)
            }
            if ids:
                out["metadata"] = ids
        return out


_SPACE = re.compile(r"\s+")


_made_by_dataclass = Hit.__init__


def _hit_init(self: Hit, *args: Any, **kwargs: Any) -> None:
    """The dataclass's ``__init__``; a keyword it does not take is named with the closest
    (nothing is added to the common case: a hit is made per document)."""
    try:
        _made_by_dataclass(self, *args, **kwargs)
    except TypeError:
        fields = list(HIT.options)
        for key in kwargs:
            if key not in fields:
                near = closest(key, fields)
                raise UnknownParameterError(
                    f"Hit: no parameter {key!r}"
                    + (f"; did you mean {near!r}?" if near else "")
                    + f" (it takes: {', '.join(fields)})"
                ) from None
        raise


_hit_init.__wrapped__ = _made_by_dataclass  # type: ignore[attr-defined]  # its signature
Hit.__init__ = _hit_init  # type: ignore[method-assign]
HIT.target = Hit
Hit.__declared__ = HIT  # type: ignore[attr-defined]  # checked in __post_init__, per hit cheaply


def normalise_text(text: str) -> str:
    """NFKC, lower case, runs of whitespace as one space, trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().lower()


@TEXT_HASH.checks
def text_hash(text: str) -> str:
    """SHA-1 (hex) of :func:`normalise_text`: the id to give a labelled passage so that
    ``key="text_hash"`` matches retrieved chunks with the same text."""
    return hashlib.sha1(normalise_text(text).encode("utf-8")).hexdigest()


def _lookup(data: Mapping[str, Any], path: list[str]) -> Any:
    cur: Any = data
    for part in path:
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def key_function(key: KeyLike) -> Callable[[Hit], str | None]:
    """The function a key stands for (see the module docstring)."""
    if callable(key):
        return lambda h: _as_id(key(h))
    if not isinstance(key, str):
        raise InputError(f"key must be a string or a function, got {key!r}")
    if key == "id":
        return lambda h: _as_id(h.id)
    if key == "parent":
        return lambda h: _as_id(h.parent)
    if key == "text":
        return lambda h: normalise_text(h.text) if h.text is not None else None
    if key == "text_hash":
        return lambda h: text_hash(h.text) if h.text is not None else None
    for prefix in ("meta.", "metadata."):
        if key.startswith(prefix) and len(key) > len(prefix):
            path = key[len(prefix) :].split(".")
            return lambda h: _as_id(_lookup(h.metadata, path))
    near = closest(key, ("id", "parent", "text", "text_hash", "meta.", "metadata."))
    raise InputError(
        f"unknown key {key!r}"
        + (f"; did you mean {near!r}?" if near else "")
        + ": use 'id', 'parent', 'meta.<field>', 'text', 'text_hash' or a function"
    )


def check_key(key: Any, where: str) -> KeyLike:
    """``key`` if it names a key (see the module docstring), else a :class:`ParameterError`
    naming ``where`` and the closest key: a misspelled key is refused before any query is
    asked, never recorded as every query's failure."""
    try:
        key_function(key)
    except InputError as exc:
        hint = str(exc).partition("; did you mean ")[2].partition(":")[0]
        raise ParameterError(
            f"{where}: key must be 'id', 'parent', 'meta.<field>', 'text', 'text_hash' or a "
            f"function Hit -> id, got {key!r}" + (f"; did you mean {hint}" if hint else "")
        ) from None
    checked: KeyLike = key
    return checked


def doc_metadata(records: Any, key: KeyLike) -> dict[str, dict[str, Any]]:
    """``{document: metadata}`` of every document ``records`` (:class:`~ranklens.Retrieval`
    objects) retrieved, named as ``key`` names them, from the first hit of each (the
    metadata as a record keeps it: string and integer fields, :meth:`Hit.to_json`): what
    ``ranklens.Versions.from_metadata(..., time=..., group=...)`` reads each document's time
    and version group from. Chunks merged by a text key (``"text"``, ``"text_hash"``) whose
    hits cannot be paired with their ids are left out; a function key is not called again
    on the hits as kept (their text shortened): they are paired with their ids instead."""
    by_key = isinstance(key, str) and key not in ("text", "text_hash")
    name = key_function(key) if by_key else None  # the log keeps 200 characters of text
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        hits = rec.hits or []
        if name is None and len(hits) != len(rec.doc_ids):
            continue  # chunks merged by a text key: no safe pairing
        for i, raw in enumerate(hits):
            doc = name(Hit.from_json(raw)) if name is not None else rec.doc_ids[i]
            if doc is not None and doc not in out:
                out[doc] = dict(raw.get("metadata") or {})
    return out


def key_name(key: KeyLike) -> str:
    """A stable description of a key for the run log's configuration hash."""
    if callable(key):
        return f"function:{getattr(key, '__module__', '?')}.{getattr(key, '__qualname__', '?')}"
    return str(key)


def _offset(value: Any) -> int | None:
    """A character offset as an int (None when absent or not a whole number >= 0)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        v = int(value)
    except (TypeError, ValueError):
        return None
    return v if v >= 0 and v == value else None


_NOT_IDS = (Mapping, list, tuple, set, frozenset, float, bool, bytes, bytearray)
"""What an id never is: a container would become its ``repr`` (``"['x']"``) and a float
or a bool a spelling (``"3.0"``, ``"True"``) no label uses."""


def _as_id(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, _NOT_IDS) and not isinstance(value, str):
        raise InputError(
            f"a hit's id must be a text or a whole number, got {type(value).__name__} {value!r:.80}"
        )
    return str(value)


@dataclass
class Mapped:
    """One query's hits in the labels' id space: ``doc_ids`` and ``scores`` in rank order,
    plus how many chunks were dropped as repeats of a document already ranked, and how many
    had no value for the key."""

    doc_ids: list[str]
    scores: list[float | None]
    duplicates: int = 0
    unmapped: int = 0


def map_hits(hits: Sequence[Hit], key: KeyLike = "id") -> Mapped:
    """Map ranked hits to document ids: first rank wins, repeats and unmapped hits are
    dropped and counted.

    >>> m = map_hits([Hit("c1", 0.9, parent="A"), Hit("c2", 0.8, parent="B"),
    ...               Hit("c3", 0.7, parent="A"), Hit("c4", 0.6)], key="parent")
    >>> m.doc_ids, m.duplicates, m.unmapped
    (['A', 'B'], 1, 1)
    """
    fn = key_function(key)
    seen: set[str] = set()
    out = Mapped([], [])
    for h in hits:
        doc = fn(h)
        if doc is None:
            out.unmapped += 1
            continue
        if doc in seen:
            out.duplicates += 1
            continue
        seen.add(doc)
        out.doc_ids.append(doc)
        out.scores.append(h.score)
    return out


def coerce_hit(item: Any, query_id: str, rank: int) -> Hit:
    """A :class:`Hit` from what a plain function may return: a Hit, a document id, an
    ``(id, score)`` pair or a dict with ``id`` (and ``score``, ``text``, ``metadata``,
    ``parent`` or ``doc_id``, ``start``, ``end``). The frameworks' own words are read too:
    ``meta`` (Haystack) for ``metadata``, ``content`` or ``page_content`` for ``text``; any
    other field of the dict is kept in the metadata (under its own name, never over a
    field ``metadata`` holds), so ``key="meta.<field>"`` finds it."""
    if isinstance(item, Hit):
        return item  # checked when made (Hit.__post_init__)
    t = type(item)
    if t is tuple and len(item) == 2:  # the usual (id, score) pair, made as Hit() makes it
        i, sc = item
        if type(i) is str and i and type(sc) is float and sc - sc == 0:
            return plain_hit(i, sc)
    elif t is str:
        return plain_hit(item, None)
    if isinstance(item, str | int):
        return Hit(str(item))
    if isinstance(item, tuple | list) and len(item) == 2:
        return Hit(_as_id(item[0]), _score(item[1], query_id, rank))
    if isinstance(item, Mapping) and "id" in item:
        text_field, text = _first(item, TEXT_FIELDS)
        meta_field, meta = _first(item, META_FIELDS)
        if text is not None and not isinstance(text, str):
            raise InputError(
                f"query {query_id!r}, hit {rank}: {text_field!r} must be a string, got "
                f"{type(text).__name__}"
            )
        if meta is not None and not isinstance(meta, Mapping):
            raise InputError(
                f"query {query_id!r}, hit {rank}: {meta_field!r} must be a dict, got "
                f"{type(meta).__name__}"
            )
        extra = {f: v for f, v in item.items() if f not in HIT_FIELDS}
        return Hit(
            _as_id(item["id"]),
            _score(item.get("score"), query_id, rank),
            text,
            {**extra, **meta} if extra and meta else dict(meta or extra),
            _as_id(item.get("parent", item.get("doc_id"))),
            _offset(item.get("start")),
            _offset(item.get("end")),
        )
    raise InputError(
        f"query {query_id!r}, hit {rank}: expected a Hit, an id, an (id, score) pair or a "
        f"dict with 'id', got {type(item).__name__}"
    )


def plain_hit(id_: str, score: float | None, metadata: dict[str, Any] | None = None) -> Hit:
    """``Hit(id_, score, None, metadata)`` for a text id, a finite float or None and a dict
    (the caller has checked them: nothing is checked again): a function retriever's hits
    are made per document, and so are the hits an interleaving serves."""
    hit = object.__new__(Hit)
    hit.__dict__.update(id=id_, score=score, text=None, metadata={} if metadata is None else
                        metadata, parent=None, start=None, end=None)  # fmt: skip
    return hit


TEXT_FIELDS = ("text", "content", "page_content")
META_FIELDS = ("metadata", "meta")
HIT_FIELDS = frozenset(
    {"id", "score", "parent", "doc_id", "start", "end", *TEXT_FIELDS, *META_FIELDS}
)
"""The fields of a hit given as a dict that :func:`coerce_hit` reads; others are metadata."""


def _first(item: Mapping[str, Any], fields: tuple[str, ...]) -> tuple[str, Any]:
    """The first of ``fields`` that ``item`` has (not None) and its value, else None."""
    for f in fields:
        if item.get(f) is not None:
            return f, item[f]
    return fields[0], None


def _score(value: Any, query_id: str, rank: int) -> float | None:
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            raise TypeError
        score = float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"query {query_id!r}, hit {rank}: score {value!r:.80} is not a number"
        ) from None
    if score != score:
        raise InputError(f"query {query_id!r}, hit {rank}: score is NaN (not a number)")
    return score
