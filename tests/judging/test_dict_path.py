"""Every in-memory form a user passes (``{q: {doc: score}}``, ``[(doc, score), ...]``,
``[doc, ...]``, forms mixed per query, labels as dicts or lists, a pandas DataFrame) gives
what the same rows give as interned columns (``Qrels.from_arrays``/``Run.from_arrays``),
to the last bit: per-query values, means, counts, notes and every error, with ties in any
order, float32 scores, missing and unlabelled queries, empty lists, repeated documents
under every convention, integer ids, ids of many byte lengths (newlines and zero bytes
too), and NaN, infinite or non-numeric scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Qrels, Run
from ranklens.errors import InputError
from ranklens.judging import JudgeOptions
from ranklens.judging.dict_join import join_dicts
from ranklens.model import native as native_mod

METRICS = [
    "P@3", "recall@5", "map", "map@3", "ndcg@5", "ndcg", "rr", "rprec", "bpref", "err@5",
    "rbp", "judged@5", "unj_5", "num_rel_ret", "iprec_at_recall_0.50", "11pt_avg",
    "success@1", "set_F", "ndcg_exp@3", "P(rel=2)@5",
]  # fmt: skip
# ids around the 8-byte words the hash and the tie order read, and odd ones
DOCS = ["d1", "d10", "D1", "z", "ab" * 4, "ab" * 4 + "c", "x" * 17, "é", "7067032", "a\nb",
        "n\0", "n"]  # fmt: skip
# scores and grades: Python's numbers and numpy's scalars, as retrievers give them
SCORES = [0.0, 0.5, 1.0, 1.0 + 1e-9, 2.0, -1.0, 3, np.float32(0.5), np.float32(1.0 + 1e-7),
          np.float64(2.0), np.int64(3), np.float16(-1)]  # fmt: skip
GRADES = st.integers(-1, 3) | st.integers(-1, 3).map(np.int64) | st.integers(0, 3).map(np.int8)
QUERIES = ["a", "b", "c", "d", "e", "é"]


@st.composite
def labels(draw):
    """``{q: {doc: grade}}`` or ``{q: [doc, ...]}`` (lists may repeat a document)."""
    qids = draw(st.lists(st.sampled_from(QUERIES[:5]), min_size=1, max_size=4, unique=True))
    if draw(st.booleans()):
        return {q: draw(st.dictionaries(st.sampled_from(DOCS), GRADES, max_size=7))
                for q in qids}  # fmt: skip
    return {q: draw(st.lists(st.sampled_from(DOCS), max_size=5)) for q in qids}


@st.composite
def hits(draw, form):
    docs = draw(st.lists(st.sampled_from(DOCS), max_size=9, unique=form != "repeats"))
    scores = [draw(st.sampled_from(SCORES)) for _ in docs]
    if draw(st.booleans()):  # most runs come in score order (ties in any order)
        order = sorted(range(len(docs)), key=lambda i: -scores[i])
        docs, scores = [docs[i] for i in order], [scores[i] for i in order]
    if form == "scores":
        return dict(zip(docs, scores))
    if form in ("pairs", "repeats"):
        return list(zip(docs, scores))
    return docs


@st.composite
def case(draw):
    qrels = draw(labels())
    forms = draw(st.sampled_from(["scores", "pairs", "ranked", "repeats", "mixed"]))
    run = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), max_size=5, unique=True)):
        form = draw(st.sampled_from(["scores", "pairs", "ranked"])) if forms == "mixed" else forms
        run[q] = draw(hits(form))
    return qrels, run


def label_rows(qrels):
    """``(query, doc, grade)`` rows of labels given as dicts or lists (grade 1)."""
    out = []
    for q, lab in qrels.items():
        pairs = lab.items() if isinstance(lab, dict) else ((d, 1) for d in lab)
        out += [(q, d, g) for d, g in pairs]
    return out


def hit_rows(run):
    """``(query, doc, score)`` rows of a run in any form (a ranked list scores 0, -1, ...)."""
    out = []
    for q, h in run.items():
        if isinstance(h, dict):
            items = list(h.items())
        elif h and isinstance(h[0], tuple):
            items = list(h)
        else:  # a ranked list: 0, -1, -2, ... keep its order
            items = [(d, -float(j)) for j, d in enumerate(h)]
        out += [(q, d, s) for d, s in items]
    return out


def one_list_form(qrels, run):
    """Whether every query's hits are a list of one form (ranked ids, or pairs), the same
    for all, with no document twice, and no labels list a document twice."""
    if not run or not all(type(h) is list for h in run.values()):
        return False
    forms = {isinstance(h[0], tuple) for h in run.values() if h}
    if len(forms) > 1:
        return False
    for h in run.values():
        ids = [d[0] if isinstance(d, tuple) else d for d in h]
        if len(set(ids)) < len(ids) or any(isinstance(d, tuple) != (True in forms) for d in h):
            return False
    return all(isinstance(lab, dict) or len(set(lab)) == len(lab) for lab in qrels.values())


def interned(qrels, run):
    """The same rows as interned columns: what every form must give."""
    rows = label_rows(qrels)
    Q = Qrels.from_arrays(
        [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
        empty_queries=[q for q, lab in qrels.items() if not lab],
    )  # fmt: skip
    rows = hit_rows(run)
    qs, ds, sc = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
    scored = any(isinstance(h, dict) or (h and isinstance(h[0], tuple)) for h in run.values())
    R = Run.from_arrays(qs, ds, sc if scored else None,
                        empty_queries=[q for q, h in run.items() if not h])  # fmt: skip
    assert Q.docs.interned and R.docs.interned
    return Q, R


def outcome(qrels, run, **opts):
    """Everything an evaluation shows, or the error it raises."""
    try:
        ev = ranklens.evaluate(qrels, run, METRICS, **opts)
    except InputError as exc:
        return ("error", type(exc).__name__, str(exc))
    return (
        ev.query_ids,
        ev.counts,
        ev.notes(),
        {m: ev.per_query[m].tobytes() for m in METRICS},  # to the last bit
        {m: ev.aggregate[m] for m in METRICS},
    )


OPTIONS = st.fixed_dictionaries({
    "relevance_level": st.sampled_from([1, 2]),
    "missing": st.sampled_from(["zero", "skip"]),
    "score_precision": st.sampled_from(["float64", "float32"]),
    "no_relevant": st.sampled_from(["zero", "skip"]),
    "ties": st.sampled_from(["trec", "input"]),
    "duplicates": st.sampled_from(["error", "first", "count", "redundant"]),
})  # fmt: skip


@pytest.fixture(params=["C", "numpy"])
def reader(request, monkeypatch):
    """The dict join both ways: with the compiled helpers (ranklens-native, when built)
    and with numpy alone."""
    if request.param == "C":
        if native_mod.NATIVE is None:
            pytest.skip("ranklens-native is not built here (no C compiler)")
    else:
        monkeypatch.setattr(native_mod, "NATIVE", None)
    return request.param


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(c=case(), opts=OPTIONS)
def test_every_form_equals_interned_columns(reader, c, opts):
    qrels, run = c
    try:
        Q, R = interned(qrels, run)
    except InputError as exc:  # refused as columns: refused as they are, the same way
        assert outcome(qrels, run, **opts) == ("error", type(exc).__name__, str(exc))
        return
    want = outcome(Q, R, **opts)
    assert outcome(qrels, run, **opts) == want
    if all(type(h) is dict for h in run.values()) and want[0] != "error":
        # a run of dicts is joined on its own dicts (zero characters in ids too)
        assert join_dicts(qrels, run, JudgeOptions.build(**opts)) is not None
    elif reader == "C" and want[0] != "error" and one_list_form(qrels, run):
        # ranked lists, or lists of pairs, joined on their own lists by the C helpers
        assert join_dicts(qrels, run, JudgeOptions.build(**opts)) is not None
    assert outcome(Qrels.from_dict(qrels), Run.from_dict(run), **opts) == want
    assert outcome(Qrels.from_dict(qrels), R, **opts) == want  # packed labels, codes
    assert outcome(Q, Run.from_dict(run), **opts) == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case(), st.sampled_from(["float64", "float32"]))
def test_a_data_frame_equals_its_rows(c, precision):
    """A run (and labels) as a pandas DataFrame: the same numbers as the rows in columns."""
    pd = pytest.importorskip("pandas")
    qrels, run = c
    rows = hit_rows(run)
    if not rows:
        return
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    R = Run.from_arrays(frame["query_id"].tolist(), frame["doc_id"].tolist(),
                        frame["score"].astype(float).tolist())  # fmt: skip
    try:
        Q = interned(qrels, {})[0]
    except InputError:  # labels listing a document twice: the test above
        return
    opts = {"score_precision": precision, "duplicates": "first"}
    assert outcome(Q, frame, **opts) == outcome(Q, R, **opts)
    labelled = [(q, d, g) for q, lab in qrels.items() if isinstance(lab, dict)
                for d, g in lab.items()]  # fmt: skip
    if labelled:
        lab_frame = pd.DataFrame(labelled, columns=["query_id", "doc_id", "grade"])
        Ql = Qrels.from_arrays(*map(list, zip(*labelled)))
        assert outcome(lab_frame, frame, **opts) == outcome(Ql, R, **opts)


@pytest.mark.parametrize(
    ("qrels", "run", "expect"),
    [
        ({"q": {1: 1}}, {"q": {1: 1.0}}, "converted"),  # integer ids: converted
        ({"q": {"1": 1}}, {"q": {"a": 2.0, 1: 1.0}}, "converted"),  # an integer id after a string
        ({1: {"a": 1}}, {1: {"a": 1.0}}, "converted"),  # integer query ids
        ({"q": {"a": 1.0}}, {"q": {"a": 1.0}}, "converted"),  # an integral float grade
        ({"q": {"a": 1}}, {"q": {"a": True, "b": 0.5}}, "same"),  # a bool among floats
        ({"q": {"a": 1}}, {"q": {"a": float("nan")}}, "refused"),
        ({"q": {"a": 1}}, {"q": {"a": float("inf")}}, "refused"),
        ({"q": {"a": 1}}, {"q": {"a": "0.5"}}, "refused"),  # a string score
        ({"q": {"a": 1}}, {"q": [("a", "0.5")]}, "refused"),
        ({"q": {"a": 1}}, {"q": [("a", np.bool_(True)), ("b", 0.5)]}, "refused"),
        ({"q": {"a": 1}}, {"q": {"a": None, "b": 1.0}}, "refused"),
        ({"q": {"a": 1}}, {"q": {"a": 1.0, None: 0.5}}, "refused"),  # a None id
        ({"q": {"a": 1}}, {"q": {"a": 1.0, "": 0.5}}, "refused"),  # an empty id
        ({"q": {"a": 1}}, {"q": ["a", ("b", 1.0)]}, "refused"),  # a pair after a plain id
        ({"q": {"a": 1}}, {"q": [("a", 1.0), "b"]}, "refused"),  # a plain id after a pair
        ({"q": {"a": 1}}, {"q": [("a", 1.0, 2)]}, "refused"),  # not a pair
        ({"q": ["a", "a"]}, {"q": ["a"]}, "refused"),  # a document labelled twice
        ({"q": {"a": 1}}, {"q": ["a", "a"]}, "refused"),  # retrieved twice (duplicates="error")
        ({"q": {"a": 1}}, {"q": "a"}, "refused"),  # a string for hits
        ({"q": {"a": 1}}, {"": {"a": 1.0}}, "refused"),  # an empty query id
    ],
)
def test_what_the_columns_convert_or_refuse_every_form_does_too(qrels, run, expect):
    """The readers of :mod:`ranklens.model.mappings` step aside for these, and the general
    readers convert them (then equal to interned columns); what no reader takes is refused
    with an error naming it, in every form."""
    from ranklens.model.mappings import label_columns, run_columns

    if expect == "converted":
        assert label_columns(qrels) is None or run_columns(run) is None
    got = outcome(qrels, run)
    if expect == "refused":
        assert got[0] == "error", got
        return
    as_text = {str(q): {str(d): g for d, g in lab.items()} for q, lab in qrels.items()}
    Q, R = interned(as_text, {str(q): {str(d): s for d, s in h.items()} for q, h in run.items()})
    assert got == outcome(Q, R)


def test_a_large_run_of_each_form_is_read_without_interning():
    """Ids stay packed bytes (never a dict of every id) whatever the form, and the forms
    give one and the same evaluation."""
    rng = np.random.default_rng(0)
    n_q, depth = 300, 50
    ids = rng.integers(0, 10**7, (n_q, depth)).astype(str)
    scores = np.sort(rng.integers(0, 1 << 10, (n_q, depth)), axis=1)[:, ::-1] / 8.0
    as_dicts = {f"q{i}": dict(zip(ids[i].tolist(), scores[i].tolist())) for i in range(n_q)}
    qrels = {f"q{i}": {d: 1 + int(d) % 3 for d in ids[i, ::7].tolist()} for i in range(n_q)}
    forms = [
        as_dicts,
        {q: list(h.items()) for q, h in as_dicts.items()},
        {q: list(h) for q, h in as_dicts.items()},
    ]
    evs = []
    for form in forms:
        R = Run.from_dict(form)
        assert not R.docs.interned
        evs.append(ranklens.evaluate(qrels, form, ["map", "ndcg@10", "P@5"]))
    assert not Qrels.from_dict(qrels).docs.interned
    a, b, c = evs
    for m in ("map", "ndcg@10", "P@5"):
        assert a[m] == b[m]
        assert not math.isnan(c[m])


def test_the_c_helpers_read_what_numpy_reads_and_leave_the_rest():
    """The compiled helpers give numpy's values for plain ids, ints and floats, and None
    and numpy's integer and float scalars (as numpy reads them into arrays), and None (the
    numpy path decides) for anything else: bools, numpy bools, long doubles, ints past 64 bits,
    str subclasses, empty or non-UTF-8 ids, other containers, hits that are not pairs."""
    native = native_mod.NATIVE
    if native is None:
        pytest.skip("ranklens-native is not built here (no C compiler)")

    class Sub(str):
        pass

    got = native.run_scores([{"a": 1.5, "b": 2, "c": -(2**62)}, {}, {"d": float("nan")}])
    assert np.array_equal(np.frombuffer(got), [1.5, 2.0, float(-(2**62)), np.nan], equal_nan=True)
    for odd in ({"a": True}, {"a": np.bool_(True)}, {"a": np.longdouble(1)}, {"a": 2**64},
                {"a": np.uint64(2**64 - 1)}, {"a": "1"}, {1: 1.0}, {Sub("a"): 1.0},
                {"": 1.0}):  # fmt: skip
        assert native.run_scores([odd]) is None, odd
    # numpy's scalars read as numpy reads them into a float64 array
    mixed = {"a": np.float64(0.1), "b": np.float32(0.1), "c": np.float16(0.1), "d": np.int64(-7),
             "e": np.uint8(200), "f": np.int32(2**31 - 1)}  # fmt: skip
    got = native.run_scores([mixed])
    assert np.frombuffer(got).tobytes() == np.array(list(mixed.values())).astype(float).tobytes()
    assert np.frombuffer(native.run_scores([{"b": np.float32(0.1)}]))[0] == float(np.float32(0.1))
    assert native.run_scores([{"a": 1.0}, [("b", 1.0)]]) is None  # not a dict
    run = {"q": {"a": 3.0, "b": 1}}
    got = native.lookups(run, ["q", "x"], [{"a": 1, "z": 2}, ["a"]], 3)
    assert np.array_equal(np.frombuffer(got), [3.0, np.nan, np.nan], equal_nan=True)
    assert native.lookups(run, ["q"], [[1]], 1) is None  # an integer id: the columns convert it
    assert native.lookups(run, ["q"], [["a"]], 2) is None  # not the count asked
    grades = native.label_grades([{"a": 2, "b": True, "c": -1}])
    assert np.frombuffer(grades, np.int64).tolist() == [2, 1, -1]
    body, lens, nul = native.pack_ids([["x"], ("a\nb",)], 1, 2)
    assert (body, np.frombuffer(lens, np.int32).tolist(), nul) == (b"xa\nb" + bytes(8), [1, 3],
                                                                   False)  # fmt: skip
    body, lens, nul = native.pack_ids([{"ab": 1, "é": 2}], 0, 2)
    assert body == "abé".encode() + bytes(8) and nul is False
    assert native.pack_ids([[("q\0", 1.0)]], 2, 1)[2] is True
    for odd in ([[""]], [[1]], [["\ud800"]], [[Sub("a")]], [{"a": 1}]):
        assert native.pack_ids(odd, 1, 1) is None, odd
    assert native.pack_ids([["a"]], 1, 2) is None  # not the count asked
    scores = native.pair_scores([[("a", 1.5), ["b", 2]], ()])
    assert np.frombuffer(scores).tolist() == [1.5, 2.0]
    for odd in ([[("a", True)]], [[("a",)]], [[("a", 1.0, 2)]], [["a"]], [[("a", "1")]]):
        assert native.pair_scores(odd) is None, odd
    for odd in ({"a": 1.0}, {"a": np.float32(1)}, {"a": 2**63}, {"a": np.uint64(2**63)}):
        assert native.label_grades([odd]) is None, odd
    got = native.label_grades([{"a": np.int64(2), "b": np.int8(-1), "c": np.uint16(3)}])
    assert np.frombuffer(got, np.int64).tolist() == [2, -1, 3]
    above, tied = native.ranks(np.array([3.0, 2.0, 2.0, 1.0, 5.0]), np.array([0, 0, 4]),
                               np.array([4, 4, 1]), np.array([2.0, 1.0, 5.0]))  # fmt: skip
    assert np.frombuffer(above, np.int64).tolist() == [1, 3, 0]
    assert np.frombuffer(tied, np.int64).tolist() == [2, 1, 1]
    assert native.ranks(np.array([3.0]), np.array([0]), np.array([1]), np.array([2.0])) is None


@pytest.mark.parametrize("ties", ["trec", "input"])
def test_ties_in_dicts_that_lost_entries_are_placed_as_in_columns(reader, ties):
    """The C helpers read a tie where its entries stand in a dict that never lost one; a dict
    with deleted entries (holes before the tie) is read from its start instead: the same
    places either way, to the last bit."""
    run = {}
    for q in ("q1", "q2"):
        h = {f"x{i}": 9.0 - i for i in range(6)}  # entries deleted below: holes
        h.update({"t3": 2.0, "t1": 2.0, "t2": 2.0, "z": 1.0})
        for i in range(0, 6, 2 if q == "q1" else 1):
            del h[f"x{i}"]
        run[q] = h
    qrels = {"q1": {"t1": 1, "t3": 2, "z": 1}, "q2": {"t2": 1, "x5": 1}}
    Q, R = interned(qrels, run)
    assert outcome(qrels, run, ties=ties) == outcome(Q, R, ties=ties)
