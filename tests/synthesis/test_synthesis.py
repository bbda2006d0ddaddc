"""ranklens.synthesize and ranklens.check_dataset: generated test sets with provenance and
counted filters (with a generator that acts like an LLM client: latency, transient and
permanent errors, junk, preamble, a hang), and the leakage and label findings, surfacing
in every later evaluation of the dataset."""

from __future__ import annotations

import json
import warnings

import pytest
from _nolabels_case import FlakyGenerator, bm25, stable

import ranklens
from ranklens.app.demo_data import load
from ranklens.errors import InputError, RanklensWarning
from ranklens.synthesis import OfflineGenerator, Provenance, check_dataset, synthesize
from ranklens.synthesis.parse import candidates, locate
from ranklens.synthesis.text import best_containment, containment_pairs, near_duplicates


@pytest.fixture(scope="module")
def demo():
    return load()


@pytest.fixture(scope="module")
def flaky(demo):
    gen = FlakyGenerator()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = synthesize(demo, gen, timeout=0.3, backoff=0.01, progress=False)
    return s, gen, caught


def test_every_passage_recorded_and_every_filter_counted(flaky, demo):
    s, gen, caught = flaky
    rows = s.provenance.rows
    counts = s.counts
    # every passage accounted for: a failed/junk row, or its candidates
    assert {r.doc_id for r in rows} == set(demo.corpus)
    assert counts["failed"] >= 2 and counts["junk"] >= 2 and counts["empty"] >= 1
    assert counts["preamble"] >= 1 and counts["duplicate"] == counts["preamble"]
    assert sum(counts.values()) == len(rows)
    assert counts["kept"] == len(s.dataset.queries) == len(s.dataset.qrels.to_dict())
    timeout = [r for r in rows if r.status == "failed" and "TimeoutError" in r.detail]
    assert [r.doc_id for r in timeout] == ["lh03-light"]
    refused = [r for r in rows if r.status == "failed" and "refused" in r.detail]
    assert refused and all(stable(demo.corpus[r.doc_id]["text"]) > 0.97 for r in refused)
    # transient errors were retried, and the passage answered
    retried = [k for k, n in gen.calls.items() if n > 1]
    assert retried and s.info["calls"] == sum(gen.calls.values())
    assert any("failed or answered junk on" in str(w.message) for w in caught)
    assert "generator failed" in s.summary() and "preamble" in s.summary()


def test_provenance_evidence_offsets_point_into_the_source(flaky, demo):
    s, *_ = flaky
    for r in s.provenance.kept():
        text = demo.corpus[r.doc_id]["text"]
        ((doc, start, end),) = r.evidence
        assert doc == r.doc_id and text[start:end] == r.evidence_text
        assert r.passage[0] <= start < end <= r.passage[1]
        assert r.generator == "flaky-llm" and r.raw
        assert s.dataset.qrels.to_dict()[r.query_id] == {r.doc_id: 1}
        assert 0 <= r.overlap <= 1


def test_provenance_round_trip_and_labels(flaky, tmp_path):
    s, *_ = flaky
    path = s.provenance.to_jsonl(tmp_path / "prov.jsonl")
    back = Provenance.from_jsonl(path)
    assert [r.to_json() for r in back] == [r.to_json() for r in s.provenance]
    assert back.to_labels() == s.dataset.qrels
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"doc_id": "d", "status": "maybe"}) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl:1"):
        Provenance.from_jsonl(bad)
    folder = s.write(tmp_path / "set")
    again = ranklens.read_dataset(folder)
    assert again.queries == s.dataset.queries and again.qrels == s.dataset.qrels


def test_offline_generator_is_deterministic_and_named():
    passage = "Kestrel Point stands on Great Merrow. It was first lit in 1862 by Agnes Tolley."
    out = OfflineGenerator()(passage)
    assert out == OfflineGenerator()(passage)
    assert out["question"] == "Kestrel Point was first lit in what year by Agnes Tolley?"
    assert out["evidence"] == "It was first lit in 1862 by Agnes Tolley."
    assert OfflineGenerator.name == "offline-stand-in"


