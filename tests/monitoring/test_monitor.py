"""The Monitor on simulated traffic: windows by time and by count, labelled metrics equal to
ranklens.evaluate, drift alerts, and the bad inputs of issue 37 (clock skew, late
records, a recorder that spills, a full queue, failing exporters and callbacks) handled
and counted; exports to OpenTelemetry (the SDK's in-memory reader), Prometheus (parsed by
prometheus_client, from a file and a local endpoint) and MLflow."""

from __future__ import annotations

import logging
import math
import time
import urllib.request

import numpy as np
import pytest

import ranklens
from ranklens import Recorder, Retrieval
from ranklens.app.demo_data import load
from ranklens.monitoring import (
    DriftTests,
    ModelJudge,
    Monitor,
    OTelExporter,
    PrometheusExporter,
    Windowing,
)

T0 = 1_800_000_000.0  # a quarter-hour boundary


class Clock:
    def __init__(self, t: float = T0):
        self.t = t

    def __call__(self) -> float:
        return self.t


BY_HAND = Windowing(background=False)
"""No thread: the test flushes (or replays) itself."""


@pytest.fixture(scope="module")
def ds():
    return load()


def traffic(ds, rng, n, start, step, good=True, fail=0.0):
    """Retrievals of the demo's questions: good ones rank a labelled passage first."""
    labels, docs, qs = ds.qrels.to_dict(), list(ds.corpus), list(ds.queries.items())
    out = []
    for i in range(n):
        qid, text = qs[int(rng.integers(len(qs)))]
        t = start + i * step
        if rng.random() < fail:
            out.append(Retrieval(qid, text, latency_ms=5.0, started=t,
                                 error={"type": "TimeoutError", "message": "slow"}))  # fmt: skip
            continue
        rel = [d for d in labels[qid] if labels[qid][d] > 0][:1] if good else []
        rest = [d for d in rng.permutation(docs) if d not in rel][: 10 - len(rel)]
        scores = sorted(rng.normal(12 if good else 8, 2, 10), reverse=True)
        out.append(Retrieval(qid, text, rel + rest, list(scores),
                             latency_ms=float(rng.gamma(2, 4)), started=t))  # fmt: skip
    return out


def test_time_windows_baseline_and_a_drift_alert(ds, caplog):
    clock, alerts = Clock(), []
    m = Monitor(window="1m", labels=ds, metrics=["ndcg@10", "recall@10"],
                windowing=Windowing(background=False, clock=clock, lateness="5s"),
                on_alert=alerts.append)  # fmt: skip
    rng = np.random.default_rng(0)
    with caplog.at_level(logging.WARNING, logger="ranklens"):
        for minute in range(6):
            batch = traffic(ds, rng, 300, T0 + 60 * minute, 0.2, good=minute < 4)
            m.observe(batch)
            clock.t = T0 + 60 * minute + 66  # past the window's end and its lateness
            closed = m.flush()
            assert len(closed) == 1 and closed[0].retrievals == 300
            w = closed[0]
            if minute < 4:
                assert not w.alert, w.summary_line()
            if minute != 5:
                continue
            # the labelled metrics are ranklens.evaluate's per-retrieval values, averaged
            vals = [ranklens.evaluate(ds.qrels, {r.query_id: r.doc_ids}, ["ndcg@10"],
                                      missing="skip")["ndcg@10"] for r in batch]  # fmt: skip
            assert w.metrics["ndcg@10"] == pytest.approx(np.mean(vals), abs=1e-12)
    assert [w.role for w in m.windows] == ["baseline"] + ["tested"] * 5
    assert len(alerts) == 2 and alerts[0].window is m.windows[4]
    drifted = {d.signal for d in alerts[0].drifted}
    assert {"top_score", "ndcg@10", "recall@10"} <= drifted
    assert all(d.direction == "down" for d in alerts[0].drifted)
    assert "drift in window" in caplog.text and "ndcg@10" in caplog.text
    w = m.windows[-1]
    assert w.signals["labelled_rate"] == 1.0 and w.signals["unknown_rate"] == 0.0
    assert w.start == T0 + 5 * 60 and w.end - w.start == 60


def test_count_windows_and_replay_with_out_of_order_and_skewed_records(ds):
    rng = np.random.default_rng(1)
    m = Monitor(window=100, labels=ds, metrics=["ndcg@10"], windowing=BY_HAND)
    closed = m.replay(traffic(ds, rng, 350, T0, 1.0))
    assert [w.retrievals for w in closed] == [100, 100, 100, 50] and closed[-1].partial
    # event time: a record older than its closed window is late, counted, and kept
    clock = Clock(T0 + 3600)
    t = Monitor(window="1m", windowing=Windowing(background=False, clock=clock, lateness="10s"))
    batch = traffic(ds, rng, 60, T0, 1.0)
    late_one = batch.pop(5)
    skewed = traffic(ds, rng, 1, T0 + 10**6, 1.0)  # a clock 11 days ahead
    t.replay(batch)
    t.observe([late_one, *skewed])
    t.flush(close=True)
    s = t.status()
    assert s["late"] == 1 and s["skewed"] == 1 and s["retrievals"] == 61
    assert sum(w.retrievals for w in t.windows) == 61  # nothing lost


