"""The monitoring room's settings in groups (issue 47): ``Monitor(stats=, drift=, judge=,
windowing=)`` and ``interleaving_result(stats=)`` take settings objects; the flat keywords
of 0.2 still work, each warning once with its new spelling; a flat keyword beside its
group's object is an error naming both; windows and alerts are typed records whose
``to_dict()`` is the dict of before and whose tables come as pandas frames."""

from __future__ import annotations

import inspect
import time
import warnings

import numpy as np
import pytest

from ranklens import Retrieval
from ranklens.declared import ParameterError, UnknownParameterError
from ranklens.monitoring import (
    Alert,
    DriftTests,
    ModelJudge,
    Monitor,
    Windowing,
    interleave,
    interleaving_result,
    windows_frame,
)
from ranklens.settings import Calling, Statistics

T0 = 1_800_000_000.0
BY_HAND = Windowing(background=False)
"""No thread: the test flushes (or replays) itself."""
QRELS = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 2}}


def day(n: int = 400, shift: int = 200) -> list[Retrieval]:
    """``n`` retrievals a second apart; from ``shift`` on the top scores fall and the hits
    are ids nobody labelled (a drift the monitor must catch)."""
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        after = i >= shift
        docs = ["x1", "x2"] if after else ["d1", "d2"]
        score = float(rng.normal(5.0 if after else 10.0, 1.0))
        out.append(Retrieval("q1", "the query", docs, [score, score - 1], latency_ms=10.0,
                             started=T0 + i))  # fmt: skip
    return out


def replayed(**kw) -> Monitor:
    if not set(kw) & set(Windowing.__dataclass_fields__):  # none of its flat keywords
        kw.setdefault("windowing", BY_HAND)
    m = Monitor(window=50, labels=QRELS, metrics=["ndcg@10"], **kw)
    m.replay(day())
    return m


# -- settings objects ----------------------------------------------------------------------
def test_the_monitor_takes_settings_objects_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = Monitor(
            window=10,
            stats=Statistics(alpha=0.01, seed=3),
            drift=DriftTests(signals=["latency"], min_samples=20, samples=500, baseline=3),
            judge=ModelJudge(lambda q, p: 1, rate=0.5, depth=2, calls=Calling(timeout=5.0)),
            windowing=Windowing(lateness="10s", history=5, queue_size=20, interval=0.5,
                                background=False),
        )  # fmt: skip
    assert m.stats.alpha == 0.01 and m.stats.seed == 3
    assert m.signals == ["latency"] and m.drift.samples == 500 and m._baseline_windows == 3
    assert m._thread is None  # no background thread
    assert m.judge is not None and m.judge.rate == 0.5 and m.judge.calls.timeout == 5.0
    assert m.lateness == 10.0 and m.windows.maxlen == 5 and m.windowing.queue_size == 20
    m.close()


def test_a_judge_given_as_its_callable_is_its_model_judge():
    def grade(q, p):
        return 1

    m = Monitor(window=10, windowing=BY_HAND, judge=grade)
    assert m.judge == ModelJudge(grade)
    assert m.judge.calls == Calling(concurrency=4, timeout=30.0)


def test_no_public_callable_of_the_room_takes_over_fifteen_parameters():
    for fn in (Monitor.__init__, interleaving_result, DriftTests, ModelJudge, Windowing):
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind is not p.VAR_KEYWORD and p.name != "self"]  # fmt: skip
        assert len(params) <= 15, fn


def test_the_monitor_closes_its_own_windows():
    """No base class made for a line count: what closing a window does is the Monitor's."""
    assert Monitor.__mro__ == (Monitor, object)
    assert callable(Monitor._close) and Alert.__module__ == "ranklens.monitoring.windows"


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: DriftTests(min_samples=50, samples=10), "DriftTests: samples must be at least"),
        (lambda: DriftTests(signals="latency").signals, None),
        (lambda: ModelJudge(print, rate=2), r"ModelJudge: rate must be a finite number in \[0, 1"),
        (lambda: ModelJudge(print, calls={"timeout": 1}), "ModelJudge: calls must be a ranklens.C"),
        (lambda: Windowing(lateness="-1s"), "Windowing: lateness must be"),
        (lambda: Windowing(queue_size=0), "Windowing: queue_size must be"),
        (lambda: Monitor(windowing=BY_HAND, stats={"alpha": 0.1}), "Monitor: stats must be a r"),
        (lambda: Monitor(windowing=BY_HAND, drift=DriftTests), "Monitor: drift must be a ranklens"),
        (lambda: Monitor(windowing=BY_HAND, judge=ModelJudge), "Monitor: judge must be"),
        (lambda: Monitor(windowing=BY_HAND, stats=Statistics(test="t")), r"Monitor: stats\.test"),
        (lambda: Monitor(windowing=BY_HAND, alpah=0.1), "'alpah'; did you mean 'alpha'"),
    ],
)  # fmt: skip
def test_settings_are_checked_when_made(call, match):
    if match is None:
        assert call() == ("latency",)
        return
    with pytest.raises(ParameterError, match=match):
        call()


