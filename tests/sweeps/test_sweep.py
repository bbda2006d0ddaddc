"""``ranklens.sweep``: the grid checked before anything runs, faults recorded per
configuration, shared builds, resuming, the honest selection checked against brute force
and against simulation with known true means, constraints, costs, outputs and the CLI."""

from __future__ import annotations

import json
import math
import threading
import time
import warnings

import numpy as np
import pytest
from _sweep_case import as_settings

import ranklens
from ranklens.app.demo_data import load
from ranklens.errors import InputError, RanklensWarning, RunInterrupted
from ranklens.fusion import held_out, query_folds
from ranklens.sweeps import pareto, select

FAST = dict(n_resamples=500, progress=False, concurrency=2)


def fast_settings(**given):
    """FAST and ``given`` through :func:`as_settings`."""
    return as_settings(**{**FAST, **given})


@pytest.fixture(scope="module")
def demo():
    return load()


def overlap_build(field: str, boost: int = 0, delay: float = 0.0):
    """Word-overlap retrieval over the demo passages' ``field`` (``both``: title and
    text); ``boost`` lifts passages of lighthouse number ``boost`` (changes rankings)."""
    ds = load()
    words = {
        d: set((v["title"] + " " + v["text"] if field == "both" else v[field]).lower().split())
        for d, v in ds.corpus.items()
    }

    def retrieve(query: str, k: int = 10):
        if delay:
            time.sleep(delay)
        q = set(query.lower().split())
        scored = sorted(
            (
                (len(q & w) + (boost and d.startswith(f"lh{boost:02d}")), d)
                for d, w in words.items()
            ),
            key=lambda x: (-x[0], x[1]),
        )
        return [(d, float(s)) for s, d in scored[:k]]

    return retrieve


def test_grid_is_expanded_named_and_checked(demo):
    res = ranklens.sweep(
        overlap_build,
        {"field": ["text", "title"], "boost": [0, 3]},
        demo,
        ["ndcg@10"],
        **fast_settings(),
    )
    assert [r["name"] for r in res.rows] == [
        "field=text, boost=0",
        "field=text, boost=3",
        "field=title, boost=0",
        "field=title, boost=3",
    ]
    listed = ranklens.sweep(
        overlap_build,
        [{"field": "text"}, {"field": "both", "boost": 1}],
        demo,
        ["ndcg@10"],
        **fast_settings(name=lambda p: "+".join(map(str, p.values()))),
    )
    assert [r["name"] for r in listed.rows] == ["text", "both+1"]
    assert listed.baseline == "text"


@pytest.mark.parametrize(
    ("grid", "kwargs", "message"),
    [
        ({}, {}, "the grid is empty"),
        ([], {}, "the grid is empty"),
        ({"field": []}, {}, "'field' has no values"),
        ({"field": "text"}, {}, "give a list of values"),
        ({"field": ["text"], "top": [3]}, {}, "does not take 'top'"),
        ({"boost": [1]}, {}, "needs 'field'"),
        ([{"field": "text"}, {"field": "text"}], {}, "the same configuration twice"),
        ({"field": ["text"]}, {"query_params": ["k"]}, "name no parameter of the grid"),
        ({"field": ["text"]}, {"baseline": "bm25"}, "not a configuration of the grid"),
        ({"field": ["text"]}, {"constraint": "latency < 3"}, "cannot read 'latency < 3'"),
        ({"field": ["text"]}, {"cost_per_token": 1e-6}, "count_tokens="),
        ({"field": ["text"]}, {"backend": "spark"}, "backend must be"),
    ],
)
def test_bad_input_is_named_before_anything_runs(demo, grid, kwargs, message):
    calls = []

    def build(field: str, boost: int = 0):
        calls.append(field)
        return overlap_build(field, boost)

    with pytest.raises(InputError, match=message):
        ranklens.sweep(build, grid, demo, ["ndcg@10"], **fast_settings(**kwargs))
    assert calls == []


