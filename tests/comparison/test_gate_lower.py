"""The gate on metrics where lower is better (``outdated@k``, ``undated@k``, ``unj@k``): a
rise is the regression, the margin is the rise allowed, a limit is a ceiling. Checked on
constructed runs whose answer is known, on the demo's real versions table, against the
oracle of gating the complement (``current@k = 1 − outdated@k`` where no document is
undated), through the command line and the pytest plugin's path, and in every output."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ranklens
from ranklens.app.cli import main
from ranklens.errors import InputError

N = 120  # queries
K = 8  # hits per query: shares in eighths are exact binary fractions, so 1 − x is exact


def versions_table() -> ranklens.Versions:
    """Every query ``i`` has eight version groups of two documents: ``o{i}-{j}`` (2020) and
    its successor ``c{i}-{j}`` (2025); as of the table's newest time the first is outdated."""
    records = []
    for i in range(N):
        for j in range(K):
            g = f"g{i}-{j}"
            records.append({"doc_id": f"o{i}-{j}", "group": g, "valid_from": "2020-01-01"})
            records.append({"doc_id": f"c{i}-{j}", "group": g, "valid_from": "2025-01-01"})
    return ranklens.Versions.from_records(records)


LABELS = {f"q{i}": {f"c{i}-0": 1} for i in range(N)}


def stale_run(rate: float, seed: int, noise: float = 0.0) -> dict:
    """Eight hits per query, each the outdated version of its group with probability ``rate``
    (plus a per-query jitter of up to ``noise``), the current version otherwise."""
    rng = np.random.default_rng(seed)
    run = {}
    for i in range(N):
        p = np.clip(rate + rng.uniform(-noise, noise), 0, 1)
        old = rng.random(K) < p
        docs = [f"{'o' if o else 'c'}{i}-{j}" for j, o in enumerate(old)]
        run[f"q{i}"] = {d: float(K - r) for r, d in enumerate(docs)}
    return run


@pytest.fixture(scope="module")
def table():
    return versions_table()


@pytest.fixture
def base(tmp_path, table):
    path = tmp_path / "fresh.json"
    ranklens.gate(LABELS, stale_run(0.2, 1), path, ["outdated@10", "current@10"],
                  versions=table, update_baseline=True)  # fmt: skip
    return path


def _gate(path, run, table, metric="outdated@10", **kw):
    kw.setdefault("margin", 0.02)
    return ranklens.gate(LABELS, run, path, [metric], versions=table, **kw)


def test_a_rise_of_the_outdated_share_beyond_the_margin_fails(base, table):
    result = _gate(base, stale_run(0.4, 2), table)
    (v,) = result.verdicts
    assert v.status == "fail" and not result.passed and result.exit_code == 1
    assert v.better == "lower" and v.delta > 0.1  # now − baseline, in the metric's units
    assert 0.1 < v.ci_low < v.delta < v.ci_high  # the interval of the rise, not of its negation
    assert v.p_regression < 0.05 and v.p_noninferior > 0.5
    assert "rose by more than 0.02" in v.reason
    text, md = result.to_text(), result.to_markdown()
    assert "outdated@10 (lower is better): rose by more than 0.02" in text
    assert "rise <= 0.02" in text and "drop <=" not in text
    assert f"[{v.ci_low:+.4f}, {v.ci_high:+.4f}]" in text and f"{v.delta:+.4f}" in text
    assert "| outdated@10 | ❌ fail |" in md and "rise \\<= 0.02" in md  # Markdown-escaped
    assert "**outdated@10 (lower is better)**: rose by more than" in md
    # the queries that regressed most are those whose outdated share rose most
    worst = [r for r in result.regressions if r.metric == "outdated@10"]
    assert len(worst) == 5 and all(r.now > r.baseline for r in worst)
    rises = sorted((r.now - r.baseline for r in worst), reverse=True)
    assert [r.now - r.baseline for r in worst] == rises
    data = json.loads(json.dumps(result.to_dict()))
    assert data["verdicts"][0]["better"] == "lower" and data["verdicts"][0]["delta"] > 0.1


