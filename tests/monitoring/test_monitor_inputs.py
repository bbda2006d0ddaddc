"""Every surface of the monitoring room keeps the core's promise (issue 48): a bad setting is
a ParameterError naming the entry point, the parameter and the value; a bad record at run
time is counted and reported, never a crash in the app's path and never a silent number;
the OpenTelemetry duration histogram's buckets fit seconds, so a percentile can be read
from it."""

from __future__ import annotations

import json
import math
import re
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Recorder, Retrieval
from ranklens.declared import DECLARED, ParameterError
from ranklens.monitoring import (
    CascadeUser,
    DriftTests,
    Monitor,
    OTelExporter,
    PrometheusExporter,
    Windowing,
    interleave,
    interleaving_result,
)
from ranklens.monitoring.exporters import DURATION_BUCKETS, MlflowExporter

T0 = 1_800_000_000.0
QRELS = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 2}}


def ranker(query, query_id=None):
    return [("d1", 2.0), ("d2", 1.0), ("d3", 0.5)]


def other(query, query_id=None):
    return [("d3", 2.0), ("d1", 1.0)]


def impressions():
    return [{"id": "i1", "method": "team-draft", "names": ["a", "b"], "docs": ["d1", "d2"],
             "teams": [0, 1], "clicks": [0]}]  # fmt: skip


BY_HAND = Windowing(background=False)


def monitor(**kw):
    return Monitor(**{"windowing": BY_HAND, **kw})


# -- every declared option of the room, each bad value, through its public callable ------
CALLERS = {
    "Monitor": lambda **kw: monitor(**kw),
    "Monitor.set_baseline": lambda **kw: monitor(window=5).set_baseline(**kw),
    "Monitor.observe": lambda **kw: monitor(window=5).observe(**kw),
    "Monitor.replay": lambda **kw: monitor(window=5).replay(**kw),
    "Monitor.flush": lambda **kw: monitor(window=5).flush(**kw),
    "Monitor.close": lambda **kw: monitor(window=5).close(**kw),
    "interleave": lambda **kw: interleave(ranker, other, **kw),
    "Interleaving": lambda **kw: ranklens.monitoring.Interleaving(ranker, other, **kw),
    "Interleaving.record_feedback": lambda **kw: interleave(ranker, other).record_feedback(
        "i1", **kw
    ),
    "Interleaving.to_jsonl": lambda **kw: interleave(ranker, other).to_jsonl(**kw),
    "interleaving_result": lambda **kw: interleaving_result(impressions(), **kw),
    "CascadeUser": lambda **kw: CascadeUser(**kw),
    "OTelExporter": lambda **kw: OTelExporter(**kw),
    "PrometheusExporter": lambda **kw: PrometheusExporter(**kw),
    "MlflowExporter": lambda **kw: MlflowExporter(**kw),
    "DriftTests": lambda **kw: ranklens.monitoring.DriftTests(**kw),
    "ModelJudge": lambda **kw: ranklens.monitoring.ModelJudge(**{"judge": ranker, **kw}),
    "Windowing": lambda **kw: ranklens.monitoring.Windowing(**kw),
}
CASES = [
    (table, name, bad)
    for table in CALLERS
    for name, option in DECLARED[table].options.items()
    if option.kind != "data"
    for bad in option.bad_values()
]


def test_every_entry_point_of_the_room_is_declared():
    import ranklens.monitoring as m

    assert set(CALLERS) <= set(DECLARED)
    assert DECLARED["Monitor"].target is not None
    for fn in (m.interleave, m.interleaving_result, m.Monitor.__init__, m.OTelExporter.__init__):
        assert hasattr(fn, "__declared__")
    # every parameter of Monitor is in its table, and every default satisfies its own line
    import inspect

    from ranklens.monitoring.groups import FLAT

    sig = inspect.signature(m.Monitor.__init__)
    assert set(sig.parameters) - {"self", "flat"} == set(DECLARED["Monitor"].options) - set(FLAT)
    assert len(sig.parameters) - 2 <= 15  # grouped: the flat keywords of 0.2 in **flat
    assert set(FLAT) <= set(DECLARED["Monitor"].options)  # still declared, still checked
    for table in CALLERS:
        for name, option in DECLARED[table].options.items():
            if option.kind != "data" and option.default is not None:
                option.validate(option.default, name, table)


