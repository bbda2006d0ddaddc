"""ranklens.estimate end to end: two real offline retrievers (bm25s, word overlap) on the
demo set, a judge with a known bias calibrated on 30 human-labelled queries; each
estimate equal to its definition on ranklens.evaluate's per-query values; the bad inputs
of the issue (a judge answering non-grades or hanging, a human sample sharing nothing, too
small); ensembles; position and length bias checks; the report's notes and HTML."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from _nolabels_case import biased_judge, bm25, word_overlap

import ranklens
from ranklens.app.demo_data import load
from ranklens.errors import InputError
from ranklens.estimation import classical, judge_bias, ppi
from ranklens.estimation.labels import combined
from ranklens.labelling import PoolPair

METRICS = ["ndcg@10", "P@5"]


@pytest.fixture(scope="module")
def setup():
    demo = load()
    runs = {}
    for name, retrieve in (
        ("bm25", bm25(demo.corpus)),
        ("overlap", word_overlap(demo.corpus, 0.4)),
    ):
        runs[name] = {q: dict(retrieve(t)) for q, t in demo.queries.items()}
    judge = biased_judge({})
    for q, docs in demo.qrels.to_dict().items():
        for d, g in docs.items():
            judge.by_text[demo.queries[q], demo.corpus[d]["text"]] = g
    est = ranklens.estimate(
        demo, runs, judge=judge, human=30, metrics=METRICS, calls=ranklens.Calling(progress=False)
    )
    return demo, runs, judge, est


def test_each_estimate_is_its_definition(setup):
    demo, runs, judge, est = setup
    labelled = est.labelled
    assert len(labelled) == 30 and est.n == 30 and est.big_n == 10
    rest = sorted(set(demo.queries) - set(labelled))
    # the judge's own labels, asked again directly
    pairs = {
        (q, d)
        for r in runs.values()
        for q, docs in r.items()
        for d in sorted(docs, key=lambda x: -docs[x])[:10]
    }
    judge_labels = {}
    for q, d in pairs:
        judge_labels.setdefault(q, {})[d] = judge(demo.queries[q], demo.corpus[d]["text"])
    human = demo.qrels.subset(labelled)
    y, f = {}, {}
    for name, run in runs.items():
        h = ranklens.evaluate(human, run, METRICS)
        j = ranklens.evaluate(judge_labels, run, METRICS)
        y[name] = np.array([[h.query(q)[m] for m in METRICS] for q in labelled])
        jq = {q: j.query(q) for q in j.query_ids}
        f[name] = np.array(
            [[jq.get(q, {}).get(m, 0.0) for m in METRICS] for q in sorted(demo.queries)]
        )
    order = {q: i for i, q in enumerate(sorted(demo.queries))}
    li = [order[q] for q in labelled]
    ui = [order[q] for q in rest]
    for name in runs:
        for k, m in enumerate(METRICS):
            row = est.row(name, m)
            assert row["human"]["value"] == pytest.approx(y[name][:, k].mean(), abs=1e-12)
            assert row["naive"]["value"] == pytest.approx(f[name][:, k].mean(), abs=1e-12)
            want = ppi(y[name][:, k], f[name][li, k], f[name][ui, k], lam=None)
            assert row["ppi++"]["value"] == pytest.approx(want.value[0], abs=1e-12)
            assert row["ppi++"]["lo"] == pytest.approx(want.lo[0], abs=1e-12)
            bias = classical(f[name][li, k] - y[name][:, k])
            assert row["judge_bias"]["value"] == pytest.approx(bias.value[0], abs=1e-12)
    # paired difference: per-query differences as the estimand
    d = est.row("overlap − bm25", "ndcg@10")
    dy = y["overlap"][:, 0] - y["bm25"][:, 0]
    df = f["overlap"][:, 0] - f["bm25"][:, 0]
    want = ppi(dy, df[li], df[ui], lam=1.0)
    assert d["ppi"]["value"] == pytest.approx(want.value[0], abs=1e-12)
    assert d["kind"] == "difference"


def test_the_lenient_judge_inflates_the_naive_estimate(setup):
    demo, runs, _, est = setup
    row = est.row("bm25", "P@5")
    truth = ranklens.evaluate(demo, runs["bm25"], ["P@5"])["P@5"]
    # the lenient judge calls 30% of the unlabelled passages relevant: judge-only is far off
    assert row["naive"]["lo"] > truth
    assert row["judge_bias"]["lo"] > 0
    assert row["ppi++"]["lo"] <= truth <= row["ppi++"]["hi"]
    assert est.judge["n"] > 50 and 0 < est.judge["kappa"] < 1
    assert {g["grade"] for g in est.judge["per_grade"]} == {1, 2}


def test_text_html_and_report_note(setup, tmp_path):
    demo, runs, _, est = setup
    text = str(est)
    assert "judge only" in text and "PPI++" in text and "overlap − bm25" in text
    assert "agrees with people" in text
    report = est.attach(ranklens.compare(demo, runs, METRICS))
    html = report.to_html()
    assert "Estimated without full labels" in html and '<svg class="chart estimate"' in html
    assert "Estimated without full labels (30 human-labelled queries" in report.to_markdown()
    page = est.to_html(tmp_path / "est.html")
    assert page.startswith("<!DOCTYPE html>") and (tmp_path / "est.html").exists()
    report.save(tmp_path / "r.json")
    saved = ranklens.load_report(tmp_path / "r.json")
    assert saved.metadata["estimate"]["rows"] == est.to_dict()["rows"]
    assert est.to_pandas().shape == (len(est.rows) * 4, 8)


def test_plan_labels_from_the_pilot(setup):
    *_, est = setup
    plan = ranklens.plan_labels(est, 0.1, target="bm25", metric="ndcg@10")
    (row,) = plan.rows
    assert row["human_only"] >= 2 and plan.queries == 40
    assert row["sd_human"] == pytest.approx(est.row("bm25", "ndcg@10")["human"]["se"] * np.sqrt(30))


def test_a_judge_that_answers_junk_or_hangs_fails_those_pairs_only(setup):
    demo, runs, *_ = setup

    async def client(query, passage):
        await asyncio.sleep(0.001)
        if "puffins" in passage:
            return "Relevant"  # not a grade
        if "wreck" in passage.lower() and "Alder" in passage:
            await asyncio.sleep(30)  # hangs
        return int(any(w in passage for w in query.split()[:3]))

    est = ranklens.estimate(
        demo,
        runs,
        judge=client,
        human=30,
        metrics=["P@5"],
        calls=ranklens.Calling(timeout=0.2, retries=0, progress=False),
    )
    assert est.info["judge_failures"] > 0
    assert any("The judge failed on" in n for n in est.notes())


def test_bad_human_samples_are_named_errors(setup):
    demo, runs, judge, _ = setup
    with pytest.raises(InputError, match="shares no query"):
        ranklens.estimate(
            demo,
            runs,
            judge=judge,
            human={"elsewhere": {"lh00-light": 1}},
            calls=ranklens.Calling(progress=False),
        )
    unseen = {q: {"no-such-doc": 1} for q in list(demo.queries)[:12]}
    with pytest.raises(InputError, match="share no \\(query, document\\) pair"):
        ranklens.estimate(
            demo, runs, judge=judge, human=unseen, calls=ranklens.Calling(progress=False)
        )
    with pytest.raises(InputError, match=r"too small.*at least 10.*plan_labels"):
        ranklens.estimate(demo, runs, judge=judge, human=5, calls=ranklens.Calling(progress=False))
    with pytest.raises(InputError, match="exactly one of"):
        ranklens.estimate(demo, runs, human=30, calls=ranklens.Calling(progress=False))
    with pytest.raises(InputError, match="estimate: human must be given"):
        ranklens.estimate(demo, runs, judge=judge, calls=ranklens.Calling(progress=False))
    with pytest.raises(InputError, match="no text in the dataset's corpus"):
        ranklens.estimate(demo, {"r": {"q01": ["not-in-corpus"]}}, judge=judge, human=30)


def test_ensemble_majority_and_members(setup):
    demo, runs, judge, _ = setup
    assert combined([{("q", "a"): 2}, {("q", "a"): 1}, {("q", "a"): 1}], "majority").to_dict() == {
        "q": {"a": 1}
    }
    assert combined([{("q", "a"): 2}, {("q", "a"): 0}], "majority").to_dict() == {"q": {"a": 0}}
    assert combined([{("q", "a"): 2}, {("q", "a"): 1}], "mean").to_dict() == {"q": {"a": 2}}
    assert combined([{("q", "a"): 2}, {("q", "a"): 0}, {("q", "a"): 1}], "median").to_dict() == {
        "q": {"a": 1}
    }

    def stingy(query, passage):
        return 0

    est = ranklens.estimate(
        demo,
        runs,
        judges=[judge, judge, stingy],
        human=30,
        metrics=["P@5"],
        calls=ranklens.Calling(progress=False),
    )
    assert len(est.judge["members"]) == 3
    same = ranklens.estimate(
        demo, runs, judge=judge, human=30, metrics=["P@5"], calls=ranklens.Calling(progress=False)
    )
    assert est.row("bm25", "P@5")["naive"] == same.row("bm25", "P@5")["naive"]


def test_position_and_length_bias_are_measured():
    demo = load()
    pairs = [
        PoolPair(q, d, {}, demo.queries[q], demo.corpus[d]["text"])
        for q, docs in list(demo.qrels.to_dict().items())[:20]
        for d in docs
    ]

    def words(query):
        return {w.strip("?,.").lower() for w in query.split() if len(w) > 3}

    def fair(query, passage):
        return int(len(words(query) & set(passage.lower().replace(".", " ").split())) >= 2)

    def first_half(query, passage):  # reads only the start of what it is shown
        return fair(query, passage[: max(len(passage) // 2, 200)])

    def verbose(query, passage):  # likes long passages
        return fair(query, passage) + (len(passage) > 300)

    calm = judge_bias(fair, pairs, progress=False)
    assert calm.position["changed"] == 0 and calm.length["mean_shift"] >= 0
    pos = judge_bias(first_half, pairs, progress=False)
    assert pos.position["mean_shift"] > 0 and pos.position["p_value"] < 0.01
    long = judge_bias(verbose, pairs, progress=False)
    assert long.length["mean_shift"] > 0.5 and long.length["p_value"] < 0.01
    assert "position:" in str(pos) and "length:" in str(long)
    with pytest.raises(InputError, match="at least 2 pairs"):
        judge_bias(fair, pairs[:1])