def test_faults_are_recorded_per_configuration_and_the_sweep_goes_on(demo):
    cache: dict[str, object] = {}

    def build(field: str, top: int):
        if field == "broken":
            raise RuntimeError("index server down")
        if field not in cache:  # ignores top: the same object for two configurations
            cache[field] = overlap_build(field)
        return cache[field]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        res = ranklens.sweep(
            build,
            {"field": ["text", "broken"], "top": [5, 10]},
            demo,
            ["ndcg@10"],
            **fast_settings(),
        )
    status = {r["name"]: r["status"] for r in res.rows}
    assert status == {
        "field=text, top=5": "ok",
        "field=text, top=10": "failed",
        "field=broken, top=5": "failed",
        "field=broken, top=10": "failed",
    }
    assert "serves 'field=text, top=5' again" in res.failed["field=text, top=10"]
    assert "RuntimeError: index server down" in res.failed["field=broken, top=5"]
    assert res.chosen == {"field": "text", "top": 5}
    assert "not measured" in str(res) and "index server down" in str(res)


def test_every_query_failing_is_a_failed_configuration(demo):
    def build(field: str):
        if field == "title":
            return lambda q: (_ for _ in ()).throw(ValueError("bad request"))
        return overlap_build(field)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        res = ranklens.sweep(
            build, {"field": ["text", "title"]}, demo, ["ndcg@10"], **fast_settings(retries=0)
        )
    assert "every one of its 40 queries failed (40 ValueError)" in res.failed["field=title"]


def test_a_timeout_fails_the_slow_queries_of_one_configuration_and_the_sweep_goes_on(demo):
    """``timeout=``: one configuration stalls on 4 queries (far past the timeout, on both
    attempts); those are recorded as its failures, counted in its row, scored 0, and the
    configurations after it run as usual. Nothing waits for a stalled call."""
    release = threading.Event()  # frees the stalled calls, given up by the runner
    watchdog = threading.Timer(300, release.set)  # only so that a runner that waited ends
    watchdog.start()
    slow = {q for q in demo.queries if q.endswith("3")}
    texts = {demo.queries[q] for q in slow}
    lock = threading.Lock()
    stalled = {"started": 0, "in_flight": 0}

    def build(field: str, stalls: bool):
        inner = overlap_build(field)

        def retrieve(query: str, k: int = 10):
            if stalls and query in texts:
                with lock:
                    stalled["started"] += 1
                    stalled["in_flight"] += 1
                release.wait()
                with lock:
                    stalled["in_flight"] -= 1
            return inner(query, k)

        return retrieve

    grid = [
        {"field": "text", "stalls": False},
        {"field": "text", "stalls": True},
        {"field": "title", "stalls": False},
    ]
    try:
        res = ranklens.sweep(
            build, grid, demo, ["ndcg@10"], **fast_settings(timeout=0.3, retries=1)
        )
        # the sweep returned while every stalled attempt (4 queries x 2) was still stalled:
        # nothing waited for them
        with lock:
            assert stalled == {"started": 8, "in_flight": 8}
    finally:
        release.set()
        watchdog.cancel()
    assert len(slow) == 4
    assert {r["name"]: (r["status"], r["queries"], r["errors"]) for r in res.rows} == {
        "field=text, stalls=False": ("ok", 40, 0),
        "field=text, stalls=True": ("ok", 40, 4),
        "field=title, stalls=False": ("ok", 40, 0),
    }
    failed = {r.query_id: r for r in res.results["field=text, stalls=True"].records if not r.ok}
    assert set(failed) == slow
    assert all(r.error["type"] == "TimeoutError" and r.attempts == 2 for r in failed.values())
    # the stalled queries score 0; the others as the same retriever without stalls
    per_query = res.report.per_query
    ids = list(res.report.query_ids)
    fast = per_query["field=text, stalls=False"]["ndcg@10"]
    stalled = per_query["field=text, stalls=True"]["ndcg@10"]
    for i, q in enumerate(ids):
        assert stalled[i] == (0.0 if q in slow else fast[i]), q
    assert (
        res.row("field=text, stalls=True")["metrics"]["ndcg@10"]["value"]
        < (res.row("field=text, stalls=False")["metrics"]["ndcg@10"]["value"])
    )