@pytest.mark.parametrize(("table", "name", "bad"), CASES,
                         ids=[f"{t}-{n}-{b!r}"[:60] for t, n, b in CASES])  # fmt: skip
def test_each_bad_value_is_a_parameter_error_naming_it(table, name, bad):
    if table == "OTelExporter":
        pytest.importorskip("opentelemetry.sdk.metrics")
    with pytest.raises(ParameterError) as info:
        CALLERS[table](**{name: bad})
    message = str(info.value)
    assert message.startswith(f"{table}: {name} must be "), message
    assert message.rstrip().endswith(tuple(("got", "?"))) or " got " in message


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: monitor(window=math.nan), "Monitor: window must be .* got nan"),
        (lambda: monitor(window=math.inf), "Monitor: window must be"),
        (lambda: monitor(window=0), "Monitor: window must be"),
        (lambda: monitor(window=-3), "Monitor: window must be"),
        (lambda: monitor(window=2.5), "Monitor: window must be"),
        (lambda: monitor(window="0s"), "Monitor: window must be"),
        (lambda: monitor(window=timedelta(0)), "Monitor: window must be"),
        (lambda: monitor(window=True), "Monitor: window must be"),
        (lambda: monitor(lateness="-5s"), "Monitor: lateness must be"),
        (lambda: monitor(lateness=math.nan), "Monitor: lateness must be"),
        (lambda: monitor(judge_rate=2), r"Monitor: judge_rate must be a finite number in \[0, 1\]"),
        (lambda: monitor(judge_rate=math.nan), "Monitor: judge_rate must be"),
        (lambda: monitor(queue_size=0), "Monitor: queue_size must be a whole number >= 1"),
        (lambda: monitor(alpha=1.5), "Monitor: alpha must be"),
        (lambda: monitor(alpha=math.nan), "Monitor: alpha must be"),
        (lambda: monitor(interval=0), "Monitor: interval must be"),
        (lambda: monitor(history=0), "Monitor: history must be"),
        (lambda: monitor(min_samples=1), "Monitor: min_samples must be"),
        (lambda: monitor(drift=DriftTests(samples=10)), "DriftTests: samples must be at least"),
        (lambda: monitor(judge_depth=0), "Monitor: judge_depth must be"),
        (lambda: monitor(judge_timeout=-1), "Monitor: judge_timeout must be"),
        (lambda: monitor(relevance_level=1.5), "Monitor: relevance_level must be"),
        (lambda: monitor(metrics="ndcg@10", labels=QRELS, corpus="abc"), "Monitor: corpus"),
        (lambda: monitor(drift=DriftTests(signals=["latncy"])), "did you mean 'latency'"),
        (lambda: monitor(match="txt"), "did you mean 'text'"),
        (lambda: monitor(match="text", labels=QRELS), "Monitor: labels must be a Dataset"),
        (lambda: monitor(key="idd"), "Monitor: key must be .*did you mean 'id'"),
        (lambda: monitor(source=Recorder(key="id"), key="parent"), "Monitor: key must be"),
        (lambda: monitor(on_alert="page me"), "Monitor: on_alert must be"),
        (lambda: monitor(exporters="prometheus"), "Monitor: exporters must be"),
        (lambda: monitor(exporters=[PrometheusExporter]), "Monitor: exporters must be"),
        (lambda: monitor(baseline=0), "Monitor: baseline must be"),
        (lambda: monitor(baseline="logs.jsonl"), "Monitor: baseline must be"),
        (lambda: monitor(seed=-1), "Monitor: seed must be"),
        (lambda: interleave(ranker, other, k=-1), "interleave: k must be a whole number >= 1"),
        (lambda: interleave(ranker, other, k=0), "interleave: k must be a whole number >= 1"),
        (lambda: interleave(ranker, other, k=math.nan), "interleave: k must be"),
        (lambda: interleave(ranker, other, tau=math.inf), "interleave: tau must be"),
        (lambda: interleave(ranker, other, names="ab"), "interleave: names must be"),
        (
            lambda: interleave(ranker, other, names=["a", "a"]),
            "interleave: names must be .*two different texts",
        ),
        (lambda: interleave(ranker, other, names=["a", "b", "c"]), "interleave: names must be"),
        (lambda: interleave(ranker, other, "team-drat"), "did you mean 'team-draft'"),
        (lambda: interleave(ranker, other, max_impressions=0), "interleave: max_impressions"),
        (lambda: interleaving_result(impressions(), alpha=math.nan), "interleaving_result: alpha"),
        (lambda: interleaving_result(impressions(), n_resamples=0), "interleaving_result: n_res"),
        (lambda: interleaving_result(impressions(), confidence=1), "interleaving_result: confid"),
        (lambda: CascadeUser(click=(0.5, 1.5)), "CascadeUser: click must be"),
        (lambda: CascadeUser(stop=(math.nan,)), "CascadeUser: stop must be"),
        (lambda: CascadeUser(click="0.5"), "CascadeUser: click must be"),
        (lambda: PrometheusExporter(port=70_000), "PrometheusExporter: port must be"),
        (lambda: PrometheusExporter(path=""), "PrometheusExporter: path must be"),
    ],
)
def test_named_refusals(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


def test_good_settings_still_read_as_before():
    assert monitor(window="90s").size == 90 and monitor(window=timedelta(minutes=2)).size == 120
    assert monitor(window=np.int64(7)).count == 7  # a numpy whole number counts retrievals
    m = monitor(window="1m", windowing=Windowing(background=False, lateness=0),
                exporters=[lambda w: None], on_alert=print, corpus={"d1": {}, "d2": {}},
                drift=DriftTests(signals="latency"))  # fmt: skip
    assert m.lateness == 0 and m.known == {"d1", "d2"} and m.signals == ["latency"]
    assert len(m.on_alert) == 1 and len(m.exporters) == 1
    assert interleave(ranker, other, "TDI").method == "team-draft"
    assert interleave(ranker, other, "probabilistic", k=2.0).k == 2


# -- bad records at run time: counted and reported, never a crash, never a silent number --
def good(i, t=T0):
    return Retrieval("q1", "first question", ["d1", "x"], [2.0, 1.0], latency_ms=10.0 + i,
                     started=t + i)  # fmt: skip


BAD_RECORDS = {
    "query None": (Retrieval(None, None, ["d1"], [1.0], latency_ms=5.0, started=T0),
                   "query not a text"),
    "query id a float": (Retrieval(1.5, "q", ["d1"], [1.0], latency_ms=5.0, started=T0),
                         "query id not a text or whole number"),
    "score NaN": (Retrieval("q1", "q", ["d1"], [math.nan], latency_ms=5.0, started=T0),
                  "top score not a finite number"),
    "score a text": (Retrieval("q1", "q", ["d1"], ["high"], latency_ms=5.0, started=T0),
                     "top score not a finite number"),
    "latency negative": (Retrieval("q1", "q", ["d1"], [1.0], latency_ms=-40.0, started=T0),
                         "latency not a finite number >= 0"),
    "latency infinite": (Retrieval("q1", "q", ["d1"], [1.0], latency_ms=math.inf, started=T0),
                         "latency not a finite number >= 0"),
    "latency a text": (Retrieval("q1", "q", ["d1"], [1.0], latency_ms="5", started=T0),
                       "latency not a finite number >= 0"),
    "hit id None": (Retrieval("q1", "q", [None, "d1"], [2.0, 1.0], latency_ms=5.0, started=T0),
                    "hit without a document id"),
    "started a text": (Retrieval("q1", "q", ["d1"], [1.0], latency_ms=5.0, started="now"),
                       "start time not a finite number"),
    "error a text": (Retrieval("q1", "q", latency_ms=5.0, started=T0, error="Timeout"), None),
}  # fmt: skip
REJECTED = {
    "doc ids one text": Retrieval("q1", "q", "d1", [1.0], latency_ms=5.0, started=T0),
    "scores a number": Retrieval("q1", "q", ["d1"], 1.0, latency_ms=5.0, started=T0),
}


@pytest.mark.parametrize("how", ["observe", "replay"])
@pytest.mark.parametrize("case", list(BAD_RECORDS))
def test_a_malformed_record_is_counted_and_the_rest_is_used(case, how):
    bad, reason = BAD_RECORDS[case]
    m = monitor(window=4, labels=QRELS, metrics=["recall@10"])
    records = [good(0), bad, good(1), good(2)]
    if how == "observe":
        m.observe(records)
        m.flush(close=True)
    else:
        m.replay(records)
    s = m.status()
    assert s["retrievals"] == 4 and s["internal_errors"] == 0 and s["rejected"] == 0
    if reason is not None:
        assert s["malformed"] == {reason: 1}
        assert "malformed 1" in m.summary_line()
    (w,) = m.windows
    assert w.retrievals == 4
    lat = w.signals["latency_p50"]
    assert 0 <= lat < 20  # a negative or infinite latency never reaches a quantile
    assert math.isfinite(w.metrics["recall@10"])


@pytest.mark.parametrize("case", list(REJECTED))
def test_an_unreadable_record_is_rejected_counted_and_the_flush_goes_on(case):
    m = monitor(window=3)
    m.observe([good(0), REJECTED[case], good(1), good(2)])
    closed = m.flush()
    s = m.status()
    assert s["rejected"] == 1 and len(s["rejected_reasons"]) == 1 and s["queued"] == 0
    assert [w.retrievals for w in closed] == [3]  # the records after it were not lost
    assert "rejected 1" in m.summary_line()


def test_malformed_and_rejected_records_are_exported(tmp_path):
    exp = PrometheusExporter(tmp_path / "ranklens.prom")
    m = monitor(window=3, exporters=[exp])
    bad, _ = BAD_RECORDS["latency negative"]
    m.replay([good(0), bad, REJECTED["doc ids one text"], good(1)])
    text = (tmp_path / "ranklens.prom").read_text()
    assert 'ranklens_monitor_malformed_total{ranklens_monitor="ranklens"} 1.0' in text
    assert 'ranklens_monitor_rejected_total{ranklens_monitor="ranklens"} 1.0' in text


def test_a_window_where_every_retrieval_failed_reads_without_nan():
    error = {"type": "TimeoutError", "message": "slow"}
    failed = [Retrieval("q1", "q", latency_ms=5.0, started=T0 + i, error=error) for i in range(3)]
    m = monitor(window=3, labels=QRELS, metrics=["ndcg@10"])
    (w,) = m.replay(failed)
    line = w.summary_line()
    assert "100.0% failed" in line and "nan" not in line.lower()


def test_a_replay_record_without_a_time_before_any_timed_one_is_rejected_not_a_crash():
    m = monitor(window="1m")
    m.replay([Retrieval("q1", "q", ["d1"], [1.0], latency_ms=5.0, started=math.nan),
              good(0), good(1)])  # fmt: skip
    s = m.status()
    assert s["rejected"] == 1 and s["retrievals"] == 2


@pytest.mark.parametrize(
    ("query", "latency", "reason"),
    [(None, 5.0, "query not a text"), (7.5, 5.0, "query not a text"),
     ("q", -1.0, "latency not a finite number >= 0")],
)  # fmt: skip
def test_the_recorder_path_counts_malformed_fields(query, latency, reason):
    rec = Recorder(spill=False)
    m = Monitor(rec, window=2, windowing=BY_HAND)
    rec.record(query, [("d1", 1.0)], latency_ms=latency)
    rec.record("q", [("d1", 1.0)], latency_ms=3.0)
    m.flush()
    assert m.status()["malformed"] == {reason: 1}
    assert m.windows[0].retrievals == 2


@pytest.mark.parametrize("bad", ["abc", Retrieval("q", "q"), {"query": "q"}, 5])
@pytest.mark.parametrize("method", ["observe", "replay", "set_baseline"])
def test_records_must_be_a_list_of_retrievals_never_a_text(method, bad):
    m = monitor(window=5)
    if not (method == "set_baseline" and bad == 5):  # 5 windows: a baseline's other form
        with pytest.raises(ParameterError, match=rf"Monitor\.{method}: "):
            getattr(m, method)(bad)
    with pytest.raises(ParameterError, match=r"\[1\] must be a ranklens Retrieval"):
        getattr(m, method)(iter([good(0), {"query": "q"}]))


def test_the_relevance_level_applies_to_the_labelled_metrics():
    recs = [Retrieval("q1", "first", ["d1", "d2"], [2.0, 1.0], latency_ms=5.0, started=T0 + i)
            for i in range(3)]  # fmt: skip
    for level in (1, 2):
        m = monitor(window=3, labels=QRELS, metrics=["P@1", "recall@1"], relevance_level=level)
        (w,) = m.replay(recs)
        expect = ranklens.evaluate(QRELS, {"q1": ["d1", "d2"]}, ["P@1", "recall@1"],
                                   missing="skip", relevance_level=level)  # fmt: skip
        assert w.metrics["P@1"] == pytest.approx(expect["P@1"])
        assert w.metrics["recall@1"] == pytest.approx(expect["recall@1"])
    assert w.metrics["P@1"] == 0.0  # at level 2, d1 (grade 1) is not relevant


# -- interleaving: feedback and results ---------------------------------------------------
def test_feedback_as_a_text_is_refused_never_iterated():
    inter = interleave(ranker, other, seed=0)
    served = inter("q", query_id="q1")
    imp = served[0].metadata["ranklens_impression"]
    with pytest.raises(ParameterError, match="record_feedback: used must be"):
        inter.record_feedback(imp, "d1")
    assert inter.counts["unknown_feedback"] == 0 and inter.counts["clicks"] == 0
    assert inter.record_feedback(imp, [served[0].metadata["ranklens_doc"]]) == 1
    assert inter.record_feedback(imp, lambda doc, pos: pos == 1) == 1


@pytest.mark.parametrize("position", [np.int64(1), np.int32(1), 1])
def test_a_click_by_position_takes_any_whole_number(position):
    inter = interleave(ranker, other, seed=0)
    served = inter("q", query_id="q1")
    imp = served[0].metadata["ranklens_impression"]
    assert inter.record_click(imp, position) and inter.snapshot()[0]["clicks"] == [1]
    assert not inter.record_click(imp, np.int64(99))  # outside the list: counted
    assert inter.counts["unknown_feedback"] == 1


def test_a_result_without_clicks_says_so_instead_of_nan():
    inter = interleave(ranker, other, seed=0)
    inter("q", query_id="q1")
    text = str(interleaving_result(inter))
    assert "nan" not in text and "none with a click" in text


@pytest.mark.parametrize(
    ("change", "field"),
    [({"clicks": [5]}, "clicks"), ({"clicks": [-1]}, "clicks"), ({"clicks": ["0"]}, "clicks"),
     ({"teams": [0]}, "teams"), ({"teams": [0, 7]}, "teams"), ({"docs": "d1"}, "docs"),
     ({"method": "tdi"}, "method"), ({"names": "ab"}, "names"),
     ({"method": "probabilistic", "share_a": [0.5, math.nan, 1]}, "share_a"),
     ({"method": "probabilistic", "share_a": [2.0, 0.5]}, "share_a")],
)  # fmt: skip
def test_a_corrupt_impression_is_an_error_naming_its_line_and_field(tmp_path, change, field):
    path = tmp_path / "imps.jsonl"
    rows = impressions() * 2
    rows[1] = {**rows[1], **change}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ranklens.InputError, match=rf"imps.jsonl, line 2: {field} must be"):
        interleaving_result(path)
    with pytest.raises(ranklens.InputError, match=rf"impression 1: {field} must be"):
        interleaving_result(rows)


