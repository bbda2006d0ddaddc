"""The one table of file formats: which reader reads which path, and coercion of "anything
:func:`ranklens.evaluate` takes" into the model's objects.

A reader is registered for a kind (``"qrels"``, ``"run"`` or ``"dataset"``) and either file
suffixes (matched case-insensitively, longest first, with or without ``.gz``) or a
``detect(path)`` test (for folder layouts such as BEIR). Paths no format claims are TREC
files (qrels and runs) or an error naming the formats there are (datasets)::

    from ranklens.io import register_format

    register_format("run", read_my_run, suffixes=(".myrun",))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..declared import ParameterError, choice, data, declare, flag, function, names, text
from ..declared import path as path_option
from ..errors import InputError
from ..model import Qrels, QrelsLike, Run, RunLike
from .frames import is_frame, qrels_from_frame, run_from_frame
from .trec import read_trec_qrels, read_trec_run

KINDS = ("qrels", "run", "dataset")

PATH = path_option(None, "the file (or folder) to read")
READ_QRELS = declare("read_qrels", {
    "path": PATH,
    "subtopics": flag(False, "read TREC diversity qrels (topic subtopic docno judgment)"),
})  # fmt: skip
READ_RUN = declare("read_run", {
    "path": PATH,
    "name": text(None, "the run's name (None: the file's)", none=True),
})  # fmt: skip
READ_DATASET = declare("read_dataset", {
    "path": PATH,
    "split": text(None, "the qrels split of a BEIR folder (None: test)", none=True),
    "corpus": path_option(None, "the corpus file (False: skip the corpus; None: beside the labels)",
                   none=True, also=flag(None)),
    "kwargs": data("options of a registered reader"),
})  # fmt: skip
REGISTER_FORMAT = declare("register_format", {
    "kind": choice(None, KINDS, "what the reader reads"),
    "reader": function("reader(path, **options) returning a Qrels, Run or Dataset"),
    "suffixes": names((), "the file suffixes it claims (one text or a list)", single=True,
                      empty=True),
    "detect": function("detect(path) -> bool, for folder layouts", none=True),
    "name": text(None, "the format's name in messages (None: the reader's)", none=True),
})  # fmt: skip


@dataclass(frozen=True)
class Format:
    """A registered reader: ``kind``, ``reader(path, **kwargs)``, the ``suffixes`` it
    claims and/or a ``detect(path)`` test, and a ``name`` for messages."""

    kind: str
    reader: Callable[..., Any]
    suffixes: tuple[str, ...] = ()
    detect: Callable[[Path], bool] | None = None
    name: str = ""

    def claims(self, path: Path) -> int:
        """How strongly this format claims ``path``: the length of the matched suffix, a
        large number for a matching ``detect``, 0 for none."""
        if self.detect is not None and self.detect(path):
            return 1 << 16
        name = path.name.lower()
        if name.endswith(".gz"):
            name = name[:-3]
        return max((len(s) for s in self.suffixes if name.endswith(s.lower())), default=0)


_FORMATS: list[Format] = []


@REGISTER_FORMAT.checks
def register_format(
    kind: str,
    reader: Callable[..., Any],
    *,
    suffixes: Sequence[str] = (),
    detect: Callable[[Path], bool] | None = None,
    name: str | None = None,
) -> Format:
    """Register ``reader`` for ``kind`` files ending in ``suffixes`` (or folders passing
    ``detect``). A later registration wins over an earlier one that claims a path as
    strongly (so a project may replace a built-in reader)."""
    if not suffixes and detect is None:
        raise ParameterError(
            "register_format: suffixes must be a non-empty list of texts when no detect "
            "function is given, got []"
        )
    shown_name: str = name if name else getattr(reader, "__name__", "?")
    fmt = Format(kind, reader, tuple(suffixes), detect, shown_name)
    # registering the same reader again (a re-run notebook cell) replaces it
    _FORMATS[:] = [
        f for f in _FORMATS if (f.kind, f.name, f.suffixes) != (kind, fmt.name, fmt.suffixes)
    ]
    _FORMATS.insert(0, fmt)
    return fmt


def formats(kind: str | None = None) -> list[Format]:
    """The registered formats (of one kind), the most recently registered first."""
    return [f for f in _FORMATS if kind is None or f.kind == kind]


def find_format(kind: str, path: str | Path) -> Format | None:
    """The format that claims ``path`` most strongly, or None."""
    p = Path(path)
    best, strength = None, 0
    for fmt in formats(kind):
        s = fmt.claims(p)
        if s > strength:
            best, strength = fmt, s
    return best


@READ_QRELS.checks
def read_qrels(path: str | Path, *, subtopics: bool = False) -> Qrels:
    """Read qrels from a file: TREC (``qid iter docno rel``), ``.json`` or ``.jsonl``, or
    any registered format. ``subtopics=True`` reads TREC diversity qrels
    (``topic subtopic docno judgment``; see :func:`~ranklens.io.trec.read_trec_qrels`)."""
    fmt = find_format("qrels", path)
    if subtopics:
        if fmt is not None:
            raise InputError(f"{path}: subtopics=True reads TREC diversity qrels only")
        return read_trec_qrels(path, subtopics=True)
    if fmt is None:
        return read_trec_qrels(path)
    return _made(fmt, path, fmt.reader(path), Qrels)


@READ_RUN.checks
def read_run(path: str | Path, name: str | None = None) -> Run:
    """Read a run from a file: TREC (``qid Q0 docno rank sim run_id``), ``.json`` or
    ``.jsonl``, or any registered format. The name is ``name``, else the file's."""
    fmt = find_format("run", path)
    if fmt is None:
        return read_trec_run(path, name=name)
    return _made(fmt, path, fmt.reader(path, name=name), Run)