def test_answers_of_every_shape():
    lines = candidates("Here are three questions:\n1. Who lit it?\n- When?\n\nQ3: Why?")
    assert [(c.text, c.status) for c in lines] == [
        ("Here are three questions:", "preamble"),
        ("Who lit it?", "ok"),
        ("When?", "ok"),
        ("Why?", "ok"),
    ]
    assert candidates({"questions": ["a?", "b?"], "evidence": "x"})[1].evidence == "x"
    assert candidates([{"question": "a?"}, "b?"])[1].text == "b?"
    assert candidates(None) is None and candidates({"q": 1}) is None and candidates([3]) is None
    assert candidates("")[0].status == "empty"
    assert locate("first  lit\nin", "It was first lit in 1862") == (7, 19)
    assert locate("absent", "text") is None


def test_near_duplicates_and_copies_filtered(demo):
    answers = {
        "lh00-light": {"question": "How far does the Kestrel Point beam reach?"},
        "lh00-history": {"question": "how far does the kestrel point beam reach"},  # dup
        "lh00-visit": {"question": "How far does the Kestrel Point beam reach out?"},  # near
        "lh01-light": {"question": demo.corpus["lh01-light"]["text"].split(".")[0] + "?"},
    }

    def gen(passage):
        for doc, ans in answers.items():
            if demo.corpus[doc]["text"] == passage:
                return ans
        return ""

    corpus = {d: demo.corpus[d] for d in answers}
    s = synthesize(corpus, gen, near_duplicate=0.8, max_overlap=0.9, progress=False)
    status = {r.doc_id: r.status for r in s.provenance}
    assert status == {
        "lh00-light": "kept",
        "lh00-history": "duplicate",
        "lh00-visit": "near_duplicate",
        "lh01-light": "copies_passage",
    }
    copy = next(r for r in s.provenance if r.status == "copies_passage")
    assert copy.overlap == 1.0 and "100%" in copy.detail
    keep_all = synthesize(corpus, gen, near_duplicate=0.8, max_overlap=None, progress=False)
    assert keep_all.counts["copies_passage"] == 0


def test_ambiguous_questions_with_a_retriever(demo):
    def vague(passage):  # the same words fit every lighthouse's light passage
        return {"question": "Which lighthouse shows a white flash every few seconds?"}

    corpus = {d: v for d, v in demo.corpus.items() if d.endswith("-light")}
    s = synthesize(
        corpus,
        vague,
        n=3,
        near_duplicate=1.0,
        retriever=bm25(corpus),
        max_answerable=3,
        progress=False,
    )
    assert s.counts["ambiguous"] >= 1
    row = next(r for r in s.provenance if r.status == "ambiguous")
    assert row.extra["answerable_elsewhere"] >= 3


def test_sampling_passages_and_bad_arguments(demo):
    s = synthesize(demo, OfflineGenerator(), n=20, seed=3, progress=False)
    assert s.info["passages"] == 20 and s.info["passages_in_corpus"] == 150
    assert s.dataset.info["synthesis"]["counts"]["kept"] == s.counts["kept"]
    with pytest.raises(InputError, match="callable"):
        synthesize(demo, "not a function")
    with pytest.raises(InputError, match="no corpus"):
        synthesize(ranklens.Dataset({"q": "x"}, {"q": {"d": 1}}), OfflineGenerator())
    with pytest.raises(InputError, match="document 'd'"):
        synthesize({"d": 3}, OfflineGenerator())


def test_long_documents_cut_into_passages_with_offsets():
    text = " ".join(
        f"Sentence number {i} is about the tower built in {1800 + i}." for i in range(60)
    )
    s = synthesize({"doc": text}, OfflineGenerator(), max_chars=400, progress=False)
    spans = sorted({tuple(r.passage) for r in s.provenance})
    assert len(spans) > 5 and all(e - b <= 400 for b, e in spans)
    assert all(text[b:e].endswith(".") for b, e in spans)


