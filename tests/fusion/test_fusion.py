"""Fusion: every method ranklens shares with ranx gives ranx's fused scores (to 1e-9) on
hypothesis-generated runs, under every normalisation; names, weights and errors."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError
from ranklens.fusion import METHODS, NORMS
from ranklens.fusion.methods import RANK_BASED

ranx = pytest.importorskip("ranx")

PARAMS = {"gmnz": {"gamma": 1.5}, "logn_isr": {"sigma": 0.01}, "rbc": {"phi": 0.7},
          "rrf": {"k": 60}}  # fmt: skip
WEIGHTED = {"wsum", "wmnz", "mixed", "w_bordafuse"}


@st.composite
def runs_case(draw):
    """2-3 runs over the same 1-3 queries; distinct scores within a run (ranx and trec
    order ties differently)."""
    n_runs = draw(st.integers(2, 3))
    queries = [f"q{i}" for i in range(draw(st.integers(1, 3)))]
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in queries:
            docs = draw(st.lists(st.sampled_from([f"d{i}" for i in range(9)]), min_size=1,
                                 max_size=7, unique=True))  # fmt: skip
            scores = draw(st.lists(st.integers(-50, 100), min_size=len(docs), max_size=len(docs),
                                   unique=True))  # fmt: skip
            ranked = sorted(zip(docs, (s / 7 for s in scores)), key=lambda t: -t[1])
            run[q] = dict(ranked)
        runs.append(run)
    weights = draw(st.lists(st.sampled_from([0.2, 0.5, 1.0, 2.0]), min_size=n_runs,
                            max_size=n_runs))  # fmt: skip
    return runs, weights


def ranx_fused(runs, method, norm, weights):
    params = dict(PARAMS.get(method, {}))
    if method in WEIGHTED:
        params["weights"] = weights
    name = {"w_bordafuse": "w_bordafuse"}.get(method, method)
    rx = [ranx.Run({q: dict(v) for q, v in r.items()}, name=f"r{i}") for i, r in enumerate(runs)]
    return ranx.fuse(rx, norm=norm, method=name, params=params).to_dict()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs_case(), st.sampled_from([*NORMS, None]))
def test_every_shared_method_equals_ranx(case, norm):
    runs, weights = case
    named = {f"r{i}": r for i, r in enumerate(runs)}
    for method in METHODS:
        if method in ("condorcet", "w_condorcet"):
            continue  # compared where the majority is a strict order: test_fusion_supervised
        if norm == "borda" and method in RANK_BASED:
            continue  # ranx ranks borda-normalised runs in set order (arbitrary); see methods.py
        want = ranx_fused(runs, method, norm, weights)
        got = ranklens.fuse(named, method, norm=norm, weights=weights,
                            **PARAMS.get(method, {})).to_dict()  # fmt: skip
        assert set(got) == set(want), method
        if method in ("min", "max") and any(
            abs(v) >= 1e8 for r in want.values() for v in r.values()
        ):
            continue  # ranx stands 1e9 / -1e9 in for a missing score (see methods.py)
        for q in want:
            assert set(got[q]) == set(want[q]), (method, norm, q)
            for d, v in want[q].items():
                assert math.isclose(got[q][d], v, rel_tol=1e-9, abs_tol=1e-9), (
                    method, norm, q, d, got[q][d], v,
                )  # fmt: skip


def test_names_weights_and_errors():
    a = {"q": {"x": 3.0, "y": 2.0}}
    b = {"q": {"y": 5.0, "z": 1.0}}
    combsum = ranklens.fuse({"a": a, "b": b}, "CombSUM", norm="max")
    assert combsum.to_dict()["q"] == pytest.approx({"y": 2 / 3 + 1, "x": 1.0, "z": 0.2})
    by_name = ranklens.fuse({"a": a, "b": b}, "wsum", weights={"b": 2.0, "a": 1.0}).to_dict()
    assert by_name["q"] == pytest.approx({"y": 12.0, "x": 3.0, "z": 2.0})
    with pytest.raises(InputError, match="at least two runs"):
        ranklens.fuse({"a": a}, "rrf")
    with pytest.raises(InputError, match=r"fuse: method must be one of .*got 'nope'"):
        ranklens.fuse({"a": a, "b": b}, "nope")
    with pytest.raises(InputError, match="norm must be one of"):
        ranklens.fuse({"a": a, "b": b}, "sum", norm="l2")
    with pytest.raises(InputError, match="2 finite numbers"):
        ranklens.fuse({"a": a, "b": b}, "wsum", weights=[1.0])
    with pytest.raises(InputError, match="retrieves document 'x' twice"):
        ranklens.fuse({"a": {"q": [("x", 1.0), ("x", 0.5)]}, "b": b}, "rrf")
    # a query one run lacks takes what the other gives
    only = ranklens.fuse({"a": {"q": {"x": 1.0}, "r": {"u": 1.0}}, "b": b}, "rrf").to_dict()
    assert only["r"] == pytest.approx({"u": 1 / 61})


def test_fuse_command_writes_a_trec_run(tmp_path, capsys):
    from ranklens.app.cli import main

    a, b = tmp_path / "bm25.run", tmp_path / "dense.run"
    a.write_text("q1 Q0 x 1 3.0 a\nq1 Q0 y 2 2.0 a\n")
    b.write_text("q1 Q0 y 1 0.9 b\nq1 Q0 z 2 0.8 b\n")
    out = tmp_path / "fused.run"
    assert main(["fuse", str(a), str(b), "--method", "rrf", "--param", "k=60", "-o", str(out)]) == 0
    fused = ranklens.read_run(out).to_dict()["q1"]
    assert fused == pytest.approx({"y": 1 / 62 + 1 / 61, "x": 1 / 61, "z": 1 / 62})
    assert main(["fuse", str(a), str(b), "--method", "haystack:merge", "--weights", "1,3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["q1", "Q0", "y", "1"]  # 0.25*2 + 0.75*0.9
    assert main(["fuse", str(a), str(b), "--weights", "x"]) == 2
    assert main(["fuse", str(a), str(b), "--param", "k"]) == 2


def _mixed_runs(n_queries: int = 40):
    """Three runs over the same queries: short ids (up to 8 bytes), long ids, one run
    read as packed bytes (as the TREC reader gives it), the others interned."""
    import numpy as np

    rng = np.random.default_rng(7)
    ids = [f"d{i}" for i in range(30)] + [f"doc-{i:012d}" for i in range(30)]
    out = []
    for _ in range(3):
        run = {}
        for q in range(n_queries):
            docs = rng.choice(ids, size=12, replace=False).tolist()
            run[f"q{q}"] = dict(zip(docs, np.sort(rng.random(12))[::-1].tolist()))
        out.append(run)
    return out


def test_grouping_is_exact_when_hash_bits_are_shared(monkeypatch):
    """The table groups rows by one sort of (query, top hash bits, row): hashes made to
    share their top bits (every block re-sorted by full hash) and a table too large for
    the key (the two-column sort) give the very same fusion."""
    import numpy as np

    from ranklens.fusion import table as table_mod
    from ranklens.model import ids as ids_mod

    runs = _mixed_runs()
    want = ranklens.fuse({f"r{i}": r for i, r in enumerate(runs)}, "sum").to_dict()
    orig = ids_mod.hash_slices
    monkeypatch.setattr(ids_mod, "hash_slices", lambda b, s, n: orig(b, s, n) & np.uint64(0xFFFF))
    shared = ranklens.fuse({f"r{i}": r for i, r in enumerate(runs)}, "sum").to_dict()
    assert shared == want
    monkeypatch.setattr(ids_mod, "hash_slices", orig)
    q = np.array([0, 1, 0, 1, 0], dtype=np.int64)
    h = np.array([5, 5, 7, 5, 5], dtype=np.uint64)
    for n_queries in (2, 1 << 62):  # the key, then the two-column sort
        o, q_sorted, first = table_mod._grouped(q, h, n_queries)
        assert q_sorted.tolist() == [0, 0, 0, 1, 1]
        assert h[o].tolist() in ([5, 5, 7, 5, 5], [7, 5, 5, 5, 5])
        assert first.tolist() == [True, False, True, True, False] or first.tolist() == [
            True,
            True,
            False,
            True,
            False,
        ]


def test_a_full_hash_collision_is_an_error_not_a_merge(monkeypatch):
    """Long ids forced to share full hashes are compared byte for byte: an error."""
    import numpy as np

    from ranklens.model import ids as ids_mod

    orig = ids_mod.hash_slices
    monkeypatch.setattr(ids_mod, "hash_slices", lambda b, s, n: orig(b, s, n) & np.uint64(3))
    runs = _mixed_runs(5)
    with pytest.raises(InputError, match="share a 64-bit hash"):
        ranklens.fuse({f"r{i}": r for i, r in enumerate(runs)}, "sum")


def test_short_ids_of_one_length_never_share_a_hash():
    """The table skips the byte check for ids of equal length up to 8 bytes because the
    hash is a bijection of their one 64-bit word: inverting each step recovers the word."""
    import numpy as np

    from ranklens.model import idbytes as ids_mod

    rng = np.random.default_rng(3)
    for n_bytes in range(1, ids_mod.HASH_EXACT_BYTES + 1):
        words = rng.integers(0, 2**63, 2000, dtype=np.uint64) & ids_mod.BYTE_MASKS[n_bytes]
        ids = [int(w).to_bytes(8, "little")[:n_bytes].decode("latin-1") for w in words]
        body = np.frombuffer(b"".join(i.encode("latin-1") for i in ids) + bytes(8), np.uint8)
        start = np.arange(len(ids), dtype=np.int64) * n_bytes
        h = ids_mod.hash_slices(body, start, np.full(len(ids), n_bytes, dtype=np.int64))
        assert (_unhash(h, n_bytes) == words).all()


def _unhash(h, n_bytes):
    """The inverse of hash_slices for ids of ``n_bytes`` <= 8 bytes."""
    import numpy as np

    from ranklens.model import idbytes as ids_mod

    def unshift(x, s):  # inverse of x ^= x >> s
        y = x.copy()
        for _ in range(64 // s + 1):
            y = x ^ (y >> np.uint64(s))
        return y

    inv3 = np.uint64(pow(int(ids_mod._M3), -1, 1 << 64))
    inv2 = np.uint64(pow(int(ids_mod._M2), -1, 1 << 64))
    with np.errstate(over="ignore"):
        x = unshift(h, 31) * inv3
        x = unshift(x, 30)
        x = unshift(x, 31) * inv2
        return x ^ (np.uint64(n_bytes) * ids_mod._M1)
