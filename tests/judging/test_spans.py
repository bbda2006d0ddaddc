"""Span labels (issue 34): they equal id labels when the chunks are the labelled units, the
character metrics equal a character-set brute force and a transcription of Chroma's
scoring, and every kind of bad input is named or counted."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import SpanLabels
from ranklens.errors import DuplicateDocumentError, InputError

# --- spans equal ids when every chunk is a labelled unit -------------------------------------

SAME = [
    "P@1",
    "P@3",
    "recall@3",
    "recall@10",
    "ndcg@3",
    "ndcg@10",
    "map",
    "rr",
    "success@2",
    "judged@5",
    "rprec",
    "err@5",
    "num_rel",
    "num_rel_ret",
    "ndcg_exp@5",
    "P(rel=2)@3",
    "map@3",
    "f1@3",
    "rbp",
    "alpha_ndcg@5",
    "p_ia@3",
]
"""Every measure that reads units, grades, ranks and judged flags (bpref and infAP count
judged non-relevant *documents*, which chunk labels and span labels count differently)."""


@st.composite
def chunked_case(draw):
    n_docs = draw(st.integers(1, 4))
    docs = {}
    for d in range(n_docs):
        lens = draw(st.lists(st.integers(1, 30), min_size=1, max_size=5))
        starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        docs[f"d{d}"] = [
            (f"d{d}#{i}", int(s), int(s + n)) for i, (s, n) in enumerate(zip(starts, lens))
        ]
    chunks = [c for cs in docs.values() for c in cs]
    doc_of = {c[0]: d for d, cs in docs.items() for c in cs}
    qrels, spans, runs = {}, {}, {}
    for q in range(draw(st.integers(1, 4))):
        qid = f"q{q}"
        labelled = draw(
            st.lists(st.sampled_from(sorted(docs)), min_size=1, max_size=2, unique=True)
        )
        grades = {c: draw(st.integers(0, 2)) for d in labelled for c, _, _ in docs[d]}
        qrels[qid] = grades
        spans[qid] = [(doc_of[c], s, e, grades[c]) for d in labelled for c, s, e in docs[d]]
        picked = draw(st.lists(st.sampled_from(chunks), max_size=8, unique=True))
        scores = draw(st.lists(st.integers(0, 4), min_size=len(picked), max_size=len(picked)))
        runs[qid] = [(c, float(s)) for c, s in zip(picked, scores)]
    return docs, qrels, spans, runs


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunked_case())
def test_span_labels_equal_id_labels_when_chunks_are_the_units(case):
    docs, qrels, spans, runs = case
    if not any(runs.values()):
        return
    where = {c: (d, s, e) for d, cs in docs.items() for c, s, e in cs}
    labels = SpanLabels.from_spans(
        {
            q: [{"doc_id": d, "start": s, "end": e, "grade": g} for d, s, e, g in sp]
            for q, sp in spans.items()
        }
    )
    chunk_run = ranklens.Run.from_chunks(
        {
            q: [
                {
                    "id": c[0],
                    "doc_id": where[c[0]][0],
                    "start": where[c[0]][1],
                    "end": where[c[0]][2],
                    "score": s,
                }
                for c, s in hits
            ]
            for q, hits in runs.items()
            if hits
        }
    )
    id_run = {q: {c[0]: s for c, s in hits} for q, hits in runs.items() if hits}
    # each labelled chunk a group of its own: the id labels' units, as intents for alpha-nDCG
    groups = ranklens.Qrels.from_groups(
        {q: [[c] for c in g] for q, g in qrels.items()},
        {q: list(g.values()) for q, g in qrels.items()},
    )
    by_ids = ranklens.evaluate(groups, id_run, SAME)
    plain = ranklens.evaluate(qrels, id_run, SAME[:-2])  # every measure but the diversity ones
    assert dict(plain.aggregate) == pytest.approx({m: by_ids[m] for m in SAME[:-2]})
    by_spans = ranklens.evaluate(labels, chunk_run, SAME)
    assert by_ids.query_ids == by_spans.query_ids
    for m in SAME:
        np.testing.assert_allclose(
            by_spans.per_query[m], by_ids.per_query[m], atol=1e-12, err_msg=m
        )


# --- the character metrics: brute force and Chroma's scoring ----------------------------------


@st.composite
def character_case(draw):
    lengths = {f"d{i}": draw(st.integers(5, 60)) for i in range(draw(st.integers(1, 3)))}
    spans, runs = {}, {}
    for q in range(draw(st.integers(1, 3))):
        qid = f"q{q}"
        items = []
        for _ in range(draw(st.integers(1, 3))):
            d = draw(st.sampled_from(sorted(lengths)))
            s = draw(st.integers(0, lengths[d] - 1))
            e = draw(st.integers(s + 1, lengths[d]))
            items.append((d, s, e, draw(st.integers(0, 2))))
        spans[qid] = items
        chunks = []
        for j in range(draw(st.integers(0, 6))):
            d = draw(st.sampled_from([*sorted(lengths), "other"]))
            n = lengths.get(d, 50)
            s = draw(st.integers(0, n - 1))
            e = draw(st.integers(s + 1, n))
            chunks.append((f"c{j}", d, s, e))
        runs[qid] = chunks
    return spans, runs


def brute_force(spans, runs, k):
    """Characters as sets: evidence (grade >= 1) covered by the union of the top k chunks,
    over the sum of their lengths."""
    out = {}
    for q, items in spans.items():
        evidence = {(d, c) for d, s, e, g in items if g >= 1 for c in range(s, e)}
        top = runs.get(q, [])[:k] if k else runs.get(q, [])
        read = sum(e - s for _, _, s, e in top)
        seen = {(d, c) for _, d, s, e in top for c in range(s, e)}
        cov = len(evidence & seen)
        out[q] = (
            cov / len(evidence) if evidence else 0.0,
            cov / read if read else 0.0,
            cov / (read + len(evidence) - cov) if read + len(evidence) - cov else 0.0,
        )
    return out


def spans_and_run(spans, runs):
    labels = SpanLabels.from_spans(
        {
            q: [{"doc_id": d, "start": s, "end": e, "grade": g} for d, s, e, g in items]
            for q, items in spans.items()
        }
    )
    run = ranklens.Run.from_chunks(
        {
            q: [{"id": c, "doc_id": d, "start": s, "end": e} for c, d, s, e in ch]
            for q, ch in runs.items()
            if ch
        }
    )
    return labels, run


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(character_case(), st.sampled_from([1, 2, 4, None]))
def test_character_metrics_equal_a_character_set_brute_force(case, k):
    spans, runs = case
    if not any(runs.values()):
        return
    labels, run = spans_and_run(spans, runs)
    at = "" if k is None else f"@{k}"
    names = [f"evidence_recall{at}", f"evidence_precision{at}", f"evidence_iou{at}"]
    ev = ranklens.evaluate(labels, run, names)
    want = brute_force(spans, runs, k)
    for i, q in enumerate(ev.query_ids):
        got = tuple(float(ev.per_query[n][i]) for n in names)
        assert got == pytest.approx(want[q], abs=1e-12), (q, got, want[q])


def chroma_scores(references, chunks):
    """A transcription of the scoring of brandonstarxel/chunking_evaluation
    (``BaseEvaluation._scores_from_dataset_and_retrievals``): ranges are (start, end);
    the retrieved chunks are (start, end, corpus_id); the references are one corpus's."""

    def union(ranges):
        ranges = sorted(ranges)
        out = [ranges[0]]
        for s, e in ranges[1:]:
            if s <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], e))
            else:
                out.append((s, e))
        return out

    def difference(ranges, target):
        ts, te = target
        out = []
        for s, e in ranges:
            if e < ts or s > te:
                out.append((s, e))
            elif s < ts and e > te:
                out += [(s, ts), (te, e)]
            elif s < ts:
                out.append((s, ts))
            elif e > te:
                out.append((te, e))
        return out

    corpus_id, refs = references
    numerator, unused = [], list(refs)
    for s, e, cid in chunks:
        if cid != corpus_id:
            continue
        for rs, re_ in refs:
            a, b = max(s, rs), min(e, re_)
            if a <= b:
                unused = difference(unused, (a, b))
                numerator = union([(a, b), *numerator])
    num = sum(e - s for s, e in numerator) if numerator else 0
    recall = num / sum(e - s for s, e in refs)
    read = sum(e - s for s, e, _ in chunks)
    precision = num / read
    iou = num / (read + sum(e - s for s, e in unused))
    return recall, precision, iou


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_character_metrics_equal_chromas_scoring(data):
    """On Chroma's setting (one corpus per question, references that do not overlap or
    touch, every retrieved chunk read) the metrics are Chroma's recall, precision and IoU."""
    n = data.draw(st.integers(20, 120))
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), min_size=2, max_size=8)))
    pieces = list(zip([0, *cuts], [*cuts, n]))
    refs = pieces[1::3] or pieces[:1]  # disjoint, never touching
    chunks = []
    for _ in range(data.draw(st.integers(1, 6))):
        cid = data.draw(st.sampled_from(["doc", "elsewhere"]))
        s = data.draw(st.integers(0, n - 1))
        chunks.append((s, data.draw(st.integers(s + 1, n)), cid))
    labels = SpanLabels.from_spans({"q": [("doc", s, e) for s, e in refs]})
    run = ranklens.Run.from_chunks(
        {
            "q": [
                {"id": f"c{j}", "doc_id": c, "start": s, "end": e}
                for j, (s, e, c) in enumerate(chunks)
            ]
        }
    )
    ev = ranklens.evaluate(labels, run, ["evidence_recall", "evidence_precision", "evidence_iou"])
    # Chroma's intersections are closed ranges: a chunk that only touches a reference adds
    # an empty intersection; its numerator is the same
    want = chroma_scores(("doc", refs), chunks)
    got = (ev["evidence_recall"], ev["evidence_precision"], ev["evidence_iou"])
    assert got == pytest.approx(want, abs=1e-12)


