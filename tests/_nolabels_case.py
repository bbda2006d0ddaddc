"""Shared pieces of the no-labels tests: callables that act like LLM clients (latency,
transient and permanent failures, junk answers, a hang), a BM25 retriever over the demo
corpus (bm25s), and judges with a known bias."""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading

from ranklens.synthesis import OfflineGenerator


def stable(*parts: str) -> float:
    """A number in [0, 1) fixed by the texts (so a judge is the same in every process)."""
    h = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


class FlakyGenerator:
    """An LLM client stand-in: async, a few ms of latency, a connection error on the
    first try for some passages (retried), a permanent error, junk (None, a number), an
    empty answer, preamble lines and numbered questions, and one passage on which it hangs."""

    name = "flaky-llm"

    def __init__(self, hang_on: str = "lh03-light", delay: float = 0.002):
        self.offline = OfflineGenerator()
        self.hang_on, self.delay = hang_on, delay
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()

    async def __call__(self, passage: str):
        key = passage[:40]
        with self.lock:
            self.calls[key] = self.calls.get(key, 0) + 1
            attempt = self.calls[key]
        await asyncio.sleep(self.delay)
        if self.hang_on and self.hang_on_text in passage:
            await asyncio.sleep(30)
        r = stable(passage)
        if r < 0.08 and attempt == 1:
            raise ConnectionError("connection reset by peer")
        if r > 0.97:
            raise ValueError("the model refused: content filter")
        if 0.93 < r <= 0.95:
            return None if r < 0.94 else 42
        if 0.95 < r <= 0.97:
            return "   "
        q = self.offline(passage)
        if 0.85 < r <= 0.93:  # chatty: preamble, then numbered questions (one twice)
            return f"Sure! Here are 2 questions:\n1. {q['question']}\n2. {q['question']}"
        return q

    @property
    def hang_on_text(self) -> str:
        return {"lh03-light": "The lantern of Morwen Bar"}.get(self.hang_on, self.hang_on)


def bm25(corpus: dict):
    """A bm25s retriever over ``corpus`` ({id: {"text"}}): ``fn(query) -> [(id, score)]``."""
    import bm25s

    ids = list(corpus)
    index = bm25s.BM25()
    index.index(
        bm25s.tokenize([corpus[d]["text"] for d in ids], show_progress=False), show_progress=False
    )

    def retrieve(query: str, k: int = 10) -> list[tuple[str, float]]:
        docs, scores = index.retrieve(
            bm25s.tokenize([query], show_progress=False), k=k, show_progress=False
        )
        return [(ids[i], float(s)) for i, s in zip(docs[0], scores[0]) if s > 0]

    return retrieve


def word_overlap(corpus: dict, drop: float = 0.0):
    """A weaker retriever: documents ranked by shared words (``drop``: a share of each
    query's words forgotten, fixed by the text)."""
    ids = list(corpus)
    toks = [set(re.findall(r"\w+", corpus[d]["text"].lower())) for d in ids]

    def retrieve(query: str, k: int = 10) -> list[tuple[str, float]]:
        q = {w for w in re.findall(r"\w+", query.lower()) if stable(query, w) >= drop}
        scored = sorted(((len(q & t), -i) for i, t in enumerate(toks)), reverse=True)[:k]
        return [(ids[-i], float(s)) for s, i in scored if s > 0]

    return retrieve


def biased_judge(truth: dict, lenient: float = 0.3, strict: float = 0.2):
    """A judge that knows the labels (``{(q, d): grade}``) but calls a non-relevant pair
    relevant (grade 1) with probability ``lenient`` and a relevant one 0 with ``strict``,
    fixed per pair: a known bias. Its ``pairs`` maps the texts back to the ids."""
    by_text: dict[tuple[str, str], int] = {}

    def judge(query: str, passage: str) -> int:
        g = by_text.get((query, passage), 0)
        r = stable(query, passage)
        if g == 0:
            return 1 if r < lenient else 0
        return 0 if r < strict else g

    judge.by_text = by_text
    return judge


class Recording:
    """A slow sync generator or judge that appends what it is asked to a file (one JSON
    line per call, written when the call starts), for the kill-and-resume tests."""

    def __init__(self, path: str, delay: float, kind: str):
        self.path, self.delay, self.kind = path, delay, kind

    def __call__(self, *texts: str):
        import json
        import time

        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(texts) + "\n")
        time.sleep(self.delay)
        if self.kind == "generator":
            return OfflineGenerator()(texts[0])
        return 1 if stable(*texts) < 0.5 else 0