def test_ids_matching_no_label_are_named_with_the_key_fix(demo):
    def build(chunked: bool):
        inner = overlap_build("text")
        if not chunked:
            return inner
        return lambda q: [{"id": f"{d}#0", "parent": d, "score": s} for d, s in inner(q)]

    with pytest.warns(RanklensWarning, match="key='parent' would match"):
        res = ranklens.sweep(
            build, {"chunked": [False, True]}, demo, ["ndcg@10"], **fast_settings()
        )
    row = res.row("chunked=True")
    assert (
        row["status"] == "unmatched"
        and "none of its 400 retrieved ids has a label" in (row["message"])
    )
    assert res.selection["ndcg@10"]["feasible"] == ["chunked=False"]
    assert "chunked=True" not in res.tied
    fixed = ranklens.sweep(
        build, {"chunked": [True]}, demo, ["ndcg@10"], **fast_settings(key="parent")
    )
    assert fixed.row("chunked=True")["status"] == "ok"


def test_query_params_share_one_build_per_index(demo):
    builds, made = [], []

    def build(field: str):
        builds.append(field)
        index = overlap_build(field)

        def at(top: int):
            made.append((field, top))
            return lambda q: index(q, top)

        return at

    res = ranklens.sweep(
        build,
        {"field": ["text", "title"], "top": [3, 5, 10]},
        demo,
        ["recall@10"],
        query_params=["top"],
        **fast_settings(),
    )
    assert builds == ["text", "title"]
    assert len(made) == 6
    rows = {r["name"]: r for r in res.rows}
    assert rows["field=text, top=3"]["shared_build"] == 3
    assert rows["field=text, top=3"]["build_s"] == rows["field=text, top=10"]["build_s"]
    recall = {n: r["metrics"]["recall@10"]["value"] for n, r in rows.items()}
    assert recall["field=text, top=3"] < recall["field=text, top=10"]
    effect = [e for e in res.effects["recall@10"] if e["param"] == "top"]
    assert [e["value"] for e in effect] == ["3", "5", "10"]
    assert effect[0]["ci_low"] <= effect[0]["mean"] <= effect[0]["ci_high"]
    with pytest.raises(InputError, match="does not take 'top'"):
        ranklens.sweep(build, {"field": ["text"], "top": [3]}, demo, ["ndcg@10"], **fast_settings())