def test_a_worked_example():
    """d holds evidence [10, 30) and [50, 60); e holds [0, 10): 40 characters. The top 2
    chunks [0, 20) and [20, 40) of d read 40 characters and cover 20 of them."""
    labels = SpanLabels.from_spans(
        {"q": [("d", 10, 30), ("d", 50, 60), ("e", 0, 10)]}, {"d": "x" * 100, "e": "y" * 50}
    )
    run = ranklens.Run.from_chunks(
        {
            "q": [
                {"doc_id": "d", "start": 0, "end": 20},
                {"doc_id": "d", "start": 20, "end": 40},
                {"doc_id": "e", "start": 20, "end": 40},
                {"doc_id": "z", "start": 0, "end": 40},
            ]
        }
    )
    ev = ranklens.evaluate(
        labels,
        run,
        [
            "evidence_recall@1",
            "evidence_recall@2",
            "evidence_precision@2",
            "evidence_iou@2",
            "P@4",
            "recall@4",
            "judged@4",
            "evidence_chars",
        ],
    )
    assert dict(ev.aggregate) == pytest.approx(
        {
            "evidence_recall@1": 0.25,
            "evidence_recall@2": 0.5,
            "evidence_precision@2": 0.5,
            "evidence_iou@2": 1 / 3,
            "P@4": 0.25,
            "recall@4": 1 / 3,
            "judged@4": 0.75,
            "evidence_chars": 40,
        }
    )


