"""The label pairs and retrieved pairs estimate reads from columns at once equal what the
plain dict forms give (Qrels.to_dict, Run.to_lists), on generated labels and runs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens import Dataset, Qrels, Run
from ranklens.estimation.inputs import doc_grades, label_pairs
from ranklens.estimation.labels import top_keys

labels = st.dictionaries(
    st.sampled_from([f"q{i}" for i in range(6)]),
    st.dictionaries(st.sampled_from([f"d{i}" for i in range(25)]), st.integers(-1, 3),
                    max_size=8),
    max_size=6,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(labels)
def test_label_pairs_are_to_dicts_pairs(lab):
    qrels = Qrels.from_dict(lab)
    want = {(q, d): g for q, docs in qrels.to_dict().items() for d, g in docs.items()}
    assert label_pairs(qrels) == want
    assert set(doc_grades(qrels).tolist()) == set(want.values())


@given(st.integers(-1, 3), st.integers(-1, 3))
def test_label_pairs_of_grouped_labels_take_a_documents_highest_group(first, second):
    qrels = Qrels.from_groups({"q1": [["a", "b"], ["b", "c"]]}, {"q1": [first, second]})
    want = {(q, d): g for q, docs in qrels.to_dict().items() for d, g in docs.items()}
    assert label_pairs(qrels) == want


runs = st.dictionaries(
    st.sampled_from([f"q{i}" for i in range(6)]),
    st.dictionaries(st.sampled_from([f"d{i}" for i in range(30)]),
                    st.integers(0, 5).map(float), min_size=1, max_size=12),
    max_size=6,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(runs, min_size=1, max_size=3), st.integers(1, 8))
def test_top_keys_are_every_runs_top_ranks(given_runs, depth):
    ds = Dataset(queries={f"q{i}": "text" for i in range(0, 6, 2)} | {"q1": "x"},
                 qrels=Qrels.from_dict({"q0": {"d0": 1}}))  # fmt: skip
    by_name = {f"r{i}": Run.from_dict(r, name=f"r{i}") for i, r in enumerate(given_runs)}
    want: dict[tuple[str, str], dict[str, int]] = {}
    for name, run in by_name.items():
        for q, docs in run.to_lists().items():  # ranking order, ties as the run orders them
            if q in ds.queries:
                for rank, d in enumerate(docs[:depth], 1):
                    want.setdefault((q, d), {})[name] = rank
    assert top_keys(ds, by_name, depth) == want
