""":class:`Synthesis`: what :func:`ranklens.synthesize` made, counted and kept."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Dataset
from .provenance import Provenance

LABELS = {
    "kept": "kept",
    "failed": "generator failed (error or timeout)",
    "junk": "junk answer (no known shape)",
    "empty": "empty",
    "preamble": "preamble lines",
    "duplicate": "duplicates",
    "near_duplicate": "near-duplicates",
    "copies_passage": "copy their passage",
    "ambiguous": "answerable from many passages",
}


@dataclass
class Synthesis:
    """A synthetic test set: ``dataset`` (the kept questions, each labelled with its
    source document; the corpus), ``provenance`` (every candidate and failed passage, with
    its status), ``info`` (passages asked, generator calls made now and answers read from
    the log, seconds, ``cost``)."""

    dataset: Dataset
    provenance: Provenance
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        """Rows per status (kept, and each filter's drops)."""
        return self.provenance.counts()

    @property
    def failures(self) -> dict[tuple[str, tuple[int, int]], str]:
        """``(doc_id, (start, end)) -> error`` of every passage the generator failed on."""
        return {
            (r.doc_id, (r.passage[0], r.passage[1])): r.detail
            for r in self.provenance
            if r.status == "failed"
        }

    def overlap_quantiles(self) -> dict[str, float]:
        """Median and 90th percentile of the kept questions' overlap with their passage."""
        o = np.array([r.overlap for r in self.provenance.kept() if r.overlap is not None])
        if not len(o):
            return {}
        return {"median": float(np.median(o)), "p90": float(np.quantile(o, 0.9))}

    def summary(self) -> str:
        """A few lines: passages, calls, what each filter dropped, the overlap."""
        c, i = self.counts, self.info
        dropped = ", ".join(f"{c[s]} {LABELS[s]}" for s in LABELS if s != "kept" and c.get(s))
        q = self.overlap_quantiles()
        cost = f", cost {i['cost']:g}" if i.get("cost") is not None else ""
        lines = [
            f"{c['kept']} questions kept from {i.get('passages')} passages by "
            f"{i.get('generator')} ({i.get('calls')} generator calls, "
            f"{i.get('resumed')} answers from the log, {i.get('seconds')} s{cost}).",
            f"Dropped: {dropped or 'none'}.",
        ]
        if q:
            lines.append(
                f"Overlap with their passage (share of word bigrams copied): median "
                f"{q['median']:.2f}, 90th percentile {q['p90']:.2f}."
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        kept, passages = self.counts["kept"], self.info.get("passages")
        return f"Synthesis({kept} questions from {passages} passages)"

    def write(self, folder: str | Path) -> Path:
        """The test set as a BEIR folder (``corpus.jsonl``, ``queries.jsonl``,
        ``qrels/test.tsv``) plus ``provenance.jsonl``."""
        from ..io.beir import write_beir

        folder = Path(folder)
        write_beir(self.dataset, folder)
        self.provenance.to_jsonl(folder / "provenance.jsonl")
        return folder
