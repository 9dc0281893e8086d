"""The ``arcnb`` command.

Every subcommand answers bad input with one line on stderr and exit status 2, never a
traceback. Each subcommand is a pair of functions: ``_add_<name>(subparsers)`` builds
its parser and sets ``func`` to ``_run_<name>(args) -> int``.
"""
from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from . import report as R
from . import sweep as S
from ._version import __version__
from .candidates import candidates
from .compare import compare
from .difficulty import DIFFICULTY_FILE, MODELS as DIFFICULTY_MODELS, read_difficulty
from .data import DATASETS, load_dataset
from .errors import ArcnbError, ParameterError, one_line, printable
from .text import dataset_line, fmt_interval, fmt_number
from .voting import TIE_RULES
from .evaluate import evaluate
from .front import (CheckpointSource, PredictionsSource, RunDirSource, open_run,
                    task_set)
from .io import to_jsonable
from .models.loading import CHECKPOINT_SUFFIXES
from .options import EvalOptions
from .overlap import overlap
from .probes import probe_lines
from .arc3.command import add_command as add_arc3_command
from .repeats import repeats as analyse_repeats
from .report.build import SWEEP_FOLDER
from .report.references import COPY_INPUT
from .resources import copy_notebooks, notebook_names
from .runs import (Run, FIGURES, METRICS, PREDICTIONS, REPORT_HTML, REPORT_NOTEBOOK, RESULTS_CSV,
                   OutputFolder, finished_runs, is_run_dir,
                   SUBMISSION, TASKS_CSV, USER_PATHS_ENV, absolute_path, compact_line, is_scored,
                   ks_of, summary_of)
from .scoring import cost_line, score

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit status 2), starting with
    ``arcnb: error:`` for every subcommand too."""

    def error(self, message):  # noqa: D401
        where = self.prog[len("arcnb"):].strip() if self.prog.startswith("arcnb") else ""
        hint = f" (see 'arcnb {where} --help')" if where else ""
        self.exit(2, f"arcnb: error: {printable(message)}{hint}\n")


def _fail(message: str) -> int:
    print(f"arcnb: error: {one_line(message, first_line=True) or 'error'}", file=sys.stderr)
    return 2


def _say(kind: str, text: str) -> None:
    """One ``arcnb: KIND: ...`` line on stderr (control characters escaped)."""
    print(f"arcnb: {kind}: {printable(text)}", file=sys.stderr)


def printable_lines(text: str) -> str:
    """``text`` with every control or unprintable character escaped except the line
    breaks between its lines (a model name from a file can't move the cursor, recolour
    the terminal or redraw a table)."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


class _EscapedStream:
    """A text stream that writes through :func:`printable_lines` (the CLI's stdout)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        self._stream.write(printable_lines(text))
        return len(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def _escaped_stdout():
    old = sys.stdout
    sys.stdout = _EscapedStream(old)
    try:
        yield
    finally:
        sys.stdout = old


def format_problems(problems: list[dict]) -> list[str]:
    """One line per kind of problem in the predictions (``Results.problems``): the
    count and the first examples."""
    lines = []
    for p in problems:
        examples = "; ".join(p.get("examples") or [])
        lines.append(f"{p['count']} x {p['kind']}" + (f" (e.g. {examples})" if examples else ""))
    return lines


def _fmt(v) -> str:
    """A number on the terminal: at least 4 decimals, two significant digits when small
    (:func:`arcnb.text.fmt_number`: 0.00004 is 0.000040, never 0.0000)."""
    if isinstance(v, float):
        return fmt_number(v, least=4, most=8)
    return str(v)


# ---------------------------------------------------------------- the options
@dataclass(frozen=True)
class _Option:
    """One command-line option, defined once: its flag, where its value goes, its
    argparse keywords (type, default, choices, action, ...), its help (``helps``: the
    commands that word it otherwise), the subcommands that take it, and whether it
    holds a path (:func:`_resolve_paths` makes those absolute before a kernel or a
    worker sees them, for the commands that hand paths on). ``kwargs=None``: declared
    by :mod:`arcnb.arc3.command` (its recordings, run folders and baselines, worded
    there), listed here for its path mark; ``arcnb arc3`` adds its other shared options
    from here (``_add`` is handed to it)."""

    flag: str
    dest: str
    help: str
    commands: tuple[str, ...]
    kwargs: Mapping | None = field(default_factory=dict)
    is_path: bool = False
    helps: Mapping = field(default_factory=dict)


#: The subcommands that take each evaluation option (:class:`arcnb.options.EvalOptions`).
_EVAL_COMMANDS = {"estimator": ("score", "evaluate", "report", "sweep"),
                  "seed": ("evaluate", "report", "sweep", "compare", "repeats", "arc3",
                           "candidates"),
                  "n_boot": ("compare", "repeats", "arc3", "candidates"), "probe": ("evaluate",),
                  "proxy": ("evaluate",)}
_EVAL_DEFAULT_COMMANDS = ("evaluate", "report", "sweep")


def _eval_option(f) -> _Option:
    """The option of one field of :class:`arcnb.options.EvalOptions`: its default,
    choices and help are the field's."""
    meta = f.metadata
    if f.type == "bool":
        kwargs = {"action": "store_true"}
    elif "metavar" in meta:  # a repeatable text (--probe)
        kwargs = {"action": "append", "metavar": meta["metavar"]}
    else:
        kwargs = {"default": f.default, **({"type": int} if f.type == "int" else {}),
                  **({"choices": meta["choices"]} if "choices" in meta else {})}
    helps = {"report": "checkpoints: " + meta["help"]}
    if f.name == "estimator":
        helps = {"report": meta["help"] + "; a --run directory keeps its recorded estimator"}
    elif f.name == "seed":
        helps.update(compare="bootstrap seed (default 0)", arc3="bootstrap seed (default 0)",
                     candidates="bootstrap seed (default 0)",
                     repeats="seed of the resampling (default 0)")
    return _Option("--" + f.name.replace("_", "-"), f.name, meta["help"],
                   _EVAL_COMMANDS.get(f.name, _EVAL_DEFAULT_COMMANDS), kwargs, helps=helps)


