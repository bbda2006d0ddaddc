"""An offline stand-in for an LLM question generator, for tests and the demo.

:class:`OfflineGenerator` is **not** a question generator to evaluate a retriever with: it
is deterministic, extractive and needs no model, so tests, docs and ``ranklens demo`` can
run :func:`ranklens.synthesize` end to end without a network. It picks a passage's most
salient sentence (the most names and numbers, then the longest) and turns it into a cloze
question: the answer (a number, else the last name) replaced by a question word (Lewis,
Denoyer & Riedel, *Unsupervised question answering by cloze translation*, ACL 2019, the
"identity" translation). Its questions copy their passage by construction, which is what
the copy filter and the leakage check are there to catch.
"""

from __future__ import annotations

import re
from typing import Any

from ..declared import ParameterError, declare, shown, text
from .text import sentences

OFFLINE = declare(
    "OfflineGenerator",
    {"name": text("offline-stand-in", "recorded as the generator in each query's provenance")},
)

NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
PRONOUN = re.compile(r"^(It|They|This|These|He|She|Its)\b")


@OFFLINE.checks
class OfflineGenerator:
    """``generator(passage) -> {"question": ..., "evidence": ...}``: an offline,
    deterministic stand-in for an LLM (see the module docstring). ``name`` is recorded as
    the generator in each query's provenance."""

    name = "offline-stand-in"

    def __init__(self, name: str = "offline-stand-in") -> None:
        self.name = name

    def __call__(self, passage: str) -> dict[str, Any]:
        """The question of ``passage`` (a text; anything else is a named error)."""
        if not isinstance(passage, str):
            raise ParameterError(f"OfflineGenerator: passage must be a text, got {shown(passage)}")
        spans = sentences(passage)
        if not spans:
            return {"question": "", "evidence": ""}
        subject = _subject(passage[spans[0][0] : spans[0][1]])
        best = max(spans, key=lambda s: (_salience(passage[s[0] : s[1]]), s[1] - s[0], -s[0]))
        evidence = passage[best[0] : best[1]]
        return {"question": cloze(evidence, subject), "evidence": evidence}

    def __repr__(self) -> str:
        default = self.name == "offline-stand-in"
        return "OfflineGenerator()" if default else f"OfflineGenerator(name={self.name!r})"


def _salience(sentence: str) -> int:
    body = sentence.split(None, 1)[1] if " " in sentence else ""
    return len(NUMBER.findall(sentence)) + len(NAME.findall(body))


def _subject(first: str) -> str:
    m = NAME.match(first.strip())
    return m.group(0) if m else ""


def cloze(sentence: str, subject: str = "") -> str:
    """``sentence`` as a question: a leading pronoun replaced by ``subject``, the answer
    (the first number, else the last name after the first word) by a question word."""
    s = sentence.strip().rstrip(".!?")
    if subject and PRONOUN.match(s):
        s = PRONOUN.sub(subject, s, count=1)
    m = NUMBER.search(s)
    if m:
        word = "what year" if re.fullmatch(r"1[5-9]\d\d|20\d\d", m.group(0)) else "how many"
        return (s[: m.start()] + word + s[m.end() :]).strip() + "?"
    names = [n for n in NAME.finditer(s) if n.start() > 0]
    if names:
        n = names[-1]
        return (s[: n.start()] + "what" + s[n.end() :]).strip() + "?"
    return f"What is true of this: {s}?"
