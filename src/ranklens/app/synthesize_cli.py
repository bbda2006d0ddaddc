"""``ranklens synthesize``: a test set generated from a corpus, written as a BEIR folder
with its provenance (:func:`ranklens.synthesize`)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from ..declared import declare
from ..synthesis.synthesize import SYNTHESIZE
from .callables import load_callable

SYNTHESIZE_CLI = declare(
    "ranklens synthesize",
    {
        k: SYNTHESIZE[k]
        for k in (
            "n", "seed", "max_chars", "max_overlap", "near_duplicate", "concurrency", "timeout",
            "retries",
        )
    },
)  # fmt: skip


def add_synthesize_command(sub: Any) -> None:
    p = sub.add_parser(
        "synthesize",
        help="generate a test set from a corpus, each question with its provenance",
        description="Generate questions from the passages of CORPUS with a generator (an LLM "
        "call you name as module:function, or the offline stand-in), filter them (empty, "
        "preamble, duplicates, near-duplicates, copies of their passage), and write a BEIR "
        "folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) plus provenance.jsonl.",
    )
    p.add_argument("corpus", metavar="CORPUS", help="corpus.jsonl (BEIR) or a dataset folder")
    p.add_argument("-o", "--output", required=True, metavar="FOLDER", help="where to write")
    p.add_argument(
        "--generator",
        default="offline",
        metavar="SPEC",
        help="offline (the deterministic stand-in, for trying it out), module:name "
        "or file.py:name of a callable passage -> question(s)",
    )
    SYNTHESIZE_CLI.add_argument(p, "n", "-n", metavar="N")
    SYNTHESIZE_CLI.add_argument(p, "seed", default=0)
    SYNTHESIZE_CLI.add_argument(p, "max_chars", default=2000)
    SYNTHESIZE_CLI.add_argument(p, "max_overlap", default=0.9, metavar="X")
    SYNTHESIZE_CLI.add_argument(p, "near_duplicate", "--near", default=0.9)
    p.add_argument("--cache", metavar="LOG", help="the resumable log of generator answers")
    SYNTHESIZE_CLI.add_argument(p, "concurrency", default=8)
    SYNTHESIZE_CLI.add_argument(p, "timeout")
    SYNTHESIZE_CLI.add_argument(p, "retries", default=2)


def cmd_synthesize(args: argparse.Namespace) -> int:
    from ..labelling.judges import CALLS
    from ..synthesis import OfflineGenerator, synthesize

    generate = load_callable(args.generator, OfflineGenerator())
    s = synthesize(
        args.corpus,
        generate,
        n=args.n,
        seed=args.seed,
        max_chars=args.max_chars,
        max_overlap=args.max_overlap,
        near_duplicate=args.near,
        calls=replace(
            CALLS,
            concurrency=args.concurrency,
            timeout=args.timeout,
            retries=args.retries,
            cache=args.cache,
        ),
        name=args.output.rstrip("/").rsplit("/", 1)[-1],
    )
    folder = s.write(args.output)
    sys.stdout.write(s.summary() + "\n")
    sys.stderr.write(f"wrote {folder} (BEIR layout) and {folder / 'provenance.jsonl'}\n")
    return 0