_TASKS_HELP = "file of task ids to keep (JSON list or one per line)"
_RUN_COMMANDS = ("evaluate", "report", "sweep", "compare", "candidates", "repeats")

#: Every shared option of the subcommands (an option of one subcommand alone stays in
#: its ``_add_<name>``), the evaluation options generated from EvalOptions' fields.
_OPTIONS: tuple[_Option, ...] = (
    *(_eval_option(f) for f in fields(EvalOptions)),
    _Option("--dataset", "dataset", "dataset name (e.g. arc-agi-1:evaluation), task folder, "
            "task file or *_challenges.json",
            ("score", "candidates", "evaluate", "report", "sweep", "compare", "repeats"),
            is_path=True),
    _Option("--tasks", "tasks", _TASKS_HELP,
            ("score", "candidates", "compare", "evaluate", "report", "sweep", "repeats",
             "overlap"),
            is_path=True),
    _Option("--out", "out", "output folder", (*_RUN_COMMANDS, "arc3", "overlap"), is_path=True),
    _Option("--overwrite", "overwrite", "replace existing output files",
            (*_RUN_COMMANDS, "notebooks", "overlap", "arc3"), {"action": "store_true"}),
    _Option("--no-progress", "no_progress", "no progress bars", ("evaluate", "report", "sweep"),
            {"action": "store_true"}, helps={"evaluate": "no progress bar"}),
    _Option("--tie", "tie", "how votes break ties: 'random' (uniformly at random; the numbers "
            "are the exact expectation, default) or 'first' (first appearance)",
            ("candidates", "repeats"), {"choices": TIE_RULES, "default": "random"}),
    _Option("--json", "json", "print one JSON object on stdout",
            ("score", "evaluate", "candidates", "repeats", "overlap", "arc3"),
            {"action": "store_true"}),
    _Option("--jobs", "jobs", "how many at once", ("report", "sweep"), {"type": int}),
    _Option("--taxonomy", "taxonomy", "categories", ("compare", "report"), is_path=True),
    _Option("--difficulty", "difficulty", "a difficulty.csv written by arcnb compare: its tasks' "
            "difficulty bins as the report's user taxonomy (instead of --taxonomy)",
            ("report",), is_path=True),
    _Option("--checkpoint", "checkpoint", "checkpoint", ("evaluate", "report"), is_path=True),
    _Option("checkpoints", "checkpoints", "checkpoint files, folders of checkpoints, glob "
            "patterns (quoted), 'baseline' or model names", ("sweep",),
            {"nargs": "*", "metavar": "CKPT"}, is_path=True),
    _Option("--predictions", "predictions", "predictions", ("score", "candidates", "report"),
            is_path=True),
    _Option("--run", "run", "existing run director(y/ies)", ("report",),
            {"nargs": "+", "metavar": "DIR"}, is_path=True),
    _Option("RUN_DIR", "runs", "run directories", ("compare", "arc3"),
            {"nargs": "+", "metavar": "RUN_DIR"}, is_path=True),
    _Option("--train-data", "train_data", "training data", ("report",),
            {"nargs": "+", "action": "extend", "metavar": "TRAIN"}, is_path=True),
    _Option("--collect", "collect", "sweep folder", ("sweep",), {"metavar": "DIR"},
            is_path=True),
    _Option("--groups", "groups", "CSV with columns run, config (and optionally seed)",
            ("repeats",), is_path=True),
    _Option("PATH", "recordings", "recordings", ("arc3",), None, is_path=True),
    _Option("--baselines", "baselines", "baselines", ("arc3",), None, is_path=True),
)
_BY_DEST = {o.dest: o for o in _OPTIONS}


def _add(p, command: str, dest: str, **overrides) -> None:
    """Add the registered option ``dest`` to ``p`` (a parser or a group) of
    ``command``; ``overrides`` (help, required, nargs, ...) word it for that command."""
    opt = _BY_DEST[dest]
    if command not in opt.commands or opt.kwargs is None:
        raise RuntimeError(f"the option {opt.flag} is not registered for {command}")
    kwargs = {**opt.kwargs, "help": opt.helps.get(command, opt.help), **overrides}
    if opt.flag.startswith("--"):
        kwargs["dest"] = dest
    p.add_argument(opt.flag if opt.flag.startswith("--") else dest, **kwargs)


def _add_eval_options(p, command: str, *names: str) -> None:
    """The evaluation options ``names`` (default: every one ``command`` takes, in
    EvalOptions' order)."""
    for name in names or [o.dest for o in _OPTIONS if o.dest in EvalOptions.names()
                          and command in o.commands]:
        _add(p, command, name)


def _eval_options(args) -> EvalOptions:
    """The evaluation options on the command line, checked before any work (one line
    for a bad value) and with a ``module:callable`` ``--arch`` importable from the
    current directory."""
    given = {name: getattr(args, name) for name in EvalOptions.names() if hasattr(args, name)}
    return EvalOptions.from_mapping(given)


def format_unscored(summary: dict) -> str:
    """The lines printed for an unscored run (a hidden test set: no truth)."""
    ds = summary.get("dataset") or {}
    sub = summary.get("submission") or {}
    return "\n".join([
        dataset_line(ds),
        f"not scored: no truth for {summary.get('n_outputs_without_truth')} of the "
        f"{summary.get('n_outputs')} test outputs (a hidden test set); predictions only",
        f"tasks: {summary.get('n_tasks')}  outputs: {summary.get('n_outputs')}  attempts: "
        f"{summary.get('n_attempts')}  invalid attempts: {summary.get('n_invalid_attempts')}",
        f"{sub.get('file')}: attempt_1 and attempt_2 for every test input, "
        f"{sub.get('n_filler_attempts')} filler attempts {json.dumps(sub.get('filler'))}",
    ])


# ---------------------------------------------------------------- score
def _add_scoring_inputs(p, predictions_help: str) -> None:
    """``--dataset``, ``--predictions`` and ``--tasks``: what a command that scores
    predictions reads (``score``, ``candidates``)."""
    command = p.prog.split()[-1]
    _add(p, command, "dataset", required=True)
    _add(p, command, "predictions", required=True, help=predictions_help)
    _add(p, command, "tasks")


