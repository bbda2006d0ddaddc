"""Freshness: document versions judged as of each query's time.

The property test builds corpora with version chains, time-ordered groups, undated and
unlisted documents and end-of-validity times, labels and runs, "as of" times and every
freshness rule, and checks the judged metrics (nDCG, P, RR under the rule) and the
freshness metrics (outdated@k, undated@k, current@k, current_first@k) against a plain
scalar implementation of the definitions in docs/freshness.md.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError
from ranklens.judging import judge
from ranklens.judging.build import build
from ranklens.judging.freshness_rules import freshness_table, get_freshness_rule

DAY = 86400.0
T0 = 1_700_000_000.0  # 2023-11-14


# ------------------------------------------------------------------ the brute force
def resolve(records):
    """doc -> dict(group, vf, sat, superseded, placed), by the definitions."""
    by_id = {r["doc_id"]: r for r in records}
    succ = {r["supersedes"]: r["doc_id"] for r in records if r.get("supersedes")}
    chained = {d for d in by_id if d in succ or by_id[d].get("supersedes")}
    out = {}
    groups = {}
    for d, r in by_id.items():
        groups.setdefault(r.get("group") or d, []).append(d)
    for g, members in groups.items():
        for d in members:
            r = by_id[d]
            vf = r.get("valid_from")
            end = r.get("superseded_at")
            if d in chained:
                nxt = succ.get(d)
                sat = end if end is not None else (by_id[nxt].get("valid_from") if nxt else None)
                out[d] = dict(
                    group=g,
                    vf=vf,
                    sat=sat,
                    superseded=nxt is not None or end is not None,
                    placed=True,
                )
                continue
            later = [
                by_id[m]["valid_from"]
                for m in members
                if m != d
                and by_id[m].get("valid_from") is not None
                and vf is not None
                and by_id[m]["valid_from"] > vf
            ]
            nxt_time = min(later) if later else None
            sat = end if end is not None else nxt_time
            out[d] = dict(
                group=g,
                vf=vf,
                sat=sat,
                superseded=nxt_time is not None or end is not None,
                placed=vf is not None,
            )
    return out


def status(info, d, a, latest_time, unlisted):
    r = info.get(d)
    if r is None:
        return "current" if unlisted == "current" else "undated"
    if not r["placed"]:
        return "undated"
    if a is None:  # as of the newest state
        if r["superseded"] and (r["sat"] is None or r["sat"] <= latest_time):
            return "outdated"
        return "current"
    if r["superseded"] and r["sat"] is not None and r["sat"] <= a:
        return "outdated"
    if r["vf"] is not None and r["vf"] > a:
        return "future"
    if r["superseded"] and r["sat"] is None:
        return "undated"
    return "current" if r["vf"] is not None else "undated"


def brute(records, qrels, run, as_of, rule, unlisted, k):
    info = resolve(records)
    times = [r["vf"] for r in info.values() if r["vf"] is not None]
    latest_time = max(times) if times else math.inf
    members = {}
    for d, r in info.items():
        members.setdefault(r["group"], []).append(d)
    out = {m: [] for m in ("ndcg", "P", "rr", "outdated", "undated", "current", "cf")}
    for q in sorted(qrels):
        a = as_of.get(q) if isinstance(as_of, dict) else as_of
        labels = dict(qrels[q])
        for ms in members.values():  # labels carry to versions
            given = [labels[m] for m in ms if m in labels and labels[m] >= 0]
            for m in ms:
                if given and m not in labels:
                    labels[m] = max(given)
        ref = latest_time if a is None else a
        judged = {}
        for d, g in labels.items():
            s = status(info, d, a, latest_time, unlisted)
            if g > 0 and s == "future" and rule.future == "zero":
                g = 0
            elif g > 0 and s == "outdated":
                if rule.outdated == "zero":
                    g = 0
                elif rule.outdated == "demote":
                    g = max(g - int(rule.amount), 0)
                elif rule.outdated == "factor":
                    g = g * rule.amount
                elif rule.outdated == "half_life":
                    age = ref - info[d]["sat"]
                    g = g * 2 ** (-max(age, 0) / rule.amount)
            judged[d] = g
        docs = run.get(q, [])
        top = docs[:k]
        dcg = sum(
            judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(top) if judged.get(d, 0) > 0
        )
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        out["ndcg"].append(dcg / idcg if idcg else 0.0)
        out["P"].append(sum(judged.get(d, 0) >= 1 for d in top) / k)
        first = next((i + 1 for i, d in enumerate(docs) if judged.get(d, 0) >= 1), None)
        out["rr"].append(1 / first if first else 0.0)
        sts = [status(info, d, a, latest_time, unlisted) for d in top]
        n = len(top)
        for name in ("outdated", "undated", "current"):
            out[name].append(sts.count(name) / n if n else 0.0)
        ok = total = 0
        for ms in members.values():
            if max((labels.get(m, -1) for m in ms), default=-1) < 1:
                continue
            st_m = {m: status(info, m, a, latest_time, unlisted) for m in ms}
            if "outdated" not in st_m.values() or "current" not in st_m.values():
                continue
            total += 1
            ranks = {d: i + 1 for i, d in enumerate(docs)}
            cur = [ranks[m] for m in ms if st_m[m] == "current" and m in ranks]
            old = [ranks[m] for m in ms if st_m[m] == "outdated" and m in ranks]
            c = min(cur) if cur else math.inf
            ok += c <= k and (not old or c < min(old))
        out["cf"].append(ok / total if total else 0.0)
    return out


# ------------------------------------------------------------------ corpora
@st.composite
def corpora(draw):
    docs = [f"d{i:02d}" for i in range(draw(st.integers(3, 12)))]
    order = draw(st.permutations(docs))
    records, i = [], 0
    while i < len(order):
        size = draw(st.integers(1, 4))
        group = order[i : i + size]
        i += size
        kind = draw(st.sampled_from(["chain", "timed", "single"]))
        name = f"g{i}"
        if kind == "chain" and len(group) > 1:
            day = draw(st.integers(0, 50))
            timed = draw(st.booleans())
            for j, d in enumerate(group):
                day += draw(st.integers(0, 30))
                rec = {"doc_id": d, "group": name, "valid_from": T0 + day * DAY if timed else None}
                if j:
                    rec["supersedes"] = group[j - 1]
                records.append(rec)
        elif kind == "timed" and len(group) > 1:
            days = draw(
                st.lists(st.integers(0, 400), min_size=len(group), max_size=len(group), unique=True)
            )
            for d, day in zip(group, days):
                missing = draw(st.integers(0, 5)) == 0  # a time field missing on a document
                records.append(
                    {"doc_id": d, "group": name, "valid_from": None if missing else T0 + day * DAY}
                )
        else:
            for d in group:
                if draw(st.integers(0, 4)) == 0:
                    continue  # unlisted
                day = draw(st.integers(0, 400))
                end = draw(st.one_of(st.none(), st.integers(day, 500)))
                records.append(
                    {
                        "doc_id": d,
                        "valid_from": T0 + day * DAY,
                        "superseded_at": None if end is None else T0 + end * DAY,
                    }
                )
    queries = [f"q{j}" for j in range(draw(st.integers(1, 4)))]
    qrels = {
        q: {
            d: draw(st.integers(-1, 3))
            for d in draw(st.lists(st.sampled_from(docs), min_size=1, max_size=4, unique=True))
        }
        for q in queries
    }
    run = {q: draw(st.permutations(docs))[: draw(st.integers(1, len(docs)))] for q in queries}
    as_of_kind = draw(st.sampled_from(["none", "one", "each"]))
    as_of = None
    if as_of_kind == "one":
        as_of = T0 + draw(st.integers(0, 500)) * DAY
    elif as_of_kind == "each":
        as_of = {q: T0 + draw(st.integers(0, 500)) * DAY for q in queries if draw(st.booleans())}
    return records, qrels, run, as_of


RULES = ["zero", "keep", "demote", "half", "demote=2", "factor=0.3", "half_life=60d"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpora(),
    st.sampled_from(RULES),
    st.sampled_from(["undated", "current"]),
    st.sampled_from([1, 3, 10]),
)
def test_freshness_equals_the_brute_force(case, rule_name, unlisted, k):
    records, qrels, run, as_of = case
    rule = get_freshness_rule(rule_name)
    if records and all(
        r.get("valid_from") is None and r.get("supersedes") is None for r in records
    ):
        # no time and no supersedes link anywhere: nothing to order versions by, refused
        with pytest.raises(InputError, match=r"no record has a value in the field"):
            ranklens.Versions.from_records(records, unlisted=unlisted)
        return
    versions = ranklens.Versions.from_records(records, unlisted=unlisted)
    metrics = [
        f"ndcg@{k}",
        f"P@{k}",
        "rr",
        f"outdated@{k}",
        f"undated@{k}",
        f"current@{k}",
        f"current_first@{k}",
    ]
    info = resolve(records)
    vfs = [r["valid_from"] for r in records if r.get("valid_from") is not None]
    given_times = list(as_of.values()) if isinstance(as_of, dict) else [as_of]
    if vfs and any(t is not None and t < min(vfs) for t in given_times):
        with pytest.raises(InputError, match=r"before every document"):
            ranklens.evaluate(
                qrels, run, metrics, versions=versions, as_of=as_of, freshness=rule_name
            )
        return
    try:
        expected = brute(records, qrels, run, as_of, rule, unlisted, k)
    except TypeError:  # half-life of a version superseded at an unknown time
        assert rule.uses_age
        with pytest.raises(InputError, match=r"half-life"):
            ranklens.evaluate(
                qrels, run, metrics, versions=versions, as_of=as_of, freshness=rule_name
            )
        return
    ev = ranklens.evaluate(qrels, run, metrics, versions=versions, as_of=as_of, freshness=rule_name)
    assert ev.query_ids == sorted(qrels)
    for name, key in zip(metrics, ("ndcg", "P", "rr", "outdated", "undated", "current", "cf")):
        assert np.allclose(ev.per_query[name], expected[key], atol=1e-12), (name, info)


# ------------------------------------------------------------------ the rules
def test_rules_and_their_table_in_the_docs():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "freshness.md").read_text()
    assert freshness_table() in doc
    assert get_freshness_rule("half_life=90d").amount == 90 * DAY
    assert get_freshness_rule("half-life=2w").amount == 14 * DAY
    for bad in ("factor=1.5", "demote=0", "demote=1.5", "half_life=0", "nope", "factor=2d"):
        with pytest.raises(InputError):
            get_freshness_rule(bad)


def test_fractional_grades_keep_every_metric_exact():
    """Integer grades held as floats (what factor and half-life rules produce) give every
    registered measure the same value as integers."""
    from ranklens.metrics import parse_metrics
    from ranklens.metrics.registry import FAMILIES

    rng = np.random.default_rng(1)
    qrels = {
        f"q{i}": {f"d{j}": int(rng.integers(-1, 4)) for j in rng.choice(30, 8, replace=False)}
        for i in range(20)
    }
    run = {
        f"q{i}": {f"d{j}": float(rng.random()) for j in rng.choice(30, 12, replace=False)}
        for i in range(20)
    }
    special = {
        "iprec": "iprec(r=0.5)",
        "Rprec_mult": "Rprec_mult(m=0.4)",
        "Rprec_mult_avgjg": "Rprec_mult_avgjg(m=0.4)",
    }
    skip = (
        "evidence",
        "precision_omega",
        "outdated",
        "undated",
        "current",
        "alpha",
        "err_ia",
        "nerr_ia",
        "nrbp",
        "nnrbp",
        "p_ia",
        "ap_ia",
        "strec",
    )
    names = [
        special.get(f.name, f.name + ("@5" if f.cutoff else ""))
        for f in FAMILIES.values()
        if not f.name.startswith(skip)
    ]
    names += ["ndcg(gains={1:3.5,2:9})@5", "rbp(gains={0:1,1:2,2:5})", "err(max=4)@5"]
    j = judge(qrels, run)
    jn = j.join
    as_float = dataclasses.replace(
        jn,
        m_grade=jn.m_grade.astype(float),
        unit_g=jn.unit_g.astype(float),
        doc_label=jn.doc_label.astype(float),
    )
    f = build(as_float, j.options)
    assert f.e_label.dtype.kind == "f"
    for m in parse_metrics(names):
        assert np.allclose(m.compute(j), m.compute(f), atol=1e-12), m.name


# ------------------------------------------------------------------ bad input
CHAIN = [
    {"doc_id": "p2024", "group": "policy", "valid_from": "2024-01-01"},
    {"doc_id": "p2025", "group": "policy", "valid_from": "2025-01-01"},
    {"doc_id": "p2026", "group": "policy", "valid_from": "2026-01-01"},
]


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"doc_id": "a", "supersedes": "a"}], "'a' supersedes itself"),
        ([{"doc_id": "a", "supersedes": "b"}, {"doc_id": "b", "supersedes": "c"},
          {"doc_id": "c", "supersedes": "a"}], "cycle"),
        ([{"doc_id": "b", "supersedes": "a"}, {"doc_id": "c", "supersedes": "a"}],
         "superseded by both 'b' and 'c'"),
        ([{"doc_id": "a", "group": "x"}, {"doc_id": "b", "group": "y", "supersedes": "a"}],
         "joins groups"),
        ([{"doc_id": "a", "valid_from": "2024-01-01"}, {"doc_id": "a"}], "listed twice"),
        ([{"doc_id": "a", "group": "g", "valid_from": "2024-01-01"},
          {"doc_id": "b", "group": "g", "valid_from": "2024-01-01"}], "both valid from 2024-01-01"),
        ([{"doc_id": "a", "valid_from": "2025-01-01"},
          {"doc_id": "b", "valid_from": "2024-01-01", "supersedes": "a"}], "before it"),
        ([{"doc_id": "a", "valid_from": "2025-01-01", "superseded_at": "2024-01-01"}],
         "before it became valid"),
        ([{"doc_id": "a", "group": "g", "valid_from": "2024-01-01"},
          {"doc_id": "b", "group": "g", "supersedes": "c"}], "mixes a supersedes chain"),
        ([{"doc_id": "a", "valid_from": "2024-05-01T09:30"}], "document 'a'.*no time zone.*tz="),
        ([{"doc_id": "a", "valid_from": "1/5/2024"}], "document 'a'.*cannot read '1/5/2024'"),
        ([{"doc_id": "a", "valid_from": 1714521600000}], "milliseconds"),
        ([{"doc_id": "a", "valid_from": True}], "document 'a'"),
        ([{"doc_id": "a", "updated": "2024-01-01"}], "no record has a value in the field"),
        ([{"valid_from": "2024-01-01"}], "no document id"),
    ],
)  # fmt: skip
def test_bad_versions_are_named_errors(records, message):
    with pytest.raises(InputError, match=message):
        ranklens.Versions.from_records(records)


def test_times_with_zones_dates_and_a_zone_given():
    v = ranklens.Versions.from_records(
        [{"doc_id": "a", "group": "g", "valid_from": "2024-05-01T09:30:00+02:00"},
         {"doc_id": "b", "group": "g", "valid_from": "2024-05-01T07:30:01Z"},
         {"doc_id": "c", "valid_from": "2024-05-01"},
         {"doc_id": "d", "valid_from": "2024-05-01T12:00"}],
        tz="UTC",
    )  # fmt: skip
    vf = dict(zip(v.doc_ids, v.valid_from))
    assert vf["b"] - vf["a"] == 1.0  # the zones read, not dropped
    assert vf["c"] == 1714521600.0  # a date: midnight UTC
    assert vf["d"] == vf["c"] + 12 * 3600  # a time without a zone, read in tz=
    assert v.superseded_at[list(v.doc_ids).index("a")] == vf["b"]


def test_a_missing_time_is_counted_and_never_read_as_current():
    """A time field missing on some documents: undated (neither current nor outdated),
    counted per run, shown in the notes and by undated@k."""
    records = [*CHAIN, {"doc_id": "p2023", "group": "policy"}]  # no valid_from
    versions = ranklens.Versions.from_records(records)
    assert versions.undated_ids == ["p2023"]
    ev = ranklens.evaluate(
        {"q": {"p2026": 1}}, {"q": ["p2023", "p2026", "p2024"]},
        ["undated@3", "current@3", "outdated@3", "ndcg@3"], versions=versions,
    )  # fmt: skip
    assert ev["undated@3"] == ev["current@3"] == ev["outdated@3"] == pytest.approx(1 / 3)
    assert ev.counts["undated_retrieved"] == 1 and ev.counts["outdated_retrieved"] == 1
    assert "1 without a time (not current; undated@k)" in ev.notes()
    # the undated version keeps the label it carries: relevance cannot be judged by time
    assert ev["ndcg@3"] == pytest.approx(1.0)


def test_as_of_times_and_an_as_of_before_every_document():
    versions = ranklens.Versions.from_records(CHAIN)
    qrels = {"q1": {"p2026": 1}, "q2": {"p2026": 1}}
    run = {"q1": ["p2024", "p2025"], "q2": ["p2025", "p2026"]}
    ev = ranklens.evaluate(qrels, run, ["outdated@1", "current@1"], versions=versions,
                           as_of={"q1": "2024-06-01"})  # fmt: skip
    assert ev.per_query["outdated@1"].tolist() == [0.0, 1.0]  # q1 as of 2024: p2024 current
    ev = ranklens.evaluate(qrels, run, ["outdated@1", "current@1"], versions=versions,
                           as_of="2025-06-01T00:00:00+00:00")  # fmt: skip
    assert ev.per_query["current@1"].tolist() == [0.0, 1.0]
    with pytest.raises(InputError, match=r"query 'q2' is as of 2023-01-01, before every"):
        ranklens.evaluate(qrels, run, ["P@1"], versions=versions,
                          as_of={"q1": "2024-06-01", "q2": "2023-01-01"})  # fmt: skip
    with pytest.raises(InputError, match=r"as_of names a query the labels do not have \('q9'\)"):
        ranklens.evaluate(qrels, run, ["P@1"], versions=versions, as_of={"q9": "2024-06-01"})
    with pytest.raises(InputError, match=r"as_of of query 'q1'.*no time zone"):
        ranklens.evaluate(qrels, run, ["P@1"], versions=versions, as_of={"q1": "2024-06-01T10:00"})


def test_versions_are_refused_where_they_have_no_meaning():
    versions = ranklens.Versions.from_records(CHAIN)
    with pytest.raises(InputError, match=r"plain .graded. labels"):
        ranklens.evaluate({"q": [["p2024", "x"]]}, {"q": ["p2024"]}, ["P@1"], versions=versions)
    spans = ranklens.SpanLabels.from_spans({"q": [("p2024", 0, 5)]})
    chunks = ranklens.Run.from_chunks({"q": [{"doc_id": "p2024", "start": 0, "end": 9}]})
    with pytest.raises(InputError, match=r"plain .graded. labels"):
        ranklens.evaluate(spans, chunks, ["P@1"], versions=versions)
    with pytest.raises(InputError, match=r"give the versions too"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, ["P@1"], as_of="2024-01-01")
    with pytest.raises(InputError, match=r"give the versions too"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, ["P@1"], freshness="demote")
    with pytest.raises(InputError, match=r"must be a ranklens.Versions"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, ["P@1"], versions={"a": "2024-01-01"})
    with pytest.raises(ranklens.MetricNameError, match=r"need document versions"):
        ranklens.evaluate({"q": ["a"]}, {"q": ["a"]}, ["outdated@5"])


def test_streamed_evaluation_and_the_gate_take_versions(tmp_path):
    versions = ranklens.Versions.from_records(CHAIN)
    run = tmp_path / "run.txt"
    run.write_text("q Q0 p2024 1 2.0 r\nq Q0 p2026 2 1.0 r\n")
    streamed = ranklens.evaluate_file({"q": {"p2026": 1}}, run, ["P@1", "outdated@1"],
                                      versions=versions)  # fmt: skip
    in_memory = ranklens.evaluate({"q": {"p2026": 1}}, run, ["P@1", "outdated@1"],
                                  versions=versions)  # fmt: skip
    assert streamed.aggregate == in_memory.aggregate == {"P@1": 0.0, "outdated@1": 1.0}
    lower = ranklens.gate({"q": {"p2026": 1}}, run, tmp_path / "b.json", ["outdated@5"],
                          versions=versions, update_baseline=True)  # fmt: skip
    assert lower.verdicts[0].better == "lower"  # the gate tests a rise (docs/gate.md)
    result = ranklens.gate({"q": {"p2026": 1}}, run, tmp_path / "b.json", ["current@1", "ndcg@2"],
                           versions=versions, update_baseline=True)  # fmt: skip
    assert result.report.value("now", "current@1") == 0.0  # p2024 first: outdated


def test_reports_mark_the_lower_outdated_share_as_better(tmp_path):
    versions = ranklens.Versions.from_records(CHAIN)
    qrels = {f"q{i}": {"p2026": 1} for i in range(8)}
    stale = {q: ["p2024", "p2026"] for q in qrels}
    fresh = {q: ["p2026", "p2024"] for q in qrels}
    rep = ranklens.compare(qrels, {"stale": stale, "fresh": fresh},
                           ["outdated@1", "current@1", "ndcg@2"], versions=versions)  # fmt: skip
    for m in rep.metrics:
        assert rep.best(m) == "fresh" and rep.beats("fresh", m) == ["stale"], m
    assert rep.metadata["options"]["freshness"] == "outdated versions judged grade 0"
    text = " ".join(rep.to_text().split())
    assert "freshness (outdated versions judged grade 0): 8 outdated retrieved" in text
    saved = tmp_path / "report.json"
    rep.save(saved)
    assert ranklens.load_report(saved).beats("fresh", "outdated@1") == ["stale"]


def test_condensed_lists_and_tie_orders_keep_the_freshness_arrays():
    versions = ranklens.Versions.from_records(CHAIN)
    qrels = {"q": {"p2026": 1, "x": 0}}
    run = {"q": {"u1": 5.0, "p2024": 4.0, "u2": 3.0, "x": 3.0, "p2026": 1.0}}
    ev = ranklens.evaluate(qrels, run, ["outdated@2", "current_first@3", "ndcg@3"],
                           versions=versions, judged_only=True)  # fmt: skip
    # condensed: p2024 (carried label), x, p2026 at ranks 1, 2, 3
    assert ev["outdated@2"] == 0.5 and ev["current_first@3"] == 0.0
    assert ev["ndcg@3"] == pytest.approx(0.5)
    best = ranklens.evaluate(qrels, run, ["outdated@3"], versions=versions, ties="best")
    worst = ranklens.evaluate(qrels, run, ["outdated@3"], versions=versions, ties="worst")
    assert best["outdated@3"] == pytest.approx(1 / 3) and worst["outdated@3"] == pytest.approx(
        1 / 3
    )


def test_versions_from_files_corpora_and_a_runners_hits(tmp_path):
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_text(
        '{"_id": "p2024", "text": "old", "metadata": {"updated": "2024-01-01", "policy": "pol"}}\n'
        '{"_id": "p2026", "text": "new", "metadata": {"updated": "2026-01-01", "policy": "pol"}}\n'
    )
    csv = tmp_path / "versions.csv"
    csv.write_text("doc_id,updated,policy\np2024,2024-01-01,pol\np2026,2026-01-01,pol\n")
    from_jsonl = ranklens.read_versions(jsonl, time="updated", group="policy")
    from_csv = ranklens.read_versions(csv, time="updated", group="policy")
    from ranklens.io.beir import read_corpus

    from_corpus = ranklens.Versions.from_corpus(read_corpus(jsonl), time="updated", group="policy")
    for v in (from_jsonl, from_csv, from_corpus):
        assert v.to_records() == [
            {"doc_id": "p2024", "group": "pol", "valid_from": "2024-01-01",
             "superseded_at": "2026-01-01"},
            {"doc_id": "p2026", "group": "pol", "valid_from": "2026-01-01", "superseded_at": None},
        ]  # fmt: skip
    with pytest.raises(InputError, match=r"bad.csv: document 'p2024', field 'updated'"):
        bad = tmp_path / "bad.csv"
        bad.write_text("doc_id,updated\np2024,yesterday\n")
        ranklens.read_versions(bad, time="updated")

    def retriever(query):
        return [
            {"id": d, "score": s, "metadata": {"updated": f"{d[1:]}-01-01", "policy": "pol"}}
            for d, s in (("p2026", 2.0), ("p2024", 1.0))
        ]

    result = ranklens.run_retriever(retriever, {"q": "refunds"}, k=2, progress=False)
    from_hits = ranklens.Versions.from_metadata(result, time="updated", group="policy")
    assert from_hits.to_records() == from_csv.to_records()
    with pytest.raises(InputError, match=r"no document has a field 'date'.*seen: policy, updated"):
        ranklens.Versions.from_metadata(result, time="date")


def test_the_command_line_judges_versions(tmp_path, capsys):
    from ranklens.app.cli import main

    (tmp_path / "q.txt").write_text("q1 0 p2026 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 p2024 1 2.0 r\nq1 Q0 p2026 2 1.0 r\n")
    (tmp_path / "v.jsonl").write_text("".join(json_line(r) for r in CHAIN))
    args = [str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "outdated@1", "-m", "ndcg@2"]
    assert main(["evaluate", *args, "--versions", str(tmp_path / "v.jsonl"), "--freshness",
                 "keep", "--format", "json"]) == 0  # fmt: skip
    out = json_load(capsys.readouterr().out)
    assert out["aggregate"]["outdated@1"] == 1.0 and out["aggregate"]["ndcg@2"] == 1.0
    assert out["counts"]["labels_carried"] == 2
    assert main(["evaluate", *args, "--as-of", "2025-01-01"]) == 2
    assert "--as-of and --freshness judge document versions" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--as-of", ""], "argument --as-of: must be a non-empty text"),
        (["--as-of", "  "], "argument --as-of: must be a non-empty text"),
        (["--freshness", ""], "argument --freshness: must be a non-empty text"),
        (["--time-field", ""], "argument --time-field: must be a non-empty text"),
        (["--versions", ""], "argument --versions: must be a path"),
    ],
)
def test_an_empty_freshness_flag_is_refused_never_read_as_absent(tmp_path, capsys, flags, message):
    from ranklens.app.cli import main

    (tmp_path / "q.txt").write_text("q1 0 p2026 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 p2024 1 2.0 r\n")
    (tmp_path / "v.jsonl").write_text("".join(json_line(r) for r in CHAIN))
    args = [str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "outdated@1"]
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", *args, "--versions", str(tmp_path / "v.jsonl"), *flags])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def json_line(rec):
    import json

    return json.dumps(rec) + "\n"


def json_load(text):
    import json

    return json.loads(text)


def test_the_demo_versions_file_is_the_generator_output(tmp_path):
    from ranklens.app import demo_versions

    demo_versions.write(tmp_path)
    shipped = demo_versions.demo_folder() / demo_versions.FILE
    assert (tmp_path / demo_versions.FILE).read_text() == shipped.read_text()
    dataset, versions = demo_versions.load_versions()
    assert len(dataset.queries) == 36 and len(versions) == 225
    assert len(versions.group_ids) == 150 and not versions.undated_ids