def test_a_fall_of_the_outdated_share_passes(base, table):
    result = _gate(base, stale_run(0.05, 3), table)
    (v,) = result.verdicts
    assert v.status == "pass" and result.passed, result.to_text()
    assert v.delta < -0.1 and v.ci_high < 0 and v.p_noninferior < 0.05
    assert "rise within 0.02 shown" in v.reason
    assert all(r.now > r.baseline for r in result.regressions)  # a query that rose, if any


def test_a_change_within_the_noise_is_inconclusive_with_its_detectable_rise(tmp_path, table):
    path = tmp_path / "b.json"
    labels = dict(list(LABELS.items())[:12])
    small = {q: h for q, h in stale_run(0.2, 1).items() if q in labels}
    ranklens.gate(labels, small, path, ["outdated@10"], versions=table, update_baseline=True)
    other = {q: h for q, h in stale_run(0.22, 5).items() if q in labels}
    result = ranklens.gate(labels, other, path, ["outdated@10"], versions=table, margin=0.02)
    (v,) = result.verdicts
    assert v.status == "inconclusive", result.to_text()
    assert v.mde > 0.02 and v.needed > 12
    assert f"detect a rise of {v.mde:.4f}" in v.reason and f"about {v.needed} queries" in v.reason
    lenient = ranklens.gate(labels, other, path, ["outdated@10"], versions=table, margin=0.02,
                            inconclusive="pass")  # fmt: skip
    assert lenient.passed and not result.passed


@pytest.mark.parametrize("test", ["bootstrap", "randomization", "t", "wilcoxon"])
@pytest.mark.parametrize(("rate", "seed", "margin"), [
    (0.4, 2, 0.02), (0.05, 3, 0.02), (0.21, 4, 0.02), (0.23, 6, 0.05), (0.2, 1, 0.0),
    (0.22, 11, 0.1), (0.18, 14, 0.03),
])  # fmt: skip  # fail, pass, inconclusive (with each test), a rise within 0.1, a small fall
def test_verdicts_equal_those_of_gating_the_complement(base, table, test, rate, seed, margin):
    """With no undated document, current@10 = 1 − outdated@10 per query: gating one is
    gating the other, with every number mirrored (exactly: the shares are in eighths)."""
    run = stale_run(rate, seed, noise=0.1)
    kw = {"margin": margin, "stats": ranklens.Statistics(test=test, n_resamples=2000)}
    low, high = _gate(base, run, table, **kw), _gate(base, run, table, "current@10", **kw)
    (o,), (c,) = low.verdicts, high.verdicts
    assert o.status == c.status, (o, c)
    assert (o.p_noninferior, o.p_regression) == (c.p_noninferior, c.p_regression)
    assert o.delta == pytest.approx(-c.delta, abs=1e-12)
    assert (o.ci_low, o.ci_high) == pytest.approx((-c.ci_high, -c.ci_low), abs=1e-12)
    assert o.mde == c.mde and o.needed == c.needed
    assert [(r.query_id, r.now, r.baseline) for r in low.regressions] == [
        (r.query_id, 1 - r.now, 1 - r.baseline) for r in high.regressions
    ]
    assert c.reason.replace("dropped", "rose").replace("drop", "rise") == o.reason


def test_holm_runs_over_metrics_of_both_directions(base, table):
    both = ranklens.gate(LABELS, stale_run(0.21, 9, 0.1), base, ["outdated@10", "current@10"],
                         versions=table, margin=0.02)  # fmt: skip
    o, c = both.verdicts
    assert (o.status, o.p_noninferior, o.p_regression) == (c.status, c.p_noninferior,
                                                           c.p_regression)  # fmt: skip


