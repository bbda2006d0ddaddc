"""AutoRAG parquet: ``qa.parquet`` (``qid``, ``query``, ``retrieval_gt``) and
``corpus.parquet`` (``doc_id``, ``contents``, ``metadata``). Needs pyarrow (the ``fast``
extra).

``retrieval_gt`` is grouped ground truth: a list of groups, any one id of a group finds it.
As AutoRAG's own loader does (its docs say otherwise), a bare string becomes ``[[s]]`` and
a 1-D list of ids becomes **one** group ``[ids]`` (any of them finds it); a 2-D list is kept.
A query whose ground truth is empty, or holds an empty group or an empty id, is one for which
AutoRAG's metrics return None: it is read with no ground truth (so the ``autorag``
convention leaves it out, counted) and listed in ``dataset.info["invalid_gt"]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError, require
from ..model import Dataset, Qrels, Run


def _read_table(path: Path, required: tuple[str, ...]) -> Any:
    try:
        pq: Any = require("pyarrow.parquet", "fast", "reading AutoRAG parquet files")
    except ImportError:  # pragma: no cover - needs the extra
        raise InputError(
            "reading AutoRAG parquet needs pyarrow: pip install 'ranklens[fast]'"
        ) from None
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read parquet ({exc})") from None
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise InputError(
            f"{path}: missing column {missing[0]!r} (has: {', '.join(table.column_names)})"
        )
    return table


def normalise_retrieval_gt(gt: Any, where: str) -> list[list[str]] | None:
    """AutoRAG's shapes → a list of groups; None when AutoRAG would score the query None."""
    if gt is None:
        return None
    if isinstance(gt, str):
        return [[gt]] if gt else None
    if not isinstance(gt, (list, tuple)):
        raise InputError(
            f"{where}: retrieval_gt must be a string or a list, got {type(gt).__name__}"
        )
    if not gt:
        return None
    if all(isinstance(x, str) for x in gt):
        groups = [list(gt)]  # AutoRAG's loader: a 1-D list is one OR group
    elif all(isinstance(x, (list, tuple)) for x in gt):
        groups = [list(x) for x in gt]
    else:
        raise InputError(f"{where}: retrieval_gt mixes ids and lists")
    for g in groups:
        if not g or any((not isinstance(d, str)) or d == "" for d in g):
            return None
    return groups


def read_autorag(path: str | Path, corpus: str | Path | None = None) -> Dataset:
    """Read ``qa.parquet`` (a folder holding it, or the file) and, when present,
    ``corpus.parquet`` beside it (or at ``corpus``)."""
    p = Path(path)
    qa_path = p / "qa.parquet" if p.is_dir() else p
    corpus_path = Path(corpus) if corpus else qa_path.with_name("corpus.parquet")
    table = _read_table(qa_path, ("qid", "query", "retrieval_gt"))
    qids = [str(x) for x in table.column("qid").to_pylist()]
    texts = table.column("query").to_pylist()
    gts = table.column("retrieval_gt").to_pylist()
    queries: dict[str, str] = {}
    groups: dict[str, list[list[str]]] = {}
    invalid: list[str] = []
    for row, (qid, text, gt) in enumerate(zip(qids, texts, gts)):
        where = f"{qa_path} row {row} (qid {qid!r})"
        if qid in queries:
            raise InputError(f"{where}: qid appears twice")
        if not isinstance(text, str):
            raise InputError(f"{where}: field 'query' must be a string")
        queries[qid] = text
        norm = normalise_retrieval_gt(gt, where)
        if norm is None:
            invalid.append(qid)
            groups[qid] = []
        else:
            groups[qid] = norm
    qrels = Qrels.from_groups(groups)
    docs = None
    if corpus_path.exists():
        ct = _read_table(corpus_path, ("doc_id", "contents"))
        meta = ct.column("metadata").to_pylist() if "metadata" in ct.column_names else None
        docs = {}
        for i, (did, text) in enumerate(
            zip(ct.column("doc_id").to_pylist(), ct.column("contents").to_pylist())
        ):
            if not isinstance(did, str) or not did:
                raise InputError(
                    f"{corpus_path} row {i}: field 'doc_id' must be a non-empty string"
                )
            docs[did] = {
                "text": text or "",
                "title": "",
                "metadata": {
                    k: (
                        str(v)
                        if v is not None and not isinstance(v, (str, int, float, bool))
                        else v
                    )
                    for k, v in (meta[i] or {}).items()
                }
                if meta
                else {},
            }
    return Dataset(
        queries,
        qrels,
        docs,
        name=qa_path.parent.name,
        info={"format": "autorag", "invalid_gt": invalid},
    )


def read_autorag_run(result_path: str | Path, qa_path: str | Path, name: str | None = None) -> Run:
    """AutoRAG's per-query retrieval results (``retrieved_ids`` lists, row i ↔ qa row i) as a
    ranked :class:`~ranklens.Run` in the retrieved order (duplicates kept)."""
    rp, qp = Path(result_path), Path(qa_path)
    table = _read_table(rp, ("retrieved_ids",))
    qids = [str(x) for x in _read_table(qp, ("qid",)).column("qid").to_pylist()]
    lists = table.column("retrieved_ids").to_pylist()
    if len(lists) != len(qids):
        raise InputError(f"{rp}: {len(lists)} result rows but {len(qids)} qa rows")
    qs = [q for q, ids in zip(qids, lists) for _ in (ids or [])]
    ds = [d for ids in lists for d in (ids or [])]
    empty = [q for q, ids in zip(qids, lists) if not ids]
    return Run.from_arrays(
        qs, ds, None, name=name or rp.name.split(".")[0], empty_queries=empty, source=str(rp)
    )
