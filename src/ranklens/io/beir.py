"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

``corpus.jsonl``: ``{"_id", "title", "text", "metadata"}`` per line; ``queries.jsonl``:
``{"_id", "text", "metadata"}``; qrels: tab-separated ``query-id  corpus-id  score`` with a
header line. Every malformed line is an error naming the file, the line and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import Dataset, Qrels
from .files import open_text
from .records import json_records


def _field(path: Path, lineno: int, rec: dict[str, Any], key: str, kind: type = str) -> Any:
    if key not in rec:
        raise InputError(f"{path}:{lineno}: missing field {key!r}")
    value = rec[key]
    if kind is str and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, kind) or (kind is str and key == "_id" and value == ""):
        raise InputError(f"{path}:{lineno}: field {key!r} must be a non-empty {kind.__name__}")
    return value


def read_beir_qrels(path: str | Path) -> Qrels:
    """A BEIR qrels TSV (``query-id corpus-id score`` with a header)."""
    p = Path(path)
    qs: list[str] = []
    ds: list[str] = []
    gs: list[int] = []
    with open_text(p) as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\r\n").split("\t")
            if lineno == 1 and parts[:1] == ["query-id"]:
                continue
            if not line.strip():
                continue
            if len(parts) != 3:
                raise InputError(
                    f"{p}:{lineno}: expected 3 tab-separated fields "
                    f"(query-id corpus-id score), found {len(parts)}"
                )
            try:
                gs.append(int(parts[2]))
            except ValueError:
                raise InputError(f"{p}:{lineno}: score {parts[2]!r} is not an integer") from None
            qs.append(parts[0])
            ds.append(parts[1])
    return Qrels.from_arrays(qs, ds, gs, source=str(p))


def read_corpus(path: str | Path) -> dict[str, dict[str, Any]]:
    """A BEIR ``corpus.jsonl``: ``{doc_id: {"title", "text", "metadata"}}``; a repeated or
    malformed document is an error naming the line."""
    cp = Path(path)
    docs: dict[str, dict[str, Any]] = {}
    for lineno, rec in json_records(cp):
        did = _field(cp, lineno, rec, "_id")
        if did in docs:
            raise InputError(f"{cp}:{lineno}: document {did!r} appears twice")
        docs[did] = {
            "title": rec.get("title", "") or "",
            "text": _field(cp, lineno, rec, "text"),
            "metadata": rec.get("metadata") or {},
        }
    return docs


def read_beir(folder: str | Path, split: str = "test", corpus: bool = True) -> Dataset:
    """Read a BEIR folder; ``split`` names ``qrels/<split>.tsv``; ``corpus=False`` skips
    the corpus (faster when only ids are needed)."""
    root = Path(folder)
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        have = sorted(x.stem for x in (root / "qrels").glob("*.tsv"))
        raise InputError(f"{root}: no qrels for split {split!r} (found: {', '.join(have)})")
    qrels = read_beir_qrels(qrels_path)
    queries: dict[str, str] = {}
    qp = root / "queries.jsonl"
    for lineno, rec in json_records(qp):
        qid = _field(qp, lineno, rec, "_id")
        if qid in queries:
            raise InputError(f"{qp}:{lineno}: query {qid!r} appears twice")
        queries[qid] = _field(qp, lineno, rec, "text")
    docs = None
    if corpus:
        cp = root / "corpus.jsonl"
        docs = read_corpus(cp)
        unknown = [d for d in qrels.doc_ids if d not in docs]
        if unknown:
            raise InputError(
                f"{qrels_path}: {len(unknown)} judged documents are not in "
                f"{cp.name}, e.g. {unknown[0]!r}"
            )
    return Dataset(queries, qrels, docs, name=root.name, info={"format": "beir", "split": split})


def write_beir(dataset: Dataset, folder: str | Path, split: str = "test") -> None:
    """Write a dataset with plain labels as a BEIR folder."""
    if dataset.qrels.grouped:
        raise InputError("grouped ground truth has no BEIR form; write JSONL instead")
    root = Path(folder)
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    with open(root / "queries.jsonl", "w", encoding="utf-8") as fh:
        for qid, text in dataset.queries.items():
            fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
    if dataset.corpus is not None:
        with open(root / "corpus.jsonl", "w", encoding="utf-8") as fh:
            for did, doc in dataset.corpus.items():
                fh.write(
                    json.dumps(
                        {
                            "_id": did,
                            "title": doc.get("title", ""),
                            "text": doc.get("text", ""),
                            "metadata": doc.get("metadata", {}),
                        }
                    )
                    + "\n"
                )
    with open(root / "qrels" / f"{split}.tsv", "w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for qid, labels in dataset.qrels.to_dict().items():
            for did, g in labels.items():
                fh.write(f"{qid}\t{did}\t{g}\n")
