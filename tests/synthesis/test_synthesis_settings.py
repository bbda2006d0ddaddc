"""synthesize takes how the generator is called as ``calls=Calling(...)``; the flat keywords
still work for one release with one DeprecationWarning showing the new spelling, and beside
``calls=`` are an error naming both. Provenance rows and check findings are records whose
``to_dict()`` is exactly the data of ranklens 0.2 (``records_0_2.json``)."""

from __future__ import annotations

import inspect
import json
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

import ranklens
from ranklens.app.demo_data import load
from ranklens.declared import ParameterError
from ranklens.labelling.judges import CALLS
from ranklens.synthesis import Finding, OfflineGenerator, ProvenanceRow, check_dataset, synthesize

OLD = json.loads((Path(__file__).parent / "records_0_2.json").read_text(encoding="utf-8"))
QUIET = replace(CALLS, progress=False)


@pytest.fixture(scope="module")
def made():
    demo = load()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new spelling warns nothing
        syn = synthesize(demo, OfflineGenerator(), n=12, calls=QUIET)
        check = check_dataset(syn.dataset, attach=False)
    return demo, syn, check


def test_provenance_and_findings_to_dict_are_the_old_dicts(made):
    _, syn, check = made
    assert [r.to_dict() for r in syn.provenance] == OLD["provenance"]
    assert [r.to_json() for r in syn.provenance] == OLD["provenance"]
    assert json.loads(json.dumps(check.to_dict())) == OLD["check"]
    assert all(isinstance(r, ProvenanceRow) for r in syn.provenance)
    assert all(isinstance(f, Finding) for f in check.findings)
    assert [f.to_dict() for f in check.findings] == OLD["check"]["findings"]


def test_tables_of_records(made):
    _, syn, check = made
    frame = syn.provenance.to_pandas()
    assert len(frame) == len(syn.provenance) and "status" in frame.columns
    found = check.to_pandas()
    assert list(found.columns) == ["kind", "query", "details"]
    assert len(found) == sum(len(f.queries) for f in check.findings)


def test_flat_keywords_warn_once_with_the_new_spelling(made, tmp_path):
    demo, syn, _ = made
    log = tmp_path / "gen.jsonl"
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        flat = synthesize(demo, OfflineGenerator(), n=12, concurrency=2, progress=False, cache=log)
    messages = [str(w.message) for w in record if issubclass(w.category, DeprecationWarning)]
    assert len(messages) == 1, messages
    assert "synthesize(concurrency=, progress=, cache=...) is deprecated" in messages[0]
    assert "calls=ranklens.Calling(concurrency=2, progress=False, cache=" in messages[0]
    assert log.exists() and flat.counts == syn.counts


def test_calls_are_taken_and_checked(made, tmp_path):
    demo, syn, _ = made
    log = tmp_path / "gen.jsonl"
    again = synthesize(demo, OfflineGenerator(), n=12, calls=replace(QUIET, cache=log))
    assert log.exists() and again.counts == syn.counts
    resumed = synthesize(demo, OfflineGenerator(), n=12, calls=replace(QUIET, cache=log))
    assert resumed.info["resumed"] == resumed.info["passages"] and resumed.info["calls"] == 0
    with pytest.raises(ParameterError, match=r"both calls= and retries= were given"):
        synthesize(demo, OfflineGenerator(), calls=QUIET, retries=1)
    with pytest.raises(ParameterError, match="synthesize: timeout must be"):
        synthesize(demo, OfflineGenerator(), timeout=-1)
    with pytest.raises(ParameterError, match="did you mean 'backoff'"):
        synthesize(demo, OfflineGenerator(), backof=1.0)


def test_synthesize_takes_at_most_fifteen_parameters():
    params = inspect.signature(inspect.unwrap(ranklens.synthesize)).parameters.values()
    assert len([p for p in params if p.kind is not p.VAR_KEYWORD]) <= 15
