"""One test over every registered metric family, as scikit-learn's common tests walk every
estimator: whatever a family computes, it keeps these promises.

1. Invalid parameter values are refused with the declared message (the metric, the
   parameter, what it takes, the value received).
2. On random inputs (hypothesis, small), every query's value lies in the family's declared
   range of values (``Family.value_range``), with parameters drawn inside their declared
   ranges.
3. A perfect ranking scores the maximum where the metric is normalised.
4. Recall-like metrics never fall as the cutoff grows.
5. Values do not depend on the order of the queries or on how the ids are spelled (queries
   and documents renamed consistently; ranked lists, so no score ties are broken by id).

Each family gets inputs of its kind: plain graded labels; grouped labels for the diversity
measures (each group an intent); span labels and runs of chunks for the evidence measures;
two assessors' labels for the judgment-group measures (through
``evaluate_judgment_groups``). A family registered later is walked as well: its kind comes
from its function's module, plain labels otherwise. Where an invariant does not apply, the
tables below say to which family and why.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import MetricNameError
from ranklens.metrics import FAMILIES, Family, parse_metric
from ranklens.metrics.params import Param

FAMILY_NAMES = sorted(FAMILIES)  # the built-in ones, fixed before any test registers its own
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CUTOFFS = (1, 2, 3, 5, None)
TOLERANCE = 1e-9

NOT_NORMALISED = {
    "dcg": "a sum of discounted gains, not divided by the ideal's",
    "idcg": "the ideal's own DCG: a sum, not a share",
    "err": "a perfect document satisfies the user with 1 - 2^-g_max < 1 only",
    "rbp": "(1 - p) Σ p^(i-1) over a finite list stays below 1",
    "rbp_resid": "a residual: 0 when nothing is unjudged, the best case",
    "unj": "the share of unjudged documents: 0 is the best value",
    "infAP": "trec_eval's smoothing ε = 10⁻⁵ in (r + ε) / (r + s + 2ε): 1 - O(ε) at best",
    "yaap": "log((1 + S) / (1 + R - S)) grows with R: no maximum of its own",
    "utility": "a weighted count of relevant and other documents, unbounded",
    "Rprec_mult": "precision at m·R below 1 when m > 1: the invariant is checked at m = 1",
    "Rprec_mult_avgjg": "as Rprec_mult",
    "alpha_dcg": "normalised by ndeval's ideal-ideal ranking (every intent at every rank), "
    "which no real ranking reaches",
    "err_ia": "as alpha_dcg, ndeval's ideal-ideal normalisation",
    "nrbp": "as alpha_dcg, ndeval's ideal-ideal normalisation",
    "p_ia": "a document covers one intent of S: at most 1/S per rank",
    "ap_ia": "each intent's AP counts the other intents' documents ranked above its own: "
    "no ranking puts every intent first",
}
"""Families whose perfect ranking need not reach the maximum (counts, whose range has no
maximum, are left out by their range)."""

NEVER_FALL = {
    "recall", "success", "rr", "ap", "bpref", "infAP", "binG", "yaap", "dcg", "idcg", "err",
    "rbp", "num_ret", "num_rel_ret", "num_nonrel_judged_ret", "strec", "evidence_recall",
}  # fmt: skip
"""Recall-like families: a deeper cutoff only adds non-negative terms. Every other family
with a cutoff may fall: precision-like ones divide by k (P, relative_P, judged, unj, P_avgjg,
p_ia, evidence_precision), normalised ones divide by an ideal that grows with k (ndcg,
alpha_ndcg, nerr_ia, evidence_iou and the ideal-ideal alpha_dcg, err_ia), f1 and utility
trade precision for recall."""


def kind(family: Family) -> str:
    module = family.fn.__module__
    if module.endswith(".diversity"):
        return "intents"
    if module.endswith(".evidence"):
        return "spans"
    if family.name.endswith("_avgjg"):
        return "groups"
    if module.endswith(".freshness"):
        return "versions"
    return "plain"


def families(of: str) -> list[Family]:
    return [FAMILIES[n] for n in FAMILY_NAMES if kind(FAMILIES[n]) == of]


def number(value: float) -> str:
    return repr(float(value))


def names(family: Family, fraction: float, perfect: bool = False) -> dict[str, int | None]:
    """Metric names for ``family`` at every cutoff, numeric parameters drawn inside their
    declared ranges at ``fraction`` of the way (a perfect ranking keeps the defaults, and
    m = 1 for Rprec_mult): ``{name: cutoff}``."""
    params = []
    for key, param in family.params.items():
        if param.type not in (int, float) or param.range is None:
            continue
        if key == family.value_param:
            value = 1.0 if perfect and key == "m" else param.range.sample(fraction)
        elif perfect or param.default is None:
            continue
        else:
            value = param.range.sample(fraction)
        value = round(value) if param.type is int else value
        params.append(f"{key}={int(value) if param.type is int else number(value)}")
    base = family.name + (f"({','.join(params)})" if params else "")
    if not family.cutoff:
        return {base: None}
    return {(f"{base}@{k}" if k else base): k for k in CUTOFFS}


# ---------------------------------------------------------------- inputs of each kind
def ranked(draw, labelled: list[str], extra: int) -> list[str]:
    pool = labelled + [f"x{i}" for i in range(extra)]
    order = draw(st.permutations(pool))
    return list(order[: draw(st.integers(0, len(order)))])


@st.composite
def plain_inputs(draw):
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 4))):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 5)))]
        grades = draw(st.lists(st.integers(-1, 3), min_size=len(docs), max_size=len(docs)))
        if q == 0:
            grades[0] = draw(st.integers(1, 3))  # something to evaluate
        qrels[f"q{q}"] = dict(zip(docs, grades))
        run[f"q{q}"] = ranked(draw, docs, draw(st.integers(0, 3)))
    return qrels, run


@st.composite
def grouped_inputs(draw):
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 3))):
        sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
        groups = [[f"g{g}d{i}" for i in range(size)] for g, size in enumerate(sizes)]
        qrels[f"q{q}"] = groups
        run[f"q{q}"] = ranked(draw, [d for g in groups for d in g], draw(st.integers(0, 2)))
    return qrels, run


@st.composite
def span_inputs(draw):
    spans, chunks = {}, {}
    cut = st.tuples(st.integers(0, 90), st.integers(1, 30))
    for q in range(draw(st.integers(1, 3))):
        docs = [f"doc{q}{i}" for i in range(draw(st.integers(1, 2)))]
        evidence = draw(st.lists(st.tuples(st.sampled_from(docs), cut), min_size=1, max_size=3))
        spans[f"q{q}"] = [(d, s, min(s + n, 120)) for d, (s, n) in evidence]
        read = draw(st.lists(st.tuples(st.sampled_from(docs), cut), max_size=5, unique=True))
        chunks[f"q{q}"] = [{"doc_id": d, "start": s, "end": min(s + n, 120)} for d, (s, n) in read]
    return spans, chunks


@st.composite
def assessor_inputs(draw):
    (alice, run), (bob, _) = draw(plain_inputs()), draw(plain_inputs())
    return {"alice": alice, "bob": {q: g for q, g in bob.items() if q in alice}}, run


@st.composite
def versioned_inputs(draw):
    """Plain inputs with some documents given an older version (``{group: [old, new]}``,
    undated: the newest of a chain current, the rest outdated), the old versions retrieved
    among the rest."""
    qrels, run = draw(plain_inputs())
    docs = sorted({d for ls in qrels.values() for d in ls} | {d for r in run.values() for d in r})
    # at least one chain: an empty versions table is refused (Versions.from_chains' declaration)
    chains = {f"g-{d}": [f"{d}~old", d] for i, d in enumerate(docs) if not i or draw(st.booleans())}
    olds = [c[0] for c in chains.values()]
    for q, ranking in run.items():
        extra = draw(st.lists(st.sampled_from(olds), unique=True)) if olds else []
        order = draw(st.permutations(ranking + extra))
        run[q] = list(order)
    return (qrels, chains), run


def evaluate(of: str, labels, run, metrics):
    """Per-query values ``{name: {query: value}}`` of ``metrics`` on inputs of kind ``of``."""
    metrics = [parse_metric(n) for n in metrics]  # as named: no trec_eval expansion
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if of == "groups":
            ev = ranklens.evaluate_judgment_groups(labels, run, metrics)
        elif of == "versions":
            qrels, chains = labels
            versions = ranklens.Versions.from_chains(chains)
            ev = ranklens.evaluate(qrels, run, metrics, versions=versions)
        elif of == "spans":
            labels = ranklens.SpanLabels.from_spans(labels)
            chunking = {}
            for hits in run.values():
                for h in hits:
                    chunking.setdefault(h["doc_id"], []).append((h["start"], h["end"]))
            run = ranklens.Run.from_chunks(run)
            ev = ranklens.evaluate(labels, run, metrics, chunking=chunking or None)
        else:
            ev = ranklens.evaluate(labels, run, metrics)
    return {n: dict(zip(ev.query_ids, map(float, ev.per_query[n]))) for n in ev.names}


def renamed(of: str, labels, run):
    """The same inputs with every query and document id spelled otherwise (consistently)
    and the queries in reverse order."""

    def doc(d: str) -> str:
        return f"doc:{d[::-1]}#é"

    def query(q: str) -> str:
        return f"Q-{q}-" + "z" * len(q)

    if of == "groups":
        new = {g: {query(q): {doc(d): x for d, x in ls.items()} for q, ls in reversed(lab.items())}
               for g, lab in labels.items()}  # fmt: skip
    elif of == "intents":
        new = {query(q): [[doc(d) for d in g] for g in gs] for q, gs in reversed(labels.items())}
    elif of == "spans":
        new = {query(q): [(doc(d), s, e) for d, s, e in sp] for q, sp in reversed(labels.items())}
    elif of == "versions":
        qrels, chains = labels
        new = (
            {query(q): {doc(d): x for d, x in ls.items()} for q, ls in reversed(qrels.items())},
            {g: [doc(d) for d in c] for g, c in chains.items()},
        )
    else:
        new = {query(q): {doc(d): x for d, x in ls.items()} for q, ls in reversed(labels.items())}
    if of == "spans":
        new_run = {query(q): [{**h, "doc_id": doc(h["doc_id"])} for h in hits]
                   for q, hits in reversed(run.items())}  # fmt: skip
    else:
        new_run = {query(q): [doc(d) for d in hits] for q, hits in reversed(run.items())}
    return new, new_run, query


def has_relevant(of: str, labels) -> bool:
    if of == "versions":
        return has_relevant("plain", labels[0])
    if of == "plain":
        return any(g > 0 for ls in labels.values() for g in ls.values())
    if of == "groups":
        return any(g > 0 for lab in labels.values() for ls in lab.values() for g in ls.values())
    return True


def check_properties(of: str, labels, run, fraction: float) -> None:
    if not has_relevant(of, labels) or (of == "spans" and not any(run.values())):
        return  # nothing to evaluate (an error, tested elsewhere)
    fams = families(of)
    table = {fam.name: names(fam, fraction) for fam in fams}
    metrics = [n for by_k in table.values() for n in by_k]
    values = evaluate(of, labels, run, metrics)
    # 2. inside the declared range of values
    for fam in fams:
        rng = fam.value_range
        for name in table[fam.name]:
            for q, x in values[name].items():
                low = -math.inf if rng.low is None else rng.low - TOLERANCE
                high = math.inf if rng.high is None else rng.high + TOLERANCE
                assert low <= x <= high and not math.isnan(x), (name, q, x, str(rng))
    # 4. recall-like metrics never fall as the cutoff grows
    for fam in fams:
        if fam.name in NEVER_FALL and fam.cutoff:
            depth = {k or 10**9: n for n, k in table[fam.name].items()}
            series = [values[depth[k]] for k in sorted(depth)]
            for q in series[0]:
                row = [s[q] for s in series]
                assert all(b >= a - TOLERANCE for a, b in itertools.pairwise(row)), (
                    fam.name,
                    q,
                    row,
                )
    # 5. the same values with other ids and another query order
    new_labels, new_run, query = renamed(of, labels, run)
    again = evaluate(of, new_labels, new_run, metrics)
    for name in metrics:
        for q, x in values[name].items():
            assert again[name][query(q)] == pytest.approx(x, abs=1e-12), (name, q)


# ---------------------------------------------------------------- 2, 4, 5 on random inputs
@EXAMPLES
@given(plain_inputs(), st.floats(0, 1))
def test_plain_label_families_keep_their_promises(inputs, fraction):
    check_properties("plain", *inputs, fraction)


@EXAMPLES
@given(grouped_inputs(), st.floats(0, 1))
def test_diversity_families_keep_their_promises_on_intents(inputs, fraction):
    check_properties("intents", *inputs, fraction)


@EXAMPLES
@given(span_inputs(), st.floats(0, 1))
def test_evidence_families_keep_their_promises_on_span_labels(inputs, fraction):
    check_properties("spans", *inputs, fraction)


@EXAMPLES
@given(versioned_inputs(), st.floats(0, 1))
def test_freshness_families_keep_their_promises_on_versions(inputs, fraction):
    check_properties("versions", *inputs, fraction)


@settings(max_examples=30, deadline=None)
@given(assessor_inputs(), st.floats(0, 1))
def test_judgment_group_families_keep_their_promises(inputs, fraction):
    check_properties("groups", *inputs, fraction)


def test_every_family_is_walked_by_one_kind_of_input():
    kinds = {kind(FAMILIES[n]) for n in FAMILY_NAMES}
    assert kinds == {"plain", "intents", "spans", "groups", "versions"}
    assert set(NOT_NORMALISED) <= set(FAMILY_NAMES) and set(FAMILY_NAMES) >= NEVER_FALL
    assert all(FAMILIES[n].cutoff for n in NEVER_FALL)


# ---------------------------------------------------------------- 3. a perfect ranking
PERFECT = {
    "plain": (
        {"q1": {"a": 3, "b": 1, "c": 2, "n": 0, "m": -1}, "q2": {"e": 1}},
        {"q1": ["a", "c", "b"], "q2": ["e"]},
    ),
    "groups": (
        {"alice": {"q1": {"a": 2, "b": 1}}, "bob": {"q1": {"a": 1, "b": 1, "n": 0}}},
        {"q1": ["a", "b"]},
    ),
    # one document of each intent first (ndeval's greedy ideal), then the second ones
    "intents": ({"q1": [["a", "b"], ["c"], ["d", "e"]]}, {"q1": ["a", "c", "d", "b", "e"]}),
    # current versions only, the relevant ones first (outdated and undated: none)
    "versions": (
        (
            {"q1": {"a": 2, "b": 1, "n": 0}},
            {"ga": ["a0", "a"], "gb": ["b0", "b"], "gn": ["n0", "n"]},
        ),
        {"q1": ["a", "b", "n"]},
    ),
    # the chunks are the evidence, and the chunking holds no other chunk
    "spans": (
        {"q1": [("d1", 0, 20), ("d1", 40, 55)], "q2": [("d2", 5, 9)]},
        {
            "q1": [
                {"doc_id": "d1", "start": 0, "end": 20},
                {"doc_id": "d1", "start": 40, "end": 55},
            ],
            "q2": [{"doc_id": "d2", "start": 5, "end": 9}],
        },
    ),
}


@pytest.mark.parametrize("of", sorted(PERFECT))
def test_a_perfect_ranking_scores_the_maximum_where_the_metric_is_normalised(of):
    fams = [f for f in families(of) if f.name not in NOT_NORMALISED]
    fams = [f for f in fams if f.value_range.high is not None]
    assert fams
    table = {f.name: names(f, 0.5, perfect=True) for f in fams}
    values = evaluate(of, *PERFECT[of], [n for by_k in table.values() for n in by_k])
    for fam in fams:  # over the whole ranking: a cutoff below R caps recall, above it precision
        name = next(n for n, k in table[fam.name].items() if k is None)
        best = fam.value_range.low if fam.lower_is_better else fam.value_range.high
        for q, x in values[name].items():
            assert x == pytest.approx(best, abs=TOLERANCE), (name, q, x)


def test_the_families_left_out_of_the_perfect_ranking_do_fall_short_or_have_no_maximum():
    """The exceptions above are real: each scores below its maximum on the perfect ranking
    (else it belongs with the normalised ones)."""
    for of in PERFECT:
        for fam in families(of):
            if fam.name not in NOT_NORMALISED or fam.name.startswith("Rprec_mult"):
                continue
            table = names(fam, 0.5, perfect=True)
            name = next(n for n, k in table.items() if k is None)
            values = evaluate(of, *PERFECT[of], [name])[name].values()
            if fam.name in ("rbp_resid", "unj"):
                assert max(values) == 0, fam.name  # their best value is their minimum
            elif fam.value_range.high is not None:
                assert min(values) < fam.value_range.high - 1e-7, fam.name


# ---------------------------------------------------------------- 1. invalid parameters
def invalid_values(param: Param) -> list[str]:
    """Values outside a parameter's declaration, written as in a metric name."""
    if param.choices:
        return ["nothing-like-it"]
    if param.type is bool:
        return ["maybe", "2"]
    if param.type in (dict, tuple):
        return ["7", "{x:1}" if param.type is dict else "[2]"]
    out = ["abc", "nan", "inf"]
    rng = param.range
    if rng is not None and rng.low is not None:
        out.append(number(rng.low) if rng.closed in ("right", "neither") else number(rng.low - 1))
    if rng is not None and rng.high is not None:
        out.append(number(rng.high) if rng.closed in ("left", "neither") else number(rng.high + 1))
    if param.type is int:
        out.append("2.5")
    return out


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_invalid_parameter_values_are_refused_with_the_declared_message(family):
    fam = FAMILIES[family]
    for key, param in fam.params.items():
        for raw in invalid_values(param):
            name = f"{fam.name}({key}={raw})" + ("@5" if fam.cutoff else "")
            with pytest.raises(MetricNameError) as caught:
                parse_metric(name)
            message = str(caught.value)
            shown = raw if param.type in (int, float) and raw not in ("abc",) else repr(raw)
            assert message.startswith(f"metric {name!r}: {key} must be {param.allowed()}"), message
            if param.description:
                assert f"({param.description})" in message
            got = message.split(", got ", 1)[1]
            assert got.startswith(shown) or got.startswith(f"{float(raw):g}"), (message, raw)
    typo = next(iter(fam.params), "rel")[:-1] + "q"
    with pytest.raises(MetricNameError, match="unknown parameter"):
        parse_metric(f"{fam.name}({typo}=1)")


def test_values_at_the_edges_of_each_declared_range_are_taken():
    for fam in map(FAMILIES.get, FAMILY_NAMES):
        for key, param in fam.params.items():
            rng = param.range
            if rng is None or param.type not in (int, float):
                continue
            edges = [rng.sample(0.0), rng.sample(1.0), rng.sample(0.5)]
            edges += [rng.low] if rng.low is not None and rng.closed in ("both", "left") else []
            edges += [rng.high] if rng.high is not None and rng.closed in ("both", "right") else []
            for value in edges:
                written = str(int(value)) if param.type is int else number(value)
                if param.type is int and value != int(value):
                    continue
                metric = parse_metric(f"{fam.name}({key}={written})")
                assert dict(metric.params)[key] == pytest.approx(value), (fam.name, key, value)
                assert np.isfinite(dict(metric.params)[key])
