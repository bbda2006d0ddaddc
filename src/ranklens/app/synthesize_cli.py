"""``ranklens synthesize``: a test set generated from a corpus, written as a BEIR folder
with its provenance (:func:`ranklens.synthesize`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .callables import load_callable


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
    p.add_argument("-n", type=int, metavar="N", help="passages drawn at random (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-chars", type=int, default=2000, help="passage size (default: 2000)")
    p.add_argument(
        "--max-overlap",
        default="0.9",
        metavar="X",
        help="drop questions copying more of their passage's word bigrams "
        "(default 0.9; none keeps them, the overlap still recorded)",
    )
    p.add_argument("--near", type=float, default=0.9, help="near-duplicate Jaccard (default 0.9)")
    p.add_argument("--cache", metavar="LOG", help="the resumable log of generator answers")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--timeout", type=float, help="seconds per generator call")
    p.add_argument("--retries", type=int, default=2)


def cmd_synthesize(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..synthesis import OfflineGenerator, synthesize

    generate = load_callable(args.generator, OfflineGenerator())
    try:
        overlap = None if args.max_overlap == "none" else float(args.max_overlap)
    except ValueError:
        raise InputError(
            f"--max-overlap takes a number or none, got {args.max_overlap!r}"
        ) from None
    s = synthesize(
        args.corpus,
        generate,
        n=args.n,
        seed=args.seed,
        max_chars=args.max_chars,
        max_overlap=overlap,
        near_duplicate=args.near,
        cache=args.cache,
        concurrency=args.concurrency,
        timeout=args.timeout,
        retries=args.retries,
        name=args.output.rstrip("/").rsplit("/", 1)[-1],
    )
    folder = s.write(args.output)
    sys.stdout.write(s.summary() + "\n")
    sys.stderr.write(f"wrote {folder} (BEIR layout) and {folder / 'provenance.jsonl'}\n")
    return 0
