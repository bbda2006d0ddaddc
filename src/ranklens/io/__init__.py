"""The io floor: files <-> model. TREC qrels and runs, JSON and JSONL, Parquet runs,
BEIR folders, AutoRAG parquet, LlamaIndex QA JSON, CSV/TSV and JSONL datasets, TREC topics.

:func:`read_qrels`, :func:`read_run` and :func:`read_dataset` pick a reader from one table
of formats (:mod:`.formats`); :func:`register_format` adds one. Imports only the model.
"""

from __future__ import annotations

from pathlib import Path

from ..declared import data, declare, text
from ..declared import path as path_option
from ..model import Run
from .autorag import read_autorag
from .beir import read_beir
from .datasets import read_csv_dataset, read_jsonl_dataset
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
from .jsonl import read_qrels_json, read_run_json, write_run_jsonl
from .llamaindex import read_llamaindex_qa
from .parquet import read_run_parquet, write_run_parquet
from .trec import read_judgment_groups, write_qrels
from .trec import write_run as write_trec_run
from .versions import read_versions


def _is_beir(p: Path) -> bool:
    return p.is_dir() and ((p / "corpus.jsonl").exists() or (p / "qrels").is_dir())


def _is_autorag(p: Path) -> bool:
    return p.is_dir() and (p / "qa.parquet").exists()


register_format("qrels", read_qrels_json, suffixes=(".json", ".jsonl"))
register_format("run", read_run_json, suffixes=(".json", ".jsonl"))
register_format("run", read_run_parquet, suffixes=(".parquet",))
register_format(
    "dataset", read_beir, detect=_is_beir, name="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)"
)
register_format("dataset", read_autorag, detect=_is_autorag, name="AutoRAG folder (qa.parquet)")
register_format("dataset", read_autorag, suffixes=(".parquet",))
register_format("dataset", read_llamaindex_qa, suffixes=(".json",))
register_format("dataset", read_jsonl_dataset, suffixes=(".jsonl",))
register_format("dataset", read_csv_dataset, suffixes=(".csv", ".tsv"))


WRITE_RUN = declare("write_run", {
    "run": data("the run"),
    "path": path_option(None, "the file: .parquet, .jsonl, else a TREC run file"),
    "name": text(None, "the TREC file's run tag (None: the run's name)", none=True),
})  # fmt: skip


@WRITE_RUN.checks
def write_run(run: Run, path: str | Path, name: str | None = None) -> None:
    """Write a run in the format its path names: ``.parquet`` (query_id, doc_id, score,
    rank), ``.jsonl`` (one query per line), else a TREC run file (tagged ``name``)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        write_run_parquet(run, path)
    elif suffix == ".jsonl":
        write_run_jsonl(run, path)
    else:
        write_trec_run(run, path, name)


__all__ = [
    "Format",
    "coerce_qrels",
    "coerce_run",
    "find_format",
    "formats",
    "read_dataset",
    "read_judgment_groups",
    "read_qrels",
    "read_run",
    "read_versions",
    "register_format",
    "write_qrels",
    "write_run",
]