def test_an_unknown_keyword_is_its_own_error():
    with pytest.raises(UnknownParameterError, match="did you mean 'judge_rate'"):
        Monitor(windowing=BY_HAND, judge_rat=0.1)
    with pytest.raises(UnknownParameterError, match="interleaving_result: no parameter 'alfa'"):
        interleaving_result([], alfa=0.1)


# -- the flat keywords of 0.2 ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("flat", "spelled"),
    [
        ({"alpha": 0.01}, "stats=ranklens.Statistics(alpha=0.01)"),
        ({"seed": 7}, "stats=ranklens.Statistics(seed=7)"),
        ({"min_samples": 20}, "drift=ranklens.DriftTests(min_samples=20)"),
        ({"signals": ["latency"]}, "drift=ranklens.DriftTests(signals=['latency'])"),
        ({"lateness": "10s"}, "windowing=ranklens.Windowing(lateness=10)"),
        ({"queue_size": 5, "history": 3}, "windowing=ranklens.Windowing(queue_size=5, history=3)"),
        ({"background": False}, "windowing=ranklens.Windowing(background=False)"),
        ({"baseline": 2}, "drift=ranklens.DriftTests(baseline=2)"),
        (
            {"judge": print, "judge_rate": 0.5, "judge_timeout": 2},
            "judge=ranklens.ModelJudge(rate=0.5, calls=ranklens.Calling(timeout=2.0))",
        ),
    ],
)
def test_each_flat_keyword_warns_once_with_its_new_spelling(flat, spelled):
    by_hand = {} if set(flat) & set(Windowing.__dataclass_fields__) else {"windowing": BY_HAND}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = Monitor(window=10, **by_hand, **flat)
    m.close()
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
    assert spelled in str(deprecations[0].message), str(deprecations[0].message)
    assert deprecations[0].filename == __file__  # points at the caller's line


FLAT_VALUES = {
    "alpha": 0.01, "seed": 7, "signals": ["latency"], "min_samples": 20, "samples": 100,
    "baseline": 2, "judge_rate": 0.5, "judge_depth": 2, "judge_concurrency": 2,
    "judge_timeout": 2.0, "estimator": lambda judged, both, labels: (0.5, 0.4, 0.6),
    "lateness": "10s", "history": 3, "queue_size": 5, "interval": 0.5, "clock": time.time,
    "background": False,
}  # fmt: skip


def test_every_flat_keyword_of_0_2_is_walked_here():
    from ranklens.monitoring.groups import FLAT

    assert set(FLAT_VALUES) == set(FLAT)


@pytest.mark.parametrize("name", sorted(FLAT_VALUES))
def test_every_flat_keyword_warns_with_its_group_and_field(name):
    from ranklens.monitoring.groups import FLAT

    group, field = FLAT[name]
    kw = {name: FLAT_VALUES[name], **({"judge": print} if group == "judge" else {})}
    if group != "windowing":
        kw["windowing"] = BY_HAND
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = Monitor(window=10, **kw)
    m.close()
    (warned,) = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    message = str(warned.message)
    assert f"{group}=ranklens." in message and f"{field.split('.')[-1]}=" in message, message
    assert warned.filename == __file__
    got = getattr(m, "windowing" if group == "windowing" else group)
    for part in field.split("."):
        got = getattr(got, part)
    expected = FLAT_VALUES[name]
    if name == "lateness":
        expected = 10.0
    elif name == "signals":
        expected = ("latency",)
    assert got == expected or (name == "alpha" and got == pytest.approx(expected))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"stats": Statistics(), "alpha": 0.01}, "both stats= and alpha= were given"),
        ({"drift": DriftTests(), "samples": 100}, "both drift= and samples= were given"),
        ({"judge": ModelJudge(print), "judge_rate": 0.5}, "both judge= and judge_rate= were"),
        ({"windowing": Windowing(), "clock": lambda: 0.0, "lateness": 1},
         "both windowing= and clock, lateness= were given; put them in windowing=Windowing"),
    ],
)  # fmt: skip
def test_a_flat_keyword_beside_its_group_is_an_error_naming_both(kw, match):
    with pytest.raises(ParameterError, match=match):
        Monitor(window=10, **{"windowing": BY_HAND, **kw})