def test_numbers_equal_the_runs_made_by_hand_and_brute_force_cross_validation(demo):
    grid = {"field": ["text", "title", "both"], "boost": [0, 5]}
    res = ranklens.sweep(
        overlap_build, grid, demo, ["ndcg@10", "mrr@10"], **fast_settings(folds=4, seed=3)
    )
    names = [r["name"] for r in res.rows]
    values = []
    for r in res.rows:
        by_hand = ranklens.run_retriever(
            overlap_build(**res.outcomes[names.index(r["name"])].config.params),
            demo,
            k=10,
            progress=False,
        )
        ev = by_hand.evaluate(demo.qrels, ["ndcg@10", "mrr@10"])
        assert r["metrics"]["ndcg@10"]["value"] == pytest.approx(ev["ndcg@10"], abs=1e-12)
        values.append(ev.per_query["ndcg@10"])
    v = np.array(values)
    # brute force: each fold's queries scored by the best configuration on the others
    fold = query_folds(v.shape[1], 4, 3)
    cv = np.empty(v.shape[1])
    for f in range(4):
        train = [q for q in range(v.shape[1]) if fold[q] != f]
        means = [sum(v[i, q] for q in train) / len(train) for i in range(len(v))]
        best = next(i for i, m in enumerate(means) if m >= max(means) - 1e-12)
        for q in range(v.shape[1]):
            if fold[q] == f:
                cv[q] = v[best, q]
    sel = res.selection["ndcg@10"]
    assert sel["cv_estimate"] == pytest.approx(cv.mean(), abs=1e-12)
    assert sel["in_sample_best"] == pytest.approx(v.mean(axis=1).max(), abs=1e-12)
    assert sel["chosen"] == names[int(np.argmax(v.mean(axis=1)))]
    # the family of tests: the chosen one against every other, Holm over them
    from scipy.stats import ttest_rel

    t = ranklens.sweep(overlap_build, grid, demo, ["ndcg@10"], **fast_settings(test="t"))
    chosen = names.index(t.selection["ndcg@10"]["chosen"])
    raw = {n: ttest_rel(v[chosen], v[i]).pvalue for i, n in enumerate(names) if i != chosen}
    raw = {n: 1.0 if math.isnan(p) else p for n, p in raw.items()}
    ordered = sorted(raw, key=raw.get)
    holm, running = {}, 0.0
    for j, n in enumerate(ordered):
        running = max(running, min(1.0, raw[n] * (len(raw) - j)))
        holm[n] = running
    for n, test in t.selection["ndcg@10"]["tests"].items():
        assert test["pvalue"] == pytest.approx(raw[n], rel=1e-9, abs=1e-12)
        assert test["pvalue_adjusted"] == pytest.approx(holm[n], rel=1e-9, abs=1e-12)
    tied = [n for n in names if n == names[chosen] or holm[n] >= 0.05]
    assert sorted(t.tied) == sorted(tied)


def test_selection_bias_is_measured_and_removed_by_cross_validation():
    """Simulated sweeps with known true means. When every configuration is equally good
    (the in-sample winner is noise), the in-sample best overstates the truth by about
    sigma/sqrt(n) * E[max of K normals]; the cross-validated estimate does not. With one
    truly better configuration the estimate stays at or below the in-sample best."""
    rng = np.random.default_rng(7)
    sims, k, n, sigma = 2000, 20, 50, 0.25
    query = rng.normal(0.5, 0.15, size=(sims, 1, n))  # query difficulty, shared
    noise = rng.normal(0.0, sigma, size=(sims, k, n))
    fold = query_folds(n, 5, 0)
    for truth in (np.full(k, 0.0), np.r_[0.08, np.zeros(k - 1)]):
        values = query + truth[None, :, None] + noise
        choices, cv = held_out(values, fold)
        in_sample = values.mean(axis=-1).max(axis=-1)
        estimate = cv.mean(axis=-1)
        # what the chosen configurations are truly worth, fold by fold
        worth = (truth[choices] * np.bincount(fold) / n).sum(axis=-1) + query.mean(axis=(1, 2))
        bias_in = in_sample - worth
        bias_cv = estimate - worth
        se = bias_cv.std() / math.sqrt(sims)
        if truth.max() == 0:
            assert bias_in.mean() > 20 * bias_in.std() / math.sqrt(sims)  # clearly biased
            assert bias_in.mean() > 0.8 * sigma / math.sqrt(n) * 1.8  # E[max of 20] ≈ 1.87
        assert abs(bias_cv.mean()) < 4 * se  # unbiased for the procedure's worth
        assert estimate.mean() <= in_sample.mean()
    # the production path: select() gives held_out's estimate on one simulated sweep
    sel = select(
        values[0],
        [f"c{i}" for i in range(k)],
        np.ones(k, bool),
        1,
        folds=5,
        seed=0,
        n_resamples=200,
    )
    assert sel["cv_estimate"] == pytest.approx(cv[0].mean(), abs=1e-12)
    assert sel["cv_estimate"] <= sel["in_sample_best"]