def test_the_request_path_only_appends_and_drops_are_counted(ds):
    rec = Recorder(max_records=10, spill=False)
    m = Monitor(rec, window=5, windowing=Windowing(queue_size=20, background=False))
    for i in range(50):
        rec.record(f"question {i}", [("d1", 1.0)], latency_ms=1.0)
    assert m.status()["queued"] == 20 and m.dropped == 30
    m.flush()
    assert m.status()["retrievals"] == 20 and len(m.windows) == 4
    kept = len(list(rec.records()))
    assert rec.evicted + kept == rec.total == 50 and kept <= 10  # let go, and counted
    assert rec.summary()["evicted"] == rec.evicted


def test_a_spilling_recorder_loses_nothing_for_the_monitor(ds, tmp_path):
    rec = Recorder(max_records=8, spill=tmp_path / "spill.jsonl")
    m = Monitor(rec, window=25, windowing=BY_HAND)
    for i in range(50):
        rec.record(f"q{i}", [(f"d{i}", 1.0)], latency_ms=2.0)
    m.flush()
    assert [w.retrievals for w in m.windows] == [25, 25]
    assert len(list(rec.records())) == 50  # and the recorder still reads every record back


def test_failing_exporters_and_callbacks_are_counted_never_raised(ds, caplog):
    class Broken:
        name = "broken"

        def export(self, window, monitor):
            raise ConnectionError("collector down")

    def bad_alert(alert):
        raise RuntimeError("pager offline")

    rng = np.random.default_rng(2)
    m = Monitor(window=200, labels=ds, windowing=BY_HAND, exporters=[Broken()],
                on_alert=bad_alert, metrics=["ndcg@10"])  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="ranklens"):
        m.replay(traffic(ds, rng, 400, T0, 1.0) + traffic(ds, rng, 200, T0 + 400, 1.0, False))
    s = m.status()
    assert s["export_failures"] == {"broken": 3} and s["alert_failures"] == 1
    assert s["alerts"] == 1 and caplog.text.count("exporter broken failed") == 1
    assert "export_failures 3" in m.summary_line()


def test_a_background_monitor_on_a_live_recorder(ds):
    rec = Recorder()
    with Monitor(rec, window=10, windowing=Windowing(interval=0.01)) as m:
        for i in range(30):
            rec.record(f"q{i}", [("d", 1.0)], latency_ms=1.0)
        for _ in range(200):
            if len(m.windows) == 3:
                break
            import time

            time.sleep(0.01)
    assert [w.retrievals for w in m.windows] == [10, 10, 10]
    assert m.status()["retrievals"] == 30 and not rec._listeners


def test_a_background_monitor_reads_in_slices_what_one_flush_reads(ds):
    """The background thread reads the queue in slices, giving the GIL up between them
    (so an app thread waits for one slice, not a backlog): its windows, metrics and
    counts are those of one flush by hand over the same records."""
    rng = np.random.default_rng(5)
    records = [(r.query_id, r.query, list(zip(r.doc_ids, r.scores)))
               for r in traffic(ds, rng, 2500, T0, 1.0)]  # fmt: skip
    seen = {}
    for background in (True, False):
        rec = Recorder(spill=False)
        m = Monitor(rec, window=500, labels=ds, metrics=["ndcg@10", "recall@5"],
                    windowing=Windowing(background=background, interval=0.01))  # fmt: skip
        for qid, text, hits in records:
            rec.record(text, hits, query_id=qid, latency_ms=2.0)
        for _ in range(3000):
            if not background or m.status()["retrievals"] == len(records):
                break
            time.sleep(0.01)
        m.close()
        seen[background] = [(w.counts, w.metrics) for w in m.windows]
    assert len(seen[False]) == 5 and seen[True] == seen[False]


def test_a_sampled_model_judge_and_a_pluggable_estimator(ds):
    seen = {}

    def judge(query, passage):  # a stand-in that grades by word overlap
        return int(len(set(query.lower().split()) & set(passage.lower().split())) >= 2)

    def estimator(judged, judged_labelled, labels):
        seen["args"] = (len(judged), len(judged_labelled), len(labels))
        return 0.5, 0.4, 0.6

    rng = np.random.default_rng(4)
    m = Monitor(window=100, labels=ds, metrics=["ndcg@10"], windowing=BY_HAND,
                judge=ModelJudge(judge, rate=0.3, estimator=estimator))  # fmt: skip
    recs = traffic(ds, rng, 100, T0, 1.0)
    texts = {d: f"{v['title']}. {v['text']}" for d, v in ds.corpus.items()}
    for r in recs:
        r.hits = [{"id": d, "score": s, "text": texts[d]} for d, s in zip(r.doc_ids, r.scores)]
    (w,) = m.replay(recs)
    assert w.judged["estimate"] == 0.5 and w.judged["judged"] == seen["args"][0] > 10
    assert seen["args"][1] == seen["args"][2]
    assert 0 <= w.signals["judged_relevance"] <= 1