@pytest.mark.parametrize("bad", [b"{}", {"docs": []}, 5, "no-such-file.jsonl"])
def test_a_source_that_is_not_impressions_is_named(bad):
    with pytest.raises(ranklens.InputError, match="interleaving_result: source"):
        interleaving_result(bad)


@pytest.mark.parametrize(
    ("source", "match"),
    [([], "no impressions"), ([*impressions(), {**impressions()[0], "names": ["x", "y"]}],
                              "impressions of different experiments mixed")],
)  # fmt: skip
def test_results_errors_name_the_entry_point(source, match):
    with pytest.raises(ranklens.InputError, match=f"^interleaving_result: {match}"):
        interleaving_result(source)


@pytest.mark.parametrize(
    ("grades", "propensity"),
    [(np.array([[1.0, np.nan]]), None), (np.array([1, 2]), None),
     (np.array([[1, 2]]), np.array([np.nan])), (np.array([[1, 2]]), np.array([1.5])),
     (np.array([[1, 2]]), np.array([0.5, 0.5])), (np.array([["a", "b"]]), None)],
)  # fmt: skip
def test_click_model_inputs_are_checked(grades, propensity):
    with pytest.raises(ParameterError, match=r"CascadeUser\.clicks: "):
        CascadeUser().clicks(grades, np.random.default_rng(0), propensity)