@READ_DATASET.checks
def read_dataset(
    path: str | Path,
    *,
    split: str | None = None,
    corpus: bool | str | Path | None = None,
    **kwargs: Any,
) -> Any:
    """Read a dataset (queries, labels and, when the files have one, the corpus), choosing
    the reader from the path:

    * a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``):
      ``split`` names the qrels file (default ``"test"``); ``corpus=False`` skips the
      corpus (faster when only ids are needed);
    * an AutoRAG folder or ``qa.parquet`` (grouped ground truth), with ``corpus.parquet``
      beside it or at ``corpus=PATH``;
    * a LlamaIndex ``EmbeddingQAFinetuneDataset`` ``.json`` (``relevant_docs``);
    * a ``.jsonl`` or ``.csv``/``.tsv`` file (one schema: docs/datasets.md);
    * any format added with :func:`register_format` (``kwargs`` go to its reader).

    Returns a :class:`~ranklens.Dataset`. A path that does not exist, a folder no reader
    recognises and a malformed row are errors naming the path, row and field."""
    p = Path(path)
    if not p.exists():
        parent = p.parent if str(p.parent) not in ("", ".") else Path(".")
        near = sorted(x.name for x in parent.iterdir())[:8] if parent.is_dir() else []
        raise InputError(
            f"{p}: no such file or folder" + (f" (in {parent}: {', '.join(near)})" if near else "")
        )
    fmt = find_format("dataset", p)
    if fmt is None:
        names = ", ".join(f.name for f in formats("dataset"))
        what = "folder" if p.is_dir() else "file"
        raise InputError(f"{p}: no dataset reader claims this {what} (formats: {names})")
    if split is not None:
        kwargs["split"] = split
    if corpus is not None:
        kwargs["corpus"] = corpus
    from ..model import Dataset

    try:
        return _made(fmt, p, fmt.reader(p, **kwargs), Dataset)
    except TypeError as exc:
        if kwargs and "argument" in str(exc):
            raise InputError(
                f"{p}: the {fmt.name} reader takes no {', '.join(map(repr, kwargs))} ({exc})"
            ) from None
        raise


T = TypeVar("T")


def _made(fmt: Format, path: Any, made: object, kind: type[T]) -> T:
    """What a registered reader returned, if it is a ``kind``; else an error naming the
    format and the file (a reader returning None would fail far from its cause)."""
    if isinstance(made, kind):
        return made
    raise InputError(
        f"{path}: the {fmt.name} reader (register_format) returned "
        f"{type(made).__name__}, not a {kind.__name__}"
    )


def coerce_qrels(obj: QrelsLike | Any) -> Qrels:
    """:class:`Qrels` from a Qrels, a path (read with :func:`read_qrels`), a
    :class:`~ranklens.Dataset` (its labels), a dict of labels or groups, or a data frame
    (:mod:`.frames`)."""
    if isinstance(obj, (str, Path)):
        return read_qrels(obj)
    if is_frame(obj):
        return qrels_from_frame(obj)
    if not isinstance(obj, (Qrels, Mapping)) and isinstance(getattr(obj, "qrels", None), Qrels):
        warn_dataset_checks(obj)
        labels: Qrels = obj.qrels  # a Dataset
        return labels
    return Qrels.coerce(obj)


def warn_dataset_checks(dataset: Any) -> None:
    """A dataset :func:`ranklens.check_dataset` found problems in (``info["checks"]``)
    warns with them each time its labels are taken: every evaluation path passes here."""
    info = getattr(dataset, "info", None)
    found = info.get("checks") if isinstance(info, dict) else None
    if found:
        import warnings

        from ..errors import RanklensWarning

        warnings.warn(
            f"dataset {getattr(dataset, 'name', '?')!r}: check_dataset found " + "; ".join(found),
            RanklensWarning,
            stacklevel=3,
        )


def coerce_run(obj: RunLike, *, name: str | None = None) -> Run:
    """A :class:`Run` from a Run, a path (read with :func:`read_run`), a dict, a data
    frame (:mod:`.frames`), or a runner's result (its ``run``: the answered queries,
    failures recorded)."""
    if isinstance(obj, (str, Path)):
        return read_run(obj, name=name)
    if is_frame(obj):
        return run_from_frame(obj, name=name or "run")
    if hasattr(obj, "records"):
        answered = getattr(obj, "run", None)
        if isinstance(answered, Run):
            return answered
    return Run.coerce(obj, name=name)
