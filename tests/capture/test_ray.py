"""The runner on a real local Ray (ray.init(num_cpus=2)): the same records as the local
backend, errors recorded per query, and an actor killed mid-run replaced and its shard
resumed from its log (no finished query asked again)."""

from __future__ import annotations

import os

import pytest

import ranklens

# before ray is imported: workers run this interpreter, not a `uv run` of their own
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
ray = pytest.importorskip("ray")


def demo_queries(n: int = 60) -> dict[str, str]:
    from ranklens.app.demo_data import load

    ds = load()
    return dict(list(ds.queries.items())[:n])


def make_factory(calls: str | None = None, crash_on: str | None = None, marker: str = ""):
    """A word-overlap retriever over the demo corpus, built once per actor; it appends
    each query it is asked to ``calls``, and exits its process the first time it is asked
    ``crash_on`` (``marker`` records that it did)."""

    def factory():
        from ranklens.app.demo_data import load

        corpus = {d: set((v["title"] + " " + v["text"]).lower().split())
                  for d, v in load().corpus.items()}  # fmt: skip

        def retrieve(query, query_id):
            if calls:
                with open(calls, "a") as f:
                    f.write(query_id + "\n")
            if query_id == crash_on and not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(1)  # the actor's process dies mid-run
            if query_id.endswith("7"):
                raise ValueError(f"no index for {query_id}")
            words = set(query.lower().split())
            scored = sorted(((len(words & t), d) for d, t in corpus.items()), reverse=True)
            return [(d, float(s)) for s, d in scored[:5]]

        return retrieve

    return factory


def summary(result):
    return [(r.query_id, r.doc_ids, r.scores, (r.error or {}).get("type")) for r in result.records]


def test_the_ray_backend_gives_the_local_records(local_ray):
    queries = demo_queries()
    factory = make_factory()
    local = ranklens.run_retriever(factory(), queries, k=5, progress=False)
    with pytest.warns(ranklens.RunFailuresWarning):
        on_ray = ranklens.run_retriever(None, queries, backend="ray", retriever_factory=factory,
                              actors=2, k=5)  # fmt: skip
    assert summary(on_ray) == summary(local)
    assert on_ray.info["backend"] == "ray" and on_ray.info["shards"] == 8
    failed = [r for r in on_ray.records if not r.ok]
    assert failed and all(r.error["type"] == "ValueError" for r in failed)
    with pytest.raises(ranklens.InputError, match="backend must be"):
        ranklens.run_retriever(None, queries, backend="spark", retriever_factory=factory)


def test_a_killed_actor_is_replaced_and_its_shard_resumed(local_ray, tmp_path):
    queries = demo_queries(40)
    calls = tmp_path / "calls.txt"
    factory = make_factory(str(calls), crash_on="q12", marker=str(tmp_path / "crashed"))
    with pytest.warns(ranklens.RunFailuresWarning):
        result = ranklens.run_retriever(None, queries, backend="ray", retriever_factory=factory,
                                        actors=2, shards=4, concurrency=1,
                                        cache=tmp_path / "logs", k=5)  # fmt: skip
    assert (tmp_path / "crashed").exists() and result.info["actor_restarts"] == 1
    reference = ranklens.run_retriever(make_factory()(), queries, k=5, progress=False)
    assert summary(result) == summary(reference)  # as if uninterrupted
    asked = calls.read_text().split()
    assert sorted(set(asked)) == sorted(queries)
    twice = {q for q in asked if asked.count(q) > 1}
    assert twice == {"q12"}  # only the query in flight when the actor died
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [
        f"shard-{i:04d}.jsonl" for i in range(4)
    ]
    # run again: every shard resumes from its log, nothing is asked
    calls.write_text("")
    with pytest.warns(ranklens.RunFailuresWarning):
        again = ranklens.run_retriever(None, queries, backend="ray", retriever_factory=factory,
                                       actors=2, shards=4, concurrency=1,
                                       cache=tmp_path / "logs", k=5,
                                       retry_failed=False)  # fmt: skip
    assert summary(again) == summary(reference) and calls.read_text() == ""