def test_text_measures_against_brute_force():
    qs = ["the red tower was lit", "a green buoy", "the red tower was lit at night"]
    ps = ["at night the red tower was lit by the keeper", "green buoys float", "nothing"]
    best, where = best_containment(qs, ps)
    for i, q in enumerate(qs):
        brute = containment_pairs([q] * len(ps), ps)
        assert best[i] == pytest.approx(brute.max()) and (
            brute.max() == 0 or where[i] == brute.argmax()
        )
    assert near_duplicates(qs, 0.7) == [(0, 2)]


# ------------------------------------------------------------------ check_dataset
def test_clean_demo_set_has_no_findings(demo):
    check = check_dataset(demo, attach=False)
    assert check.ok and "no findings" in str(check)


def test_each_finding_names_its_queries(demo, tmp_path):
    corpus = {d: v for d, v in demo.corpus.items() if d != "lh05-light"}
    queries = dict(demo.queries)
    labels = demo.qrels.to_dict()
    queries["copy"] = demo.corpus["lh07-visit"]["text"].split(".")[0]  # copied passage
    labels["copy"] = {"lh07-visit": 2}
    queries["leak"] = demo.corpus["lh08-wreck"]["text"].split(".")[0]  # labels another
    labels["leak"] = {"lh08-light": 1}
    queries["again"] = demo.queries["q01"]  # duplicate
    labels["again"] = labels["q01"]
    queries["none"] = "Which lighthouse is haunted?"
    labels["none"] = {"lh00-light": 0}
    labels["q06"] = {**labels["q06"], "lh05-light": 2}
    ds = ranklens.Dataset(queries, labels, corpus, "edited")
    train = {"t1": demo.queries["q02"].upper(), "t2": "unrelated"}
    check = check_dataset(ds, against={"train": train})
    got = {f.kind: f.queries for f in check.findings}
    assert (
        got["query_in_relevant"] == ["copy"] and check["query_in_relevant"].details["copy"]["exact"]
    )
    assert got["query_in_corpus"] == ["leak"]
    assert check["query_in_corpus"].details["leak"]["doc"] == "lh08-wreck"
    assert got["duplicate_queries"] == ["again"]
    assert got["cross_split"] == ["q02"]
    assert "q06" in got["missing_documents"]
    assert got["no_relevant"] == ["none"]
    text = str(check)
    assert all(k in text for k in ("copy", "leak", "again", "q02", "q06", "none"))
    saved = json.loads(check.to_json())["findings"]  # every finding, with its queries
    assert {f["kind"]: f["queries"] for f in saved} == {f.kind: f.queries for f in check.findings}


def test_findings_surface_in_every_evaluation(demo, tmp_path):
    ds = ranklens.Dataset(dict(demo.queries), demo.qrels, demo.corpus, "with-dup")
    ds.queries["dup"] = ds.queries["q01"]
    ds.qrels = ranklens.Qrels.from_dict({**demo.qrels.to_dict(), "dup": {"lh00-light": 2}})
    check_dataset(ds)
    run = {q: {"lh00-light": 1.0} for q in ds.queries}
    ranklens.write_run(ranklens.Run.from_dict(run), tmp_path / "run.txt")
    paths = {
        "evaluate": lambda: ranklens.evaluate(ds, run, ["P@1"]),
        "compare": lambda: ranklens.compare(ds, {"a": run, "b": run}, ["P@1"]),
        "gate": lambda: ranklens.gate(
            ds, run, tmp_path / "base.json", ["P@1"], update_baseline=True
        ),
        "stream": lambda: ranklens.evaluate_file(
            ds, tmp_path / "run.txt", ["P@1"], memory="1K", progress=False
        ),
    }
    for name, call in paths.items():
        with pytest.warns(RanklensWarning, match="check_dataset found 1 queries repeat"):
            call()
        assert name


def test_synthetic_set_copies_are_found_by_the_check(demo):
    s = synthesize(demo, OfflineGenerator(), max_overlap=None, progress=False)
    check = check_dataset(s.dataset, attach=False)
    flagged = check["query_in_relevant"]
    assert flagged is not None and len(flagged.queries) > len(s.dataset.queries) / 3
    # the same questions, judged by the overlap recorded at synthesis
    high = {r.query_id for r in s.provenance.kept() if r.overlap >= 0.8}
    assert high <= set(flagged.queries) | {q for q in high if q not in s.dataset.queries}
