"""SciFact's rationale sentences as evidence spans: a labelled set for comparing chunkings.

    from scifact_spans import read_scifact_spans   # with examples/ on sys.path
    dataset = read_scifact_spans("../shared/data/scifact", split="dev")
    dataset.qrels        # ranklens.SpanLabels, with the abstracts' texts
    dataset.corpus       # {doc_id: {"title", "text"}}: every abstract

SciFact (Wadden et al., "Fact or Fiction: Verifying Scientific Claims", EMNLP 2020) pairs
each claim with the abstracts that support or contradict it and, in each, its *rationales*:
"a minimal collection of sentences sufficient to justify the label", given as sentence
indices into the abstract. The release (``scifact.zip``: ``claims_{train,validation}.csv``,
``corpus_train.csv`` with each abstract as a list of sentences) is read as it is; the
document text is the sentences joined by one space (``" ".join``, BEIR's recipe, so the
text equals BEIR's ``corpus.jsonl``), and sentence ``i`` of a document starts at
``sum(len(s_j) + 1 for j < i)``. A span covers the sentence without the whitespace some
sentences carry at their edges.

How rationales become units: **each rationale sentence is its own unit** (one span, one
group of one). A rationale is a *minimal* set: every one of its sentences is needed, so no
sentence of a rationale is an alternative to another, and a group of alternatives ("any one
span finds it") would credit half a rationale as a whole one. Two rationales of one
abstract are alternatives to each other, but an alternative of *sets* of spans is not a
group either. Counting every rationale sentence is what SciFact's own sentence-level
evaluation does (recall over all gold rationale sentences; it credits a sentence only when
the rest of its rationale is found too, which units of one sentence do not require: that
matters for the 7% of the dev set's rationales that have more than one sentence). Recall
of these units is the share of the evidence sentences found. SciFact's abstract-level
view ("one rationale suffices") is the id-level one: the evidence abstracts as documents
(``to_document_labels``). Stance (SUPPORT/CONTRADICT) is not a grade (both are evidence):
every span has grade 1, and the stance of each (claim, abstract) is kept in
``dataset.info["stance"]``.

Claims without evidence (SciFact's NOT ENOUGH INFO; BEIR still lists the abstracts they
cite as relevant) have no span: they are left out and counted in
``dataset.info["without_evidence"]``.
"""

from __future__ import annotations

import ast
import csv
import io
import re
import tokenize
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ranklens

SPLITS = {"train": "claims_train.csv", "dev": "claims_validation.csv"}
SPLITS["validation"] = SPLITS["dev"]


def read_scifact_spans(root: str | Path, split: str = "dev") -> ranklens.Dataset:
    """SciFact ``split`` (``"dev"``, also called ``"validation"``: BEIR's ``test``; or
    ``"train"``) as a :class:`ranklens.Dataset` whose ``qrels`` are
    :class:`ranklens.SpanLabels` (each rationale sentence a span, with the abstracts'
    texts) and whose ``corpus`` holds every abstract. ``root``: the folder holding
    ``raw/scifact.zip`` (or ``scifact.zip``), or the zip itself; a missing file is a
    ``FileNotFoundError`` naming it. See the module docstring for the rules."""
    if split not in SPLITS:
        hint = (
            " (SciFact's test claims carry no evidence; BEIR's 'test' split is SciFact's dev "
            "split: split='dev')"
            if split == "test"
            else ""
        )
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}{hint}")
    path = _zip_path(Path(root))
    with zipfile.ZipFile(path) as z:
        sentences, titles = read_abstracts(_csv_rows(z, "corpus_train.csv"))
        claims = list(_csv_rows(z, SPLITS[split]))
    texts = {d: " ".join(s) for d, s in sentences.items()}
    queries, records, stance, without = {}, [], {}, []
    for row in claims:
        qid, doc = row["id"], row["evidence_doc_id"].strip()
        if not doc:
            without.append(qid)
            continue
        if doc not in sentences:
            raise ValueError(f"{path}: claim {qid} cites abstract {doc}, not in the corpus")
        queries[qid] = row["claim"]
        stance[(qid, doc)] = row["evidence_label"]
        for i in _ints(row["evidence_sentences"]):
            if not 0 <= i < len(sentences[doc]):
                raise ValueError(
                    f"{path}: claim {qid}: sentence {i} of abstract {doc}, which has "
                    f"{len(sentences[doc])}"
                )
            start, end = sentence_span(sentences[doc], i)
            records.append({"query_id": qid, "doc_id": doc, "start": start, "end": end})
    records = list({(r["query_id"], r["doc_id"], r["start"]): r for r in records}.values())
    labels = ranklens.SpanLabels.from_records(records, texts, source=f"{path} ({split})")
    without = sorted(set(without) - set(queries), key=int)
    corpus = {d: {"title": titles[d], "text": t} for d, t in texts.items()}
    info = {"split": split, "stance": stance, "without_evidence": without, "source": str(path)}
    return ranklens.Dataset(queries, labels, corpus, name=f"scifact-{split}", info=info)