def _add_score(sub) -> None:
    p = sub.add_parser("score", help="score an ARC Prize submission file on a dataset",
                       description="Score predictions (an ARC Prize submission file, a "
                                   "benchmarking-harness run folder or a JSON Lines file) "
                                   "with the official rule, "
                                   "in three conventions, with cost and tokens when the "
                                   "attempts carry them.")
    _add_scoring_inputs(p, "submission JSON file, a benchmarking-harness run folder (one "
                           "<task_id>.json per task) or a .jsonl file (one test output per "
                           "line)")
    p.add_argument("--k", type=int, action="append", default=[], metavar="K",
                   help="also report pass@K for this K (repeatable; 1 and 2 always)")
    _add(p, "score", "estimator")
    _add(p, "score", "json")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 2) instead of warning when the predictions look made for "
                        "another dataset, hold test outputs the dataset lacks, or leave some "
                        "of the scored tasks without predictions")
    p.set_defaults(func=_run_score)


def _scored_input(args):
    """The task set (:func:`arcnb.front.task_set`: ``--tasks``, else the tasks a run
    directory records, else the whole dataset) and what ``--predictions`` names: a run
    directory is opened through the front door (its recorded numbers checked) and its
    :class:`~arcnb.runs.Run` given; anything else as the path it is."""
    ds = task_set([args.predictions], args.dataset, args.tasks)
    if is_run_dir(args.predictions):
        return ds, open_run(args.predictions, dataset=args.dataset)
    return ds, args.predictions


def _run_score(args) -> int:
    ds, given = _scored_input(args)
    res = score(ds, given.results.predictions if isinstance(given, Run) else given,
                ks=[1, 2, *args.k], estimator=args.estimator)
    warnings = res.summary.get("warnings", [])
    if warnings and args.strict:
        return _fail(f"{warnings[0]} (--strict)")
    for w in warnings:
        _say("warning", w)
    for note in res.summary.get("notes", []):
        _say("note", note)
    problems = res.problems
    for line in format_problems(problems):
        _say("problems", line)
    if args.json:
        print(json.dumps(to_jsonable({**res.summary, "problems": problems}), sort_keys=True))
        return 0
    print(format_summary(res.summary, res.ks))
    return 0


def format_summary(summary: dict, ks=(1, 2)) -> str:
    """A readable table of a scoring summary (used by the CLI and reports)."""
    ds = summary.get("dataset", {})
    lines = [dataset_line(ds)]
    est = summary.get("estimator", "ranked")
    lines.append("estimator: " + ("ranked (any of the first K attempts, in file order)"
                                  if est == "ranked" else
                                  f"{est} (1 - C(n-c,K)/C(n,K) per output, n attempts, "
                                  "c right)"))
    lines.append(f"{'K':>3}  {'pass@K':>8}  {'pass@K_per_output':>17}  "
                 f"{'pass@K_all_or_nothing':>21}")
    for k in ks:
        lines.append(f"{k:>3}  {_fmt(summary[f'pass@{k}']):>8}  "
                     f"{_fmt(summary[f'pass@{k}_per_output']):>17}  "
                     f"{_fmt(summary[f'pass@{k}_all_or_nothing']):>21}")
    lo, hi = summary.get("pass@2_ci95", [float("nan")] * 2)
    lines.append(f"pass@2 95% bootstrap interval over tasks: {fmt_interval(lo, hi)}")
    lines.append("tasks: {n_tasks}  outputs: {n_outputs}  missing outputs: {n_missing_outputs}  "
                 "invalid attempts: {n_invalid_attempts}  extra tasks: {n_extra_tasks}"
                 .format(**summary)
                 + "".join(f"  {label}: {summary[key]}" for key, label in (
                     ("n_extra_outputs", "extra outputs"), ("n_bad_attempt_keys",
                                                            "bad attempt keys"))
                           if summary.get(key)))
    if cost_line(summary):
        lines.append(cost_line(summary))
    return "\n".join(lines)


# ---------------------------------------------------------------- compare
def _add_compare(sub) -> None:
    p = sub.add_parser("compare", help="compare run directories on the same tasks",
                       description="Re-score two or more run directories and compare them: "
                                   "paired bootstrap interval for the difference in pass@2, "
                                   "exact McNemar test, outputs only one run solved, "
                                   "per-category differences, and, when every run has a cost, "
                                   "the leaderboard picture (pass@2 against cost per task, "
                                   "Pareto front). Writes CSV + LaTeX tables, summary.json and "
                                   "leaderboard.png/.pdf into --out.")
    _add(p, "compare", "runs", help=f"run directories ({PREDICTIONS} + {METRICS}); with "
                                    "--dataset also submission files or benchmarking-harness "
                                    "run folders")
    _add(p, "compare", "out", required=True, help="output folder for the tables and summary.json")
    _add(p, "compare", "tasks", help="file of task ids: score every run on these tasks of its "
                                     "dataset (a task a run has no predictions for counts as "
                                     "wrong)")
    p.add_argument("--common-tasks", action="store_true",
                   help="compare on the tasks the runs share instead of refusing different "
                        "task sets")
    _add(p, "compare", "taxonomy", help="categories for the per-category table: 'structural' "
                                        "(default), 'folder', a taxonomy .csv/.json file, or "
                                        "'none'")
    _add(p, "compare", "dataset", help="re-score every run on this dataset instead of the one "
                                       f"recorded in its {METRICS} (needed for predictions "
                                       "given instead of run directories)")
    p.add_argument("--labels", help="comma-separated run labels (default: folder names)")
    _add_eval_options(p, "compare", "n_boot", "seed")
    p.add_argument("--no-latex", action="store_true", help="write CSV tables only")
    _add(p, "compare", "overwrite")
    p.add_argument("--report", action="store_true",
                   help="also run arcnb's compare notebook and export OUT/compare.html")
    _add_difficulty_options(p)
    p.set_defaults(func=_run_compare)


