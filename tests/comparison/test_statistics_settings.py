"""compare, gate, compare_snapshots, plan_queries and power take ``stats=Statistics(...)``;
the flat statistics keywords still work for one release, each call warning once with the new
spelling; a flat keyword beside ``stats=`` is an error naming both; the same settings give
the same numbers either way, and the gate's JSON settings keep their layout."""

from __future__ import annotations

import json
import warnings

import pytest

import ranklens
from ranklens.comparison.gate import GateSettings
from ranklens.declared import ParameterError
from ranklens.settings import Statistics

QRELS = {f"q{i}": {f"d{i}": 1, f"e{i}": 1} for i in range(12)}
RUNS = {
    "a": {f"q{i}": [f"d{i}", "x", f"e{i}"] for i in range(12)},
    "b": {f"q{i}": (["x", f"d{i}"] if i % 3 else [f"d{i}", f"e{i}"]) for i in range(12)},
}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling warns about nothing
        return fn(*args, **kwargs)


def test_compare_takes_stats_and_the_flat_keywords_warn_once_with_the_new_spelling():
    new = _quiet(ranklens.compare, QRELS, RUNS, ["P@1", "ndcg@3"],
                 stats=Statistics(test="t", ci="t", n_resamples=500, seed=3))  # fmt: skip
    with pytest.warns(DeprecationWarning) as caught:
        old = ranklens.compare(QRELS, RUNS, ["P@1", "ndcg@3"], test="t", ci="t",
                               n_resamples=500, seed=3)  # fmt: skip
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1
    said = str(deprecations[0].message)
    assert "stats=ranklens.Statistics(test='t', ci='t', n_resamples=500, seed=3)" in said
    assert deprecations[0].filename == __file__  # points at the caller's line
    assert new.to_dict()["settings"] == old.to_dict()["settings"]
    assert new.to_dict()["summary"] == old.to_dict()["summary"]
    assert [c.pvalue for c in new.comparisons] == [c.pvalue for c in old.comparisons]
    assert new.settings["test"] == "t" and new.settings["n_resamples"] == 500


def test_the_default_statistics_are_the_old_defaults():
    rep = _quiet(ranklens.compare, QRELS, RUNS, ["P@1"], stats=Statistics(n_resamples=200))
    assert {k: v for k, v in rep.settings.items() if k != "n_resamples"} == {
        "baseline": None, "test": "randomization", "correction": "holm", "alpha": 0.05,
        "ci": "bootstrap", "confidence": 0.95, "seed": 0,
    }  # fmt: skip


@pytest.mark.parametrize(
    "call",
    [
        lambda: ranklens.compare(QRELS, RUNS, ["P@1"], stats=Statistics(), alpha=0.1),
        lambda: ranklens.compare_snapshots(
            QRELS, {"s1": RUNS, "s2": RUNS}, ["P@1"], stats=Statistics(), seed=1
        ),
        lambda: ranklens.plan_queries(
            "P@1 >= 0.9", expected=1.0, stats=Statistics(), confidence=0.9
        ),
    ],
    ids=["compare", "compare_snapshots", "plan_queries"],
)
def test_a_flat_keyword_beside_stats_is_an_error_naming_both(call):
    with pytest.raises(ParameterError, match=r"both stats= and \w+= were given"):
        call()