def test_bad_settings_are_errors_naming_the_fix(ds):
    with pytest.raises(ranklens.InputError, match="duration"):
        Monitor(window="fortnight", windowing=BY_HAND)
    with pytest.raises(ranklens.InputError, match="signals must name signals available here"):
        Monitor(window=10, drift=DriftTests(signals=["ndcg@10"]), windowing=BY_HAND)
    with pytest.raises(ranklens.InputError, match="Recorder"):
        Monitor(object(), windowing=BY_HAND)
    with pytest.raises(ranklens.MetricNameError):
        Monitor(window=10, labels=ds, metrics=["ndgc@10"], windowing=BY_HAND)


def _stream(ds, exporters):
    rng = np.random.default_rng(5)
    m = Monitor(window=200, labels=ds, metrics=["ndcg@10"], windowing=BY_HAND,
                exporters=exporters, name="shop")  # fmt: skip
    m.replay(
        traffic(ds, rng, 400, T0, 1.0, fail=0.05) + traffic(ds, rng, 200, T0 + 400, 1.0, False)
    )
    return m


def test_opentelemetry_points():
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    m = _stream(load(), [OTelExporter(meter_provider=provider)])
    data = reader.get_metrics_data()
    points = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            assert sm.scope.name == "ranklens"
            for metric in sm.metrics:
                points[metric.name] = (metric.unit, list(metric.data.data_points))
    last = m.windows[-1]
    unit, pts = points["ranklens.window.error.ratio"]
    assert unit == "1" and pts[0].value == pytest.approx(last.signals["error_rate"])
    assert pts[0].attributes == {"ranklens.monitor": "shop"}
    unit, pts = points["ranklens.window.metric"]
    assert pts[0].attributes["ranklens.metric"] == "ndcg@10"
    assert pts[0].value == pytest.approx(last.metrics["ndcg@10"])
    _, pts = points["ranklens.window.drift"]
    drift = {p.attributes["ranklens.signal"]: p.value for p in pts}
    assert drift["top_score"] == 1.0 and drift["error_rate"] in (0.0, 1.0)
    unit, pts = points["ranklens.retrieval.duration"]
    assert unit == "s" and sum(p.count for p in pts) == 600
    failed = [p for p in pts if p.attributes.get("error.type") == "TimeoutError"]
    assert failed and failed[0].count == sum(w.counts["errors"] for w in m.windows)
    _, pts = points["ranklens.monitor.retrievals"]
    assert pts[0].value == 600
    _, pts = points["ranklens.window.duration"]
    assert {p.attributes["quantile"] for p in pts} == {0.5, 0.95, 0.99}


def test_prometheus_file_and_endpoint(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    exp = PrometheusExporter(tmp_path / "ranklens.prom", port=0)
    try:
        m = _stream(load(), [exp])
        with urllib.request.urlopen(exp.url, timeout=5) as resp:
            served = resp.read().decode()
        assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    finally:
        m.close()
    assert served == (tmp_path / "ranklens.prom").read_text()
    fams = {f.name: f for f in text_string_to_metric_families(served)}
    last = m.windows[-1]
    (s,) = fams["ranklens_window_error_ratio"].samples
    assert s.value == pytest.approx(last.signals["error_rate"]) and s.labels == {
        "ranklens_monitor": "shop"
    }
    p95 = [s for s in fams["ranklens_window_duration_seconds"].samples
           if s.labels["quantile"] == "0.95"]  # fmt: skip
    assert p95[0].value == pytest.approx(last.signals["latency_p95"] / 1000)
    assert fams["ranklens_monitor_retrievals"].type == "counter"
    assert fams["ranklens_monitor_retrievals"].samples[0].value == 600
    assert {s.labels["ranklens_signal"] for s in fams["ranklens_window_drift"].samples} >= {
        "top_score", "ndcg@10"
    }  # fmt: skip
    assert exp.url is None  # closed with the monitor


def test_mlflow_logs_each_window(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    from ranklens.monitoring import MlflowExporter

    mlflow.set_tracking_uri(tmp_path.as_uri())  # a local file store: no server
    try:
        exp = MlflowExporter(experiment="monitor")
        m = _stream(load(), [exp])
        client = mlflow.tracking.MlflowClient()
        history = client.get_metric_history(exp.run_id, "ndcg_10")
        assert [h.step for h in history] == [0, 1, 2]
        assert history[-1].value == pytest.approx(m.windows[-1].metrics["ndcg@10"])
        drift = client.get_metric_history(exp.run_id, "drift/top_score")
        assert [h.value for h in drift] == [0.0, 1.0]  # tested windows: the second drifted
        assert math.isclose(client.get_run(exp.run_id).data.metrics["monitor/retrievals"], 600)
    finally:
        mlflow.set_tracking_uri(None)