# -- OpenTelemetry: a percentile can be read from the duration histogram ------------------
def _otel_histogram(latencies_ms, **kw):
    pytest.importorskip("opentelemetry.sdk.metrics")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    m = monitor(window=len(latencies_ms), name="shop",
                exporters=[OTelExporter(meter_provider=MeterProvider(metric_readers=[reader]),
                                        **kw)])  # fmt: skip
    m.replay([Retrieval(f"q{i}", "q", ["d1"], [1.0], latency_ms=float(x), started=T0 + i)
              for i, x in enumerate(latencies_ms)])  # fmt: skip
    metrics = {
        metric.name: metric
        for rm in reader.get_metrics_data().resource_metrics
        for sm in rm.scope_metrics
        for metric in sm.metrics
    }
    return metrics


def _quantile_from_buckets(bounds, counts, q):
    """Prometheus' histogram_quantile: linear within the bucket where the rank falls."""
    total = sum(counts)
    rank = q * total
    cum = 0
    for i, c in enumerate(counts):
        if cum + c >= rank and c:
            lo = 0.0 if i == 0 else bounds[i - 1]
            hi = bounds[i] if i < len(bounds) else bounds[-1]
            return lo + (hi - lo) * (rank - cum) / c, i
        cum += c
    raise AssertionError("empty histogram")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_duration_histogram_gives_a_p95_within_one_bucket(seed):
    rng = np.random.default_rng(seed)
    latencies = rng.uniform(1, 40, 2000)  # 1 to 40 ms, the range of a vector search
    metric = _otel_histogram(latencies)["ranklens.retrieval.duration"]
    assert metric.unit == "s"
    (point,) = metric.data.data_points
    bounds, counts = list(point.explicit_bounds), list(point.bucket_counts)
    assert tuple(bounds) == DURATION_BUCKETS and sum(counts) == 2000
    true = float(np.percentile(latencies / 1000, 95))
    estimate, where = _quantile_from_buckets(bounds, counts, 0.95)
    true_bucket = int(np.searchsorted(bounds, true, side="left"))
    assert abs(where - true_bucket) <= 1
    assert abs(estimate - true) / true < 1 / 3  # the buckets are at most a third apart
    assert max(counts) < 0.5 * sum(counts)  # no bucket swallows the traffic


