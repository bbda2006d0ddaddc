"""Labelled query sets: queries (id → text), qrels and optionally a corpus.

Readers for the common formats live in :mod:`ranklens.io` (BEIR folders, AutoRAG parquet,
LlamaIndex QA JSON, JSONL, CSV, TREC topics); :func:`ranklens.read_dataset` picks one by
looking at the path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..declared import ParameterError, data, declare, mapping, text
from ..errors import InputError, require
from .mappings import check_query_keys
from .qrels import Qrels

DATASET = declare("Dataset", {
    "queries": data("{query id: text}"),
    "qrels": data("the labels (a Qrels or a dict of labels or groups)"),
    "corpus": data("{document id: {'text': ..., 'title': ..., 'metadata': {...}}} or None"),
    "name": text("dataset", "the dataset's name"),
    "info": mapping(None, "facts about the dataset (source, checks; None: none yet)",
                    empty=True, none=True),
})  # fmt: skip


@DATASET.checks
@dataclass
class Dataset:
    """Queries, their relevance labels and (optionally) the corpus they point into.

    ``corpus`` maps a document id to ``{"text": ..., "title": ..., "metadata": {...}}``.
    """

    queries: dict[str, str]
    qrels: Qrels
    corpus: dict[str, dict[str, Any]] | None = None
    name: str = "dataset"
    info: dict[str, Any] = None  # type: ignore[assignment]  # a new {} per dataset

    def __post_init__(self) -> None:
        if self.info is None:
            self.info = {}
        if self.corpus is not None and not isinstance(self.corpus, dict):
            raise ParameterError(
                f"Dataset: corpus must be a dict of documents or None, got "
                f"{type(self.corpus).__name__}"
            )
        if isinstance(self.queries, (str, bytes)):
            raise ParameterError(
                f"Dataset: queries must be {{query id: text}} or (id, text) pairs, got "
                f"{self.queries!r:.80}"
            )
        if not isinstance(self.qrels, Qrels):  # plain dicts of labels or groups
            self.qrels = Qrels.coerce(self.qrels)
        if not isinstance(self.queries, dict):
            self.queries = dict(self.queries)
        if not all(isinstance(q, str) for q in self.queries):  # integer ids read as strings
            check_query_keys(self.queries, f"dataset {self.name!r}: queries")
            self.queries = {
                str(q) if isinstance(q, int) else q: text for q, text in self.queries.items()
            }
        unlabelled = [q for q in self.qrels.query_ids if str(q) not in self.queries]
        if unlabelled:
            raise InputError(
                f"dataset {self.name!r}: {len(unlabelled)} labelled queries have no text, "
                f"e.g. {unlabelled[0]!r}"
            )

    def __len__(self) -> int:
        return len(self.queries)

    def __repr__(self) -> str:
        corpus = f", {len(self.corpus)} documents" if self.corpus is not None else ""
        return (
            f"Dataset({self.name!r}: {len(self.queries)} queries, "
            f"{len(self.qrels.query_ids)} labelled{corpus})"
        )

    @property
    def labelled_queries(self) -> dict[str, str]:
        """The queries that have labels, id → text."""
        return {str(q): self.queries[str(q)] for q in self.qrels.query_ids}

    def subset(self, query_ids: list[str]) -> Dataset:
        """The dataset restricted to some queries (the corpus is shared)."""
        keep = set(map(str, query_ids))
        return Dataset(
            {q: t for q, t in self.queries.items() if q in keep},
            self.qrels.subset(keep),
            self.corpus,
            self.name,
            dict(self.info),
        )

    def sample(self, queries: int, documents: int | None = None, seed: int = 0) -> Dataset:
        """A small copy for quick runs: ``queries`` labelled queries drawn at random, and a
        corpus of every document they label plus random others up to ``documents`` (the
        whole corpus when None). Raises when the labelled documents alone exceed
        ``documents``."""
        import numpy as np

        rng = np.random.default_rng(seed)
        labelled = sorted(self.labelled_queries)
        if queries < len(labelled):
            labelled = sorted(rng.choice(labelled, queries, replace=False).tolist())
        out = self.subset(labelled)
        if self.corpus is None or documents is None:
            return out
        needed = {str(d) for d in out.qrels.doc_ids} & set(self.corpus)
        if len(needed) > documents:
            raise InputError(
                f"dataset {self.name!r}: the {len(labelled)} sampled queries label "
                f"{len(needed)} documents, more than documents={documents}"
            )
        others = sorted(set(self.corpus) - needed)
        extra = rng.choice(others, min(documents - len(needed), len(others)), replace=False)
        keep = needed | set(extra.tolist())
        out.corpus = {d: v for d, v in self.corpus.items() if d in keep}
        sample = {"queries": queries, "documents": documents, "seed": seed}
        out.info = {**out.info, "sample": sample}
        return out

    def to_pandas(self) -> Any:
        """One row per (query, group, document): ``query_id, query, group, doc_id, grade``
        (plus ``text`` when the corpus is known)."""
        pd: Any = require("pandas", "pandas", "Dataset.to_pandas()")

        rows = []
        q = self.qrels
        for qc, dc, g, u in zip(q.q.tolist(), q.d.tolist(), q.grade.tolist(), q.unit.tolist()):
            qid, doc = str(q.query_ids[qc]), str(q.doc_ids[dc])
            row = {
                "query_id": qid,
                "query": self.queries.get(qid),
                "group": u,
                "doc_id": doc,
                "grade": g,
            }
            if self.corpus is not None:
                row["text"] = (self.corpus.get(doc) or {}).get("text")
            rows.append(row)
        df = pd.DataFrame(rows)
        if len(df):
            df["group"] = df.groupby("query_id")["group"].rank(method="dense").astype(int) - 1
        return df

    @classmethod
    def from_pandas(cls, df: Any, name: str = "dataframe") -> Dataset:
        """From a DataFrame with ``query_id``, ``query``, ``doc_id`` and optional ``grade``
        (default 1) and ``group`` columns (rows sharing a query and group form one group)."""
        for col in ("query_id", "query", "doc_id"):
            if col not in df.columns:
                raise InputError(f"{name}: missing column {col!r}")
        grades = df["grade"].tolist() if "grade" in df.columns else [1] * len(df)
        groups = df["group"].tolist() if "group" in df.columns else None
        qrels = Qrels.from_arrays(
            [str(x) for x in df["query_id"]],
            [str(x) for x in df["doc_id"]],
            grades,
            groups,
            source=name,
        )
        queries = {str(q): str(t) for q, t in zip(df["query_id"], df["query"])}
        return cls(queries, qrels, None, name)
