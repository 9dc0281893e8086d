"""``arcnb report``: the HTML report of a checkpoint, predictions or run directories
(several checkpoints: a sweep too)."""
from __future__ import annotations

from pathlib import Path

from .. import report as R
from .. import sweep as S
from ..data import load_dataset
from ..difficulty import read_difficulty
from ..errors import ParameterError
from ..front import CheckpointSource, PredictionsSource, RunDirSource
from ..report.build import SWEEP_FOLDER
from ..report.references import COPY_INPUT
from ..runs import (FIGURES, METRICS, REPORT_HTML, REPORT_NOTEBOOK, OutputFolder, compact_line,
                    finished_runs, is_run_dir, is_scored, ks_of, summary_of)
from ..text import fmt_number
from .common import (add_eval_options, add_option, eval_options, format_summary,
                     format_unscored, say)

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb report`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("report", help="build a self-contained HTML report (papermill + nbconvert)",
                       description="Evaluate a checkpoint, score a predictions file or take a "
                                   "run directory, execute arcnb's report notebook with papermill "
                                   f"and export OUT/{REPORT_HTML} (code hidden, images embedded, "
                                   "nothing loaded from the network). Several checkpoints run "
                                   "concurrently, one sub-folder of OUT each.")
    src = p.add_mutually_exclusive_group(required=True)
    add_option(src, "report", "checkpoint", nargs="+", metavar="CKPT",
                help="checkpoint file(s), 'baseline' or a model name such as copy-input")
    add_option(src, "report", "predictions", nargs="+", metavar="FILE",
                help="predictions to score: submission JSON file(s), harness run folder(s) or "
                     ".jsonl file(s)")
    add_option(src, "report", "run")
    src.add_argument("--default", action="store_true",
                     help="the embedded default: the bundled baseline checkpoint on "
                          "arc-agi-1:evaluation (or the bundled example predictions when no "
                          "checkpoint is bundled)")
    add_option(p, "report", "dataset", help="dataset name, task folder or *_challenges.json (required "
                                             "with --checkpoint/--predictions; with --run it "
                                             "overrides the recorded one)")
    add_option(p, "report", "taxonomy", help="user taxonomy (.csv task_id,category or .json) added to "
                                              "the automatic one")
    add_option(p, "report", "difficulty")
    add_option(p, "report", "tasks")
    add_option(p, "report", "out", required=True, help=f"output folder (run files, {REPORT_NOTEBOOK}, "
                                                        f"{REPORT_HTML}, {FIGURES}/)")
    add_option(p, "report", "overwrite", help="replace existing outputs in --out")
    add_eval_options(p, "report", "device", "batch_size", "augment", "color_perms")
    p.add_argument("--reference", action="append", metavar="REF",
                   help="a reference run shown beside the model in the report's reference-points "
                        "section (repeatable): copy-input, a predictions file or harness run "
                        "folder, or default (the bundled program-search predictions for the "
                        "dataset, then copy-input); replaces --default's references")
    add_option(p, "report", "jobs", help="reports built at once (default: the number of cores)")
    add_option(p, "report", "estimator")
    add_option(p, "report", "train_data", help="training data (dataset names, folders, files): adds "
                                                "the report's training-data overlap section and "
                                                f"records the check in {METRICS}")
    add_eval_options(p, "report", "arch", "config", "replace_config", "trust_checkpoint",
                     "attempts", "seed")
    p.add_argument("--no-notebook", action="store_true",
                   help=f"write {REPORT_HTML} from the same sections in this process, without a "
                        f"notebook kernel (faster; no {REPORT_NOTEBOOK} to re-run in Jupyter)")
    add_option(p, "report", "no_progress")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb report`` on parsed arguments; returns the exit status."""
    dataset, references = args.dataset, None
    opts = eval_options(args)
    ckpts = args.checkpoint or []
    if len(ckpts) >= 2:  # before any work: OUT/sweep is never a planted link
        OutputFolder(args.out).folder(SWEEP_FOLDER)
    if args.default:
        default = R.default_source(opts)
        sources = [default]
        dataset = dataset or R.DEFAULT_DATASET
        references = R.default_references(R.DEFAULT_DATASET, exclude=default)
    elif args.checkpoint:
        sources = [CheckpointSource(c, opts) for c in args.checkpoint]
    elif args.predictions:
        sources = [RunDirSource(f) if is_run_dir(f) else PredictionsSource(f)
                   for f in args.predictions]
    else:
        sources = [RunDirSource(d) for d in args.run]
    if not dataset and not args.run:
        raise ParameterError("--dataset is required with --checkpoint / --predictions")
    if args.reference:
        references = _references(args.reference)
    taxonomy = args.taxonomy
    if args.difficulty:  # checked here: a bad file is one line before any work
        if taxonomy:
            raise ParameterError("give --difficulty or --taxonomy, not both (the report takes "
                                 "one user taxonomy)")
        read_difficulty(args.difficulty)
        taxonomy = args.difficulty
    results = R.build_reports(sources, dataset=dataset, out=args.out, taxonomy=taxonomy,
                              tasks=args.tasks, overwrite=args.overwrite,
                              progress=not args.no_progress, max_workers=args.jobs,
                              estimator=args.estimator, references=references,
                              notebook=not args.no_notebook, **_train_data_parameters(args))
    for r in results:
        for w in summary_of(r.metrics).get("warnings", []):
            say("warning", w)
        print(f"report: {r.html}")
        print(format_summary(summary_of(r.metrics), ks_of(r.metrics)) if is_scored(r.metrics)
              else format_unscored(summary_of(r.metrics)))
        print(compact_line(r.metrics))
        print("time per stage: " + ", ".join(f"{k} {fmt_number(v, least=1, most=1)} s"
                                             for k, v in r.timings.items()))
    if len(results) > 1:
        print(f"index: {Path(args.out) / R.INDEX_HTML}")
    if len(ckpts) >= 2:
        _report_sweep(args)
    return 0


def _report_sweep(args) -> None:
    """``arcnb report --checkpoint a b c``: when every checkpoint records its training
    step, the reports' runs also become a sweep (OUT/sweep/: sweep.csv, sweep.html)."""
    if S.plan(args.checkpoint)[0].step_source != S.STEP_SOURCES[0]:
        return
    # the reports' folders hold the runs; OUT/sweep is a folder of OUT's own (a link
    # planted there is refused, never written through)
    runs = finished_runs(args.out)
    sweep_dir = OutputFolder(args.out).folder(SWEEP_FOLDER).path
    sw = S.from_run_dirs(args.checkpoint, runs, sweep_dir, overwrite=args.overwrite)
    print(f"sweep (the checkpoints record their steps): {Path(sw.out) / S.SWEEP_HTML}")


def _train_data_parameters(args) -> dict:
    """``--train-data``: the report notebook's ``train_data`` parameter (the section
    "Training-data overlap"); nothing when the option is not given."""
    if not getattr(args, "train_data", None):
        return {}
    for source in args.train_data:  # checked before any work, like every report input
        load_dataset(source)
    return {"report_parameters": {"train_data": list(args.train_data)}}


def _references(refs: list[str]) -> list[str]:
    """``--reference`` values, checked before any work: ``default``, ``copy-input`` or an
    existing predictions file / harness run folder."""
    for r in refs:
        if r not in ("default", COPY_INPUT) and not Path(r).exists():
            raise ParameterError(f"--reference {r!r}: no such file or folder (use copy-input, "
                                 "default, or a predictions file / harness run folder)")
    return list(refs)