def test_flat_judge_keywords_without_a_judge_warn_that_they_do_nothing():
    with pytest.warns(DeprecationWarning, match="does nothing without a judge"):
        m = Monitor(window=10, windowing=BY_HAND, judge_rate=0.5)
    assert m.judge is None


def test_the_flat_keywords_still_validate_before_they_warn():
    with pytest.raises(ParameterError, match="Monitor: judge_timeout must be"):
        Monitor(windowing=BY_HAND, judge_timeout=-1)


def test_flat_and_grouped_spellings_give_the_same_windows():
    with pytest.warns(DeprecationWarning):
        flat = replayed(
            alpha=0.01, min_samples=20, samples=400, seed=5, lateness=0, background=False
        )
    grouped = replayed(stats=Statistics(alpha=0.01, seed=5),
                       windowing=Windowing(lateness=0, background=False),
                       drift=DriftTests(min_samples=20, samples=400))  # fmt: skip
    assert [w.to_dict() for w in flat.windows] == [w.to_dict() for w in grouped.windows]
    assert flat.alerts and len(flat.alerts) == len(grouped.alerts)


def test_a_baseline_log_given_flat_warns_and_equals_set_baseline():
    log = day(100, shift=100)
    with pytest.warns(DeprecationWarning, match=r"monitor.set_baseline\(records\)") as caught:
        flat = Monitor(window=50, labels=QRELS, metrics=["ndcg@10"], windowing=BY_HAND,
                       baseline=log)  # fmt: skip
    assert caught[0].filename == __file__
    now = Monitor(window=50, labels=QRELS, metrics=["ndcg@10"], windowing=BY_HAND)
    now.set_baseline(log)
    assert flat.baseline is not None and now.baseline is not None
    assert flat.baseline.counts == now.baseline.counts
    assert np.array_equal(flat.baseline.top_score, now.baseline.top_score)
    a, b = flat.replay(day()[200:]), now.replay(day()[200:])
    assert [w.to_dict() for w in a] == [w.to_dict() for w in b] and a[0].alert


def test_interleaving_result_takes_statistics():
    inter = interleave(lambda q, query_id=None: ["d1", "d2"], lambda q, query_id=None: ["d2"],
                       seed=0)  # fmt: skip
    for i in range(40):
        served = inter(f"q{i}", query_id=f"q{i}")
        inter.record_click(served[0])
    new = interleaving_result(inter, stats=Statistics(alpha=0.01, n_resamples=500, seed=1))
    with pytest.warns(DeprecationWarning, match=r"stats=ranklens.Statistics\(alpha=0.01, "):
        old = interleaving_result(inter, alpha=0.01, n_resamples=500, seed=1)
    assert new.to_dict() == old.to_dict() and new.alpha == 0.01
    assert interleaving_result(inter).to_dict() == inter.result().to_dict()
    with pytest.raises(ParameterError, match="both stats= and seed= were given"):
        interleaving_result(inter, stats=Statistics(), seed=1)
    with pytest.raises(ParameterError, match=r"interleaving_result: stats\.test must be"):
        interleaving_result(inter, stats=Statistics(test="t"))


# -- typed records -----------------------------------------------------------------------------
WINDOW_KEYS = ["index", "label", "start", "end", "role", "partial", "counts", "signals",
               "error_types", "metrics", "judged", "drift"]  # fmt: skip
DRIFT_KEYS = ["signal", "test", "value", "baseline", "statistic", "p", "p_adjusted", "drifted",
              "n", "n_baseline"]  # fmt: skip


def test_windows_and_alerts_are_records_with_their_dicts_and_frames():
    m = replayed(drift=DriftTests(min_samples=20, samples=400))
    w = m.windows[-1]
    d = w.to_dict()
    assert list(d) == WINDOW_KEYS  # the dict of 0.2, key for key
    assert d["index"] == w.index and d["role"] == w.role and d["counts"] == w.counts
    assert all(list(x) == DRIFT_KEYS for x in d["drift"].values())
    alert = m.alerts[0]
    assert isinstance(alert, Alert)
    a = alert.to_dict()
    drifted = [x.to_dict() for x in alert.drifted]
    assert a == {"monitor": alert.monitor, "window": alert.window.to_dict(), "drifted": drifted,
                 "message": alert.message}  # fmt: skip
    frame = m.to_pandas()
    assert list(frame["index"]) == [x.index for x in m.windows]
    assert frame.equals(windows_frame(m.windows))
    assert {"label", "role", "alert", "drifted", "error_rate", "ndcg@10"} <= set(frame.columns)
    drifts = alert.to_pandas()
    assert list(drifts["signal"]) == [x.signal for x in alert.drifted]
    assert list(w.to_pandas().columns) == DRIFT_KEYS