# --- overlap rules ---------------------------------------------------------------------------


def test_overlap_rules_decide_which_chunks_find_a_span():
    labels = SpanLabels.from_spans({"q": [("d", 0, 100)]})
    run = ranklens.Run.from_chunks(
        {"q": [{"doc_id": "d", "start": 90, "end": 110}, {"doc_id": "d", "start": 0, "end": 60}]}
    )
    rr = {
        rule: ranklens.evaluate(labels, run, ["rr"], overlap=rule)["rr"]
        for rule in ("any", "evidence_half", "evidence_all", "chunk_half", "chunk>=0.9")
    }
    assert rr == {
        "any": 1.0,
        "evidence_half": 0.5,
        "evidence_all": 0.0,
        "chunk_half": 1.0,
        "chunk>=0.9": 0.5,
    }
    with pytest.raises(InputError, match="unknown overlap rule 'most'"):
        ranklens.evaluate(labels, run, ["rr"], overlap="most")


def test_the_rules_table_in_the_docs_is_generated_from_the_code():
    from pathlib import Path

    from ranklens.judging.overlap import rules_table

    page = Path(__file__).resolve().parents[2] / "docs" / "spans.md"
    assert rules_table() in page.read_text()


# --- bad input -----------------------------------------------------------------------------

TEXTS = {"d": "The lighthouse was first lit in 1821. Its light is white.", "e": "Short."}