def test_a_ceiling_is_the_greatest_mean_and_a_floor_is_refused(base, table):
    run = stale_run(0.3, 2)
    value = ranklens.evaluate(LABELS, run, ["outdated@10"], versions=table)["outdated@10"]
    over = _gate(base, run, table, margin=None, ceilings={"outdated@10": value - 0.01})
    under = _gate(base, run, table, margin=None, ceilings={"outdated@10": value + 0.01})
    assert over.verdicts[0].status == "fail" and under.verdicts[0].status == "pass"
    assert f"is above the ceiling {value - 0.01:g}" in over.verdicts[0].reason
    assert over.verdicts[0].ceiling == value - 0.01 and over.verdicts[0].floor is None
    assert f"<= {value - 0.01:g}" in over.to_text() and ">= " not in over.to_text()
    with pytest.raises(InputError, match=r"outdated@10 is better lower.*ceilings=\{'outdated@10'"):
        _gate(base, run, table, floors={"outdated@10": 0.1})
    with pytest.raises(InputError, match=r"current@10 is better higher.*floors=\{'current@10'"):
        _gate(base, run, table, "current@10", ceilings={"current@10": 0.9})
    written = ranklens.gate(LABELS, run, base.parent / "w.json", ["outdated@10"],
                            versions=table, update_baseline=True,
                            ceilings={"outdated@10": value - 0.01})  # fmt: skip
    assert not written.passed and f"<= {value - 0.01:g}: FAIL" in written.to_text()
    assert "the ceilings checked" in written.to_text()


@pytest.mark.parametrize("shift", [-0.15, -0.01, 0.0, 0.01, 0.15])
def test_confident_ceilings_read_the_bounds_the_other_way_round(base, table, shift):
    """A ceiling with floor_confidence is a profile's ``<=`` target: met only when the
    upper bound lies below it; the verdict equals evaluate()'s on that target."""
    run = stale_run(0.3, 2)
    ev = ranklens.evaluate(LABELS, run, ["outdated@10"], versions=table)
    ceiling = round(ev["outdated@10"] + shift, 4)
    oracle = ranklens.evaluate(LABELS, run, ["outdated@10"], versions=table,
                               targets={"outdated@10": ("<=", ceiling)}).verdicts[0]  # fmt: skip
    r = _gate(base, run, table, margin=None, ceilings={"outdated@10": ceiling},
              floor_confidence=0.95)  # fmt: skip
    (v,) = r.verdicts
    expected = {"met": "pass", "missed": "fail", "unknown": "inconclusive"}[oracle.status]
    assert v.status == expected and v.ceiling_check["status"] == oracle.status
    assert v.ceiling_check["op"] == "<=" and v.floor_check is None
    assert (v.ceiling_check["lower"], v.ceiling_check["upper"]) == (oracle.lower, oracle.upper)
    if shift > 0.1:
        assert v.status == "pass" and f"below the ceiling {ceiling:g} with confidence" in v.reason
        assert f"upper bound {oracle.upper:.4f}" in v.reason
    if shift < -0.1:
        assert v.status == "fail" and f"above the ceiling {ceiling:g} with confidence" in v.reason
        assert f"lower bound {oracle.lower:.4f}" in v.reason
    assert f"<= {ceiling:g} (95% bound)" in r.to_text()


def test_a_profiles_at_most_targets_gate_as_ceilings(base, table):
    run = stale_run(0.3, 2)
    value = ranklens.evaluate(LABELS, run, ["outdated@10"], versions=table)["outdated@10"]
    prof = ranklens.Profile("fresh", targets=[
        ranklens.Target("outdated@10", round(value - 0.05, 4), source="rule of thumb", op="<="),
    ])  # fmt: skip
    r = ranklens.gate(LABELS, run, base, ["current@10"], versions=table,
                      margin={"current@10": 1.0}, profile=prof)  # fmt: skip
    assert [(v.metric, v.ceiling, v.status) for v in r.verdicts] == [
        ("current@10", None, "pass"), ("outdated@10", round(value - 0.05, 4), "fail")]  # fmt: skip
    wrong = ranklens.Profile("odd", targets=[
        ranklens.Target("outdated@10", 0.1, source="rule of thumb", op=">=")])  # fmt: skip
    with pytest.raises(InputError, match=r"outdated@10 is better lower.*'<='"):
        ranklens.gate(LABELS, run, base, ["current@10"], versions=table, profile=wrong)
    # an explicit ceiling wins over the profile's
    loose = ranklens.gate(LABELS, run, base, ["current@10"], versions=table,
                          margin={"current@10": 1.0}, profile=prof,
                          ceilings={"outdated@10": 0.9})  # fmt: skip
    assert loose.passed and loose.verdicts[1].ceiling == 0.9


