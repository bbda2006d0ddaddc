"""Seeded benchmark data shaped like real runs (written once, cached in ``_data/``).

Scenarios (``ids/labels``):

* ids ``msmarco``: numeric document ids drawn from an 8.8M-passage space (MS MARCO
  passage), popularity-skewed so that a 100k x 100 run holds ~1.3M distinct ids and a
  10k x 100 run ~0.28M, as real runs over that corpus do; numeric query ids from a 1.1M
  space.
* ids ``beir``: string ids of BEIR's many shapes over a 5M space (``4983``, ``ug7v899j``,
  ``doc123456``, ``<dbpedia:Aoka_Ruvo_Mifa>``, ``test-enviro-aekdhefqb-pro02b``,
  ``c67482ba-2019-04-18T13:32:05Z-00000-000``), query ids of mixed shapes too.
* ids ``uniform``, ``digits`` and ``long``: ids drawn uniformly (no popularity skew) from
  a 1M-document space, so that a 100k x 100 run holds nearly every id about ten times and
  no id is hot in the cache: ``d`` and six digits (``d004217``), digits alone (``4217``),
  or 36-character ids (``doc-`` and 32 hex digits, as hashed or UUID-like ids are).
* ids ``small``: the former synthetic shape, ``D<n>`` ids from a corpus of
  ``max(50 x depth, 10,000)`` (each id repeated ~1,000 times at 100k x 100): kept as one row
  to show how a small vocabulary flatters.
* labels ``deep`` (TREC style): ~10 relevant documents per query (grades 1-3, 70% of them
  retrieved, towards the top) and ~20 judged non-relevant (a third retrieved).
* labels ``flat``: exactly 30 judged documents per query, grades 0-3 alike, each judged
  document retrieved with probability 1/2 at any rank (not towards the top): many label
  rows fall in the run, spread over its whole depth.
* labels ``sparse`` (RAG style): 1-3 relevant documents per query (grade 1, 60% retrieved),
  nothing else judged.

Every run: ``depth`` distinct documents per query, about 5% of rows in exact score ties
with the row above; scores are multiples of 1/1024 (exact in float32, so float32 and
float64 tools rank alike). Queries appear in random id order, each query's rows together
in rank order, as retrieval tools write them.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "_data"
MSMARCO_DOCS = 8_841_823
BEIR_DOCS = 5_000_000
UNIFORM_DOCS = 1_000_000
UNIFORM = ("uniform", "digits", "long")  # ids drawn uniformly from UNIFORM_DOCS
SCENARIOS = (
    "msmarco/deep", "msmarco/sparse", "beir/deep", "beir/sparse", "small/deep",
    "uniform/deep", "uniform/flat", "digits/flat", "long/flat",
)  # fmt: skip


def _doc_numbers(rng: np.random.Generator, shape: tuple[int, ...], space: int) -> np.ndarray:
    """Popularity-skewed draws from ``range(space)``, scattered over the space by a
    bijection (popular ids are not numerically close)."""
    u = rng.random(shape)
    v = rng.random(shape)
    rank = np.exp(np.log(space) * (0.8 * u + 0.2 * v)).astype(np.int64) - 1
    return (rank * 2_654_435_761 + 97) % space  # 2654435761 is prime, coprime to both spaces


def _distinct_rows(
    rng: np.random.Generator, n: int, depth: int, space: int, uniform: bool = False
) -> np.ndarray:
    """(n, depth) document numbers, distinct within each row (skewed, or ``uniform``)."""
    docs = rng.integers(0, space, (n, depth)) if uniform else _doc_numbers(rng, (n, depth), space)
    while True:
        srt = np.sort(docs, axis=1)
        dup_rows = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
        if not len(dup_rows):
            return docs
        for r in dup_rows.tolist():  # few rows: redraw their repeated entries
            row = docs[r]
            _, first = np.unique(row, return_index=True)
            again = np.setdiff1d(np.arange(depth), first)
            row[again] = rng.integers(0, space, len(again))
            docs[r] = row


_B36 = np.array(list("0123456789abcdefghijklmnopqrstuvwxyz"))
_SYL = ["ka", "ru", "vo", "mi", "fa", "ne", "lo", "si", "ta", "de", "po", "gu", "xe", "zi"]


def _b36(x: int, width: int) -> str:
    out = []
    for _ in range(width):
        x, r = divmod(x, 36)
        out.append(_B36[r])
    return "".join(out)


def _word(x: int) -> str:
    parts = []
    for _ in range(2 + x % 3):
        x, r = divmod(x, len(_SYL))
        parts.append(_SYL[r])
    return "".join(parts).capitalize()


def beir_id(x: int) -> str:
    """A BEIR-shaped string id for document number ``x`` (one shape per residue)."""
    kind = x % 6
    if kind == 0:
        return str(x)  # SciFact, FiQA, Quora
    if kind == 1:
        return _b36(x * 7919, 8)  # TREC-COVID (CORD-19 cord_uid)
    if kind == 2:
        return f"doc{x}"  # NQ
    if kind == 3:
        return f"<dbpedia:{_word(x)}_{_word(x // 7)}_{_word(x // 49)}>"  # DBPedia-entity
    if kind == 4:
        return f"test-{_word(x).lower()[:6]}-{_b36(x * 104_729, 9)}-pro{x % 100:02d}b"  # ArguAna
    return (  # Touche-2020 (args.me)
        f"{x * 2654435761 % (1 << 32):08x}-2019-04-18T{x % 24:02d}:{x % 60:02d}:"
        f"{x // 60 % 60:02d}Z-{x % 100000:05d}-000"
    )


def _names(numbers: np.ndarray, ids: str, prefix: str) -> np.ndarray:
    """String ids for document (or query) numbers, made once per distinct number."""
    uniq, inv = np.unique(numbers, return_inverse=True)
    if ids == "msmarco":
        names = uniq.astype(str).astype(object)
    elif ids == "beir":
        names = np.array([beir_id(int(x)) for x in uniq.tolist()], dtype=object)
    elif ids == "uniform":
        names = np.array([f"{prefix.lower()}{x:06d}" for x in uniq.tolist()], dtype=object)
    elif ids == "digits":
        names = uniq.astype(str).astype(object)
    elif ids == "long":
        names = np.array(
            [f"doc-{hashlib.md5(str(x).encode()).hexdigest()}" for x in uniq.tolist()],
            dtype=object,
        )
    else:
        names = np.array([f"{prefix}{x}" for x in uniq.tolist()], dtype=object)
    return names[inv.reshape(numbers.shape)]


def generate_arrays(n: int, depth: int, scenario: str, seed: int = 0) -> dict:
    """The scenario's qrels and run as flat arrays (see the module docstring)."""
    ids, labels = scenario.split("/")
    rng = np.random.default_rng(seed)
    space = {"msmarco": MSMARCO_DOCS, "beir": BEIR_DOCS}.get(ids, max(50 * depth, 10_000))
    uniform = ids in UNIFORM
    if uniform:
        space = UNIFORM_DOCS
    if ids == "small":
        docs = np.stack([rng.choice(space, depth, replace=False) for _ in range(n)])
    else:
        docs = _distinct_rows(rng, n, depth, space, uniform)
    # retrieved judged documents: per query, the first k of a top-weighted random order
    if labels == "deep":
        n_rel = np.minimum(1 + rng.poisson(9, n), depth)
        ret_rel = rng.binomial(n_rel, 0.7)
        n_non = rng.poisson(20, n)
        ret_non = np.minimum(rng.binomial(n_non, 1 / 3), depth - ret_rel)
    elif labels == "flat":
        grades30 = rng.integers(0, 4, (n, 30))
        n_rel = (grades30 > 0).sum(axis=1)
        n_non = 30 - n_rel
        ret_rel = np.minimum(rng.binomial(n_rel, 0.5), depth)
        ret_non = np.minimum(rng.binomial(n_non, 0.5), depth - ret_rel)
    else:
        n_rel = rng.integers(1, 4, n)
        ret_rel = rng.binomial(n_rel, 0.6)
        n_non = ret_non = np.zeros(n, dtype=np.int64)
    # top-weighted picks of the retrieved judged documents (flat labels: any rank alike)
    weight = np.ones(depth) if labels == "flat" else 1.0 / (np.arange(depth) + 5.0)
    keys = np.log(rng.random((n, depth))) / weight  # Efraimidis-Spirakis: largest k
    pos = np.argsort(-keys, axis=1)
    k_ret = ret_rel + ret_non
    take = np.arange(depth)[None, :] < k_ret[:, None]
    row_of = np.repeat(np.arange(n), k_ret)
    ret_pos = pos[take]  # row-major: each query's picks in order
    within = np.arange(len(row_of)) - np.repeat(np.cumsum(k_ret) - k_ret, k_ret)
    is_rel = within < ret_rel[row_of]
    # judged documents not retrieved: fresh draws (a draw that is in the run is dropped)
    n_out = (n_rel - ret_rel) + (n_non - ret_non)
    out_row = np.repeat(np.arange(n), n_out)
    if uniform:
        out_doc = rng.integers(0, space, len(out_row))
    else:
        out_doc = _doc_numbers(rng, (len(out_row),), space)
    within_out = np.arange(len(out_row)) - np.repeat(np.cumsum(n_out) - n_out, n_out)
    out_rel = within_out < (n_rel - ret_rel)[out_row]
    in_run = (docs[out_row] == out_doc[:, None]).any(axis=1)
    key = out_row * (space + 1) + out_doc
    _, first = np.unique(key, return_index=True)
    keep = np.zeros(len(out_row), dtype=bool)
    keep[first] = True
    keep &= ~in_run
    out_row, out_doc, out_rel = out_row[keep], out_doc[keep], out_rel[keep]
    j_row = np.concatenate([row_of, out_row])
    j_doc = np.concatenate([docs[row_of, ret_pos], out_doc])
    j_rel = np.concatenate([is_rel, out_rel])
    if labels == "deep":
        grade = np.where(j_rel, rng.choice([1, 2, 3], len(j_rel), p=[0.5, 0.3, 0.2]), 0)
    elif labels == "flat":
        grade = np.where(j_rel, rng.integers(1, 4, len(j_rel)), 0)
    else:
        grade = j_rel.astype(np.int64)
    o = np.lexsort((rng.random(len(j_row)), j_row))
    j_row, j_doc, grade = j_row[o], j_doc[o], grade[o]
    # scores: descending per query, 5% of rows tied with the row above
    scores = np.sort(rng.integers(1 << 10, 1 << 20, (n, depth)), axis=1)[:, ::-1] / 1024.0
    tie = rng.random((n, depth)) < 0.05
    tie[:, 0] = False
    for c in range(1, depth):
        scores[tie[:, c], c] = scores[tie[:, c], c - 1]
    qnum = rng.choice(1_100_000, n, replace=False) if ids != "small" else np.arange(n)
    qnames = _names(qnum, ids, "q")
    dnames = _names(np.concatenate([docs.ravel(), j_doc]), ids, "D")
    return {
        "qid": qnames,
        "run_doc": dnames[: docs.size].reshape(n, depth),
        "score": scores,
        "qrel_q": qnames[j_row],
        "qrel_doc": dnames[docs.size :],
        "grade": grade,
    }


