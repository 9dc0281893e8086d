"""For every test output of EVAL: is its (input, output) pair a pair of some training task
verbatim (exact), up to a rotation or mirror and a permutation of the colours
(equivalent), or is its input a training input (input seen); per task also whether a
training task has its id, with other content (version drift). Several --train datasets
form one pool.
"""
from __future__ import annotations

from ..overlap import overlap
from .common import add_option, add_result_options, show_result

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb overlap`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("overlap", help="which evaluation outputs the training data already holds",
                       description=__doc__)
    p.add_argument("dataset", metavar="EVAL",
                   help="the evaluation dataset: a name (e.g. arc-agi-1:evaluation), task "
                        "folder, task file or *_challenges.json")
    p.add_argument("--train", nargs="+", required=True, metavar="TRAIN",
                   help="the training data: one or more datasets, as EVAL")
    add_option(p, "overlap", "tasks", help="file of EVAL task ids to keep (JSON list or one per line)")
    p.add_argument("--colors", choices=["1-9", "all"], default="1-9",
                   help="colours that may permute for 'equivalent': 1-9 (default; black, the "
                        "background, stays black) or all")
    add_result_options(p, "overlap", out_help="folder for the per-output table (overlap.csv, "
                                              "overlap.parquet), overlap_tasks.csv and overlap.json",
                       overwrite_help="replace existing files in --out")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb overlap`` on parsed arguments; returns the exit status."""
    ov = overlap(args.dataset, args.train, tasks=args.tasks, colors=args.colors)
    return show_result(args, ov.summary, ov.text,
                       lambda out: ov.write(out, overwrite=args.overwrite))
