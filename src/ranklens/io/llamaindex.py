"""LlamaIndex's ``EmbeddingQAFinetuneDataset`` JSON: ``{"queries": {qid: text}, "corpus":
{node_id: text}, "relevant_docs": {qid: [node_id, ...]}, "mode": "text"}``.

The class left llama-index-core (0.14.21), so the JSON is read directly. ``mode`` is
optional (files from 2023 lack it) and must be ``"text"`` when present.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ..model import Dataset, Qrels
from .files import read_text


def read_llamaindex_qa(path: str | Path) -> Dataset:
    """Read an ``EmbeddingQAFinetuneDataset`` JSON file (binary labels: every listed node
    id is relevant)."""
    p = Path(path)
    try:
        data = json.loads(read_text(p))
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InputError(f"{p}: expected a JSON object")
    for key in ("queries", "corpus", "relevant_docs"):
        if not isinstance(data.get(key), dict):
            raise InputError(f"{p}: field {key!r} must be an object")
    if data.get("mode", "text") != "text":
        raise InputError(f"{p}: field 'mode' is {data['mode']!r}; only 'text' is supported")
    queries = {}
    for qid, text in data["queries"].items():
        if not isinstance(text, str):
            raise InputError(f"{p}: queries[{qid!r}] must be a string")
        queries[qid] = text
    corpus = {}
    for did, text in data["corpus"].items():
        if not isinstance(text, str):
            raise InputError(f"{p}: corpus[{did!r}] must be a string")
        corpus[did] = {"text": text, "title": "", "metadata": {}}
    labels = {}
    for qid, ids in data["relevant_docs"].items():
        if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
            raise InputError(f"{p}: relevant_docs[{qid!r}] must be a list of node ids")
        if qid not in queries:
            raise InputError(f"{p}: relevant_docs[{qid!r}] names a query not in 'queries'")
        missing = [x for x in ids if x not in corpus]
        if missing:
            raise InputError(
                f"{p}: relevant_docs[{qid!r}] names node {missing[0]!r}, which is not in 'corpus'"
            )
        labels[qid] = list(dict.fromkeys(ids))
    return Dataset(
        queries, Qrels.from_dict(labels), corpus, name=p.stem, info={"format": "llamaindex"}
    )


def write_llamaindex_qa(dataset: Dataset, path: str | Path) -> None:
    """Write a dataset as ``EmbeddingQAFinetuneDataset`` JSON (relevant = grade ≥ 1)."""
    relevant = {
        q: [d for d, g in labels.items() if g >= 1] for q, labels in dataset.qrels.to_dict().items()
    }
    corpus = {d: doc.get("text", "") for d, doc in (dataset.corpus or {}).items()}
    Path(path).write_text(
        json.dumps(
            {
                "queries": dataset.queries,
                "corpus": corpus,
                "relevant_docs": relevant,
                "mode": "text",
            },
            indent=4,
        ),
        encoding="utf-8",
    )