def test_the_duration_histogram_takes_bounds_and_refuses_bad_ones():
    metric = _otel_histogram([2.0, 3.0, 50.0], boundaries=[0.001, 0.01, 0.1])
    (point,) = metric["ranklens.retrieval.duration"].data.data_points
    assert list(point.explicit_bounds) == [0.001, 0.01, 0.1]
    assert list(point.bucket_counts) == [0, 2, 1, 0]
    with pytest.raises(ParameterError, match="OTelExporter: boundaries must be"):
        OTelExporter(boundaries=[0.1, 0.01])


def test_a_bad_latency_never_reaches_the_histogram():
    metric = _otel_histogram([5.0, -30.0, 7.0, math.inf])["ranklens.retrieval.duration"]
    (point,) = metric.data.data_points
    assert point.count == 2 and point.min >= 0 and math.isfinite(point.max)


def test_exported_names_and_units_follow_the_semantic_conventions():
    metrics = _otel_histogram(list(np.linspace(1, 30, 40)))
    name_re = re.compile(r"^ranklens(\.[a-z][a-z0-9_]*)+$")
    units = {"s", "1", "{retrieval}", "{alert}", "{failure}", "{field}"}
    assert metrics
    for name, metric in metrics.items():
        assert name_re.match(name), name
        assert metric.unit in units, (name, metric.unit)
        if name.endswith(".duration"):
            assert metric.unit == "s"  # durations in seconds, never ms
        if name.endswith(".ratio"):
            assert metric.unit == "1"
    assert "ms" not in {m.unit for m in metrics.values()}