def test_pareto_frontier_against_brute_force():
    rng = np.random.default_rng(1)
    q, c = rng.random(40).round(1), rng.random(40).round(1)
    front = pareto(q, c)
    for i in range(40):
        dominated = any(
            q[j] >= q[i] and c[j] <= c[i] and (q[j] > q[i] or c[j] < c[i]) for j in range(40)
        )
        assert front[i] == (not dominated)
    assert pareto([0.5, math.nan], [1.0, 1.0]) == [True, False]


def test_a_rate_of_the_unwanted_is_chosen_lowest(demo):
    """unj@10 (unjudged share) is lower-is-better: the chosen configuration, the ranking,
    the held-out estimate, the effects and the table put the lowest mean first; the values
    stay in the metric's units."""

    def build(junk: int):  # the first `junk` hits are ids no label names
        base = overlap_build("both")

        def retrieve(query: str, k: int = 10):
            return [(f"x{i}", 99.0 - i) for i in range(junk)] + base(query, k)[: k - junk]

        return retrieve

    res = ranklens.sweep(
        build, {"junk": [0, 3, 6]}, demo, ["unj@10", "recall@10"], **fast_settings()
    )
    sel = res.selection["unj@10"]
    means = dict(zip([r["name"] for r in res.rows], sel["means"]))
    assert min(means, key=means.get) == "junk=0" == sel["chosen"]
    assert sel["ranking"] == ["junk=0", "junk=3", "junk=6"]
    assert sel["in_sample_best"] == pytest.approx(means["junk=0"])
    assert sel["cv_estimate"] == pytest.approx(means["junk=0"])  # the same choice every fold
    assert all(t["diff"] < 0 for t in sel["tests"].values())  # lower than every other
    assert next(r for r in res.effects["unj@10"] if r["param"] == "junk")["best"] == "junk=0"
    table = str(res)
    assert table.index("junk=0") < table.index("junk=3") < table.index("junk=6")


def test_constraint_and_costs(demo):
    fields = {"field": ["text", "title", "both"]}
    best = ranklens.sweep(overlap_build, fields, demo, ["recall@10"], **fast_settings()).chosen[
        "field"
    ]

    def build(field: str):  # the best configuration made slow
        return overlap_build(field, boost=0, delay=0.03 if field == best else 0.0)

    res = ranklens.sweep(
        build,
        fields,
        demo,
        ["recall@10"],
        **fast_settings(
            constraint="p95 <= 20 ms",
            cost=lambda p: 0.002 if p["field"] == best else 0.0,
            cost_per_token=0.0001,
            count_tokens=lambda text: len(text.split()),
        ),
    )
    best = f"field={best}"
    assert res.selection["recall@10"]["chosen"] != best
    assert not res.row(best)["feasible"]
    tokens = sum(len(t.split()) for t in demo.queries.values())
    expected = 1000 * (40 * 0.002 + tokens * 1e-4) / 40
    assert res.row(best)["cost"] == pytest.approx(expected)
    assert "pareto_cost" in res.row(best)
    assert "⊘" in str(res)
    none = ranklens.sweep(
        build, fields, demo, ["recall@10"], **fast_settings(constraint="p95 <= 0.001")
    )
    assert none.chosen is None and none.cv_estimate is None
    assert "none: none of the 3 measured configurations satisfies the constraint" in str(none)
    with pytest.raises(InputError, match="fields: p50, p95"):
        ranklens.sweep(
            build, fields, demo, ["recall@10"], **fast_settings(constraint="p95 <= fast")
        )


