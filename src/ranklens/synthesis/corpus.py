"""A corpus in any form the synthesis and check functions take, as ``{doc_id: {"text",
"title"}}``, and its documents cut into passages with character offsets."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .text import sentences


def documents(corpus: Any) -> dict[str, dict[str, Any]]:
    """``{doc_id: {"text": ..., "title": ...}}`` from a :class:`~ranklens.Dataset` (its
    corpus), ``{id: text}``, ``{id: {"text": ...}}``, a BEIR ``corpus.jsonl`` or a BEIR
    folder. A document without text is an error naming it."""
    if hasattr(corpus, "qrels") and hasattr(corpus, "corpus"):
        if corpus.corpus is None:
            raise InputError(f"dataset {corpus.name!r} has no corpus: give corpus= as well")
        corpus = corpus.corpus
    if isinstance(corpus, (str, Path)):
        from ..io.beir import read_corpus

        path = Path(corpus)
        corpus = read_corpus(path / "corpus.jsonl" if path.is_dir() else path)
    if not isinstance(corpus, Mapping):
        raise InputError(
            "corpus must be a Dataset, {doc_id: text}, {doc_id: {'text': ...}} or a "
            f"corpus.jsonl path, got {type(corpus).__name__}"
        )
    out: dict[str, dict[str, Any]] = {}
    for doc, value in corpus.items():
        text = value.get("text") if isinstance(value, Mapping) else value
        if not isinstance(text, str):
            raise InputError(f"document {doc!r}: the text must be a string, got {text!r:.60}")
        title = value.get("title", "") if isinstance(value, Mapping) else ""
        out[str(doc)] = {"text": text, "title": title or ""}
    return out


def passages(text: str, max_chars: int | None) -> list[tuple[int, int]]:
    """``(start, end)`` windows of whole sentences of at most ``max_chars`` characters
    (a longer sentence is one window of its own); the whole text when ``max_chars`` is
    None or the text fits."""
    if not text.strip():
        return []
    if max_chars is None or len(text) <= max_chars:
        return [(0, len(text))]
    out: list[tuple[int, int]] = []
    start: int | None = None
    end = 0
    for s, e in sentences(text):
        if start is not None and e - start > max_chars:
            out.append((start, end))
            start = None
        if start is None:
            start = s
        end = e
    if start is not None:
        out.append((start, end))
    return out
