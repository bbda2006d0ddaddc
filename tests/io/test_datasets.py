"""Dataset readers on the real copies in ../shared/data, and round trips of the writers."""

from __future__ import annotations

import json

import pytest

import ranklens
from ranklens import Dataset, InputError, read_dataset
from ranklens.io.autorag import normalise_retrieval_gt, read_autorag, read_autorag_run
from ranklens.io.beir import read_beir, write_beir
from ranklens.io.datasets import read_csv_dataset, read_jsonl_dataset, write_jsonl_dataset
from ranklens.io.llamaindex import read_llamaindex_qa, write_llamaindex_qa
from ranklens.io.topics import read_topics

approx = pytest.approx


def test_cranfield_beir_graded(shared):
    ds = read_dataset(shared("cranfield"))
    assert len(ds.queries) == 225 and len(ds.corpus) == 1400
    assert len(ds.qrels.q) == 1837
    assert set(ds.qrels.grade.tolist()) <= {0, 1, 2, 3, 4}
    # a perfect run (the qrels ranked by grade) scores nDCG 1 on every labelled query
    labels = ds.qrels.to_dict()
    perfect = {q: {d: float(g) for d, g in lab.items()} for q, lab in labels.items()}
    ev = ranklens.evaluate(ds.qrels, perfect, ["ndcg@10", "ndcg"])
    has_gain = [i for i, q in enumerate(ev.query_ids) if max(labels[q].values()) > 0]
    assert all(ev.per_query["ndcg"][i] == approx(1.0) for i in has_gain)


def test_scifact_beir_binary(shared):
    ds = read_beir(shared("scifact"), split="test")
    assert len(ds.qrels.query_ids) == 300 and len(ds.qrels.q) == 339
    assert set(ds.qrels.grade.tolist()) == {1}
    assert len(ds.corpus) == 5183
    train = read_beir(shared("scifact"), split="train", corpus=False)
    assert len(train.qrels.q) == 919 and train.corpus is None
    with pytest.raises(InputError, match="no qrels for split 'dev'"):
        read_beir(shared("scifact"), split="dev", corpus=False)


def test_autorag_msmarco_sample(shared):
    ds = read_autorag(shared("autorag_msmarco_sample"))
    assert len(ds.queries) == 1000 and len(ds.corpus) == 2117
    assert ds.qrels.grouped and "0" in ds.queries  # int qids become strings
    groups = ds.qrels.to_groups()
    sizes = [len(g) for g in groups.values()]
    assert sizes.count(1) == 896 and sizes.count(2) == 94 and sizes.count(3) == 7
    assert groups["0"] == [["0_2"]]
    assert ds.info["invalid_gt"] == []


@pytest.mark.parametrize("folder", ["sample_project", "dataset_sample_gen_by_autorag"])
def test_autorag_schema_variants(shared, folder):
    ds = read_autorag(shared("autorag_test_resources", folder))
    assert len(ds.queries) in (10, 20)
    assert all(len(g) == 1 and len(g[0]) == 1 for g in ds.qrels.to_groups().values())
    assert all(d in ds.corpus for d in ds.qrels.doc_ids)


@pytest.mark.parametrize(
    "module", ["lexical_retrieval", "semantic_retrieval", "hybrid_retrieval", "passage_reranker"]
)
def test_autorag_convention_reproduces_autorags_stored_values(shared, module):
    """AutoRAG's own per-query precision/recall/F1 (lists with duplicate ids) are reproduced
    by the autorag convention."""
    import pyarrow.parquet as pq

    res = shared("autorag_test_resources", "result_project_0_retrieval", f"{module}.0.parquet")
    qa = shared("autorag_test_resources", "sample_project", "qa.parquet")
    ds = read_autorag(qa)
    run = read_autorag_run(res, qa)
    ev = ranklens.evaluate(ds.qrels, run, ["P", "recall", "f1"], convention="autorag")
    stored = pq.read_table(res).to_pylist()
    qids = [str(x) for x in pq.read_table(qa).column("qid").to_pylist()]
    for qid, row in zip(qids, stored):
        got = ev.query(qid)
        assert got["P"] == approx(row["retrieval_precision"], abs=1e-12)
        assert got["recall"] == approx(row["retrieval_recall"], abs=1e-12)
        assert got["f1"] == approx(row["retrieval_f1"], abs=1e-12)
    if module == "lexical_retrieval":
        assert ev.counts["duplicates_kept"] > 0  # the lists do repeat ids


