"""``arcnb evaluate``: a model checkpoint run on a dataset, its run directory written
and scored."""
from __future__ import annotations

from pathlib import Path

from ..evaluate import evaluate
from ..models.loading import CHECKPOINT_SUFFIXES
from ..probes import probe_lines
from ..runs import METRICS, PREDICTIONS, RESULTS_CSV, SUBMISSION, TASKS_CSV
from .common import (add_eval_options, add_option, eval_options, format_summary, format_unscored,
                     json_line)

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb evaluate`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("evaluate", help="run a model checkpoint on a dataset and score it",
                       description=f"Evaluate a checkpoint: {PREDICTIONS} (ARC Prize format), "
                                   f"{RESULTS_CSV}/.parquet, {TASKS_CSV} and {METRICS} with "
                                   "provenance in --out. On a dataset without test outputs "
                                   f"(a hidden test set) nothing is scored and {SUBMISSION} "
                                   "is written for Kaggle. Resumable; shards over ranks under "
                                   "torchrun.")
    add_option(p, "evaluate", "checkpoint", required=True,
                help="checkpoint file (" + ", ".join(CHECKPOINT_SUFFIXES) + "; a state dict or "
                     ".safetensors with --arch), 'baseline' (the bundled model) or a model name such "
                     "as copy-input")
    add_option(p, "evaluate", "dataset", required=True,
                help="dataset name (e.g. arc-agi-1:evaluation), task folder, task file or "
                     "*_challenges.json (without its solutions file: a hidden test set, not scored, "
                     f"{SUBMISSION} written)")
    add_option(p, "evaluate", "out", required=True, help="run directory to write")
    add_eval_options(p, "evaluate", "device", "batch_size", "augment", "color_perms")
    add_option(p, "evaluate", "tasks")
    add_eval_options(p, "evaluate", "estimator", "arch", "config", "replace_config",
                     "trust_checkpoint", "attempts", "seed")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    add_option(p, "evaluate", "overwrite", help="replace a finished run in --out")
    add_option(p, "evaluate", "no_progress")
    add_eval_options(p, "evaluate", "probe", "proxy")
    add_option(p, "evaluate", "json")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb evaluate`` on parsed arguments; returns the exit status."""
    res = evaluate(args.checkpoint, args.dataset, args.out, options=eval_options(args),
                   tasks=args.tasks, resume=args.resume, overwrite=args.overwrite,
                   progress=False if args.no_progress else None)
    if res is None:  # a non-zero rank under torchrun: rank 0 reports
        return 0
    if args.json:
        print(json_line({k: v for k, v in res.metrics.items() if k != "provenance"}))
        return 0
    if getattr(res, "scored", True) is False:  # a hidden test set: predictions only
        print(format_unscored(res.summary))
        for line in probe_lines(res.metrics):
            print(line)
        print(f"wrote {args.out} (Kaggle submission: {Path(args.out) / SUBMISSION})")
        return 0
    print(format_summary(res.summary, res.ks))
    for line in probe_lines(res.metrics):
        print(line)
    print(f"wrote {args.out}")
    return 0
