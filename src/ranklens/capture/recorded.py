"""What a :class:`~ranklens.Recorder` gives back for evaluation and export
(:class:`RecordedRetrievals`, the recorder's base): its retrievals as a
:class:`~ranklens.Run`, evaluated against labels, or written out as JSONL. Everything here
reads :meth:`records`, so spilled records count as in-memory ones do; records a recorder
let go (``spill=False``) are counted in ``recorder_counts["evicted"]``."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError, NoSharedQueryError, RanklensWarning
from ..evaluation import Evaluation, evaluate
from ..io import coerce_qrels
from ..model import Run
from ..model.spans import SpanLabels
from ..model.stages import StagedRun
from .chunks import chunk_run
from .hits import KeyLike, doc_metadata, key_name
from .matching import (
    ambiguity_note,
    matching_notes,
    no_match_message,
    recorded_run,
    warn_if_wrong_key,
)
from .records import Retrieval
from .run_checks import unmapped_message
from .stage_runs import staged_run


class RecordedRetrievals:
    """Evaluation and export of captured retrievals (the base of the Recorder)."""

    key: KeyLike
    name: str
    evicted: int

    def records(self) -> Iterator[Retrieval]:
        raise NotImplementedError

    def to_run(self, dataset: Any = None, match: str = "auto") -> Run:
        """The captured retrievals as a :class:`~ranklens.Run` keyed by query id (matched
        to ``dataset``'s queries by id, else by normalised text, when a dataset is given;
        the first successful retrieval of a query counts). Retrievals that no query id
        names are not silently left out: when none can be keyed, this is an error that
        says how to pass ids."""
        run, counts, _ = recorded_run(self.records(), dataset, match, self.name)
        if counts["matched"] == 0 and counts["unmatched"]:
            raise InputError(no_match_message("to_run()", counts, dataset))
        return run

    def evaluate(
        self, labels: Any, metrics: Any, *, match: str = "auto", **kwargs: Any
    ) -> Evaluation:
        """Evaluate the captured retrievals against a Dataset (queries matched by id, else
        by normalised text) or qrels (by id). Labelled queries the app never asked are
        left out (``missing="skip"``) unless ``missing="zero"`` is passed; recorded queries
        that match no label are counted in ``evaluation.recorder_counts``."""
        run, counts, matched = recorded_run(self.records(), labels, match, self.name)
        kwargs.setdefault("missing", "skip")
        if counts.get("matched", 1) == 0:  # never a mean over nothing, whatever `missing`
            raise NoSharedQueryError(no_match_message("evaluate()", counts, labels, match))
        qrels = coerce_qrels(labels)
        if isinstance(qrels, SpanLabels):  # evidence spans judge every chunk, not documents
            run = chunk_run(matched.items(), self.key, self.name)
        ev = evaluate(qrels, run, metrics, **kwargs)
        if self.evicted:
            counts["evicted"] = self.evicted
        ev.recorder_counts = counts  # type: ignore[attr-defined]  # read by the monitor
        ev.extra_notes += matching_notes(counts)
        ambiguous = ambiguity_note(counts)
        if ambiguous:
            warnings.warn(f"Recorder.evaluate: {ambiguous}", RanklensWarning, stacklevel=2)
        if not isinstance(qrels, SpanLabels):
            _warn_if_key_maps_no_hit(ev, matched.values(), self.name, self.key)
        warn_if_wrong_key(ev, matched, qrels, self.key)
        return ev

    def chunk_run(self, dataset: Any = None, match: str = "auto") -> Run:
        """The captured retrievals' chunks (every hit, with its source document and
        character range) keyed by the labelled queries they match (as :meth:`to_run`
        matches them): the run span labels judge."""
        _, counts, matched = recorded_run(self.records(), dataset, match, self.name)
        if counts["matched"] == 0 and counts["unmatched"]:
            raise InputError(no_match_message("chunk_run()", counts, dataset))
        return chunk_run(matched.items(), self.key, self.name)

    def staged(
        self, dataset: Any = None, match: str = "auto", *, chunks: bool = False
    ) -> StagedRun:
        """The captured retrievals' pipeline stages as runs (:class:`~ranklens.StagedRun`),
        keyed by the labelled queries they match (as :meth:`to_run` matches them; the
        first successful retrieval of a query counts): the stages the hooks recorded
        (``record(..., stages=...)``). ``chunks=True``: each stage's run of chunks, for
        span labels. Retrievals recorded without stages are failures of every stage
        (``NoStages``), never empty lists; none with stages is an error."""
        _, counts, matched = recorded_run(self.records(), dataset, match, self.name)
        if counts["matched"] == 0 and counts["unmatched"]:
            raise InputError(no_match_message("staged()", counts, dataset))
        return staged_run(matched.items(), self.key, self.name, chunks)

    def doc_metadata(self) -> dict[str, dict[str, Any]]:
        """``{document: metadata}`` of every document the app retrieved, named by the
        recorder's ``key``, from the first hit of each (string and integer fields): what
        ``ranklens.Versions.from_metadata(recorder, time="updated_at", group=...)`` reads.
        Needs a recorder that keeps metadata (``Recorder(metadata=True)``, or a key that
        reads it): otherwise an error, never a table of documents without times."""
        if "metadata" not in getattr(self, "needs", frozenset({"metadata"})):
            raise InputError(
                f"{self.name}: this recorder keeps no metadata of its hits (only what its "
                f"key={key_name(self.key)!r} reads); make it with Recorder(metadata=True) to "
                "read document times and version groups from what the app retrieves"
            )
        return doc_metadata(self.records(), self.key)

    def to_jsonl(self, path: str | Path) -> None:
        """Export every record, one JSON object a line."""
        with open(path, "w", encoding="utf-8") as fh:
            for rec in self.records():
                fh.write(rec.to_json() + "\n")


def _warn_if_key_maps_no_hit(ev: Evaluation, records: Any, name: str, key: Any) -> None:
    """``key=`` gave no document id for most recorded hits: the same warning as the
    runner's (:func:`~.run_checks.unmapped_message`), and a line in the evaluation's notes,
    never a silent zero."""
    ok = [r for r in records if r.ok]
    total = sum(len(r.hits) for r in ok)
    unmapped = sum(r.unmapped for r in ok)
    if unmapped and unmapped >= total / 2:
        message = unmapped_message(name, key, ok, unmapped, total)
        warnings.warn(f"Recorder.evaluate: {message}", RanklensWarning, stacklevel=3)
        ev.extra_notes.append(
            f"key={key_name(key)!r} gave no document id for {unmapped:,} of {total:,} "
            "recorded hits (dropped: see the warning for the fields they carry)"
        )