def test_autorag_retrieval_gt_shapes():
    assert normalise_retrieval_gt("a", "x") == [["a"]]
    assert normalise_retrieval_gt(["a", "b"], "x") == [["a", "b"]]  # AutoRAG: one OR group
    assert normalise_retrieval_gt([["a"], ["b", "c"]], "x") == [["a"], ["b", "c"]]
    assert normalise_retrieval_gt([], "x") is None
    assert normalise_retrieval_gt([["a"], []], "x") is None
    assert normalise_retrieval_gt([["a", ""]], "x") is None
    with pytest.raises(InputError, match="mixes ids and lists"):
        normalise_retrieval_gt(["a", ["b"]], "x")


def test_llamaindex_qa_dataset(shared, tmp_path):
    ds = read_dataset(shared("llamaindex_finetune_embedding", "val_dataset.json"))
    assert len(ds.queries) == 790 and len(ds.corpus) == 395 and len(ds.qrels.q) == 790
    write_llamaindex_qa(ds, tmp_path / "out.json")
    back = read_llamaindex_qa(tmp_path / "out.json")
    assert back.qrels == ds.qrels and back.queries == ds.queries
    assert json.loads((tmp_path / "out.json").read_text())["mode"] == "text"


def test_llamaindex_errors_name_the_field(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(
        json.dumps({"queries": {"q": "t"}, "corpus": {"n1": "x"}, "relevant_docs": {"q": ["n2"]}})
    )
    with pytest.raises(InputError, match=r"relevant_docs\['q'\] names node 'n2'"):
        read_llamaindex_qa(p)


def test_beir_round_trip_and_errors(tmp_path, shared):
    ds = read_beir(shared("cranfield"))
    write_beir(ds, tmp_path / "copy")
    back = read_beir(tmp_path / "copy")
    assert back.qrels == ds.qrels and back.queries == ds.queries
    (tmp_path / "copy" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t2\n")
    with pytest.raises(InputError, match=r"test.tsv:2: expected 3 tab-separated fields"):
        read_beir(tmp_path / "copy")
    qrels_file = tmp_path / "copy" / "qrels" / "test.tsv"
    qrels_file.write_text("query-id\tcorpus-id\tscore\n1\t9999\t1\n")
    with pytest.raises(InputError, match=r"not in corpus\.jsonl, e\.g\. '9999'"):
        read_beir(tmp_path / "copy")


def test_jsonl_csv_and_pandas_round_trips(tmp_path):
    ds = Dataset(
        {"q1": "what", "q2": "who"},
        ranklens.Qrels.from_groups(
            {"q1": [["a", "b"], ["c"]], "q2": [["d"]]}, {"q1": [2, 1], "q2": [1]}
        ),
    )
    write_jsonl_dataset(ds, tmp_path / "d.jsonl")
    back = read_jsonl_dataset(tmp_path / "d.jsonl")
    assert back.qrels == ds.qrels and back.queries == ds.queries
    df = ds.to_pandas()
    assert list(df.columns) == ["query_id", "query", "group", "doc_id", "grade"]
    again = Dataset.from_pandas(df)
    assert again.qrels == ds.qrels
    df.to_csv(tmp_path / "d.csv", index=False)
    from_csv = read_csv_dataset(tmp_path / "d.csv")
    assert from_csv.qrels == ds.qrels
    (tmp_path / "bad.csv").write_text("query_id,query,doc_id,grade\nq1,x,a,high\n")
    with pytest.raises(InputError, match=r"bad.csv:2: field 'grade' 'high' is not an integer"):
        read_csv_dataset(tmp_path / "bad.csv")


def test_topics(shared, tmp_path):
    topics = read_topics(shared("trec_dl19_passage_bm25", "topics.dl19-passage.txt"))
    assert len(topics) == 43
    (tmp_path / "t.txt").write_text(
        "<top>\n<num> Number: 301\n<title> International Organized "
        "Crime\n<desc> Description:\n...\n</top>\n"
    )
    assert read_topics(tmp_path / "t.txt") == {"301": "International Organized Crime"}


def test_dataset_requires_texts_for_labelled_queries():
    with pytest.raises(InputError, match=r"labelled queries have no text, e\.g\. 'q2'"):
        Dataset({"q1": "x"}, ranklens.Qrels.from_dict({"q1": ["a"], "q2": ["b"]}))