def sentence_span(sentences: list[str], i: int) -> tuple[int, int]:
    """The character range of sentence ``i`` in ``" ".join(sentences)``, without the
    whitespace at its edges: ``[o + lead, o + len(s_i) - trail)`` where
    ``o = Σ_{j<i} (len(s_j) + 1)``."""
    offset = sum(len(s) + 1 for s in sentences[:i])
    s = sentences[i]
    lead = len(s) - len(s.lstrip())
    return offset + lead, offset + len(s.rstrip())


def to_document_labels(labels: ranklens.SpanLabels) -> ranklens.Qrels:
    """The documents that hold each query's evidence, as plain id labels (grade 1):
    SciFact's abstract-level view, and what span labels reduce to when a chunk is a whole
    document."""
    docs: dict[str, dict[str, int]] = {}
    for r in labels.span_records():
        docs.setdefault(r["query_id"], {})[r["doc_id"]] = 1
    return ranklens.Qrels.coerce(docs)


def sample(dataset: ranklens.Dataset, claims: int, documents: int, seed: int = 0) -> Any:
    """``claims`` claims drawn at random, and a corpus of the abstracts holding their
    evidence plus random other abstracts (distractors) up to ``documents``; the span
    labels keep only the texts of that corpus."""
    small = dataset.sample(claims, documents, seed=seed)
    texts = {d: v["text"] for d, v in small.corpus.items()}
    small.qrels = small.qrels.with_texts(texts)
    return small


def read_abstracts(rows: Iterable[dict[str, str]]) -> tuple[dict[str, list[str]], dict]:
    """Each abstract's sentences and title from ``corpus_train.csv``, whose ``abstract``
    column is a printed array of Python string literals (``['First.' 'Second.']``, on
    several lines): the literals are read one by one, never concatenated."""
    sentences, titles = {}, {}
    for row in rows:
        sentences[row["doc_id"]] = _literals(row["abstract"], row["doc_id"])
        titles[row["doc_id"]] = row["title"]
    return sentences, titles


def _literals(printed: str, doc: str) -> list[str]:
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(printed).readline):
            if tok.type == tokenize.STRING:
                out.append(ast.literal_eval(tok.string))
            elif tok.type == tokenize.OP and tok.string not in "[]":
                raise ValueError(f"unexpected {tok.string!r}")
    except (tokenize.TokenError, ValueError, SyntaxError) as e:
        raise ValueError(f"abstract {doc}: not a printed list of sentences ({e})") from None
    if not out:
        raise ValueError(f"abstract {doc} has no sentence")
    return out


def _ints(printed: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", printed)]


def _csv_rows(z: zipfile.ZipFile, name: str) -> Iterable[dict[str, str]]:
    csv.field_size_limit(1 << 27)
    with z.open(name) as raw:
        yield from csv.DictReader(io.TextIOWrapper(raw, encoding="utf-8", newline=""))


def _zip_path(root: Path) -> Path:
    for path in (root, root / "raw" / "scifact.zip", root / "scifact.zip"):
        if path.is_file():
            return path
    raise FileNotFoundError(f"no SciFact release (raw/scifact.zip) at {root}")