def test_the_unjudged_rate_gates_too(tmp_path):
    """unj@10 needs no versions: a run that retrieves more unjudged documents fails."""
    labels = {f"q{i}": {f"d{i}-{j}": int(j < 2) for j in range(10)} for i in range(60)}
    judged = {q: {d: 10.0 - j for j, d in enumerate(docs)} for q, docs in labels.items()}
    holes = {q: {(d if j % 2 else f"new{q}-{j}"): 10.0 - j for j, d in enumerate(docs)}
             for q, docs in labels.items()}  # fmt: skip
    path = tmp_path / "b.json"
    ranklens.gate(labels, judged, path, ["unj@10"], update_baseline=True)
    bad = ranklens.gate(labels, holes, path, ["unj@10"], margin=0.05)
    good = ranklens.gate(labels, judged, path, ["unj@10"], margin=0.05)
    assert bad.verdicts[0].status == "fail" and bad.verdicts[0].delta == pytest.approx(0.5)
    assert good.passed and good.verdicts[0].better == "lower"


# --------------------------------------------------------------- the demo's real versions
@pytest.fixture(scope="module")
def demo():
    from ranklens.app.demo_versions import load_versions

    dataset, versions = load_versions()
    newest: dict[str, str] = {}  # group -> its current version
    succ: dict[str, str] = {}  # an outdated version -> its group's current one
    pred: dict[str, str] = {}  # a current version -> an outdated one
    dated = sorted((rec["metadata"]["group"], rec["metadata"]["valid_from"], d)
                   for d, rec in dataset.corpus.items())  # fmt: skip
    for g, _, d in dated:
        newest[g] = d
    for g, _, d in dated:
        if d != newest[g]:
            succ[d], pred[newest[g]] = newest[g], d
    return dataset, versions, succ, pred


def _lexical_run(dataset) -> dict:
    """A word-overlap retriever over the versioned corpus: each query's 10 best passages."""
    docs = {d: set((rec.get("title", "") + " " + rec["text"]).lower().split())
            for d, rec in dataset.corpus.items()}  # fmt: skip
    run = {}
    for q, text in dataset.queries.items():
        words = set(text.lower().split())
        scores = sorted(((len(words & w), d) for d, w in docs.items()), reverse=True)[:10]
        run[q] = {d: float(s) + 1 - r / 100 for r, (s, d) in enumerate(scores)}
    return run


def _swap(run: dict, to: dict) -> dict:
    """The run with each hit replaced by ``to[hit]`` where given (kept once per query)."""
    out = {}
    for q, hits in run.items():
        seen: dict[str, float] = {}
        for d, s in hits.items():
            seen.setdefault(to.get(d, d), s)
        out[q] = seen
    return out


