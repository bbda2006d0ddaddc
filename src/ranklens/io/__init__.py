"""The io floor: files <-> model. TREC qrels and runs, JSON and JSONL, BEIR folders,
AutoRAG parquet, LlamaIndex QA JSON, CSV/TSV and JSONL datasets, TREC topics.

:func:`read_qrels`, :func:`read_run` and :func:`read_dataset` pick a reader from one table
of formats (:mod:`.formats`); :func:`register_format` adds one. Imports only the model.
"""

from __future__ import annotations

from pathlib import Path

from .formats import (
    Format,
    coerce_qrels,
    coerce_run,
    find_format,
    formats,
    read_dataset,
    read_qrels,
    read_run,
    register_format,
)
from .trec import write_qrels, write_run


def _is_beir(p: Path) -> bool:
    return p.is_dir() and ((p / "corpus.jsonl").exists() or (p / "qrels").is_dir())


def _is_autorag(p: Path) -> bool:
    return p.is_dir() and (p / "qa.parquet").exists()


def _lazy(module: str, name: str):
    """A reader that imports its module on first use (parquet needs pyarrow, and so on)."""

    def reader(*args, **kwargs):
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{module}"), name)(*args, **kwargs)

    reader.__name__ = name
    return reader


register_format("qrels", _lazy("jsonl", "read_qrels_json"), suffixes=(".json", ".jsonl"))
register_format("run", _lazy("jsonl", "read_run_json"), suffixes=(".json", ".jsonl"))
register_format(
    "dataset",
    _lazy("beir", "read_beir"),
    detect=_is_beir,
    name="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)",
)
register_format(
    "dataset",
    _lazy("autorag", "read_autorag"),
    detect=_is_autorag,
    name="AutoRAG folder (qa.parquet)",
)
register_format("dataset", _lazy("autorag", "read_autorag"), suffixes=(".parquet",))
register_format("dataset", _lazy("llamaindex", "read_llamaindex_qa"), suffixes=(".json",))
register_format("dataset", _lazy("tables", "read_jsonl_dataset"), suffixes=(".jsonl",))
register_format("dataset", _lazy("tables", "read_csv_dataset"), suffixes=(".csv", ".tsv"))

__all__ = [
    "Format",
    "coerce_qrels",
    "coerce_run",
    "find_format",
    "formats",
    "read_dataset",
    "read_qrels",
    "read_run",
    "register_format",
    "write_qrels",
    "write_run",
]
