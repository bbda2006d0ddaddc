"""The model's public constructors check their non-data parameters by declaration: a run's
or a dataset's name, a dataset's info, corpus and queries."""

from __future__ import annotations

import pytest

from ranklens import Dataset, Run
from ranklens.declared import ParameterError


@pytest.mark.parametrize("name", [3, "", "   ", ["a"], None])
@pytest.mark.parametrize(
    "make",
    [
        lambda name: Run.from_dict({"q": ["a"]}, name=name),
        lambda name: Run.from_chunks({"q": [{"doc_id": "d", "start": 0, "end": 2}]}, name=name),
    ],
)
def test_a_run_name_that_is_no_name_is_refused(make, name):
    with pytest.raises(ParameterError, match=r"^Run\.from_\w+: name must be a non-empty text"):
        make(name)


@pytest.mark.parametrize("name", [3, "", ["a"]])
def test_coerce_refuses_a_bad_name(name):
    with pytest.raises(ParameterError, match=r"^Run\.coerce: name must be"):
        Run.coerce({"q": ["a"]}, name=name)


@pytest.mark.parametrize("ranked", ["yes", 1, None])
def test_from_chunks_refuses_a_ranked_that_is_no_flag(ranked):
    with pytest.raises(ParameterError, match=r"^Run\.from_chunks: ranked must be True or False"):
        Run.from_chunks({"q": [{"doc_id": "d", "start": 0, "end": 2}]}, ranked=ranked)


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"name": None}, "name"), ({"name": ""}, "name"), ({"name": 3}, "name"),
        ({"info": "x"}, "info"),
        ({"corpus": ["d1"]}, "corpus"), ({"corpus": "d1"}, "corpus"),
        ({"queries": "what is x"}, "queries"),
    ],
)  # fmt: skip
def test_a_dataset_names_a_bad_parameter(kwargs, param):
    args = {"queries": {"q": "x"}, "qrels": {"q": ["a"]}, **kwargs}
    with pytest.raises(ParameterError, match=rf"^Dataset: {param} must be"):
        Dataset(**args)


def test_good_values_keep_working():
    assert Run.from_dict({"q": ["a"]}, name="bm25").name == "bm25"
    assert Run.coerce({"q": ["a"]}).name == "run"
    ds = Dataset({"q": "x"}, {"q": ["a"]}, corpus={"a": {"text": "t"}}, name="d", info={})
    assert len(ds) == 1