def test_a_flat_keyword_is_still_checked_by_its_declaration():
    with pytest.raises(ParameterError, match="n_resamples"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ranklens.compare(QRELS, RUNS, ["P@1"], n_resamples=0)
    with pytest.raises(ParameterError, match=r"stats must be a ranklens\.Statistics"):
        ranklens.compare(QRELS, RUNS, ["P@1"], stats={"test": "t"})


def test_the_gate_takes_stats_its_default_a_bootstrap_and_keeps_its_json_layout(tmp_path):
    base = tmp_path / "base.json"
    _quiet(ranklens.gate, QRELS, RUNS["a"], base, ["P@1"], update_baseline=True,
           stats=Statistics(test="bootstrap", n_resamples=300))  # fmt: skip
    new = _quiet(ranklens.gate, QRELS, RUNS["b"], base, ["P@1"],
                 stats=Statistics(test="bootstrap", n_resamples=300))  # fmt: skip
    with pytest.warns(DeprecationWarning, match=r"stats=ranklens.Statistics\(n_resamples=300\)"):
        old = ranklens.gate(QRELS, RUNS["b"], base, ["P@1"], n_resamples=300)
    assert isinstance(new.settings, GateSettings)
    assert new.settings.test == "bootstrap" and new.settings["alpha"] == 0.05
    assert new.to_dict() == old.to_dict()
    assert list(new.to_dict()["settings"]) == [
        "test", "alpha", "inconclusive", "k", "n_resamples", "seed"
    ]  # fmt: skip
    assert new.to_dict()["settings"] == {
        "test": "bootstrap", "alpha": 0.05, "inconclusive": "fail", "k": 1,
        "n_resamples": 300, "seed": 0,
    }  # fmt: skip
    assert "floor_confidence" not in new.settings
    json.dumps(new.to_dict())  # plain data
    with pytest.raises(ParameterError, match="both stats= and alpha="):
        ranklens.gate(QRELS, RUNS["b"], base, ["P@1"], stats=Statistics(), alpha=0.1)


def test_gate_settings_record_gives_the_old_dict():
    s = GateSettings("t", 0.05, "pass", 10, 1000, 1, True, 0.9, "auto")
    assert s.to_dict() == {
        "test": "t", "alpha": 0.05, "inconclusive": "pass", "k": 10, "n_resamples": 1000,
        "seed": 1, "evidence": True, "floor_confidence": 0.9, "floor_method": "auto",
    }  # fmt: skip
    assert dict(s) == s.to_dict()


def test_snapshots_take_stats():
    snaps = {"s1": RUNS, "s2": {"a": RUNS["b"], "b": RUNS["a"]}}
    new = _quiet(ranklens.compare_snapshots, QRELS, snaps, ["P@1"],
                 stats=Statistics(n_resamples=300, seed=2))  # fmt: skip
    with pytest.warns(DeprecationWarning, match="compare_snapshots"):
        old = ranklens.compare_snapshots(QRELS, snaps, ["P@1"], n_resamples=300, seed=2)
    assert new.to_dict() == old.to_dict()
    assert new.settings.n_resamples == 300 and new.settings.test == "randomization"


def test_plan_queries_and_power_take_stats():
    new = _quiet(ranklens.plan_queries, "P@1 >= 0.9", expected=1.0,
                 stats=Statistics(confidence=0.9))  # fmt: skip
    with pytest.warns(DeprecationWarning, match=r"Statistics\(confidence=0.9\)"):
        old = ranklens.plan_queries("P@1 >= 0.9", expected=1.0, confidence=0.9)
    assert [p.queries for p in new] == [p.queries for p in old]
    with pytest.raises(ParameterError, match="confidence"):
        ranklens.plan_queries("P@1 >= 0.9", expected=1.0, stats=Statistics(confidence=0.3))
    rep = _quiet(ranklens.compare, QRELS, RUNS, ["P@1"], stats=Statistics(test="t", ci=None))
    from ranklens.comparison import power

    plain = _quiet(power, rep, "P@1", n=100)
    assert plain[0].test == "t" and plain[0].alpha == 0.05  # the report's own test
    new_rows = _quiet(power, rep, "P@1", n=100, stats=Statistics(alpha=0.01, test="wilcoxon"))
    with pytest.warns(DeprecationWarning, match="power"):
        old_rows = power(rep, "P@1", n=100, alpha=0.01, test="wilcoxon")
    assert new_rows == old_rows
    with pytest.warns(DeprecationWarning):
        alpha_only = power(rep, "P@1", n=100, alpha=0.01)
    assert alpha_only[0].test == "t"  # a flat alpha alone keeps the report's test


def test_snapshot_records_read_by_attribute_and_give_the_old_dicts():
    from ranklens.comparison import ChangedLabel, SnapshotAgreement, SnapshotSettings, Swap

    snaps = {"s1": RUNS, "s2": {"a": RUNS["b"], "b": RUNS["a"]}}
    corpora = {"s1": {"d0": "old", "d1": "same"}, "s2": {"d0": "new", "d1": "same"}}
    s = _quiet(ranklens.compare_snapshots, QRELS, snaps, ["P@1"], corpora=corpora,
               stats=Statistics(n_resamples=300))  # fmt: skip
    (row,) = s.agreement
    assert isinstance(row, SnapshotAgreement) and isinstance(row.swaps[0], Swap)
    assert row.tau == s.tau("s1", "s2", "P@1")[0] == -1.0
    assert row.to_dict() == {
        "a": "s1", "b": "s2", "metric": "P@1", "n": 12, "tau": row.tau, "low": row.low,
        "high": row.high,
        "swaps": [{"better_on_a": row.swaps[0].better_on_a,
                   "better_on_b": row.swaps[0].better_on_b, "p_a": row.swaps[0].p_a,
                   "p_b": row.swaps[0].p_b}],
        "drop": dict(row.drop),
    }  # fmt: skip
    assert all(isinstance(c, ChangedLabel) for c in s.changed)
    assert {(c.doc, c.change) for c in s.changed} == {("d0", "changed")}
    assert s.changed[0].to_dict() == {
        "a": "s1", "b": "s2", "query": s.changed[0].query, "doc": s.changed[0].doc,
        "grade": 1, "change": s.changed[0].change,
    }  # fmt: skip
    assert isinstance(s.settings, SnapshotSettings)
    assert s.to_dict()["settings"] == {"confidence": 0.95, "n_resamples": 300, "seed": 0,
                                       "test": "randomization", "corpora": True}  # fmt: skip
    plain = s.to_dict()
    assert list(plain) == ["snapshots", "systems", "metrics", "values", "agreement", "changed",
                           "settings"]  # fmt: skip
    assert plain["agreement"] == [row.to_dict()]
    assert json.loads(s.to_json())["agreement"][0]["metric"] == "P@1"
    with pytest.warns(DeprecationWarning, match=r"\.tau"):
        assert row["tau"] == row.tau  # the old dict reading still works, deprecated
    frame = s.to_pandas()
    assert list(frame.columns) == ["a", "b", "metric", "n", "tau", "low", "high", "swaps"]
    assert frame.loc[0, "swaps"] == 1


def test_compare_takes_report_contents_and_the_flat_keywords_warn():
    from ranklens.comparison import ReportContents

    kept = ReportContents(curves=False, drilldown=None, tie_range=False)
    new = _quiet(ranklens.compare, QRELS, RUNS, ["P@1"], contents=kept,
                 stats=Statistics(n_resamples=200))  # fmt: skip
    with pytest.warns(DeprecationWarning, match=r"contents=ranklens.ReportContents\(curves=False"):
        old = ranklens.compare(QRELS, RUNS, ["P@1"], curves=False, drilldown=None,
                               tie_range=False, stats=Statistics(n_resamples=200))  # fmt: skip
    assert new.curves == old.curves == {}
    assert "drilldown" not in new.metadata and "drilldown" not in old.metadata
    assert new.to_dict()["summary"] == old.to_dict()["summary"]
    with pytest.raises(ParameterError, match="both contents= and curves="):
        ranklens.compare(QRELS, RUNS, ["P@1"], contents=kept, curves=True)
    with pytest.raises(ParameterError, match="drilldown"):
        ReportContents(drilldown=-1)


def test_the_gates_evidence_places_chunks_by_the_conventions_placement(tmp_path):
    """A chunk given by its text alone, which stands twice in its document: judging places
    it at its first place under the chroma convention, and so do the gate's evidence and
    the drill-down (not left unplaced, as under the default placement)."""
    from ranklens.comparison.evidence import found_evidence
    from ranklens.model.spans import SpanLabels

    text = "The lamp burns. Keepers lived here. The lamp burns. Then the light went out."
    labels = SpanLabels.from_spans({"q": [("d", 0, 15)]}, {"d": text})
    run = ranklens.Run.from_chunks(
        {"q": [{"id": "c", "doc_id": "d", "start": None, "end": None, "text": "The lamp burns."}]}
    )
    assert found_evidence(labels, run, 10) == {"q": []}
    assert found_evidence(labels, run, 10, placement="first") == {
        "q": ["d [0, 15) 'The lamp burns.'"]
    }
    base = tmp_path / "base.json"
    written = _quiet(ranklens.gate, labels, run, base, ["evidence_recall@10"],
                     update_baseline=True, convention="chroma",
                     stats=Statistics(test="bootstrap", n_resamples=200))  # fmt: skip
    assert written.report.value("now", "evidence_recall@10") == 1.0
    found = written.report.metadata["gate"]["found"]
    assert found == {"q": ["d [0, 15) 'The lamp burns.'"]}