def _add_difficulty_options(p) -> None:
    """compare's task difficulty across the runs (:mod:`arcnb.difficulty`)."""
    p.add_argument("--difficulty-model", choices=(*DIFFICULTY_MODELS, "none"), default="rasch",
                   help="item response model of task difficulty across the runs, written to "
                        f"summary.json and {DIFFICULTY_FILE}: rasch (default), 2pl, or none")
    p.add_argument("--pool", action="store_true",
                   help="difficulty: runs given the same --labels label are one system")
    p.add_argument("--human-solve-rates", metavar="CSV",
                   help="difficulty: a CSV of task_id,solve_rate (people's solve rates) drawn "
                        "against the fitted task difficulty")


def _difficulty_kwargs(args) -> dict:
    model = args.difficulty_model
    return {"difficulty": None if model == "none" else model, "pool": True if args.pool else None,
            "solve_rates": args.human_solve_rates}


def _difficulty_line(summary: dict) -> str | None:
    d = summary.get("difficulty")
    if not d:
        return None
    n = sum(len(v) for v in d["surprises"].values())
    items = sorted(d["systems"].items(), key=lambda kv: -kv[1]["ability"])
    shown = items if len(items) <= 8 else items[:3] + items[-3:]
    words = [f"{k} {v['ability']:.2f}" for k, v in shown]
    if len(items) > 8:
        words.insert(3, "...")
    return (f"difficulty: {d['model']} fit over {d['n_systems']} systems and {d['n_outputs']} "
            f"outputs (prior SD {d['prior_sd']:g}); abilities, highest first: "
            + ", ".join(words) + f"; {n} surprises; {DIFFICULTY_FILE}")


def _compare_taxonomy(args):
    """``--taxonomy``: 'structural' when not given, None for 'none'."""
    taxonomy = args.taxonomy or "structural"
    return None if taxonomy.lower() == "none" else taxonomy


def _run_compare(args) -> int:
    if len(args.runs) < 2:
        raise ParameterError("compare needs at least two run directories")
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else None
    cmp = compare(args.runs, labels=labels, common_only=args.common_tasks,
                  taxonomy=_compare_taxonomy(args), dataset=args.dataset, n_boot=args.n_boot,
                  seed=args.seed, tasks=args.tasks, **_difficulty_kwargs(args))
    cmp.write(args.out, overwrite=args.overwrite, latex=not args.no_latex)
    for w in cmp.summary["warnings"]:
        _say("warning", w)
    print(f"compared {len(cmp.runs)} runs on {len(cmp.task_ids)} tasks"
          + (" (common tasks only)" if cmp.summary["common_tasks_only"] else ""))
    for pr in cmp.summary["pairs"]:
        print(f"{pr['run_b']} - {pr['run_a']}: pass@2 difference {_fmt(pr['difference'])} "
              f"{fmt_interval(pr['ci_low'], pr['ci_high'])}, "
              # a p-value keeps 4 decimals (a tiny one is 0.0000, not 0.00000000)
              f"McNemar p={fmt_number(pr['mcnemar_p'], least=4, most=4)} "
              f"({pr['n_a_only']} outputs only {pr['run_a']}, {pr['n_b_only']} only "
              f"{pr['run_b']})")
    board = cmp.summary["leaderboard"]
    if board["drawn"]:
        print("leaderboard: " + ", ".join(f"{row['run']} {_fmt(row['pass@2'])} at "
                                          f"${row['cost_per_task']:.4f} per task"
                                          for row in cmp.summary["runs"])
              + "; Pareto front: " + ", ".join(board["pareto_front"]))
    else:
        print(board["note"])
    if _difficulty_line(cmp.summary):
        print(_difficulty_line(cmp.summary))
        for note in cmp.summary["difficulty"]["notes"][1:]:  # the first is in the guide
            _say("note", "difficulty: " + note)
    for note in cmp.summary.get("notes", []):
        _say("note", note)
    print(f"wrote {args.out}")
    if args.report:  # arcnb's compare notebook, exported as OUT/compare.html
        html = R.build_compare_report(args.runs, args.out, labels=labels, dataset=args.dataset,
                                      taxonomy=_compare_taxonomy(args),
                                      common_tasks=args.common_tasks, n_boot=args.n_boot,
                                      seed=args.seed, overwrite=args.overwrite,
                                      difficulty_model=args.difficulty_model, pool=args.pool,
                                      human_solve_rates=args.human_solve_rates,
                                      tasks=args.tasks)
        print(f"report: {html}")
    return 0


# ---------------------------------------------------------------- report
def _add_report(sub) -> None:
    p = sub.add_parser("report", help="build a self-contained HTML report (papermill + nbconvert)",
                       description="Evaluate a checkpoint, score a predictions file or take a "
                                   "run directory, execute arcnb's report notebook with papermill "
                                   f"and export OUT/{REPORT_HTML} (code hidden, images embedded, "
                                   "nothing loaded from the network). Several checkpoints run "
                                   "concurrently, one sub-folder of OUT each.")
    src = p.add_mutually_exclusive_group(required=True)
    _add(src, "report", "checkpoint", nargs="+", metavar="CKPT",
         help="checkpoint file(s), 'baseline' or a model name such as copy-input")
    _add(src, "report", "predictions", nargs="+", metavar="FILE",
         help="predictions to score: submission JSON file(s), harness run folder(s) or "
              ".jsonl file(s)")
    _add(src, "report", "run")
    src.add_argument("--default", action="store_true",
                     help="the embedded default: the bundled baseline checkpoint on "
                          "arc-agi-1:evaluation (or the bundled example predictions when no "
                          "checkpoint is bundled)")
    _add(p, "report", "dataset", help="dataset name, task folder or *_challenges.json (required "
                                      "with --checkpoint/--predictions; with --run it "
                                      "overrides the recorded one)")
    _add(p, "report", "taxonomy", help="user taxonomy (.csv task_id,category or .json) added to "
                                       "the automatic one")
    _add(p, "report", "difficulty")
    _add(p, "report", "tasks")
    _add(p, "report", "out", required=True, help=f"output folder (run files, {REPORT_NOTEBOOK}, "
                                                 f"{REPORT_HTML}, {FIGURES}/)")
    _add(p, "report", "overwrite", help="replace existing outputs in --out")
    _add_eval_options(p, "report", "device", "batch_size", "augment", "color_perms")
    p.add_argument("--reference", action="append", metavar="REF",
                   help="a reference run shown beside the model in the report's reference-points "
                        "section (repeatable): copy-input, a predictions file or harness run "
                        "folder, or default (the bundled program-search predictions for the "
                        "dataset, then copy-input); replaces --default's references")
    _add(p, "report", "jobs", help="reports built at once (default: the number of cores)")
    _add(p, "report", "estimator")
    _add(p, "report", "train_data", help="training data (dataset names, folders, files): adds "
                                         "the report's training-data overlap section and "
                                         f"records the check in {METRICS}")
    _add_eval_options(p, "report", "arch", "config", "replace_config", "trust_checkpoint",
                      "attempts", "seed")
    p.add_argument("--no-notebook", action="store_true",
                   help=f"write {REPORT_HTML} from the same sections in this process, without a "
                        f"notebook kernel (faster; no {REPORT_NOTEBOOK} to re-run in Jupyter)")
    _add(p, "report", "no_progress")
    p.set_defaults(func=_run_report)