@pytest.mark.parametrize(
    ("spans", "match"),
    [
        ({"q": [("d", 10, 5)]}, r"span \[10, 5\) .* ends where or before it starts"),
        ({"q": [("d", -1, 5)]}, "starts before 0"),
        ({"q": [("d", 0, 500)]}, "ends past the document's 57 characters: a different version"),
        ({"q": [("x", 0, 5)]}, "document 'x' .* is not in the corpus"),
        (
            {
                "q": [
                    {"doc_id": "d", "start": 0, "end": 20, "group": 1},
                    {"doc_id": "d", "start": 10, "end": 30, "group": 1},
                ]
            },
            r"spans \[0, 20\) and \[10, 30\) of document 'd' overlap in one group",
        ),
        ({"q": [("d", "not in the text")]}, "the quote 'not in the text' is not in document 'd'"),
        ({"q": [("d", "li")]}, "stands 3 times in document 'd'"),
        ({"q": [("d", 0.5, 3)]}, "'start' must be an integer character offset"),
        ({"q": "d"}, "the spans of query 'q' must be a list"),
    ],
)
def test_bad_spans_are_named(spans, match):
    with pytest.raises(InputError, match=match):
        SpanLabels.from_spans(spans, TEXTS)


def test_quotes_found_nowhere_can_be_skipped_and_are_counted():
    with pytest.warns(ranklens.RanklensWarning, match="1 quoted spans left out"):
        labels = SpanLabels.from_quotes(
            {"q": [("d", "first LIT   in 1821"), ("d", "nowhere")]}, TEXTS, on_missing="skip"
        )
    assert labels.n_spans == 1 and labels.skipped[0]["quote"] == "nowhere"
    (span,) = labels.span_records()
    assert (span["start"], span["end"]) == (19, 36)  # found normalised, in the text's offsets


def test_chunks_that_cannot_be_placed_or_disagree_are_counted_never_dropped():
    labels = SpanLabels.from_spans({"q": [("d", 19, 36)]}, TEXTS)
    run = ranklens.Run.from_chunks(
        {
            "q": [
                {"id": "a", "doc_id": "d", "start": None, "end": None, "text": "first lit in 1821"},
                {"id": "b", "doc_id": "d", "start": 0, "end": 10, "text": "Its light is white."},
                {
                    "id": "c",
                    "doc_id": "d",
                    "start": None,
                    "end": None,
                    "text": "a text from elsewhere",
                },
                {"id": "e", "doc_id": None, "start": 0, "end": 5, "text": "?"},
            ]
        }
    )
    ev = ranklens.evaluate(labels, run, ["rr", "evidence_recall", "num_ret"])
    assert ev["rr"] == 1.0 and ev["evidence_recall"] == 1.0 and ev["num_ret"] == 4
    c = ev.counts
    assert c["chunks_unlocated"] == 2 and c["chunks_relocated"] == 1
    assert "2 chunks without a place in their document" in ev.notes()
    assert "whose offsets disagreed with their text" in ev.notes()


def test_a_chunk_with_a_start_and_no_end_ends_where_its_text_does():
    # a store that keeps only the start offset (LangChain's start_index): the text agrees
    # at that start, so the chunk ends where its text ends, not left without a place
    labels = SpanLabels.from_spans({"q": [("d", 19, 36)]}, TEXTS)
    text = TEXTS["d"][19:36]
    run = ranklens.Run.from_chunks(
        {"q": [{"id": "a", "doc_id": "d", "start": 19, "end": None, "text": text}]}
    )
    ev = ranklens.evaluate(labels, run, ["evidence_recall", "evidence_precision"])
    assert ev["evidence_recall"] == 1.0 and ev["evidence_precision"] == 1.0
    assert ev.counts.get("chunks_unlocated", 0) == 0


