"""Fusing runs of chunks keeps each chunk's place (source document and character range), so
span labels judge the fused run: its evidence metrics equal those computed by hand from the
fused ranking and the chunks' ranges."""

from __future__ import annotations

import re

import pytest

import ranklens
import ranklens.declared
from ranklens import Run, SpanLabels

TEXTS = {"A": "x" * 100, "B": "y" * 80}
LABELS = SpanLabels.from_spans(
    {
        "q1": [{"doc_id": "A", "start": 10, "end": 30}, {"doc_id": "B", "start": 0, "end": 20}],
        "q2": [{"doc_id": "B", "start": 50, "end": 70}],
    },
    TEXTS,
)
CHUNKS = {  # chunk id -> (document, start, end)
    "A0": ("A", 0, 25), "A1": ("A", 25, 50), "A2": ("A", 50, 100),
    "B0": ("B", 0, 40), "B1": ("B", 40, 80),
}  # fmt: skip
BM25 = {"q1": {"A0": 3.0, "A2": 2.0, "B1": 1.0}, "q2": {"B1": 2.0, "A0": 1.0}}
DENSE = {"q1": {"B0": 0.9, "A1": 0.8, "A0": 0.1}, "q2": {"A2": 0.7, "B1": 0.6}}


def chunk_run(scores: dict[str, dict[str, float]], name: str) -> Run:
    return Run.from_chunks(
        {
            q: [
                {
                    "id": c,
                    "doc_id": CHUNKS[c][0],
                    "start": CHUNKS[c][1],
                    "end": CHUNKS[c][2],
                    "score": s,
                }
                for c, s in hits.items()
            ]
            for q, hits in scores.items()
        },
        name=name,
    )


def by_hand(ranking: list[str], spans: list[tuple[str, int, int]], k: int) -> dict[str, float]:
    """Evidence recall, precision and IoU at k from the chunks' ranges, character by
    character (Chroma's definitions)."""
    evidence = {(d, i) for d, a, b in spans for i in range(a, b)}
    read, covered = 0, set()
    for c in ranking[:k]:
        d, a, b = CHUNKS[c]
        read += b - a
        covered |= {(d, i) for i in range(a, b)} & evidence
    return {
        f"evidence_recall@{k}": len(covered) / len(evidence),
        f"evidence_precision@{k}": len(covered) / read,
        f"evidence_iou@{k}": len(covered) / (read + len(evidence) - len(covered)),
    }


@pytest.mark.parametrize(
    ("method", "norm"),
    [("rrf", None), ("wsum", "min-max"), ("combmnz", "max"), ("bordafuse", None)],
)
def test_a_fused_run_of_chunks_keeps_their_places(method, norm):
    fused = ranklens.fuse({"bm25": chunk_run(BM25, "bm25"), "dense": chunk_run(DENSE, "dense")},
                          method, norm)  # fmt: skip
    assert fused.spans is not None
    k = 3
    metrics = [f"evidence_recall@{k}", f"evidence_precision@{k}", f"evidence_iou@{k}"]
    ev = ranklens.evaluate(LABELS, fused, metrics)
    ranked = fused.to_lists()
    spans = {q: [(r["doc_id"], r["start"], r["end"]) for r in LABELS.span_records()
                 if r["query_id"] == q] for q in ("q1", "q2")}  # fmt: skip
    for i, q in enumerate(ev.query_ids):
        want = by_hand(ranked[q], spans[q], k)
        for m in metrics:
            assert ev.per_query[m][i] == pytest.approx(want[m], abs=1e-12), (q, m)


def test_a_run_of_documents_fused_with_chunks_stands_for_whole_documents():
    docs = {"q1": {"A": 1.0}, "q2": {"B": 1.0}}
    fused = ranklens.fuse({"chunks": chunk_run(BM25, "bm25"), "docs": docs}, "rrf")
    assert fused.spans is not None
    rows = dict(zip(fused.docs.strings(range(len(fused.score))), fused.spans.doc.tolist()))
    assert rows["A"] == "A" and rows["A0"] == "A" and rows["B1"] == "B"


def test_fused_runs_of_documents_carry_no_places():
    assert ranklens.fuse({"a": BM25, "b": DENSE}).spans is None


RUNS = {"bm25": BM25, "dense": DENSE}
BAD_FUSE = [
    ("method", "rff"), ("method", 3), ("method", ["rrf"]), ("norm", "minmax"), ("norm", 1),
    ("weights", [1.0, float("nan")]), ("weights", [1.0, float("inf")]), ("weights", [1.0, -1]),
    ("weights", "ab"), ("weights", []), ("weights", {"bm25": "1", "dense": 1}),
    ("weights", [True, 1]), ("name", ""), ("name", 3),
]  # fmt: skip


