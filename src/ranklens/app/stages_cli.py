"""``ranklens stages``: every stage of a pipeline measured against the labels from the
command line (:func:`ranklens.evaluate_stages`).

``ranklens stages LABELS --stage bm25=bm25.txt --stage rerank=rerank.txt [--stage
NAME=RUN ...] [-m recall -m ndcg@10] [--budget 1024tok --straddle include] [--texts
CORPUS] [--memory 2G] [--format terminal|markdown|json|html] [--output PATH] [--query
QID]``: each stage's
metrics, the share of relevant units it holds, where each unit was lost (never retrieved,
cut by rank, filtered, outside the budget) and the recall each transition loses, with its
interval and p-value. Stages are given in pipeline order, one run file each (TREC, JSON,
JSONL, Parquet); a context budget counts each ranked document's size from the run's chunk
columns, or from ``--texts`` (a BEIR ``corpus.jsonl`` or a dataset folder; a dataset folder
given as LABELS brings its corpus). The judging options (``--relevance-level``,
``--convention``, ``--ties``...) are those of ``compare``."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from ..declared import STATISTICS, ParameterError, declare
from ..declared import path as path_option
from ..errors import InputError, RanklensError
from ..stages.evaluate import EVALUATE_STAGES
from .judge_args import add_judge_args, judge_kwargs

FORMATS = ("terminal", "markdown", "json", "html")
DEFAULT_METRICS = ("recall", "ndcg@10")

STAGES_CLI = declare("ranklens stages", {
    **{k: STATISTICS[k] for k in ("test", "correction", "ci", "confidence", "n_resamples",
                                  "seed")},
    "budget": EVALUATE_STAGES["budget"],
    "memory": EVALUATE_STAGES["memory"],
    "straddle": EVALUATE_STAGES["straddle"],
    "output": path_option(None, "write the output to this file (default: standard output)",
                          none=True),
    "texts": path_option(None, "the documents' texts for a context budget: a BEIR "
                         "corpus.jsonl or a dataset folder", none=True),
})  # fmt: skip


def add_stages_command(sub: Any) -> None:
    p = sub.add_parser(
        "stages",
        help="every stage of a pipeline against the labels: where the evidence was lost",
        description="Evaluate each stage of a RAG pipeline (retriever, fusion, reranker, "
        "filters, context) against the same labels: every metric at every stage, the share "
        "of relevant units each holds, where each unit was lost (never retrieved, cut by "
        "rank, filtered, outside the budget) and the recall each transition loses, tested. "
        "docs/stages.md",
    )
    p.add_argument("qrels", metavar="LABELS", help="the labels (qrels file, or a dataset folder)")
    p.add_argument(
        "--stage",
        action="append",
        required=True,
        metavar="NAME=RUN",
        help="a stage's run file (TREC, .json, .jsonl, .parquet) named NAME; repeat for each "
        "stage, in pipeline order",
    )
    p.add_argument(
        "-m",
        "--metric",
        "--metrics",
        action="extend",
        nargs="+",
        dest="metrics",
        metavar="METRIC",
        help="metrics computed at every stage: -m recall -m ndcg@10, or --metrics recall "
        "ndcg@10 (default: "
        + ", ".join(DEFAULT_METRICS)
        + "); a budget cutoff works as a rank cutoff: recall@1024tok",
    )
    STAGES_CLI.add_argument(p, "budget", metavar="BUDGET",
                            help="the context given to the generator after the last stage, "
                            "e.g. 1024tok or 4000char: units of the last stage beyond it are "
                            "'outside the budget'")  # fmt: skip
    STAGES_CLI.add_argument(
        p, "straddle", default="exclude",
        help="the chunk straddling the budget: exclude (default) or include",
    )  # fmt: skip
    STAGES_CLI.add_argument(p, "texts", metavar="CORPUS")
    p.add_argument(  # checked by its declaration in memory_budget (a size text or a number)
        "--memory",
        metavar="BYTES",
        help="the memory budget (e.g. 2G, 500M; default about 2 GB): a pipeline too large to "
        "judge whole within it is judged in shards of whole queries, with the same numbers",
    )
    STAGES_CLI.add_argument(p, "test", default="randomization")
    STAGES_CLI.add_argument(p, "correction", default="holm")
    STAGES_CLI.add_argument(p, "ci", default="bootstrap")
    STAGES_CLI.add_argument(p, "confidence", default=0.95)
    STAGES_CLI.add_argument(p, "n_resamples", "--resamples", default=10_000, metavar="N")
    STAGES_CLI.add_argument(p, "seed", default=0, metavar="N")
    p.add_argument(
        "--format",
        default="terminal",
        choices=FORMATS,
        help="what to write (default: terminal; html: the page with the waterfall and the "
        "per-query drill-down)",
    )
    STAGES_CLI.add_argument(p, "output", "-o", "--output", metavar="PATH")
    p.add_argument(
        "--query",
        action="append",
        default=[],
        metavar="QID",
        help="also show this query's relevant units, their rank at every stage and their "
        "fate (terminal and markdown formats); repeatable",
    )
    add_judge_args(p)


def stage_paths(items: list[str]) -> dict[str, str]:
    """``{stage: path}`` in the order given from ``--stage NAME=RUN``: a stage without a
    name or a file, a name given twice or a file that does not exist is an error naming
    it."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path:
            raise InputError(
                f"--stage {item!r}: give NAME=RUN, the stage's name and its run file "
                "(--stage bm25=bm25.txt --stage rerank=rerank.txt)"
            )
        if name in out:
            raise InputError(
                f"--stage {item!r}: the stage {name!r} is given twice; name each stage once"
            )
        if not Path(path).is_file():
            raise InputError(f"--stage {item!r}: the run file {path!r} does not exist")
        out[name] = path
    return out


