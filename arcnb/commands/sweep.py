"""Evaluate every checkpoint (files, a folder or a quoted glob pattern) on one dataset,
each into DIR/runs/ (a finished checkpoint is not redone), then write DIR/sweep.csv (one
row per checkpoint, ordered by training step, with pass@2 and the graded metrics and
their 95% intervals) and the sweep page DIR/sweep.html. The step comes from the
checkpoint, else its file name, else the order given. With --shard I/N only every N-th
checkpoint is evaluated (one job of a job array); then arcnb sweep --collect DIR builds
the files.
"""
from __future__ import annotations

from pathlib import Path

from .. import sweep as S
from ..errors import ParameterError, one_line
from ..text import fmt_interval
from .common import add_eval_options, add_option, eval_options, number, say

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb sweep`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("sweep", help="evaluate the checkpoints of a training run: learning "
                                     "curves and the sweep page",
                       description=__doc__)
    add_option(p, "sweep", "checkpoints")
    add_option(p, "sweep", "collect", help="build sweep.csv and sweep.html from the finished runs of "
                                            "the sweep folder DIR (after every shard is done); no "
                                            "checkpoint is evaluated")
    add_option(p, "sweep", "dataset", help="dataset name (e.g. arc-agi-1:evaluation), task folder or "
                                            "*_challenges.json with its solutions")
    add_option(p, "sweep", "out", help="sweep folder to write (runs/, sweep.csv, sweep.html)")
    add_eval_options(p, "sweep", "device", "batch_size", "augment", "color_perms")
    add_option(p, "sweep", "tasks")
    add_eval_options(p, "sweep", "estimator", "arch", "config", "replace_config",
                     "trust_checkpoint", "attempts", "seed")
    add_option(p, "sweep", "jobs", help="checkpoints evaluated at once in this process (default 1)")
    p.add_argument("--shard", metavar="I/N",
                   help="evaluate only the checkpoints at positions I, I+N, I+2N, ... of the "
                        "step order (I from 0 to N-1, e.g. a job array's task id); no page")
    add_option(p, "sweep", "overwrite", help="evaluate finished checkpoints again")
    p.add_argument("--no-report", action="store_true", help="write the tables, not sweep.html")
    add_option(p, "sweep", "no_progress")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb sweep`` on parsed arguments; returns the exit status."""
    if args.collect:
        if args.checkpoints or args.out or args.shard:
            raise ParameterError("--collect DIR takes no checkpoint, --out or --shard")
        sw = S.collect(args.collect, dataset=args.dataset, seed=args.seed,
                       report=not args.no_report)
    else:
        if not args.checkpoints:
            raise ParameterError("give at least one checkpoint (or --collect DIR)")
        if not args.dataset or not args.out:
            raise ParameterError("--dataset and --out are required with checkpoints")
        sw = S.sweep(args.checkpoints, args.dataset, args.out, options=eval_options(args),
                     tasks=args.tasks, jobs=1 if args.jobs is None else args.jobs,
                     shard=args.shard, overwrite=args.overwrite, report=not args.no_report,
                     progress=False if args.no_progress else None)
        if sw is None:  # a shard, or a rank other than 0 under torchrun
            if args.shard:
                print(f"shard {args.shard}: done; when every shard is done run "
                      f"arcnb sweep --collect {args.out}")
            return 0
    table = sw.table()
    for note in sw.notes():
        say("note", note)
    print(f"{'step':>10}  {'pass@2':>7}  {'95% interval':>17}  {'partial_credit':>14}  checkpoint")
    for _, r in table.iterrows():
        # one_line: a newline in a file name never starts a forged row
        print(f"{r['step']:>10}  {number(r['pass@2']):>7}  "
              f"{fmt_interval(r['pass@2_ci_low'], r['pass@2_ci_high'])}  "
              f"{number(r['partial_credit']):>14}  {one_line(r['checkpoint'])}")
    sel = sw.selection()
    print(f"steps from: {sw.step_source}; best checkpoint chosen on half of the tasks: step "
          f"{sel['chosen_step']}, pass@2 {number(sel['report_score'])} on the other half "
          f"(choosing on that half itself would add {number(sel['inflation'])})")
    print(f"wrote {Path(sw.out) / S.SWEEP_CSV}")
    if not args.no_report:
        print(f"page: {Path(sw.out) / S.SWEEP_HTML}")
    return 0