@pytest.mark.parametrize(("param", "value"), BAD_FUSE)
def test_a_bad_fusion_setting_is_named_before_any_work(param, value):
    with pytest.raises(ranklens.declared.ParameterError, match=rf"^fuse: {param} must be"):
        ranklens.fuse(RUNS, **{"method": "wsum", param: value})


@pytest.mark.parametrize(
    ("param", "value"),
    [("folds", 1), ("folds", 2.5), ("folds", float("nan")), ("seed", -1), ("seed", "0"),
     ("method", "wsun"), ("metric", ""), ("metric", ["P@1"]), ("test", "tt"),
     ("n_resamples", 0), ("norm", "l2")],
)  # fmt: skip
def test_a_bad_tuning_setting_is_named_before_any_work(param, value):
    with pytest.raises(ranklens.declared.ParameterError, match=rf"^tune_fusion: {param} must"):
        ranklens.tune_fusion({"q1": {"A0": 1}}, RUNS, **{param: value})


@pytest.mark.parametrize(
    ("args", "param"),
    [((0,), "n_runs"), ((2.5,), "n_runs"), ((2, 0), "step"), ((2, float("nan")), "step"),
     ((2, 1.5), "step"), ((2, 0.3), "step"), (("2",), "n_runs")],
)  # fmt: skip
def test_a_bad_weight_grid_is_named(args, param):
    with pytest.raises(ranklens.declared.ParameterError, match=rf"^weight_grid: {param} must"):
        ranklens.weight_grid(*args)


def test_methods_keep_their_spellings():
    a, b = {"q": {"x": 3.0, "y": 2.0}}, {"q": {"y": 5.0, "z": 1.0}}
    assert (
        ranklens.fuse({"a": a, "b": b}, "RRF").to_dict()
        == ranklens.fuse({"a": a, "b": b}, "reciprocal_rank").to_dict()
    )


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["fuse", "a", "b", "--method", "rff"], "--method"),
        (["fuse", "a", "b", "--norm", "minmax"], "--norm"),
        (["tune-fusion", "q", "a", "b", "--folds", "1"], "--folds"),
        (["tune-fusion", "q", "a", "b", "--folds", "nan"], "--folds"),
        (["tune-fusion", "q", "a", "b", "--seed", "-1"], "--seed"),
        (["tune-fusion", "q", "a", "b", "--step", "nan"], "--step"),
        (["tune-fusion", "q", "a", "b", "--step", "0"], "--step"),
        (["tune-fusion", "q", "a", "b", "--test", "tt"], "--test"),
    ],
)
def test_the_fusion_commands_check_their_flags_by_the_declarations(argv, flag, capsys):
    from ranklens.app.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and f"argument {flag}: must be" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("rrf", {"k": -60}, "fuse: k must be a finite number >= 0"),
        ("rrf", {"k": "60"}, "fuse: k must be a finite number"),
        ("rrf", {"kk": 60}, "did you mean 'k'"),
        ("wsum", {"k": 60}, "wsum takes no parameter 'k' (k is a parameter of rrf)"),
        ("rbc", {"phi": 1}, "fuse: phi must be a finite number in (0, 1)"),
        ("logn_isr", {"sigma": 0}, "fuse: sigma must be"),
        ("gmnz", {"gamma": float("nan")}, "fuse: gamma must be a finite number"),
        ("langchain", {"c": -1}, "fuse: c must be"),
    ],
)
def test_a_method_parameter_is_checked_and_never_ignored(method, params, message):
    with pytest.raises(ranklens.declared.ParameterError, match=re.escape(message)):
        ranklens.fuse(RUNS, method, **params)


@pytest.mark.parametrize("runs", ["bm25.run", b"x", 3, None])
def test_runs_that_are_no_collection_are_refused(runs):
    with pytest.raises(ranklens.declared.ParameterError, match=r"^fuse: runs must be"):
        ranklens.fuse(runs)


@pytest.mark.parametrize(
    ("grid", "message"),
    [({"k": "60"}, "grid['k'] must be a list"), ({"kk": [1, 2]}, "did you mean 'k'"),
     ([], "at least one setting"), ("k=60", "grid must be"), ([3], "must be a dict")],
)  # fmt: skip
def test_a_bad_tuning_grid_is_named(grid, message):
    with pytest.raises(ranklens.declared.ParameterError, match=re.escape(message)):
        ranklens.tune_fusion({"q1": {"A0": 1}}, RUNS, "rrf", grid=grid)