def _run_report(args) -> int:
    from pathlib import Path

    dataset, references = args.dataset, None
    opts = _eval_options(args)
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
            _say("warning", w)
        print(f"report: {r.html}")
        print(format_summary(summary_of(r.metrics), ks_of(r.metrics)) if is_scored(r.metrics)
              else format_unscored(summary_of(r.metrics)))
        print(compact_line(r.metrics))
        print("time per stage: " + ", ".join(f"{k} {v:.1f} s" for k, v in r.timings.items()))
    if len(results) > 1:
        print(f"index: {Path(args.out) / R.INDEX_HTML}")
    if len(ckpts) >= 2:
        _report_sweep(args)
    return 0


def _report_sweep(args) -> None:
    """``arcnb report --checkpoint a b c``: when every checkpoint records its training
    step, the reports' runs also become a sweep (OUT/sweep/: sweep.csv, sweep.html)."""
    from pathlib import Path

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
    from pathlib import Path

    for r in refs:
        if r not in ("default", COPY_INPUT) and not Path(r).exists():
            raise ParameterError(f"--reference {r!r}: no such file or folder (use copy-input, "
                                 "default, or a predictions file / harness run folder)")
    return list(refs)


# ---------------------------------------------------------------- evaluate
def _add_evaluate(sub) -> None:
    p = sub.add_parser("evaluate", help="run a model checkpoint on a dataset and score it",
                       description=f"Evaluate a checkpoint: {PREDICTIONS} (ARC Prize format), "
                                   f"{RESULTS_CSV}/.parquet, {TASKS_CSV} and {METRICS} with "
                                   "provenance in --out. On a dataset without test outputs "
                                   f"(a hidden test set) nothing is scored and {SUBMISSION} "
                                   "is written for Kaggle. Resumable; shards over ranks under "
                                   "torchrun.")
    _add(p, "evaluate", "checkpoint", required=True,
         help="checkpoint file (" + ", ".join(CHECKPOINT_SUFFIXES) + "; a state dict or "
              ".safetensors with --arch), 'baseline' (the bundled model) or a model name such "
              "as copy-input")
    _add(p, "evaluate", "dataset", required=True,
         help="dataset name (e.g. arc-agi-1:evaluation), task folder, task file or "
              "*_challenges.json (without its solutions file: a hidden test set, not scored, "
              f"{SUBMISSION} written)")
    _add(p, "evaluate", "out", required=True, help="run directory to write")
    _add_eval_options(p, "evaluate", "device", "batch_size", "augment", "color_perms")
    _add(p, "evaluate", "tasks")
    _add_eval_options(p, "evaluate", "estimator", "arch", "config", "replace_config",
                      "trust_checkpoint", "attempts", "seed")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    _add(p, "evaluate", "overwrite", help="replace a finished run in --out")
    _add(p, "evaluate", "no_progress")
    _add_eval_options(p, "evaluate", "probe", "proxy")
    _add(p, "evaluate", "json")
    p.set_defaults(func=_run_evaluate)


def _run_evaluate(args) -> int:
    res = evaluate(args.checkpoint, args.dataset, args.out, options=_eval_options(args),
                   tasks=args.tasks, resume=args.resume, overwrite=args.overwrite,
                   progress=False if args.no_progress else None)
    if res is None:  # a non-zero rank under torchrun: rank 0 reports
        return 0
    if args.json:
        print(json.dumps(to_jsonable({k: v for k, v in res.metrics.items()
                                      if k != "provenance"}), sort_keys=True))
        return 0
    if getattr(res, "scored", True) is False:  # a hidden test set: predictions only
        from pathlib import Path

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


