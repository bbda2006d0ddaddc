"""What a generator answered, read into candidate questions.

A generator may answer a string (one question per line: list markers such as ``1.``,
``-`` or ``Q:`` are stripped), a list of strings, ``{"question": ..., "evidence": ...}``
(``"questions"`` for several), or a list of such objects. ``evidence`` is a quote of the
passage the question was made from; it is located in the passage (exactly, else with
whitespace folded) to give character offsets. Anything else is *junk*, counted per
passage. Lines that introduce the questions instead of being one ("Here are three
questions:", "Sure!", a line ending in a colon) are *preamble*: the defect LlamaIndex's
``generate_question_context_pairs`` is known for (run-llama/llama_index#16745).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MARKER = re.compile(r"^\s*(?:(?:\d+|[a-z])[.)]|[-*•]|q\d*[:.]|question\s*\d*[:.])\s*", re.I)
PREAMBLE = re.compile(
    r"^(?:sure|certainly|okay|ok|of course|absolutely|great|here(?:'s| is| are)|below "
    r"(?:is|are)|the following|as an ai|i (?:can|will|have)|let me|these (?:are|questions))\b",
    re.I,
)


@dataclass(frozen=True)
class Candidate:
    """One question as the generator wrote it: ``text`` (markers stripped), ``evidence``
    (its quote, or None), ``status``: ``"ok"``, ``"empty"`` or ``"preamble"``."""

    text: str
    evidence: str | None
    status: str


def candidates(output: Any) -> list[Candidate] | None:
    """The candidates in a generator's answer, or None when it is junk (see the module
    docstring)."""
    if isinstance(output, str):
        lines = output.splitlines() or [""]
        return [_candidate(line, None) for line in lines if line.strip()] or [
            Candidate("", None, "empty")
        ]
    if isinstance(output, dict):
        ev = output.get("evidence")
        if ev is not None and not isinstance(ev, str):
            return None
        if isinstance(output.get("question"), str):
            return [_candidate(output["question"], ev)]
        qs = output.get("questions")
        if isinstance(qs, list) and all(isinstance(q, str) for q in qs):
            return [_candidate(q, ev) for q in qs] or [Candidate("", ev, "empty")]
        return None
    if isinstance(output, list):
        out: list[Candidate] = []
        for item in output:
            got = candidates(item) if isinstance(item, (str, dict)) else None
            if got is None:
                return None
            out += got
        return out or [Candidate("", None, "empty")]
    return None


def _candidate(line: str, evidence: str | None) -> Candidate:
    text = MARKER.sub("", line.strip(), count=1).strip().strip("\"'“”").strip()
    if not text:
        return Candidate("", evidence, "empty")
    if PREAMBLE.match(text) or (text.endswith(":") and "?" not in text):
        return Candidate(text, evidence, "preamble")
    return Candidate(text, evidence, "ok")


def locate(quote: str, passage: str) -> tuple[int, int] | None:
    """``(start, end)`` of ``quote`` in ``passage``: exactly, else with runs of whitespace
    folded (offsets still into ``passage``); None when it is not there."""
    quote = quote.strip()
    if not quote:
        return None
    at = passage.find(quote)
    if at >= 0:
        return at, at + len(quote)
    pattern = r"\s+".join(re.escape(w) for w in quote.split())
    m = re.search(pattern, passage)
    return (m.start(), m.end()) if m else None