def test_the_demo_versions_table_outdated_share_gated_against_its_complement(tmp_path, demo):
    dataset, versions, succ, pred = demo
    run = _lexical_run(dataset)
    metrics = ["outdated@10", "current@10", "ndcg@10"]
    path = tmp_path / "demo.json"
    ranklens.gate(dataset, run, path, metrics, versions=versions, update_baseline=True)
    ev = ranklens.evaluate(dataset, run, metrics, versions=versions)
    both = ev.per_query["outdated@10"] + ev.per_query["current@10"]
    assert np.allclose(both, 1.0) and 0 < ev["outdated@10"] < 0.5  # none undated, some stale
    stale, fresh = _swap(run, pred), _swap(run, succ)  # every current hit for an old one...
    for changed, status in ((stale, "fail"), (fresh, "pass")):
        r = ranklens.gate(dataset, changed, path, metrics[:2], versions=versions, margin=0.02)
        o, c = r.verdicts
        assert o.status == c.status == status, r.to_text()
        assert o.p_regression == pytest.approx(c.p_regression, abs=1e-9)
        assert o.delta == pytest.approx(-c.delta) and (o.delta > 0) == (status == "fail")
    text = ranklens.gate(dataset, stale, path, ["outdated@10"], versions=versions,
                         margin=0.02).to_text()  # fmt: skip
    assert "outdated@10 (lower is better): rose by more than 0.02" in text
    assert "queries that regressed most" in text


def test_the_command_line_gates_outdated_with_a_ceiling(tmp_path, capsys, table):
    vfile = tmp_path / "versions.jsonl"
    vfile.write_text("".join(json.dumps(r) + "\n" for r in table.to_records()))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in LABELS.items() for d, g in ds.items()))

    def write(name: str, run: dict) -> str:
        lines = [f"{q} Q0 {d} {r + 1} {s} x\n" for q, hits in run.items()
                 for r, (d, s) in enumerate(hits.items())]  # fmt: skip
        (tmp_path / name).write_text("".join(lines))
        return str(tmp_path / name)

    good, bad = write("good.run", stale_run(0.2, 1)), write("bad.run", stale_run(0.4, 2))
    better = write("better.run", stale_run(0.05, 3))
    args = ["--baseline", str(tmp_path / "b.json"), "-m", "outdated@10", "--versions", str(vfile)]
    assert main(["gate", str(qrels), good, *args, "--update-baseline"]) == 0
    capsys.readouterr()
    assert main(["gate", str(qrels), bad, *args, "--margin", "0.02"]) == 1
    out = capsys.readouterr().out
    assert "outdated@10 (lower is better): rose by more than 0.02" in out
    assert "rise <= 0.02" in out and "gate FAILED" in out
    assert main(["gate", str(qrels), better, *args, "--margin", "0.02"]) == 0
    assert "rise within 0.02 shown" in capsys.readouterr().out
    summary = tmp_path / "s.md"
    code = main(["gate", str(qrels), better, *args, "--ceiling", "outdated@10=0.01",
                 "--summary", str(summary)])  # fmt: skip
    assert code == 1 and "is above the ceiling 0.01" in capsys.readouterr().out
    assert "\\<= 0.01" in summary.read_text()
    assert main(["gate", str(qrels), better, *args, "--floor", "outdated@10=0.5"]) == 2
    assert "--ceiling outdated@10=0.5" in capsys.readouterr().err
    assert main(["gate", str(qrels), better, *args, "--ceiling", "0.5"]) == 2


def test_a_baseline_judged_against_another_versions_table_or_time_is_named(base, table):
    """The baseline records the versions table and the as-of times: a run judged against a
    table with one newer version, or as of another time, would read a rise of outdated@10
    that no retriever made; it is an error naming what differs."""
    records = [{"doc_id": d, "group": table.group_ids[g], "valid_from": "2020-01-01"
                if d.startswith("o") else "2025-01-01"}
               for d, g in zip(table.doc_ids, table.group)]  # fmt: skip
    assert versions_table().digest() == table.digest()  # the same table, built again
    records.append({"doc_id": "n0-0", "group": "g0-0", "valid_from": "2026-01-01"})
    newer = ranklens.Versions.from_records(records)
    run = stale_run(0.2, 1)
    with pytest.raises(InputError, match="the document versions table differs"):
        _gate(base, run, newer)
    with pytest.raises(InputError, match="the as-of time is given for the run only"):
        _gate(base, run, table, as_of="2024-06-01")
    assert _gate(base, run, table).verdicts[0].status == "pass"  # the same table and time
