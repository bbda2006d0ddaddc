"""TREC topic files: ``qid<TAB>text`` lines (TREC DL, BEIR/Anserini ``.tsv``) or SGML
``<top>`` blocks with ``<num>`` and ``<title>``."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from .files import read_text

_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<|\Z)", re.S | re.I)


def read_topics(path: str | Path) -> dict[str, str]:
    """Read TREC topics: ``qid<TAB>text`` lines, or SGML ``<top>`` blocks (``<num>``,
    ``<title>``)."""
    p = Path(path)
    text = read_text(p)
    topics: dict[str, str] = {}
    if "<top>" in text.lower():
        for i, block in enumerate(_TOP.findall(text), 1):
            num, title = _NUM.search(block), _TITLE.search(block)
            if not num or not title:
                raise InputError(f"{p}: topic block {i} lacks <num> or <title>")
            topics[num.group(1)] = " ".join(title.group(1).split())
        return topics
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t", 1)
        if len(parts) != 2 or not parts[0]:
            raise InputError(f"{p}:{lineno}: expected 'qid<TAB>text'")
        if parts[0] in topics:
            raise InputError(f"{p}:{lineno}: topic {parts[0]!r} appears twice")
        topics[parts[0]] = parts[1].strip()
    return topics
