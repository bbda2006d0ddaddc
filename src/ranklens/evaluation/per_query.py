"""Every query's values written to a file: Parquet (``ranklens[fast]``), CSV, TSV or
JSONL, chosen by the path's suffix; one row per query (``query_id`` then one column per
metric, under the metric's name), in the evaluation's query order."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from ..errors import InputError, require
from .options import WRITE_PER_QUERY

SUFFIXES = (".parquet", ".csv", ".tsv", ".jsonl")


@WRITE_PER_QUERY.checks
def write_per_query(ev: Any, path: str | Path) -> Path:
    """Write ``ev``'s per-query values (an :class:`~ranklens.Evaluation`) to ``path``
    (``.parquet``, ``.csv``, ``.tsv`` or ``.jsonl``); returns the path.

    >>> import ranklens, tempfile, pathlib
    >>> ev = ranklens.evaluate({"q1": ["a"], "q2": ["b"]}, {"q1": ["a"], "q2": ["c", "b"]}, "mrr")
    >>> out = write_per_query(ev, pathlib.Path(tempfile.mkdtemp()) / "q.csv")
    >>> print(out.read_text().strip())
    query_id,mrr
    q1,1.0
    q2,0.5
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(f"{p}: per-query values are written as {', '.join(SUFFIXES)}")
    names = [mt.name for mt in ev.metrics]
    qids = [str(q) for q in ev.query_ids]
    if suffix == ".parquet":
        try:
            pq: Any = require("pyarrow.parquet", "fast", "writing per-query values as Parquet")
        except ImportError:  # pragma: no cover - needs the extra
            raise InputError("Parquet needs pyarrow: pip install 'ranklens[fast]'") from None
        import pyarrow as pa

        columns = {"query_id": pa.array(qids, pa.string())}
        columns.update({n: pa.array(ev.per_query[n]) for n in names})
        pq.write_table(pa.table(columns), p)
        return p
    cols = [ev.per_query[n].tolist() for n in names]
    with open(p, "w", encoding="utf-8", newline="") as fh:
        if suffix == ".jsonl":
            for i, q in enumerate(qids):
                row = {"query_id": q, **{n: c[i] for n, c in zip(names, cols)}}
                fh.write(json.dumps(row) + "\n")
        else:  # the csv module quotes ids holding the separator, quotes or newlines
            w = csv.writer(fh, delimiter="\t" if suffix == ".tsv" else ",")
            w.writerow(["query_id", *names])
            w.writerows([q, *(repr(c[i]) for c in cols)] for i, q in enumerate(qids))
    return p