# ---------------------------------------------------------------- sweep
def _add_sweep(sub) -> None:
    p = sub.add_parser("sweep", help="evaluate the checkpoints of a training run: learning "
                                     "curves and the sweep page",
                       description="Evaluate every checkpoint (files, a folder or a quoted glob "
                                   "pattern) on one dataset, each into DIR/runs/ (a finished "
                                   "checkpoint is not redone), then write DIR/sweep.csv (one row "
                                   "per checkpoint, ordered by training step, with pass@2 and "
                                   "the graded metrics and their 95% intervals) and the sweep "
                                   "page DIR/sweep.html. The step comes from the checkpoint, "
                                   "else its file name, else the order given. With --shard I/N "
                                   "only every N-th checkpoint is evaluated (one job of a job "
                                   "array); then arcnb sweep --collect DIR builds the files.")
    _add(p, "sweep", "checkpoints")
    _add(p, "sweep", "collect", help="build sweep.csv and sweep.html from the finished runs of "
                                     "the sweep folder DIR (after every shard is done); no "
                                     "checkpoint is evaluated")
    _add(p, "sweep", "dataset", help="dataset name (e.g. arc-agi-1:evaluation), task folder or "
                                     "*_challenges.json with its solutions")
    _add(p, "sweep", "out", help="sweep folder to write (runs/, sweep.csv, sweep.html)")
    _add_eval_options(p, "sweep", "device", "batch_size", "augment", "color_perms")
    _add(p, "sweep", "tasks")
    _add_eval_options(p, "sweep", "estimator", "arch", "config", "replace_config",
                      "trust_checkpoint", "attempts", "seed")
    _add(p, "sweep", "jobs", help="checkpoints evaluated at once in this process (default 1)")
    p.add_argument("--shard", metavar="I/N",
                   help="evaluate only the checkpoints at positions I, I+N, I+2N, ... of the "
                        "step order (I from 0 to N-1, e.g. a job array's task id); no page")
    _add(p, "sweep", "overwrite", help="evaluate finished checkpoints again")
    p.add_argument("--no-report", action="store_true", help="write the tables, not sweep.html")
    _add(p, "sweep", "no_progress")
    p.set_defaults(func=_run_sweep)


