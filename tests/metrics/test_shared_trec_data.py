"""Real runs with trec_eval 10.0's expected output (../shared/data): every measure printed
there that ranklens implements must match, per query and for "all", to the printed
precision (4 decimals; counts exactly)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

import ranklens
from ranklens.errors import MetricNameError
from ranklens.metrics import parse_metric

NOT_IMPLEMENTED = {"runid", "relstring"}


def read_expected(path: Path) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            out[parts[0].strip()][parts[1].strip()] = parts[2].strip()
    return out


def check(
    qrels: Path, run: Path | ranklens.Run, expected: Path, min_measures: int, **options
) -> None:
    exp = read_expected(expected)
    names = []
    for name in exp:
        try:
            parse_metric(name)
        except MetricNameError:
            assert name in NOT_IMPLEMENTED or name.startswith("relstring"), name
            continue
        names.append(name)
    assert len(names) >= min_measures, names
    ev = ranklens.evaluate(qrels, run, names, **options)
    assert compare_printed(ev, exp) >= min_measures


def compare_printed(ev: ranklens.Evaluation, exp: dict[str, dict[str, str]]) -> int:
    """Every value of ``ev`` equals trec_eval's printed one (4 decimals; counts exactly);
    returns how many were compared."""
    compared = 0
    for name in ev.names:
        for qid, text in exp[name].items():
            got = ev[name] if qid == "all" else ev.query(qid)[name]
            if "." in text:
                assert abs(got - float(text)) <= 5e-5 + 1e-9, (name, qid, got, text)
            else:
                assert round(got) == int(text), (name, qid, got, text)
            compared += 1
    return compared


DL19 = (
    "trec_dl19_passage_bm25",
    "qrels.dl19-passage.txt",
    "run.msmarco-v1-passage.bm25-default.dl19.txt",
)
COVID = (
    "trec_covid_beir_bm25",
    "qrels.beir-v1.0.0-trec-covid.test.txt",
    "run.beir.bm25-flat.trec-covid.txt",
)


@pytest.mark.parametrize(
    ("data", "expected", "options", "min_measures"),
    [
        (DL19, "trec_eval-10.0.q.all_trec.txt", {}, 80),
        (DL19, "trec_eval-10.0.q.l2.all_trec.txt", {"relevance_level": 2}, 80),
        (
            DL19,
            "llm-rankers.run.msmarco-v1-passage.bm25-default.dl19.eval",
            {"relevance_level": 2},
            5,
        ),
        (COVID, "trec_eval-10.0.q.all_trec.txt", {}, 80),
        (COVID, "llm-rankers.run.beir.bm25-flat.trec-covid.eval", {}, 3),
    ],
)
def test_real_bm25_runs(shared, data, expected, options, min_measures):
    folder, qrels, run = data
    d = shared(folder)
    check(d / qrels, d / run, d / "expected" / expected, min_measures=min_measures, **options)


def test_dl19_published_headline_numbers(shared):
    d = shared("trec_dl19_passage_bm25")
    qrels = ranklens.read_qrels(d / "qrels.dl19-passage.txt")
    run = ranklens.read_run(d / "run.msmarco-v1-passage.bm25-default.dl19.txt")
    assert run.name == "Anserini"
    ev = ranklens.evaluate(qrels, run, ["map", "recall_1000"], relevance_level=2)
    assert round(ev["map"], 4) == 0.3013
    assert round(ev["recall_1000"], 4) == 0.7501
    assert round(ranklens.evaluate(qrels, run, ["ndcg@10"])["ndcg@10"], 4) == 0.5058


@pytest.mark.parametrize(
    ("qrels", "run", "expected", "options", "min_measures"),
    [
        ("qrels.test", "results.test", "out.test", {}, 20),
        ("qrels.test.with-comments", "results.test", "out.test", {}, 20),
        ("qrels.test", "results.test", "out.test.a", {}, 80),
        ("qrels.test", "results.test", "out.test.aq", {}, 80),
        # results.trunc lacks a query and has junk after column 6; -c scores it 0
        ("qrels.test", "results.trunc", "out.test.aqc", {}, 80),
        # the same with -M100: each query's first 100 documents in trec_eval's order
        ("qrels.test", "results.trunc", "out.test.aqcM", {"max_docs": 100}, 80),
        # graded qrels with -1 labels, relevance level 2
        ("qrels.rel_level", "results.test", "out.test.aql", {"relevance_level": 2}, 80),
        # real TREC 2024 RAG run: comment lines, '#' inside ids, run-only queries
        ("qrels.comment.test", "results.comment.test", "out.comment.test", {}, 20),
    ],
)
def test_trec_eval_own_test_suite(shared, qrels, run, expected, options, min_measures):
    d = shared("trec_eval_test")
    options = dict(options)
    the_run = d / run
    if "max_docs" in options:
        the_run = ranklens.read_run(the_run).top(options.pop("max_docs"))
    check(d / qrels, the_run, d / expected, min_measures=min_measures, **options)


def test_trec_eval_measure_parameters(shared):
    """out.test.meas_params from the very -m forms trec_eval was given: every measure ranklens
    implements matches under the label trec_eval printed; the others are refused by name,
    never computed with their parameters dropped."""
    from ranklens.metrics import expand_metric_names

    d = shared("trec_eval_test")
    exp = read_expected(d / "out.test.meas_params")
    given = [
        "iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
        "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
        "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "success.2,5,20",
    ]  # fmt: skip
    expanded = expand_metric_names(given)
    names = [m if isinstance(m, str) else m.name for m in expanded]
    assert len(names) == 22 and set(names) == set(exp)
    ev = ranklens.evaluate(d / "qrels.test", d / "results.test", expanded)
    compare_printed(ev, exp)
    for refused in ("utility.2,-1,0", "11pt_avg.x", "ndcg.1=3,x", "map.p=3"):
        with pytest.raises(MetricNameError, match=r"cannot honour|unknown metric"):
            ranklens.evaluate(d / "qrels.test", d / "results.test", [refused])


def test_every_shared_trec_file_is_read_by_the_scanner_as_the_line_parser_reads_it(shared):
    """Real files of many shapes (tab or space separated, padded scores, comment lines,
    extra columns, graded and negative labels): the vectorised scanner reads each one
    itself, to exactly what the line parser reads."""
    from ranklens.io import scan
    from ranklens.io.trec import read_trec_qrels, read_trec_run

    d = shared("trec_eval_test")
    files = [p for p in sorted(d.iterdir()) if p.name.startswith(("qrels", "results"))]
    for folder, q, r in (DL19, COVID):
        files += [shared(folder) / q, shared(folder) / r]
    assert len(files) >= 15
    for p in files:
        qrels = p.name.startswith("qrels")
        spec = (4, 0, [2], [(3, "int")]) if qrels else (6, 0, [2], [(4, "float")])
        assert scan.scan(p, *spec, more_fields=not qrels) is not None, p.name
        reader = read_trec_qrels if qrels else read_trec_run

        def outcome(fast, reader=reader, p=p):
            try:
                got = reader(p, fast=fast)
            except ranklens.InputError as exc:  # qrels.123 judges a document twice
                return str(exc)
            return got.to_dict(), getattr(got, "name", None)

        assert outcome(None) == outcome(False), p.name
