"""Context budgets (``recall@1024tok``): every cutoff family at a budget equals a brute force
that truncates each query's list by the cumulative size of its chunks and evaluates that
query alone at its cutoff; ``straddle=partial`` evidence metrics equal a character-set brute
force; bad inputs are named."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError
from ranklens.judging.budget import Budget
from ranklens.metrics import FAMILIES

WORDS = re.compile(r"\w+|[^\w\s]")

# every family with a cutoff that plain or grouped labels define (diversity, evidence and
# freshness families need intents, spans or versions and are covered below or elsewhere)
SKIP = {"alpha_ndcg", "alpha_dcg", "err_ia", "nerr_ia", "p_ia", "strec", "evidence_recall",
        "evidence_precision", "evidence_iou", "current", "outdated", "undated",
        "current_first"}  # fmt: skip
CUTOFF_FAMILIES = sorted(n for n, f in FAMILIES.items() if f.cutoff and n not in SKIP)
SPAN_FAMILIES = ["evidence_recall", "evidence_precision", "evidence_iou", "recall", "P",
                 "ndcg", "rr", "ap"]  # fmt: skip


def size_of(text: str, unit: str) -> int:
    return len(text) if unit == "char" else len(WORDS.findall(text))


def cutoff(sizes: list[int], amount: int, straddle: str = "exclude") -> int:
    """The brute-force cutoff: leading chunks whose cumulative size fits."""
    used, c = 0, 0
    for s in sizes:
        if used + s > amount:
            break
        used, c = used + s, c + 1
    if straddle == "include" and c < len(sizes) and used < amount:
        c += 1
    return c


def alone(qrels, run, qid, name, **opts):
    """The metric of query ``qid``, its list judged alone (against every label: a family
    such as err reads the labels' greatest grade)."""
    if qid not in run or not run[qid]:
        return 0.0
    ev = ranklens.evaluate(qrels, {qid: run[qid]}, [name], **opts)
    return float(ev.per_query[name][ev.query_ids.index(qid)])


word = st.sampled_from(["a", "bb", "ccc", "dd,", "e.", "ffff", "g-h"])
texts_st = st.lists(word, min_size=1, max_size=12).map(" ".join)


@st.composite
def id_cases(draw):
    n_docs = draw(st.integers(2, 9))
    docs = [f"d{i}" for i in range(n_docs)]
    texts = {d: draw(texts_st) for d in docs}
    n_q = draw(st.integers(1, 4))
    grouped = draw(st.booleans())
    qrels, run = {}, {}
    for i in range(n_q):
        q = f"q{i}"
        labelled = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=4, unique=True))
        if grouped:
            qrels[q] = [labelled[: len(labelled) // 2 + 1], labelled[len(labelled) // 2 + 1 :]]
            qrels[q] = [g for g in qrels[q] if g]
        else:
            qrels[q] = {d: draw(st.integers(0, 2)) for d in labelled}
        if i == 0 or draw(st.integers(0, 5)):  # sometimes absent from the run
            run[q] = draw(st.lists(st.sampled_from(docs), max_size=n_docs, unique=True))
    amount = draw(st.integers(1, 60))
    unit = draw(st.sampled_from(["char", "tok"]))
    straddle = draw(st.sampled_from(["exclude", "include"]))
    return qrels, run, texts, amount, unit, straddle


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(id_cases())
def test_every_cutoff_family_at_a_budget_is_the_family_at_each_querys_cutoff(case):
    qrels, run, texts, amount, unit, straddle = case
    suffix = f"(straddle=include)@{amount}{unit}" if straddle == "include" else f"@{amount}{unit}"
    names = [f"{fam}{suffix}" for fam in CUTOFF_FAMILIES]
    ev = ranklens.evaluate(qrels, run, names, texts=texts)
    for qi, q in enumerate(ev.query_ids):
        c = cutoff([size_of(texts[d], unit) for d in run.get(q, [])], amount, straddle)
        for fam, name in zip(CUTOFF_FAMILIES, names):
            want = alone(qrels, run, q, f"{fam}@{c}", texts=texts) if c else 0.0
            got = ev.per_query[name][qi]
            assert got == pytest.approx(want, abs=1e-12), (name, q, c)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(id_cases())
def test_a_run_of_dicts_and_a_run_object_give_the_same_budget_values(case):
    qrels, run, texts, amount, unit, _ = case
    scored = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.items()}
    names = [f"ndcg@{amount}{unit}", f"recall@{amount}{unit}", f"P@{amount}{unit}"]
    plain = {q: v for q, v in qrels.items() if isinstance(v, dict)}
    if not plain or not any(scored.get(q) for q in plain):
        return
    by_dict = ranklens.evaluate(plain, scored, names, texts=texts)  # the dict join
    by_run = ranklens.evaluate(plain, ranklens.Run.coerce(scored), names, texts=texts)
    for name in names:
        np.testing.assert_array_equal(by_dict.per_query[name], by_run.per_query[name])


@st.composite
def span_cases(draw):
    n_docs = draw(st.integers(1, 3))
    texts = {f"d{i}": draw(st.lists(word, min_size=5, max_size=25).map(" ".join))
             for i in range(n_docs)}  # fmt: skip
    labels, run = {}, {}
    for i in range(draw(st.integers(1, 3))):
        q = f"q{i}"
        spans = []
        for _ in range(draw(st.integers(1, 3))):
            d = draw(st.sampled_from(sorted(texts)))
            a = draw(st.integers(0, len(texts[d]) - 1))
            b = draw(st.integers(a + 1, len(texts[d])))
            spans.append((d, a, b))
        labels[q] = spans
        chunks = []
        for j in range(draw(st.integers(1 if i == 0 else 0, 6))):
            d = draw(st.sampled_from(sorted(texts)))
            a = draw(st.integers(0, len(texts[d]) - 1))
            b = draw(st.integers(a + 1, min(len(texts[d]), a + 40)))
            chunks.append({"id": f"{q}c{j}", "doc_id": d, "start": a, "end": b})
        run[q] = chunks
    amount = draw(st.integers(1, 120))
    return labels, run, texts, amount


def chunk_text(texts, c):
    return texts[c["doc_id"]][c["start"] : c["end"]]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(span_cases(), st.sampled_from(["char", "tok"]))
def test_span_metrics_at_a_budget_are_the_metric_at_each_querys_cutoff(case, unit):
    labels, run, texts, amount = case
    spans = ranklens.SpanLabels.from_spans(labels, texts=texts)
    names = [f"{fam}@{amount}{unit}" for fam in SPAN_FAMILIES]
    ev = ranklens.evaluate(spans, ranklens.Run.from_chunks(run), names)
    for qi, q in enumerate(ev.query_ids):
        c = cutoff([size_of(chunk_text(texts, x), unit) for x in run[q]], amount)
        alone_labels = ranklens.SpanLabels.from_spans({q: labels[q]}, texts=texts)
        for fam, name in zip(SPAN_FAMILIES, names):
            want = 0.0
            if c:
                one = ranklens.evaluate(alone_labels, ranklens.Run.from_chunks({q: run[q]}),
                                        [f"{fam}@{c}"])  # fmt: skip
                want = float(one.per_query[f"{fam}@{c}"][0])
            assert ev.per_query[name][qi] == pytest.approx(want, abs=1e-12), (name, q, c)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(span_cases(), st.sampled_from(["union", "summed"]))
def test_partial_evidence_metrics_equal_a_character_set_brute_force(case, total):
    labels, run, texts, amount = case
    spans = ranklens.SpanLabels.from_spans(labels, texts=texts)
    fams = ["evidence_recall", "evidence_precision", "evidence_iou"]
    names = [f"{f}(straddle=partial)@{amount}char" for f in fams]
    ev = ranklens.evaluate(spans, ranklens.Run.from_chunks(run), names, evidence_total=total)
    for qi, q in enumerate(ev.query_ids):
        evidence = {(d, i) for d, a, b in labels[q] for i in range(a, b)}
        covered, read, left = set(), 0, amount
        for c in run[q]:
            take = min(left, c["end"] - c["start"])
            if take <= 0:
                break
            covered |= {(c["doc_id"], i) for i in range(c["start"], c["start"] + take)}
            read, left = read + take, left - take
        hit = len(evidence & covered)
        # "summed": a character labelled by m spans counts m times in the evidence total
        each = [{(d, i) for i in range(a, b)} for d, a, b in labels[q]]
        total_e = sum(map(len, each)) if total == "summed" else len(evidence)
        held = sum(len(e & covered) for e in each) if total == "summed" else hit
        want = {
            "evidence_recall": hit / total_e,
            "evidence_precision": hit / read if read else 0.0,
            "evidence_iou": hit / (read + total_e - held) if read else 0.0,
        }
        for f, name in zip(fams, names):
            assert ev.per_query[name][qi] == pytest.approx(want[f], abs=1e-12), (name, q)


def test_partial_counts_the_straddling_chunks_prefix_in_tokens_when_judged_in_tokens():
    text = "one two three four five six seven eight"
    labels = ranklens.SpanLabels.from_spans({"q": [("d", 8, 23)]}, texts={"d": text})  # 3..5
    run = ranklens.Run.from_chunks({"q": [{"doc_id": "d", "start": 0, "end": 13},  # 3 tokens
                                          {"doc_id": "d", "start": 14, "end": 39}]})  # fmt: skip
    ev = ranklens.evaluate(labels, run, ["evidence_recall(straddle=partial)@4tok",
                                         "evidence_recall@4tok"], tokenizer="words")  # fmt: skip
    # the evidence is tokens three, four, five; the first chunk holds three, the
    # straddling one's first token (four) fits: 2 of 3
    assert ev["evidence_recall(straddle=partial)@4tok"] == pytest.approx(2 / 3)
    assert ev["evidence_recall@4tok"] == pytest.approx(1 / 3)
    with pytest.raises(InputError, match="straddle=partial"):
        ranklens.evaluate(labels, run, ["evidence_recall(straddle=partial)@4char"],
                          tokenizer="words")  # fmt: skip


def test_budget_cutoffs_and_the_count_of_queries_whose_budget_holds_nothing():
    texts = {"a": "x" * 30, "b": "y" * 50, "c": "z" * 200}
    j = ranklens.judge({"q1": {"a": 1}, "q2": {"c": 1}}, {"q1": ["a", "b"], "q2": ["c", "a"]},
                       texts=texts)  # fmt: skip
    np.testing.assert_array_equal(j.budget_cutoffs(Budget(100, "char")), [2, 0])
    np.testing.assert_array_equal(j.budget_cutoffs(Budget(100, "char"), "include"), [2, 1])
    ev = ranklens.evaluate({"q1": {"a": 1}, "q2": {"c": 1}}, {"q1": ["a", "b"], "q2": ["c", "a"]},
                           ["recall@100char"], texts=texts)  # fmt: skip
    assert ev.per_query["recall@100char"].tolist() == [1.0, 0.0]
    assert ev.counts["budget_empty"] == {"100char": 1}
    assert "1 query whose budget of 100 characters holds no whole chunk" in ev.notes()


def test_a_user_tokenizer_counts_the_budget():
    texts = {"a": "one two", "b": "three four five"}
    ev = ranklens.evaluate({"q": {"b": 1}}, {"q": ["a", "b"]}, ["recall@3tok", "recall@5tok"],
                           texts=texts, budget_tokenizer=str.split)  # fmt: skip
    assert (ev["recall@3tok"], ev["recall@5tok"]) == (0.0, 1.0)


def test_a_ranked_document_without_a_size_is_named():
    with pytest.raises(InputError) as err:
        ranklens.evaluate({"q": {"a": 1}}, {"q": ["a", "zz"]}, ["recall@10char"],
                          texts={"a": "abc"})  # fmt: skip
    msg = str(err.value)
    assert "query 'q', rank 2" in msg and "'zz'" in msg and "texts={doc id: text}" in msg
    with pytest.raises(InputError, match=r"carries no text or length: give texts=\{doc id: text\}"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["recall@10tok"])
    # a run of ids judged without texts keeps nothing of the run for budgets
    assert ranklens.judge({"q": {"a": 1}}, ranklens.Run.coerce({"q": ["a"]})).join.ranked is None


def test_a_failing_or_empty_tokenizer_is_named_with_the_row():
    def broken(text):
        raise RuntimeError("no vocabulary")

    with pytest.raises(InputError, match=r"query 'q', rank 1 \(document 'a'\).*no vocabulary"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["recall@10tok"],
                          texts={"a": "some words"}, budget_tokenizer=broken)  # fmt: skip
    with pytest.raises(InputError, match="found no token"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["recall@10tok"],
                          texts={"a": "some words"}, budget_tokenizer=lambda t: [])  # fmt: skip


def test_budgets_refuse_orders_they_cannot_cut_and_bad_texts():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(InputError, match="ties='expected'"):
        ranklens.evaluate(qrels, run, ["recall@5char"], texts={"a": "x"}, ties="expected")
    with pytest.raises(InputError, match="judged_only"):
        ranklens.evaluate(qrels, run, ["recall@5char"], texts={"a": "x"}, judged_only=True)
    with pytest.raises(InputError, match="document 'a' must map to its text"):
        ranklens.evaluate(qrels, run, ["recall@5char"], texts={"a": 3})


def test_ordinary_metrics_never_read_sizes():
    # no text anywhere: only a budget metric asks for one
    ev = ranklens.evaluate({"q": {"a": 1}}, {"q": ["a", "b"]}, ["recall@1", "ndcg@10"])
    assert ev["recall@1"] == 1.0


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(id_cases())
def test_holes_of_a_budget_metric_are_the_metric_at_each_querys_cutoff(case):
    # compare() asks holes() for the judged-only and the unjudged-as-relevant values
    qrels, run, texts, amount, unit, _ = case
    name = f"recall@{amount}{unit}"
    h = ranklens.holes(qrels, run, [name], texts=texts)
    for qi, q in enumerate(h.query_ids):
        c = cutoff([size_of(texts[d], unit) for d in run.get(q, [])], amount)
        cond = alone(qrels, run, q, f"recall(judged_only=true)@{c}", texts=texts) if c else 0.0
        assert h.per_query["judged_only"][name][qi] == pytest.approx(cond, abs=1e-12)
        assert 0.0 <= h.per_query["as_relevant"][name][qi] <= 1.0  # computed, at the same cutoffs


def test_a_budget_cuts_the_order_the_ties_option_chose():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    texts = {"a": "x" * 10, "b": "y" * 10, "c": "z" * 4}
    got = {
        ties: ranklens.evaluate(qrels, run, ["recall@10char"], texts=texts, ties=ties)[
            "recall@10char"
        ]
        for ties in ("best", "worst", "trec")
    }
    # trec orders ties by id descending: b before a
    assert got == {"best": 1.0, "worst": 0.0, "trec": 0.0}
