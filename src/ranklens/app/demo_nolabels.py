"""The demo's "no labels yet" section: a test set generated from the shipped corpus by the
offline stand-in generator, its leakage found, and two retrievers estimated with a
stand-in model judge calibrated on 30 human-labelled questions (the shipped labels standing
in for people): the judge-only numbers beside the prediction-powered ones."""

from __future__ import annotations

import textwrap
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any


def _wrap(text: str) -> str:
    return "\n".join(textwrap.wrap(text, 92))


def nolabels_section(dataset: Any, results: dict[str, Any], baseline: str, judge: Any,
                     retriever: tuple[Any, dict[str, Any]] | None = None, report: Any = None,
                     html: str | Path | None = None) -> str:  # fmt: skip
    """The section's text. ``judge``: the stand-in model judge; ``retriever``: the
    baseline's ``(retriever, run options)``, run on the generated questions; with
    ``report`` and ``html``, the estimate is attached to the comparison report and the
    HTML page rewritten with it."""
    from ..capture import run_retriever
    from ..estimation import estimate
    from ..evaluation import evaluate
    from ..labelling.judges import CALLS
    from ..settings import Calling
    from ..synthesis import OfflineGenerator, check_dataset, synthesize

    quiet = replace(CALLS, progress=False)
    synthetic = synthesize(dataset, OfflineGenerator(), max_overlap=None, calls=quiet)
    check = check_dataset(synthetic.dataset, attach=False)
    inside = check["query_in_relevant"]
    base = results[baseline]
    lines = [
        "",
        _wrap(
            "No labels yet? ranklens.synthesize generated "
            f"{synthetic.counts['kept']} questions from the {len(dataset.corpus)} passages "
            "with the offline stand-in generator (an LLM call in real use), each with its "
            "provenance (source passage, evidence offsets, raw output). ranklens."
            f"check_dataset: {len(inside.queries) if inside else 0} of them are contained in "
            "their own passage, so a lexical retriever finds them by construction:"
        ),
    ]
    other = "llamaindex-bm25-sentences" if "llamaindex-bm25-sentences" in results else None
    runs = {baseline: base.run}
    if other and other != baseline:
        runs[other] = results[other].run
    if retriever is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synth_run = run_retriever(retriever[0], synthetic.dataset, k=10, name=baseline,
                                      calls=Calling(progress=False), **retriever[1])  # fmt: skip
            on_synth = evaluate(synthetic.dataset.qrels, synth_run.run, ["ndcg@10"])["ndcg@10"]
        on_human = evaluate(dataset, base, ["ndcg@10"])["ndcg@10"]
        lines.append(
            f"  {baseline} ndcg@10: {on_synth:.3f} on the generated questions, {on_human:.3f} "
            "on the 40 written by people."
        )
    est = estimate(dataset, runs, judge=judge, human=30, metrics=["ndcg@10"],
                   calls=replace(quiet, concurrency=4))  # fmt: skip
    lines.append(
        _wrap(
            "With no labels at all, a model judge grades what the runs retrieve (ranklens."
            "estimate; the demo's stand-in judge here). Calibrated on 30 questions people "
            "labelled (the shipped labels standing in), prediction-powered inference corrects "
            "the judge's bias with an interval that stays valid (PPI++, "
            "docs/without-labels.md):"
        )
    )
    for row in est.rows:
        naive, tuned, human = row.method("naive"), row.method("ppi++"), row.method("human")
        lines.append(
            f"  {row.target} {row.metric}:\n    judge only {naive.value:.3f} "
            f"[{naive.lo:.3f}, {naive.hi:.3f}]   PPI++ {tuned.value:.3f} "
            f"[{tuned.lo:.3f}, {tuned.hi:.3f}]   people only {human.value:.3f} "
            f"[{human.lo:.3f}, {human.hi:.3f}]"
        )
    for row in est.rows:
        if row.kind != "difference":
            continue
        naive, tuned = row.method("naive"), row.method("ppi++")
        if (naive.lo > 0 or naive.hi < 0) and tuned.lo <= 0 <= tuned.hi:
            lines.append(_wrap(
                "  The judge alone would have called that difference real; calibrated on "
                "the people's labels, the interval holds 0: not shown by these questions."
            ))  # fmt: skip
    j = est.judge
    kappa = j.kappa if j.kappa is not None else float("nan")
    lines.append(
        _wrap(
            f"The stand-in judge agrees with the people on {j.observed or 0:.0%} of "
            f"{j.n} pairs (kappa {kappa:.2f}); PPI++ leans on "
            "it only as far as it correlates with them."
        )
    )
    if report is not None and html is not None:
        est.attach(report)
        report.to_html(html)
        lines.append("  (the estimate is in the HTML report too)")
    return "\n".join(lines) + "\n"
