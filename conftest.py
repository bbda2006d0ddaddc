"""Fixtures for every test folder (core and integrations): ../shared/data, skipped when absent."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parent.parent / "shared" / "data"


def shared(*parts: str) -> Path:
    """A path under ../shared/data; the test is skipped when that folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {'/'.join(parts)}")
    return path


@pytest.fixture(name="shared")
def shared_fixture():
    """The :func:`shared` path helper (skips when ../shared/data is absent)."""
    return shared


@pytest.fixture(scope="session")
def cranfield():
    """Cranfield (BEIR layout, graded): 1400 documents, 225 queries."""
    from ranklens import read_dataset

    return read_dataset(shared("cranfield"))


@pytest.fixture(scope="session")
def scifact_slice():
    """A SciFact slice: 60 labelled queries and 280 passages (every labelled one included)."""
    from ranklens import read_dataset

    return read_dataset(shared("scifact")).sample(60, 280, seed=0)


def pytrec_per_query(qrels, run_path, measures):
    """trec_eval's own per-query values (pytrec_eval) of a TREC run file."""
    import pytrec_eval

    from ranklens import read_run

    run = read_run(run_path).to_dict()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), set(measures))
    return evaluator.evaluate(run)


@pytest.fixture(name="assert_equals_trec_eval")
def assert_equals_trec_eval_fixture():
    """:func:`assert_equals_trec_eval`, for test folders that cannot import this module."""
    return assert_equals_trec_eval


def assert_equals_trec_eval(result, dataset, tmp_path):
    """Evaluating a runner's result with ranklens equals pytrec_eval on the exported run."""
    measures = {"map": "map", "ndcg_cut_10": "ndcg@10", "recall_100": "recall@100", "P_10": "P@10"}
    path = tmp_path / f"{result.name}.run"
    result.to_trec(path)
    ours = result.evaluate(dataset.qrels, list(measures.values()))
    theirs = pytrec_per_query(dataset.qrels, path, measures)
    answered = {r.query_id for r in result.records if r.ok}
    assert answered, "the retriever answered no query"
    for i, q in enumerate(ours.query_ids):
        for trec_name, name in measures.items():
            expected = theirs[q][trec_name] if q in theirs else 0.0
            assert abs(ours.per_query[name][i] - expected) < 1e-9, (q, name)
    return ours