def test_a_document_run_is_refused_for_span_labels_and_duplicates_are_named():
    labels = SpanLabels.from_spans({"q": [("d", 0, 5)]})
    with pytest.raises(InputError, match="span labels need each retrieved chunk's document"):
        ranklens.evaluate(labels, {"q": ["d"]}, ["P@1"])
    twice = ranklens.Run.from_chunks(
        {
            "q": [
                {"id": "a", "doc_id": "d", "start": 0, "end": 5},
                {"id": "a", "doc_id": "d", "start": 0, "end": 5},
            ]
        }
    )
    with pytest.raises(DuplicateDocumentError, match="chunk 'a' appears more than once"):
        ranklens.evaluate(labels, twice, ["P@1"])
    assert ranklens.evaluate(labels, twice, ["P@2"], duplicates="first")["P@2"] == 0.5
    with pytest.raises(InputError, match="ties='best' is not defined for span labels"):
        ranklens.evaluate(labels, twice, ["P@1"], ties="best")


# --- files ------------------------------------------------------------------------------------


def test_span_datasets_read_and_write_jsonl_and_csv(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in TEXTS.items())
    )
    (tmp_path / "a.jsonl").write_text(
        json.dumps(
            {
                "query_id": "q1",
                "query": "When?",
                "evidence": [
                    {"doc_id": "d", "quote": "first lit in 1821", "grade": 2},
                    {"doc_id": "e", "start": 0, "end": 6, "group": 3},
                ],
            }
        )
        + "\n"
    )
    ds = ranklens.read_dataset(tmp_path / "a.jsonl")
    assert isinstance(ds.qrels, SpanLabels) and ds.corpus is not None
    assert [(r["doc_id"], r["start"], r["end"], r["grade"]) for r in ds.qrels.span_records()] == [
        ("d", 19, 36, 2),
        ("e", 0, 6, 1),
    ]
    from ranklens.io.datasets import write_jsonl_dataset

    write_jsonl_dataset(ds, tmp_path / "b.jsonl")
    assert ranklens.read_dataset(tmp_path / "b.jsonl").qrels == ds.qrels
    (tmp_path / "c.csv").write_text(
        "qid,query,doc_id,start,end,grade\nq1,When?,d,19,36,2\nq1,When?,e,0,6,1\n"
    )
    assert ranklens.read_dataset(tmp_path / "c.csv").qrels == ds.qrels
    (tmp_path / "bad.jsonl").write_text(
        json.dumps(
            {
                "query_id": "q1",
                "query": "When?",
                "evidence": [{"doc_id": "d", "start": 0, "end": 10, "text": "first lit in 1821"}],
            }
        )
        + "\n"
    )
    with pytest.raises(InputError, match=r"bad.jsonl:1: evidence 0 of query 'q1'.*does not hold"):
        ranklens.read_dataset(tmp_path / "bad.jsonl")


# --- tokens and precision-Ω ----------------------------------------------------------------


@st.composite
def worded_case(draw):
    words = st.text(alphabet="abcde", min_size=1, max_size=6)
    texts = {
        f"d{i}": " ".join(draw(st.lists(words, min_size=2, max_size=12)))
        + draw(st.sampled_from(["", ".", " !"]))
        for i in range(draw(st.integers(1, 2)))
    }
    spans, runs, chunking = {}, {}, {}
    for d, t in texts.items():
        cuts = sorted(draw(st.sets(st.integers(1, len(t) - 1), max_size=4))) if len(t) > 1 else []
        chunking[d] = list(zip([0, *cuts], [*cuts, len(t)]))
    for q in range(draw(st.integers(1, 2))):
        items = []
        for _ in range(draw(st.integers(1, 2))):
            d = draw(st.sampled_from(sorted(texts)))
            s = draw(st.integers(0, len(texts[d]) - 1))
            items.append((d, s, draw(st.integers(s + 1, len(texts[d]))), 1))
        spans[f"q{q}"] = items
        picked = draw(
            st.lists(
                st.sampled_from([(d, a, b) for d, c in chunking.items() for a, b in c]),
                max_size=4,
                unique=True,
            )
        )
        runs[f"q{q}"] = [(f"{d}@{a}", d, a, b) for d, a, b in picked]
    return texts, spans, runs, chunking