def _slug(n: int, depth: int, scenario: str) -> str:
    return f"{scenario.replace('/', '-')}_{n}x{depth}"


def paths(n: int, depth: int, scenario: str = "msmarco/deep") -> tuple[Path, Path]:
    """TREC qrels and run files for a size and scenario, written on first use."""
    DATA.mkdir(parents=True, exist_ok=True)
    slug = _slug(n, depth, scenario)
    qp, rp = DATA / f"qrels_{slug}.txt", DATA / f"run_{slug}.txt"
    if not (qp.exists() and rp.exists()):
        a = generate_arrays(n, depth, scenario)
        with open(qp, "w") as fh:
            fh.write(
                "".join(
                    f"{q} 0 {d} {g}\n"
                    for q, d, g in zip(
                        a["qrel_q"].tolist(), a["qrel_doc"].tolist(), a["grade"].tolist()
                    )
                )
            )
        ranks = list(range(1, depth + 1))
        with open(rp, "w") as fh:
            for q, ds, ss in zip(a["qid"].tolist(), a["run_doc"].tolist(), a["score"].tolist()):
                fh.write("".join(f"{q} Q0 {d} {r} {s} bm25\n" for d, r, s in zip(ds, ranks, ss)))
    return qp, rp


def ensure_dicts(n: int, depth: int, scenario: str = "msmarco/deep") -> None:
    """Write :func:`dicts`' cache file if it is not there (without keeping the dicts)."""
    if not (DATA / f"dicts_{_slug(n, depth, scenario)}.pickle").exists():
        dicts(n, depth, scenario)