def check_budget(budget: str) -> None:
    """A ``--budget`` that is not a budget (``1024tok``, ``4000char``) is an error naming
    the flag, before any work."""
    from ..metrics import parse_metric

    try:
        spec = getattr(parse_metric(f"recall@{budget}"), "budget", None)
    except RanklensError as exc:
        said = exc.args[0] if exc.args else str(exc)  # a KeyError's str() is quoted
        raise InputError(f"--budget {budget!r}: {said}") from None
    if spec is None:
        raise InputError(
            f"--budget {budget!r}: a rank, not a budget; write its unit: 1024tok or 4000char"
        )


def memory_budget(raw: str | None) -> Any:
    """``--memory``: a number of bytes or a size text (``2G``), checked by its declaration
    (an error naming the flag)."""
    if raw is None:
        return None
    try:
        value: Any = float(raw)
    except ValueError:
        value = raw.strip()
    try:
        return STAGES_CLI.value("memory", value, "ranklens stages --memory")
    except ParameterError as exc:
        raise InputError(str(exc)) from None


def _texts(path: str) -> dict[str, str]:
    """``{doc id: text}`` from a BEIR corpus file or a dataset folder."""
    from ..io import read_dataset
    from ..io.beir import read_corpus

    p = Path(path)
    if not p.exists():
        raise InputError(f"--texts {path!r}: the file does not exist")
    corpus = read_dataset(p).corpus if p.is_dir() else read_corpus(p)
    if not corpus:
        raise InputError(f"--texts {path!r}: no documents found (a BEIR corpus.jsonl or folder)")
    return {str(d): str(v.get("text") or "") for d, v in corpus.items()}


def _plain(obj: Any) -> Any:
    """JSON-ready: NaN and infinities as None (JSON has neither)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def cmd_stages(args: argparse.Namespace) -> int:
    from ..io import read_dataset
    from ..settings import Statistics
    from ..stages import evaluate_stages

    out_path = Path(args.output) if args.output else None
    if out_path is not None and not out_path.parent.is_dir():  # before the work, not after
        raise InputError(f"--output {args.output!r}: the folder {str(out_path.parent)!r} "
                         "does not exist")  # fmt: skip
    stages = stage_paths(args.stage)
    if args.budget is not None:
        check_budget(args.budget)
    labels: Any = args.qrels
    options = judge_kwargs(args)
    if Path(args.qrels).is_dir():
        labels = read_dataset(args.qrels)
    if args.texts:
        options["texts"] = _texts(args.texts)
    elif args.budget and getattr(labels, "corpus", None):
        options["texts"] = {str(d): str(v.get("text") or "") for d, v in labels.corpus.items()}
    ev = evaluate_stages(
        labels,
        stages,
        args.metrics or list(DEFAULT_METRICS),
        budget=args.budget,
        straddle=args.straddle,
        memory=memory_budget(args.memory),
        stats=Statistics(
            test=args.test,
            correction=args.correction,
            ci=args.ci,
            confidence=args.confidence,
            n_resamples=args.resamples,
            seed=args.seed,
        ),
        **options,
    )
    known = {str(q) for q in ev.attribution.query_ids}
    for qid in args.query:
        if qid not in known:
            raise InputError(f"--query {qid!r}: no such query among the stages' queries")
    if args.format == "terminal":
        color = out_path is None and sys.stdout.isatty()
        text = ev.table(color=color) + "".join("\n" + ev.query_text(q) for q in args.query)
    elif args.format == "markdown":
        # an indented code block: a query's text cannot close it
        shown = ["\n" + "".join(f"    {line}\n" for line in ev.query_text(q).splitlines())
                 for q in args.query]  # fmt: skip
        text = ev.to_markdown() + "".join(shown)
    elif args.format == "json":
        text = json.dumps(_plain(ev.to_dict()), indent=1, ensure_ascii=False) + "\n"
    else:
        text = ev.to_html()
    if out_path is not None:
        out_path.write_text(text, encoding="utf-8")
        sys.stderr.write(f"wrote {out_path}\n")
    else:
        sys.stdout.write(text)
    return 0