def test_interrupted_sweep_resumes_without_rebuilding_or_asking_again(demo, tmp_path):
    builds, asked = [], []
    state = {"stop_at": 55}

    def build(field: str):
        builds.append(field)
        inner = overlap_build(field)

        def retrieve(query: str):
            asked.append((field, query))
            if len(asked) == state["stop_at"]:
                raise KeyboardInterrupt
            return inner(query)

        return retrieve

    grid = {"field": ["text", "title", "both"]}
    with pytest.raises(RunInterrupted, match="1 of 3 configurations finished") as exc:
        ranklens.sweep(
            build,
            grid,
            demo,
            ["ndcg@10"],
            **as_settings(cache=tmp_path, concurrency=1, n_resamples=500),
        )
    assert "to resume" in str(exc.value)
    first = list(asked)
    builds.clear()
    asked.clear()
    state["stop_at"] = -1
    res = ranklens.sweep(
        build,
        grid,
        demo,
        ["ndcg@10"],
        **as_settings(cache=tmp_path, concurrency=1, n_resamples=500),
    )
    assert builds == ["title", "both"]  # text was finished: read from its log, not built
    assert len(first) - 1 + len(asked) == 120  # no finished query asked again
    assert not set(first[:-1]) & set(asked)
    assert [r["resumed"] for r in res.rows] == [True, False, False]
    assert res.results["field=title"].info["resumed"] == 54 - 40
    by_hand = ranklens.sweep(
        overlap_build, grid, demo, ["ndcg@10"], **as_settings(n_resamples=500, progress=False)
    )
    assert [r["metrics"] for r in res.rows] == [r["metrics"] for r in by_hand.rows]


def test_a_log_of_another_build_is_refused(demo, tmp_path):
    def build(field: str):
        return overlap_build(field)

    ranklens.sweep(build, {"field": ["text"]}, demo, ["ndcg@10"], **fast_settings(cache=tmp_path))

    def build(field: str):  # edited: another build
        return overlap_build(field, boost=2)

    with pytest.raises(InputError, match="another sweep configuration; differences: sweep_build"):
        ranklens.sweep(
            build, {"field": ["text"]}, demo, ["ndcg@10"], **fast_settings(cache=tmp_path)
        )


def test_outputs(demo, tmp_path):
    res = ranklens.sweep(
        overlap_build,
        {"field": ["text", "title"], "boost": [0, 7]},
        demo,
        ["ndcg@10", "recall@10"],
        **fast_settings(),
    )
    df = res.to_pandas()
    assert list(df.index) == [r["name"] for r in res.rows]
    assert {"field", "boost", "ndcg@10", "p95", "build_s", "pareto", "tied"} <= set(df.columns)
    assert res.to_markdown().startswith("| | |")
    data = json.loads(res.to_json())
    assert data["selection"]["ndcg@10"]["chosen"] == res.chosen_name()
    html = res._repr_html_()
    assert 'data-chart="pareto"' in html and html.count('data-chart="effect"') == 2
    assert 'class="sweep-matrix"' in html
    res.report.save(tmp_path / "r.json")
    page = ranklens.load_report(tmp_path / "r.json").to_html()
    assert 'data-chart="pareto"' in page and "Query drill-down" in page
    assert repr(res).startswith("SweepResult(4 configurations, ndcg@10: chosen")


