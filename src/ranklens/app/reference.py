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
        "x = β², `rbp.p=0.8`, `iprec_at_recall.0.125` computed at 0.125) or refused by name",
        "(custom `ndcg` gains), never dropped.",
        "",
        "| family | also | cutoff | trec_eval | parameters | aggregate |",
        "|---|---|---|---|---|---|",
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
            f"{trec or '–'} | {params or '–'} | {f.aggregate} |"
        )
    for f in FAMILIES.values():
        lines += ["", f"## {f.name}", "", inspect.cleandoc(f.doc) if f.doc else "(no docstring)"]
        for variant, fn in f.variants.items():
            lines += ["", f"Under the `{variant}` convention:", "", inspect.cleandoc(fn.__doc__)]
    return "\n".join(lines) + "\n"


PAGES = {"metrics": metric_reference, "conventions": conventions_table}

if __name__ == "__main__":
    page = sys.argv[1] if len(sys.argv) > 1 else "metrics"
    if page not in PAGES:
        raise SystemExit(f"usage: python -m ranklens.app.reference {{{','.join(PAGES)}}}")
    print(PAGES[page](), end="")
