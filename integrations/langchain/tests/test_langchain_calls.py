"""The package's ``run`` passes ``calls=Calling(...)`` through to the runner."""

from __future__ import annotations

import warnings

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from ranklens_langchain.adapter import run

import ranklens


def test_run_takes_calls_and_does_not_warn(tmp_path):
    chain = RunnableLambda(lambda q: [Document(page_content=q, id=f"doc-{q}")])
    log = tmp_path / "log.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        result = run(chain, {"q1": "a", "q2": "b"},
                     calls=ranklens.Calling(concurrency=2, progress=False, cache=log))  # fmt: skip
    assert list(result.run.to_dict()["q1"]) == ["doc-a"]
    assert log.exists() and result.info["concurrency"] == 2