def test_cli(tmp_path, capsys):
    from ranklens.app.cli import main

    (tmp_path / "retrievers.py").write_text(
        "from ranklens.app.demo_data import load\n"
        "DS = load()\n"
        "def build(field):\n"
        "    words = {d: set(v[field].lower().split()) for d, v in DS.corpus.items()}\n"
        "    def retrieve(q, k=10):\n"
        "        s = sorted(((len(set(q.lower().split()) & w), d) for d, w in words.items()),"
        " key=lambda x: (-x[0], x[1]))\n"
        "        return [(d, float(v)) for v, d in s[:k]]\n"
        "    return retrieve\n"
    )
    from ranklens.app.demo_data import demo_folder

    questions = demo_folder() / "questions.jsonl"  # read_dataset reads it
    (tmp_path / "sweep.toml").write_text(
        f'build = "retrievers.py:build"\ndataset = "{questions}"\nmetrics = ["ndcg@10"]\n'
        'cache = "cache"\nn_resamples = 500\n[grid]\nfield = ["text", "title"]\n'
    )
    assert (
        main(
            [
                "sweep",
                str(tmp_path / "sweep.toml"),
                "--html",
                str(tmp_path / "s.html"),
                "--json",
                str(tmp_path / "s.json"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "[2/2] field=title" in out and "ndcg@10 cross-validated" in out
    assert (tmp_path / "cache" / "sweep.jsonl").exists()
    assert json.loads((tmp_path / "s.json").read_text())["rows"][0]["name"] == "field=text"
    assert 'data-chart="pareto"' in (tmp_path / "s.html").read_text()
    (tmp_path / "bad.toml").write_text(
        f'build = "retrievers.py:build"\ndataset = "{questions}"\n'
        'grid = {field = ["text"]}\ntop_k = 3\n'
    )
    assert main(["sweep", str(tmp_path / "bad.toml")]) == 2
    assert "unknown key 'top_k'" in capsys.readouterr().err


def test_span_labels_pass_through_to_every_chunking(demo):
    """A sweep over chunk sizes scored against evidence spans (labels that survive
    re-chunking): each configuration's numbers equal evaluate() of the same run."""
    from ranklens.app.demo_data import load_spans

    labels = load_spans().qrels
    texts = {d: v["text"] for d, v in demo.corpus.items()}

    def build(size: int):
        chunks = [(d, a, t[a : a + size]) for d, t in texts.items() for a in range(0, len(t), size)]

        def retrieve(query: str, k: int = 10):
            q = set(query.lower().split())
            scored = sorted(chunks, key=lambda c: (-len(q & set(c[2].lower().split())), c[:2]))
            return [
                {
                    "id": f"{d}@{a}",
                    "parent": d,
                    "start": a,
                    "end": a + len(t),
                    "text": t,
                    "score": float(len(q & set(t.lower().split()))),
                }
                for d, a, t in scored[:k]
            ]

        return retrieve

    metrics = ["ndcg@10", "evidence_recall@10", "evidence_precision@10"]
    res = ranklens.sweep(
        build,
        {"size": [40, 120, 400]},
        demo,
        metrics,
        labels=labels,
        **fast_settings(key="parent", k=None),
    )
    for size in (40, 120, 400):
        by_hand = ranklens.run_retriever(build(size), demo, key="parent", progress=False)
        ev = ranklens.evaluate(labels, by_hand, metrics)
        for m in metrics:
            assert res.row(f"size={size}")["metrics"][m]["value"] == pytest.approx(ev[m], abs=1e-12)
    recall = [
        res.row(f"size={s}")["metrics"]["evidence_recall@10"]["value"] for s in (40, 120, 400)
    ]
    assert recall == sorted(recall)  # longer chunks hold more of the evidence


@pytest.mark.parametrize("test", ["randomization", "bootstrap", "t"])
def test_pairwise_pvalues_equal_each_pair_tested_alone(test):
    # every pair and the held-out test in one product over the configurations' columns:
    # the same p-values as testing each difference by itself (t: a column's sums in a
    # batch round differently from a lone column's, as they always did)
    from ranklens.comparison import stats
    from ranklens.settings import Statistics
    from ranklens.sweeps.select import pairwise_pvalues

    rng = np.random.default_rng(4)
    values = [np.round(rng.random((5, 80)), 2), rng.random((4, 80)), rng.random((3, 50))]
    held = [(rng.random(80), 2), None, (values[2][1] + 0.01, 0)]
    mats, held_p = pairwise_pvalues(values, Statistics(test=test, n_resamples=1000, seed=3), held)
    same = (lambda a, b: a == pytest.approx(b, rel=1e-12)) if test == "t" else np.equal
    for v, mat in zip(values, mats):
        for i in range(len(v)):
            for j in range(i + 1, len(v)):
                alone = stats.paired_test(v[i] - v[j], test, 1000, 3)[0]
                assert mat[i, j] == mat[j, i] and same(mat[i, j], alone)
    assert held_p[1] is None
    for m in (0, 2):
        cv, b = held[m]
        assert same(held_p[m], stats.paired_test(cv - values[m][b], test, 1000, 3)[0])
