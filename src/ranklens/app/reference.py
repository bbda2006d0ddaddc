"""Reference pages generated from the code, so they cannot drift from it:
``docs/metrics.md`` (:func:`metric_reference`) and the conventions table of
``docs/conventions.md`` (:func:`ranklens.judging.conventions.conventions_table`).

``uv run python -m ranklens.app.reference metrics > docs/metrics.md`` rewrites the first;
``... conventions`` prints the second. Tests keep both pages equal to their generators.
"""

from __future__ import annotations

import inspect
import sys

from ..judging.conventions import conventions_table
from ..metrics import FAMILIES, fmt_value
from ..profiles import profiles_reference


def metric_reference() -> str:
    """``docs/metrics.md``: every metric family with its names, trec_eval name, parameters,
    aggregation, and its docstring (formula, edge cases, reference)."""
    lines = [
        "# Metric reference",
        "",
        "Generated from the registry `ranklens.metrics.FAMILIES` (`uv run python -m",
        "ranklens.app.reference metrics > docs/metrics.md`); a test keeps this page equal to",
        "the code. Every family takes a relevance level `rel=` where it uses binary relevance,",
        "and a cutoff `@k` where marked. Names are case-insensitive; trec_eval's names and",
        "`-m` forms also parse: a parameter is honoured (`set_F.0.5` is trec_eval's weight",
        "x = β², `rbp.p=0.8`, `iprec_at_recall.0.125` computed at 0.125, custom gains",
        "`ndcg.1=3.5,2=9` = `ndcg(gains={1:3.5,2:9})`, `utility.2,-1,0,0`) or refused by",
        "name, never dropped. trec_eval's nicknames `official`, `set` and `all_trec` expand to",
        "their measures; `ranklens evaluate --format trec` prints them as trec_eval 10 does,",
        "byte for byte on trec_eval's own test suite (see",
        "[the differences](#trec_eval-10s-own-defects)). The diversity measures (`alpha_ndcg`",
        "to `strec`) take ndeval's and ir_measures' names (`alpha-nDCG@20`, `ERR_IA@20`,",
        "`StRecall@10`) and need intents: diversity qrels (`read_qrels(path, subtopics=True)`,",
        "`--subtopics`) or grouped ground truth, each group an intent",
        "([ndeval's defects](#ndevals-own-defects)). ir_measures' measure strings parse",
        "unchanged and are reported under the names given (`nDCG(dcg='exp-log2')@10`,",
        "`P(rel=2)@5`, `IPrec@0.5`, `SetP(relative=True)`, `NumRet(rel=1)`); any family takes",
        "`judged_only=True` (condensed lists, Sakai 2007). Two spellings keep ir_measures'",
        "meaning: `ERR` is gdeval's (`err(max=4)`) and `SetF(beta=x)` is trec_eval's weight",
        "x = β²; `RBP`, `SDCG`, `BPM`, `Compat`, `INST`, `INSQ`, `Accuracy` and `NERR8`-`NERR11`",
        "are refused by name. The `values` column is the range of a query's value (with",
        "non-negative gains); each parameter's line below gives what it takes, its default, what",
        "it means and where it is defined (`ranklens explain -m NAME` prints the same).",
        "",
        "| family | also | cutoff | trec_eval | parameters | aggregate | values |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in FAMILIES.values():
        trec = ", ".join(
            x
            for x in (
                f"`{f.trec_name}_k`" if f.trec_name else "",
                f"`{f.trec_plain}`" if f.trec_plain else "",
            )
            if x
        )
        params = ", ".join(f"`{k}={fmt_value(p.default)}`" for k, p in f.params.items())
        also = ", ".join(f"`{a}`" for a in (*f.aliases, *f.presets))
        lines.append(
            f"| [`{f.name}`](#{f.name.lower()}) | {also} | {'yes' if f.cutoff else 'no'} | "
            f"{trec or '–'} | {params or '–'} | {f.aggregate} | {f.value_range} |"
        )
    for f in FAMILIES.values():
        lines += ["", f"## {f.name}", "", _prose(f.doc) if f.doc else "(no docstring)"]
        if f.params:  # from each parameter's declaration (ranklens.metrics.params)
            lines += ["", "Parameters:", ""]
            lines += [f"- {_code_key(p.summary(k), k)}" for k, p in f.params.items()]
        for variant, fn in f.variants.items():
            when = (
                'With `ties="expected"`'
                if variant == "expected_ties"
                else (f"Under the `{variant}` convention")
            )
            lines += ["", f"{when}:", "", _prose(fn.__doc__ or "")]
    lines += ["", TREC_DIFFERENCES.strip(), "", NDEVAL_DIFFERENCES.strip()]
    return "\n".join(lines) + "\n"


def _prose(doc: str) -> str:
    """A metric function's docstring without its runnable example (the ``>>>`` lines at its
    end, executed by the test suite, call the function on a judged pair)."""
    lines = inspect.cleandoc(doc).splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith(">>>")), len(lines))
    return "\n".join(lines[:first]).rstrip()