def dicts(n: int, depth: int, scenario: str = "msmarco/deep") -> tuple[dict, dict]:
    """The same qrels and run as ``{q: {doc: grade}}`` and ``{q: {doc: score}}`` (cached)."""
    DATA.mkdir(parents=True, exist_ok=True)
    pp = DATA / f"dicts_{_slug(n, depth, scenario)}.pickle"
    if pp.exists():
        with open(pp, "rb") as fh:
            return pickle.load(fh)
    a = generate_arrays(n, depth, scenario)
    qrels: dict[str, dict[str, int]] = {}
    for q, d, g in zip(a["qrel_q"].tolist(), a["qrel_doc"].tolist(), a["grade"].tolist()):
        qrels.setdefault(q, {})[d] = g
    run = {
        q: dict(zip(ds, ss))
        for q, ds, ss in zip(a["qid"].tolist(), a["run_doc"].tolist(), a["score"].tolist())
    }
    with open(pp, "wb") as fh:
        pickle.dump((qrels, run), fh, protocol=pickle.HIGHEST_PROTOCOL)
    return qrels, run


def describe(n: int, depth: int, scenario: str) -> str:
    """Distinct ids, judged rows and relevant-retrieved rows of a scenario's data."""
    a = generate_arrays(n, depth, scenario)
    distinct = len(np.unique(a["run_doc"].ravel()))
    return (
        f"{scenario} {n}x{depth}: {distinct:,} distinct run doc ids, "
        f"{len(a['grade']):,} qrels rows ({int((a['grade'] > 0).sum()):,} relevant)"
    )