def _run_sweep(args) -> int:
    from pathlib import Path

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
        sw = S.sweep(args.checkpoints, args.dataset, args.out, options=_eval_options(args),
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
        _say("note", note)
    print(f"{'step':>10}  {'pass@2':>7}  {'95% interval':>17}  {'partial_credit':>14}  checkpoint")
    for _, r in table.iterrows():
        # one_line: a newline in a file name never starts a forged row
        print(f"{r['step']:>10}  {_fmt(r['pass@2']):>7}  "
              f"{fmt_interval(r['pass@2_ci_low'], r['pass@2_ci_high'])}  "
              f"{_fmt(r['partial_credit']):>14}  {one_line(r['checkpoint'])}")
    sel = sw.selection()
    print(f"steps from: {sw.step_source}; best checkpoint chosen on half of the tasks: step "
          f"{sel['chosen_step']}, pass@2 {_fmt(sel['report_score'])} on the other half "
          f"(choosing on that half itself would add {_fmt(sel['inflation'])})")
    print(f"wrote {Path(sw.out) / S.SWEEP_CSV}")
    if not args.no_report:
        print(f"page: {Path(sw.out) / S.SWEEP_HTML}")
    return 0


# ---------------------------------------------------------------- notebooks
def _add_notebooks(sub) -> None:
    p = sub.add_parser("notebooks", help="copy arcnb's notebooks into a folder of your project",
                       description="Copy the notebooks arcnb ships ("
                                   + ", ".join(notebook_names()) + ") into DEST, to open "
                                   "in JupyterLab or run with papermill (kernel python3). "
                                   "Refuses to replace an existing notebook unless "
                                   "--overwrite is given.")
    p.add_argument("dest", metavar="DEST", help="folder to copy them into (created if missing)")
    _add(p, "notebooks", "overwrite", help="replace notebooks already in DEST")
    p.set_defaults(func=_run_notebooks)


def _run_notebooks(args) -> int:
    for path in copy_notebooks(args.dest, overwrite=args.overwrite):
        print(f"wrote {path}")
    return 0


# ---------------------------------------------------------------- candidates
def _add_candidates(sub) -> None:
    p = sub.add_parser("candidates", help="measure a candidate pool: what the model found "
                                          "versus what it picked",
                       description="Read many candidates per test output (a submission or "
                                   "benchmarking-harness run with more than 2 attempts, or a "
                                   "candidates .json/.parquet file) and report coverage (is "
                                   "the right answer among the candidates at all?), pass@1 and "
                                   "pass@2 per ranking rule, the selection gap (coverage - "
                                   "pass@2), the rank of the right candidate, distinct "
                                   "candidates per output and the calibration of the top "
                                   "candidate's vote share, with 95% bootstrap intervals over "
                                   "tasks.")
    _add_scoring_inputs(p, "submission JSON file, benchmarking-harness run folder, or "
                           "candidates file (.json or .parquet)")
    p.add_argument("--rank-by", action="append", default=[], metavar="RULE",
                   help="a ranking rule to measure besides 'order' and 'votes': 'votes', "
                        "'order', a score of the candidates file (e.g. logprob), "
                        "'votes_then_<score>', 'passes_train' or 'product_of_experts' "
                        "(repeatable; the first one ranks rank_of_correct, default votes)")
    p.add_argument("--axis", choices=("sample", "view", "step", "iteration"),
                   help="the budget axis of the anytime curves (default: the first of "
                        "sample, view, step, iteration the candidates carry)")
    _add(p, "candidates", "tie")
    _add_eval_options(p, "candidates", "n_boot", "seed")
    _add(p, "candidates", "json")
    _add(p, "candidates", "out", help="folder for summary.json and the CSV tables")
    _add(p, "candidates", "overwrite")
    p.set_defaults(func=_run_candidates)


def _run_candidates(args) -> int:
    ds, given = _scored_input(args)
    if isinstance(given, Run):
        given = given.candidates()
        if given is None:
            raise ArcnbError(f"{printable(args.predictions)} holds no candidate pool: its run "
                             "has no candidates file and at most 2 attempts per test output")
    res = candidates(ds, given, rank_by=args.rank_by, axis=args.axis, tie=args.tie,
                     n_boot=args.n_boot, seed=args.seed)
    s = res.summary
    if args.out:
        res.write(args.out, overwrite=args.overwrite)
    for w in s["warnings"]:
        _say("warning", w)
    if args.json:
        print(json.dumps(to_jsonable({k: v for k, v in s.items() if k != "definitions"}),
                         sort_keys=True))
        return 0
    ds = s["dataset"]
    lo, hi = s["coverage_ci95"]
    lines = [dataset_line(ds),
             f"tasks: {s['n_tasks']}  outputs: {s['n_outputs']}  samples: {s['n_samples']}  "
             f"distinct candidates: {s['n_candidates']}  invalid attempts: "
             f"{s['n_invalid_attempts']}  outputs without candidates: "
             f"{s['n_outputs_without_candidates']}",
             f"coverage: {_fmt(s['coverage'])} {fmt_interval(lo, hi)}  per output: "
             f"{_fmt(s['coverage_per_output'])}",
             f"{'rule':<20} {'pass@1':>8} {'pass@2':>8} {'selection_gap':>14}"]
    for rule, r in s["rankings"].items():
        lines.append(f"{rule[:20]:<20} {_fmt(r['pass@1']):>8} {_fmt(r['pass@2']):>8} "
                     f"{_fmt(r['selection_gap']):>14}")
    lines.append("ties between equal votes: " + (
        "at random (pass@K is the exact expectation; --tie first: by first appearance)"
        if s["tie"] == "random" else "by first appearance"))
    lines.append(f"rank of the right candidate ({s['rank_by']}): "
                 + ", ".join(f"{k}: {v if isinstance(v, int) else fmt_number(v)}"
                             for k, v in s["rank_of_correct"].items()))
    lines.append(f"distinct candidates per output: {_fmt(s['distinct_mean'])}  single-candidate "
                 f"share: {_fmt(s['single_candidate_share'])}")
    elo, ehi = s["ece_ci95"]
    lines.append(f"calibration of the top vote share: ece {_fmt(s['ece'])} [{_fmt(elo)}, "
                 f"{_fmt(ehi)}]")
    lines += _budget_lines(s)
    print("\n".join(lines))
    if args.out:
        print(f"wrote {args.out}")
    return 0


def _budget_lines(s: dict) -> list[str]:
    """The anytime curve at a few budgets, the refinement steps, the verifier and the
    confidence head, when the pool has them."""
    lines = []
    if "anytime" in s:
        pts = s["anytime"]["points"]
        shown = sorted({n for n in (1, 2, 4, 8, 16, 64, 256, len(pts)) if n <= len(pts)})
        lines.append(f"anytime ({s['anytime']['axis']}, votes in each subset, ties "
                     f"{s['anytime']['tie']}): "
                     + "; ".join(f"n={n} pass@1 {_fmt(pts[n - 1]['pass@1'])} pass@2 "
                                 f"{_fmt(pts[n - 1]['pass@2'])} coverage "
                                 f"{_fmt(pts[n - 1]['coverage'])}" for n in shown))
        g = s["voting_gain"]
        lines.append(f"voting gain (pass@1 at n={g['n']} - at n=1): {_fmt(g['value'])} "
                     f"[{_fmt(g['ci95'][0])}, {_fmt(g['ci95'][1])}]")
    if "first_right_step" in s:
        st = s["stability"]
        lines.append(f"first right {s['step_axis']}: "
                     + ", ".join(f"{k}: {v}" for k, v in s["first_right_step"].items())
                     + f"  stable: {st['n_stable']}  lost: {st['n_lost']}")
    if "verifier" in s:
        v = s["verifier"]
        lines.append(f"verifier (passes_train): precision {_fmt(v['precision'])}  recall "
                     f"{_fmt(v['recall'])}  overfit rate {_fmt(v['overfit_rate'])}  coverage "
                     f"among passers {_fmt(v['coverage_passers'])} (all "
                     f"{_fmt(v['coverage_all'])})")
    if "confidence" in s:
        c = s["confidence"]
        lines.append(f"calibration of {c['score']}: ece {_fmt(c['ece'])} "
                     f"[{_fmt(c['ece_ci95'][0])}, {_fmt(c['ece_ci95'][1])}]")
    return lines


# ---------------------------------------------------------------- repeats
def _add_repeats(sub) -> None:
    p = sub.add_parser("repeats", help="many runs (seeds, reruns, configurations) on one "
                                       "dataset: spread, flips, differences, unions",
                       description="Score many runs on one dataset and analyse them together, "
                                   "grouped into configurations: pass@2 mean, SD, min and max "
                                   "over runs with a 95% interval over tasks and runs beside "
                                   "the one-run interval, tasks that flip, differences between "
                                   "configurations with a paired test over tasks, the expected "
                                   "private score of the best run picked on a public half, "
                                   "and union coverage. A folder that is not a run stands for "
                                   "every run below it (one per sub-folder, at any depth).")
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="predictions file, harness run folder, run directory, or a folder "
                        "holding runs in sub-folders")
    _add(p, "repeats", "dataset", required=True)
    _add(p, "repeats", "tasks")
    _add(p, "repeats", "groups")
    p.add_argument("--group-by", default="auto",
                   help="auto (default), pattern (names like config-seed3) or a folder level "
                        "(0: the first folder below the root)")
    p.add_argument("--score", metavar="NAME",
                   help="a number in the attempts' metadata (higher is better) that breaks "
                        "vote ties in the ensembles, e.g. logprob")
    _add(p, "repeats", "tie", help="how the ensembles break the ties left (after --score): "
                                   "'random' (uniformly at random; their pass@2 is the exact "
                                   "expectation, default) or 'first' (first appearance: run "
                                   "order, then attempt order)")
    _add_eval_options(p, "repeats", "n_boot", "seed")
    _add(p, "repeats", "json")
    _add(p, "repeats", "out", help="folder for summary.json and the CSV tables")
    _add(p, "repeats", "overwrite")
    p.add_argument("--report", action="store_true",
                   help="also write the page of many runs, repeats.html, into --out")
    p.set_defaults(func=_run_repeats)


def _run_repeats(args) -> int:
    if args.report and not args.out:
        raise ArcnbError("--report writes repeats.html into a folder: pass --out DIR")
    group_by = args.group_by
    if group_by.lstrip("-").isdigit():
        group_by = int(group_by)
    rep = analyse_repeats(args.sources, dataset=args.dataset, tasks=args.tasks,
                          groups=args.groups, group_by=group_by, n_boot=args.n_boot,
                          seed=args.seed, score=args.score, tie=args.tie)
    for w in rep.summary.get("warnings", []):
        _say("warning", w)
    if args.out:
        rep.write(args.out, overwrite=args.overwrite,
                  html=R.sections.repeats_page(rep) if args.report else None)
    if args.json:
        print(json.dumps(to_jsonable(rep.summary), sort_keys=True))
    else:
        print(rep.text())
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr if args.json else sys.stdout)
    return 0


