"""Ids kept as parsed strings (model.ids: hashed for the join, interned only when asked) give
exactly what interned codes give: every metric, count and error, with ties, repeats, every
duplicates convention, unsorted queries, mixed forms (file run with dict labels) and hash
collisions (forced here, so the exact fallback is exercised)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Qrels, Run
from ranklens.errors import InputError
from ranklens.model import ids as ids_mod
from ranklens.model.ids import DocIds, first_repeat, hash_strings

METRICS = ["P@3", "recall@5", "map", "ndcg@5", "ndcg", "rr", "bpref", "rbp", "judged@5"]
# ids of many shapes and lengths around the 8-byte words the hash reads
DOCS = ["d1", "d10", "D1", "z", "ab" * 4, "ab" * 4 + "c", "x" * 17, "é", "7067032", "<db:A_b>"]


def _packed_run(R: Run) -> Run:
    """The same run with its ids as packed bytes (as the TREC reader gives them)."""
    docs = DocIds.from_strings(R.doc_ids[R.d].tolist())
    return Run(R.query_ids, None, R.q, None, R.score, R.scored, R.name, docs=docs)


def _packed_qrels(Q: Qrels) -> Qrels:
    docs = DocIds.from_strings(Q.doc_ids[Q.d].tolist())
    return Qrels(Q.query_ids, None, Q.q, None, Q.grade, Q.unit, Q.grouped, docs=docs)


@st.composite
def case(draw):
    qrels = {
        q: draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), max_size=7))
        for q in draw(st.lists(st.sampled_from("abcde"), min_size=1, max_size=4, unique=True))
    }
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from("abcdef"),
                st.sampled_from(DOCS),
                st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]),
            ),
            max_size=30,
        )
    )
    return qrels, rows


def _outcome(Q, R, **opts):
    try:
        ev = ranklens.evaluate(Q, R, METRICS, **opts)
    except InputError as exc:
        return ("error", type(exc).__name__, str(exc))
    return (
        ev.query_ids,
        ev.counts,
        {m: np.round(ev.per_query[m], 12).tolist() for m in METRICS},
    )


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case(),
    st.sampled_from(["error", "first", "count", "redundant"]),
    st.sampled_from(["float64", "float32"]),
    st.sampled_from(["strings", "qrels strings", "both strings"]),
    st.booleans(),
)
def test_hashed_ids_equal_interned_codes(c, duplicates, precision, form, collide):
    qrels, rows = c
    if not rows:
        return
    rows_q = [(q, d, g) for q, lab in qrels.items() for d, g in lab.items()]
    Q = Qrels.from_arrays(  # interned codes (from_dict keeps string ids as bytes)
        [r[0] for r in rows_q], [r[1] for r in rows_q], [r[2] for r in rows_q],
        empty_queries=[q for q, lab in qrels.items() if not lab],
    )  # fmt: skip
    assert Q.docs.interned
    R = Run.from_arrays([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    opts = dict(duplicates=duplicates, score_precision=precision)
    want = _outcome(Q, R, **opts)
    Qs = _packed_qrels(Q) if form != "strings" else Q
    Rs = _packed_run(R) if form != "qrels strings" else R
    if collide:  # every id hashes alike up to the low bits: matches must be checked
        # (short ids of one length cannot share a real hash, so their shortcut goes too)
        orig, exact = ids_mod.hash_slices, ids_mod.HASH_EXACT_BYTES
        ids_mod.hash_slices = lambda b, s, n: orig(b, s, n) & np.uint64(3)
        ids_mod.HASH_EXACT_BYTES = 0
        try:
            got = _outcome(Qs, Rs, **opts)
        finally:
            ids_mod.hash_slices, ids_mod.HASH_EXACT_BYTES = orig, exact
    else:
        got = _outcome(Qs, Rs, **opts)
    assert got == want
    assert Rs.to_dict() == R.to_dict()  # interned on demand, the same ids


def test_hash_of_an_id_does_not_depend_on_its_neighbours():
    ids = ["q2", "q2", "q1", "é", "a" * 30, "a" * 8, "a" * 9, "a" * 16, "a" * 17]
    h = hash_strings(ids)
    for i, s in enumerate(ids):
        assert hash_strings([s])[0] == h[i]
    assert np.array_equal(DocIds.from_strings(ids).take(np.arange(2, 6)).hashes(), h[2:6])
    assert len(set(h.tolist())) == len(set(ids))
    # an interned column hashes as its strings do
    Q = Qrels.from_dict({"q": {s: 1 for s in set(ids)}})
    assert sorted(Q.docs.hashes().tolist()) == sorted(set(h.tolist()))


def test_hash_spreads_real_id_shapes():
    ids = [str(7_000_000 + i) for i in range(50_000)] + [f"doc{i}" for i in range(50_000)]
    h = hash_strings(ids)
    assert len(np.unique(h)) == len(ids)
    top = (h >> np.uint64(40)).astype(np.int64)  # the bits the join keys use
    assert len(np.unique(top)) > 0.99 * len(ids)


def test_first_repeat_is_exact_under_collisions(monkeypatch):
    docs = DocIds.from_strings(["a", "b", "c", "b", "a"])
    group = np.array([0, 0, 0, 1, 1])
    assert first_repeat(group, docs) is None
    monkeypatch.setattr(ids_mod, "hash_slices", lambda b, s, n: np.zeros(len(s), dtype=np.uint64))
    assert first_repeat(group, DocIds.from_strings(["a", "b", "c", "b", "a"])) is None
    rep = DocIds.from_strings(["a", "b", "c", "a"])
    assert first_repeat(np.array([0, 0, 0, 0]), rep) == (0, 3)


def test_trec_files_give_the_same_numbers_read_either_way(tmp_path):
    rng = np.random.default_rng(3)
    qp, rp = tmp_path / "q.txt", tmp_path / "r.txt"
    with open(qp, "w") as fq, open(rp, "w") as fr:
        for q in rng.permutation(400).tolist():
            docs = rng.choice(5000, 60, replace=False)
            scores = np.sort(rng.integers(0, 40, 60))[::-1]  # many ties
            fr.writelines(f"q{q} Q0 D{d} {i} {s} r\n" for i, (d, s) in enumerate(zip(docs, scores)))
            judged = np.concatenate([docs[:8], rng.choice(5000, 8)])
            fq.writelines(
                f"q{q} 0 D{d} {g}\n" for d, g in zip(np.unique(judged), rng.integers(0, 3, 16))
            )
    fast = ranklens.evaluate(str(qp), str(rp), METRICS)
    assert not ranklens.read_run(str(rp)).docs.interned  # read as strings
    slow = ranklens.evaluate(
        ranklens.io.trec.read_trec_qrels(qp, fast=False),
        ranklens.io.trec.read_trec_run(rp, fast=False),
        METRICS,
    )
    assert fast.counts == slow.counts
    for m in METRICS:
        assert np.array_equal(fast.per_query[m], slow.per_query[m]), m


ID_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=80)


@settings(max_examples=150, deadline=None)
@given(st.lists(ID_TEXT, max_size=12), st.lists(ID_TEXT, max_size=12))
def test_packed_sliced_and_stacked_ids_keep_every_string(a, b):
    """from_strings (one join, newlines as boundaries unless an id holds one), the byte
    slices of an interned vocabulary, and stacked parts give back the very strings, and
    ``same`` compares them exactly whatever their forms and lengths (over 64 bytes too)."""
    packed = DocIds.from_strings(a)
    assert packed.strings(np.arange(len(a))) == a
    assert packed.hashes().tolist() == hash_strings(a).tolist()
    interned = DocIds(*DocIds.from_strings(b).codes()) if b else DocIds.from_strings(b)
    sliced = interned.sliced()
    assert sliced.strings(np.arange(len(b))) == b
    both = DocIds.stack([packed, interned])
    assert both.strings(np.arange(len(a) + len(b))) == a + b
    assert both.hashes().tolist() == hash_strings(a + b).tolist()
    if a and b:
        i = np.arange(max(len(a), len(b)))
        ia, ib = i % len(a), i % len(b)
        expect = [a[x] == b[y] for x, y in zip(ia.tolist(), ib.tolist())]
        assert packed.same(ia, sliced, ib).tolist() == expect
        assert packed.same(ia, interned, ib).tolist() == expect
        assert both.same(ia, both, len(a) + ib).tolist() == expect


def test_from_strings_with_newlines_and_zero_bytes():
    ids = ["a\nb", "c", "\0", "d\0e", "é\n"]
    packed = DocIds.from_strings(ids)
    assert packed.strings(np.arange(5)) == ids
    assert packed.same(
        np.array([0, 2]), DocIds.from_strings(["a\nb", "\0x"]), np.array([0, 1])
    ).tolist() == [True, False]
