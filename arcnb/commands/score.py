"""Score predictions (an ARC Prize submission file, a benchmarking-harness run folder or a
JSON Lines file) with the official rule, in three conventions, with cost and tokens when
the attempts carry them.
"""
from __future__ import annotations

from ..runs import Run
from ..scoring import score
from .common import (add_option, add_scoring_inputs, fail, format_summary, json_line, say,
                     scored_input)

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb score`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("score", help="score an ARC Prize submission file on a dataset",
                       description=__doc__)
    add_scoring_inputs(p, "submission JSON file, a benchmarking-harness run folder (one "
                          "<task_id>.json per task) or a .jsonl file (one test output per "
                          "line)")
    p.add_argument("--k", type=int, action="append", default=[], metavar="K",
                   help="also report pass@K for this K (repeatable; 1 and 2 always)")
    add_option(p, "score", "estimator")
    add_option(p, "score", "json")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 2) instead of warning when the predictions look made for "
                        "another dataset, hold test outputs the dataset lacks, or leave some "
                        "of the scored tasks without predictions")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb score`` on parsed arguments; returns the exit status."""
    ds, given = scored_input(args)
    res = score(ds, given.results.predictions if isinstance(given, Run) else given,
                ks=[1, 2, *args.k], estimator=args.estimator)
    warnings = res.summary.get("warnings", [])
    if warnings and args.strict:
        return fail(f"{warnings[0]} (--strict)")
    for w in warnings:
        say("warning", w)
    for note in res.summary.get("notes", []):
        say("note", note)
    problems = res.problems
    for line in format_problems(problems):
        say("problems", line)
    if args.json:
        print(json_line({**res.summary, "problems": problems}))
        return 0
    print(format_summary(res.summary, res.ks))
    return 0


def format_problems(problems: list[dict]) -> list[str]:
    """One line per kind of problem in the predictions (``Results.problems``): the
    count and the first examples."""
    lines = []
    for p in problems:
        examples = "; ".join(p.get("examples") or [])
        lines.append(f"{p['count']} x {p['kind']}" + (f" (e.g. {examples})" if examples else ""))
    return lines