def test_the_demo_section_never_prints_nan_when_nobody_clicked():
    from types import SimpleNamespace

    from ranklens.app.demo_data import load
    from ranklens.app.demo_monitor import monitor_section

    ds = load()
    empty = SimpleNamespace(run=SimpleNamespace(to_lists=lambda: {q: [] for q in ds.queries}))
    text = monitor_section(ds, {"bm25": empty, "dense": empty}, "bm25")
    assert "nan" not in text.lower() and "no preference can be measured" in text


@pytest.mark.parametrize("table", list(CALLERS))
def test_each_table_checks_through_its_target_before_any_work(table):
    """As a walk over every table does: the target called with one bad value and no other
    argument (a method's without its instance) refuses it before anything runs."""
    declared = DECLARED[table]
    assert declared.target is not None
    # the deprecated flat keywords arrive in **flat: the entry point checks them first thing,
    # so its required arguments must be there (interleaving_result's source)
    needs = {"interleaving_result": {"source": impressions()}}.get(table, {})
    for name, option in declared.options.items():
        if option.kind == "data":
            continue
        for bad in option.bad_values():
            with pytest.raises(ParameterError, match=rf"^{re.escape(table)}: {name} must be"):
                declared.target(**needs, **{name: bad})


_LIGHT_FIELD = st.one_of(st.none(), st.text(max_size=2), st.floats(), st.integers(-1, 3),
                         st.just({}), st.just({"doc_id": "d1"}), st.just((None, None)),
                         st.just((0, 4)), st.just([1]))  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.sampled_from(["d1", "d2", "d3", ""]), st.none() | st.floats(0, 1),
              st.none() | st.text(max_size=3), st.none() | st.just("p1"),
              st.none() | st.just({}), st.none() | st.just((None, None))),
    st.tuples(*[_LIGHT_FIELD] * 6), st.tuples(*[_LIGHT_FIELD] * 5),
), max_size=6), st.booleans(), st.booleans())  # fmt: skip
def test_light_hits_keyed_by_id_map_as_their_hits_do(light, ids, texts):
    """The monitor reads a record's light hits keyed by id without making Hit objects
    when each is plain; the event and the fields it counts as malformed are those the
    hits give, whatever the hits hold (odd types, NaN scores, ranges, short tuples)."""
    from ranklens.monitoring.intake import Intake

    raw = (1.0, "q", "q1", None, None, light, None, 3.0, None, None)
    fast, slow = Intake("id", 0.0, ids, texts), Intake("id", 0.0, ids, texts)
    slow.by_id = False  # every hit made and keyed by key_function("id")
    assert fast.from_raw(raw) == slow.from_raw(raw)
    assert fast.malformed == slow.malformed
