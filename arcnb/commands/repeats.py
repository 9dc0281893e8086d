"""Score many runs on one dataset and analyse them together, grouped into configurations:
pass@2 mean, SD, min and max over runs with a 95% interval over tasks and runs beside
the one-run interval, tasks that flip, differences between configurations with a paired
test over tasks, the expected private score of the best run picked on a public half, and
union coverage. A folder that is not a run stands for every run below it (one per
sub-folder, at any depth).
"""
from __future__ import annotations

from .. import report as R
from ..errors import ArcnbError
from ..repeats import repeats as analyse_repeats
from .common import add_eval_options, add_option, add_result_options, say, show_result

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb repeats`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("repeats", help="many runs (seeds, reruns, configurations) on one "
                                       "dataset: spread, flips, differences, unions",
                       description=__doc__)
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="predictions file, harness run folder, run directory, or a folder "
                        "holding runs in sub-folders")
    add_option(p, "repeats", "dataset", required=True)
    add_option(p, "repeats", "tasks")
    add_option(p, "repeats", "groups")
    p.add_argument("--group-by", default="auto",
                   help="auto (default), pattern (names like config-seed3) or a folder level "
                        "(0: the first folder below the root)")
    p.add_argument("--score", metavar="NAME",
                   help="a number in the attempts' metadata (higher is better) that breaks "
                        "vote ties in the ensembles, e.g. logprob")
    add_option(p, "repeats", "tie", help="how the ensembles break the ties left (after --score): "
                                          "'random' (uniformly at random; their pass@2 is the exact "
                                          "expectation, default) or 'first' (first appearance: run "
                                          "order, then attempt order)")
    add_eval_options(p, "repeats", "n_boot", "seed")
    add_result_options(p, "repeats", out_help="folder for summary.json and the CSV tables")
    p.add_argument("--report", action="store_true",
                   help="also write the page of many runs, repeats.html, into --out")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb repeats`` on parsed arguments; returns the exit status."""
    if args.report and not args.out:
        raise ArcnbError("--report writes repeats.html into a folder: pass --out DIR")
    group_by = args.group_by
    if group_by.lstrip("-").isdigit():
        group_by = int(group_by)
    rep = analyse_repeats(args.sources, dataset=args.dataset, tasks=args.tasks,
                          groups=args.groups, group_by=group_by, n_boot=args.n_boot,
                          seed=args.seed, score=args.score, tie=args.tie)
    for w in rep.summary.get("warnings", []):
        say("warning", w)
    return show_result(args, rep.summary, rep.text, lambda out: rep.write(
        out, overwrite=args.overwrite, html=R.sections.repeats_page(rep) if args.report else None))
