"""The FAQ bot's retriever: word overlap between the question and each passage, weighted
by how rare the word is (a tiny BM25 without length normalisation). ``FAQ_CHUNK_WORDS``
simulates a chunker change: passages cut to their first N words."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import ranklens

HERE = Path(__file__).resolve().parent
DATASET = ranklens.read_dataset(HERE / "faq.jsonl")
PASSAGES = {
    row["id"]: row["text"]
    for row in map(json.loads, (HERE / "passages.jsonl").read_text().splitlines())
}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _index(chunk_words: int | None) -> dict[str, set[str]]:
    return {pid: set(_words(text)[:chunk_words]) for pid, text in PASSAGES.items()}


def search(question: str, k: int = 10) -> list[dict]:
    """The top ``k`` passages for ``question``: ``[{"id": ..., "score": ...}, ...]``."""
    limit = os.environ.get("FAQ_CHUNK_WORDS")
    index = _index(int(limit) if limit else None)
    df: dict[str, int] = {}
    for words in index.values():
        for w in words:
            df[w] = df.get(w, 0) + 1
    n = len(index)
    scored = []
    for pid, words in index.items():
        score = sum(math.log(1 + n / df[w]) for w in set(_words(question)) if w in words)
        if score > 0:
            scored.append({"id": pid, "score": round(score, 6)})
    scored.sort(key=lambda h: (-h["score"], h["id"]))
    return scored[:k]