# ---------------------------------------------------------------- overlap
def _add_overlap(sub) -> None:
    p = sub.add_parser("overlap", help="which evaluation outputs the training data already holds",
                       description="For every test output of EVAL: is its (input, output) pair "
                                   "a pair of some training task verbatim (exact), up to a "
                                   "rotation or mirror and a permutation of the colours "
                                   "(equivalent), or is its input a training input (input "
                                   "seen); per task also whether a training task has its id, "
                                   "with other content (version drift). Several --train "
                                   "datasets form one pool.")
    p.add_argument("dataset", metavar="EVAL",
                   help="the evaluation dataset: a name (e.g. arc-agi-1:evaluation), task "
                        "folder, task file or *_challenges.json")
    p.add_argument("--train", nargs="+", required=True, metavar="TRAIN",
                   help="the training data: one or more datasets, as EVAL")
    _add(p, "overlap", "tasks", help="file of EVAL task ids to keep (JSON list or one per line)")
    p.add_argument("--colors", choices=["1-9", "all"], default="1-9",
                   help="colours that may permute for 'equivalent': 1-9 (default; black, the "
                        "background, stays black) or all")
    _add(p, "overlap", "json")
    _add(p, "overlap", "out", help="folder for the per-output table (overlap.csv, "
                                   "overlap.parquet), overlap_tasks.csv and overlap.json")
    _add(p, "overlap", "overwrite", help="replace existing files in --out")
    p.set_defaults(func=_run_overlap)


def _run_overlap(args) -> int:
    ov = overlap(args.dataset, args.train, tasks=args.tasks, colors=args.colors)
    if args.out:
        ov.write(args.out, overwrite=args.overwrite)
    if args.json:
        print(json.dumps(to_jsonable(ov.summary), sort_keys=True))
    else:
        print(ov.text())
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr if args.json else sys.stdout)
    return 0


# ---------------------------------------------------------------- arc3
def _add_arc3(sub) -> None:
    add_arc3_command(sub, _Parser, _add)  # arcnb/arc3/command.py: score, report


# ---------------------------------------------------------------- main
_COMMANDS = [_add_score, _add_compare, _add_evaluate, _add_report, _add_notebooks]
_COMMANDS.append(_add_sweep)
_COMMANDS.append(_add_overlap)
_COMMANDS.append(_add_candidates)
_COMMANDS.append(_add_repeats)
_COMMANDS.append(_add_arc3)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arcnb", description="Evaluate models on ARC: scoring, metrics, "
                                               "plots, breakdowns and reports.")
    parser.add_argument("--version", action="version", version=f"arcnb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in _COMMANDS:
        add(sub)
    return parser


def _path_dests(command) -> tuple[str, ...]:
    """The options of ``command`` that hold paths (the registry's ``is_path`` marks),
    for the commands that hand their paths to a kernel, a worker or a run's provenance
    (``score`` and ``overlap`` print and read them as given)."""
    if command not in (*_RUN_COMMANDS, "arc3"):
        return ()
    return tuple(o.dest for o in _OPTIONS if o.is_path and command in o.commands)


def _resolve_paths(args) -> dict:
    """Make every path of the command line absolute against the caller's working
    directory, before it reaches a notebook kernel or a worker process (which run
    elsewhere); names such as ``arc-agi-1:evaluation`` or ``copy-input`` are kept.
    Returns ``{"cwd": ..., "--name": {"given": ..., "resolved": ...}}`` for the
    provenance."""
    names = tuple(n for n in _path_dests(getattr(args, "command", None)) if n != "out")
    if not names:
        return {}
    record: dict = {"cwd": os.getcwd()}
    for name in (*names, "out"):
        value = getattr(args, name, None)
        if value is None or (name == "dataset" and value in DATASETS):
            continue  # a bundled name is never a path, even beside a folder of that name
        always = name == "out"
        new = ([absolute_path(v, always=always) for v in value] if isinstance(value, list)
               else absolute_path(value, always=always))
        setattr(args, name, new)
        if name != "out" and new != value:
            record[f"--{name}" if name != "runs" else "RUN_DIR"] = {"given": value,
                                                                   "resolved": new}
    return record


@contextlib.contextmanager
def _user_paths_env(record: dict):
    """Hand the command line's paths to the runs made during the command (and to the
    kernels it starts) through :data:`arcnb.runs.USER_PATHS_ENV`; restored after."""
    old = os.environ.get(USER_PATHS_ENV)
    if len(record) > 1:
        os.environ[USER_PATHS_ENV] = json.dumps(record, sort_keys=True)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(USER_PATHS_ENV, None)
        else:
            os.environ[USER_PATHS_ENV] = old


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with _user_paths_env(_resolve_paths(args)), _escaped_stdout():
            return int(args.func(args) or 0)
    except ArcnbError as exc:
        return _fail(str(exc))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        return _fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
    # any other exception (a plain ValueError, TypeError, ...) is a bug in arcnb, not bad
    # input: it surfaces with its traceback and exit status 1
    except KeyboardInterrupt:
        print("arcnb: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`arcnb score ... | head`): no traceback, and none at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # disk full (ENOSPC), read-only file system, I/O errors
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        return _fail(f"{exc.strerror or exc}{where}")
    except MemoryError:
        return _fail("out of memory (is an input file far larger than ARC data can be?)")
    except RecursionError:
        return _fail("an input is nested too deeply")


def run() -> None:
    """The ``arcnb`` command (and ``python -m arcnb``): :func:`main`, then exit with its
    status without the interpreter's teardown. Once the command is done and its output
    flushed, the exit handlers run as usual (temporary files, kernels), but the
    collection of every module's objects (torch, matplotlib, pandas) is skipped: every
    file arcnb writes is closed (and renamed into place) before ``main`` returns, so the
    teardown changes nothing on disk, and it took most of a second of each command."""
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # the reader went away, or a stream is closed
        pass
    atexit._run_exitfuncs()
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