def _code_key(summary: str, key: str) -> str:
    """A parameter's summary line with its name as code (``- `p`: a number ...``)."""
    return f"`{key}`" + summary[len(key) :]


TREC_DIFFERENCES = """
## trec_eval 10's own defects

Where trec_eval 10.0 gives an accidental value, ranklens gives the sensible one (each case
is tested):

| case | trec_eval 10.0 | ranklens |
|---|---|---|
| a query whose labels are all negative, after another query (`ndcg`, `ideal_dcg`, `G`, ...) | reuses the previous query's grade counts for the ideal ranking | the query's own: no positive grade, ideal DCG 0 |
| `num_rel` for `all` under `-c` with `-l` above 1 | counts the missing queries' documents of grade >= 1 | counts grade >= ℓ, as for every other query |
| `iprec_at_recall`, `11pt_avg` with `-J` when no judged document is left | 0/0, printed `nan` | 0 |
| the first query of the qrels has only negative labels | exits with status 4 | evaluates it |
| `rbp` gain rescaling | reads `min`/`max` uninitialised (their values depend on the compiler's `-O` level) | min and max of the query's grades 0..max and the listed gains |
| custom gains less than 1 apart (`ndcg.1=2.5,2=3`) | sorts gains by their truncated difference, so the ideal order may be wrong | sorts gains exactly |
| `Rndcg` when relevant documents exist but no gain is positive; `rbp` whose only gain is negative | 0/0 | 0 |

Choices rather than defects: labelled queries absent from the run are scored 0 by default
(trec_eval's `-c`; `missing="skip"` averages over the run's queries only, as trec_eval
without `-c`); the preference measures (`-R prefs`, `qrels_prefs`) are refused by name;
`trec_eval_version="9"` (`--trec-version 9`) reproduces trec_eval 9.0.8 and pytrec_eval
(float32 scores, `⌊r·R + 0.9⌋` recall cutoffs).

Judgment groups (`-R qrels_jg`, `ranklens.evaluate_judgment_groups`) average *any* measure
over the groups that judged each query; trec_eval computes only `map_avgjg`, `P_avgjg` and
`Rprec_mult_avgjg` there and refuses its other measures. On plain qrels (one group) the
`*_avgjg` names equal `map`, `P` and `Rprec_mult`, where trec_eval refuses them.
"""  # noqa: E501


NDEVAL_DIFFERENCES = """
## ndeval's own defects

The diversity measures equal ndeval 4.5's (through pyndeval) to 1e-9 on generated diversity
qrels and grouped ground truth, except:

| case | ndeval 4.5 | ranklens |
|---|---|---|
| `ERR-IA@1`, `alpha-DCG@1` | not divided by the number of intents S (values above 1) | divided by S, as at every other cutoff |
| `nNRBP` for a query without a relevant document | 0/0, `nan` | 0 |
| cutoffs | at most 20 | any |
| ties in the run's scores | pyndeval orders them by document id ascending | trec_eval's order (id descending), as every other measure |
"""  # noqa: E501


PAGES = {
    "metrics": metric_reference,
    "conventions": conventions_table,
    "use-cases": profiles_reference,  # the profiles section of docs/use-cases.md
}

if __name__ == "__main__":
    page = sys.argv[1] if len(sys.argv) > 1 else "metrics"
    if page not in PAGES:
        raise SystemExit(f"usage: python -m ranklens.app.reference {{{','.join(PAGES)}}}")
    print(PAGES[page](), end="")