def token_sets(text, a, b):
    import re

    return {
        i for i, m in enumerate(re.finditer(r"\w+|[^\w\s]", text)) if m.start() < b and m.end() > a
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worded_case())
def test_token_metrics_and_precision_omega_equal_a_brute_force(case):
    texts, spans, runs, chunking = case
    if not any(runs.values()):
        return
    labels = SpanLabels.from_spans(
        {q: [{"doc_id": d, "start": s, "end": e} for d, s, e, _ in it] for q, it in spans.items()},
        texts,
    )
    run = ranklens.Run.from_chunks(
        {
            q: [{"id": c, "doc_id": d, "start": a, "end": b} for c, d, a, b in ch]
            for q, ch in runs.items()
            if ch
        }
    )
    names = ["evidence_recall", "evidence_precision", "evidence_iou"]
    ev = ranklens.evaluate(labels, run, names, tokenizer="words")
    omega = ranklens.evaluate(labels, run, ["precision_omega"], chunking=chunking)
    for i, q in enumerate(ev.query_ids):
        E = {(d, t) for d, s, e, _ in spans[q] for t in token_sets(texts[d], s, e)}
        top = runs.get(q, [])
        C = {(d, t) for _, d, a, b in top for t in token_sets(texts[d], a, b)}
        read = sum(len(token_sets(texts[d], a, b)) for _, d, a, b in top)
        cov = len(E & C)
        want = (
            cov / len(E) if E else 0.0,
            cov / read if read else 0.0,
            cov / (read + len(E) - cov) if read + len(E) - cov else 0.0,
        )
        got = tuple(float(ev.per_query[n][i]) for n in names)
        assert got == pytest.approx(want, abs=1e-12)
        chars = {(d, c) for d, s, e, _ in spans[q] for c in range(s, e)}
        U = {
            (d, c)
            for d, cuts in chunking.items()
            for a, b in cuts
            if any((d, c0) in chars for c0 in range(a, b))
            for c in range(a, b)
        }
        want_omega = len(chars & U) / len(U | chars) if chars else 0.0
        assert omega.per_query["precision_omega"][i] == pytest.approx(want_omega, abs=1e-12)


def test_tokenizers_of_ones_own_and_their_faults():
    labels = SpanLabels.from_spans({"q": [("d", 19, 36)]}, TEXTS)
    run = ranklens.Run.from_chunks({"q": [{"doc_id": "d", "start": 0, "end": 37}]})
    words = ranklens.evaluate(labels, run, ["evidence_precision"], tokenizer="words")
    assert words["evidence_precision"] == pytest.approx(4 / 8)  # "first lit in 1821" of 8
    as_strings = ranklens.evaluate(labels, run, ["evidence_precision"], tokenizer=str.split)
    assert as_strings["evidence_precision"] == pytest.approx(4 / 7)  # "1821." one token
    with pytest.raises(InputError, match="not in the text after character 0"):
        ranklens.evaluate(labels, run, ["evidence_recall"], tokenizer=lambda t: ["Ġthe"])
    with pytest.raises(ranklens.MetricNameError, match="precision_omega needs the whole chunking"):
        ranklens.evaluate(labels, run, ["precision_omega"])
    for run in ({"q": ["d"]}, {"q": {"d": 1.0}}, {"q": [("d", 1.0)]}):  # every form, never ignored
        with pytest.raises(InputError, match="tokenizer= and chunking= are for span labels"):
            ranklens.evaluate({"q": ["d"]}, run, ["P@1"], tokenizer="words")
        with pytest.raises(InputError, match="tokenizer= and chunking= are for span labels"):
            ranklens.evaluate({"q": {"d": 1}}, run, ["P@1"], chunking={"d": ("d", 0, 1)})