def fusion_arrays(n: int, depth: int, ids: str = "msmarco", runs: int = 3, seed: int = 0) -> dict:
    """``runs`` runs of the same ``n`` queries for fusion: each query has a pool of
    ``2·depth`` candidates (drawn as :func:`generate_arrays` draws a run's documents) and
    each run ranks ``depth`` of them, picked top-weighted so that runs agree more near the
    top (about half of two runs' documents are shared). Scores as in
    :func:`generate_arrays` (5% ties with the row above), on each run's own scale."""
    rng = np.random.default_rng(seed)
    space = {"msmarco": MSMARCO_DOCS, "beir": BEIR_DOCS}[ids]
    pool = _distinct_rows(rng, n, 2 * depth, space)
    weight = 1.0 / (np.arange(2 * depth) + 10.0)
    docs, scores = [], []
    for r in range(runs):
        keys = np.log(rng.random((n, 2 * depth))) / weight
        pick = np.argsort(-keys, axis=1)[:, :depth]
        docs.append(np.take_along_axis(pool, pick, axis=1))
        sc = np.sort(rng.integers(1 << 10, 1 << 20, (n, depth)), axis=1)[:, ::-1] / 1024.0
        tie = rng.random((n, depth)) < 0.05
        tie[:, 0] = False
        for c in range(1, depth):
            sc[tie[:, c], c] = sc[tie[:, c], c - 1]
        scores.append(sc * (r + 1))
    qnum = rng.choice(1_100_000, n, replace=False)
    names = _names(np.concatenate([d.ravel() for d in docs]), ids, "D")
    return {
        "qid": _names(qnum, ids, "q"),
        "docs": [names[i * n * depth : (i + 1) * n * depth].reshape(n, depth) for i in range(runs)],
        "scores": scores,
    }
