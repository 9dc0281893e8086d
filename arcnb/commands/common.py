"""What the ``arcnb`` subcommands share (:mod:`arcnb.commands`): the parser that
reports a usage error in one line (``Parser``), the one-line failure (``fail``) and
``arcnb: KIND:`` lines (``say``), the escaped stdout (``escaped_stdout``), the one
registry of shared options (``OPTIONS``: ``add_option``, ``add_eval_options``,
``eval_options``), the paths made absolute before a kernel or a worker sees them
(``resolve_paths``, ``user_paths_env``), and what several commands print
(``format_summary``, ``format_unscored``) or read (``add_scoring_inputs``,
``scored_input``), and how a command shows its result (``add_result_options``,
``show_result``, ``json_line``)."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

from ..data import DATASETS
from ..errors import one_line, printable
from ..front import open_run, task_set
from ..io import to_jsonable
from ..options import EvalOptions
from ..runs import USER_PATHS_ENV, absolute_path, is_run_dir
from ..scoring import cost_line
from ..text import MISSING, dataset_line, fmt_interval, fmt_number
from ..voting import TIE_RULES


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit status 2), starting with
    ``arcnb: error:`` for every subcommand too."""

    def error(self, message):  # noqa: D401
        where = self.prog[len("arcnb"):].strip() if self.prog.startswith("arcnb") else ""
        hint = f" (see 'arcnb {where} --help')" if where else ""
        self.exit(2, f"arcnb: error: {printable(message)}{hint}\n")


def fail(message: str) -> int:
    print(f"arcnb: error: {one_line(message, first_line=True) or 'error'}", file=sys.stderr)
    return 2


def say(kind: str, text: str) -> None:
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
def escaped_stdout():
    old = sys.stdout
    sys.stdout = _EscapedStream(old)
    try:
        yield
    finally:
        sys.stdout = old


def number(v) -> str:
    """A number on the terminal: :func:`arcnb.text.fmt_number` with at least 4 decimals
    and two significant digits when small (0.00004 is 0.000040, never 0.0000), at most
    8; a missing one (NaN, or None: a NaN read back from JSON) is ``text.MISSING``; a
    count (an int) as it is."""
    if v is None:
        return MISSING
    if isinstance(v, float):
        return fmt_number(v, least=4, most=8)
    return str(v)


# ---------------------------------------------------------------- the options
@dataclass(frozen=True)
class Option:
    """One command-line option, defined once: its flag, where its value goes, its
    argparse keywords (type, default, choices, action, ...), its help (``helps``: the
    commands that word it otherwise), the subcommands that take it, and whether it
    holds a path (:func:`resolve_paths` makes those absolute before a kernel or a
    worker sees them, for the commands that hand paths on). ``kwargs=None``: declared
    by :mod:`arcnb.commands.arc3` (its recordings, run folders and baselines, worded
    there), listed here for its path mark; ``arcnb arc3`` adds its other shared options
    from here (``add_option``)."""

    flag: str
    dest: str
    help: str
    commands: tuple[str, ...]
    kwargs: Mapping | None = field(default_factory=dict)
    is_path: bool = False
    helps: Mapping = field(default_factory=dict)


#: The subcommands that take each evaluation option (:class:`arcnb.options.EvalOptions`).
EVAL_COMMANDS = {"estimator": ("score", "evaluate", "report", "sweep"),
                  "seed": ("evaluate", "report", "sweep", "compare", "repeats", "arc3",
                           "candidates"),
                  "n_boot": ("compare", "repeats", "arc3", "candidates"), "probe": ("evaluate",),
                  "proxy": ("evaluate",)}
_EVAL_DEFAULT_COMMANDS = ("evaluate", "report", "sweep")


def _eval_option(f) -> Option:
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
    return Option("--" + f.name.replace("_", "-"), f.name, meta["help"],
                   EVAL_COMMANDS.get(f.name, _EVAL_DEFAULT_COMMANDS), kwargs, helps=helps)


_TASKS_HELP = "file of task ids to keep (JSON list or one per line)"
RUN_COMMANDS = ("evaluate", "report", "sweep", "compare", "candidates", "repeats")

#: Every shared option of the subcommands (an option of one subcommand alone stays in
#: its command's module), the evaluation options generated from EvalOptions' fields.
OPTIONS: tuple[Option, ...] = (
    *(_eval_option(f) for f in fields(EvalOptions)),
    Option("--dataset", "dataset", "dataset name (e.g. arc-agi-1:evaluation), task folder, "
           "task file or *_challenges.json",
           ("score", "candidates", "evaluate", "report", "sweep", "compare", "repeats"),
           is_path=True),
    Option("--tasks", "tasks", _TASKS_HELP,
           ("score", "candidates", "compare", "evaluate", "report", "sweep", "repeats",
            "overlap"),
           is_path=True),
    Option("--out", "out", "output folder", (*RUN_COMMANDS, "arc3", "overlap"), is_path=True),
    Option("--overwrite", "overwrite", "replace existing output files",
           (*RUN_COMMANDS, "notebooks", "overlap", "arc3"), {"action": "store_true"}),
    Option("--no-progress", "no_progress", "no progress bars", ("evaluate", "report", "sweep"),
           {"action": "store_true"}, helps={"evaluate": "no progress bar"}),
    Option("--tie", "tie", "how votes break ties: 'random' (uniformly at random; the numbers "
           "are the exact expectation, default) or 'first' (first appearance)",
           ("candidates", "repeats"), {"choices": TIE_RULES, "default": "random"}),
    Option("--json", "json", "print one JSON object on stdout",
           ("score", "evaluate", "candidates", "repeats", "overlap", "arc3"),
           {"action": "store_true"}),
    Option("--jobs", "jobs", "how many at once", ("report", "sweep"), {"type": int}),
    Option("--taxonomy", "taxonomy", "categories", ("compare", "report"), is_path=True),
    Option("--difficulty", "difficulty", "a difficulty.csv written by arcnb compare: its tasks' "
           "difficulty bins as the report's user taxonomy (instead of --taxonomy)",
           ("report",), is_path=True),
    Option("--checkpoint", "checkpoint", "checkpoint", ("evaluate", "report"), is_path=True),
    Option("checkpoints", "checkpoints", "checkpoint files, folders of checkpoints, glob "
           "patterns (quoted), 'baseline' or model names", ("sweep",),
           {"nargs": "*", "metavar": "CKPT"}, is_path=True),
    Option("--predictions", "predictions", "predictions", ("score", "candidates", "report"),
           is_path=True),
    Option("--run", "run", "existing run director(y/ies)", ("report",),
           {"nargs": "+", "metavar": "DIR"}, is_path=True),
    Option("RUN_DIR", "runs", "run directories", ("compare", "arc3"),
           {"nargs": "+", "metavar": "RUN_DIR"}, is_path=True),
    Option("--train-data", "train_data", "training data", ("report",),
           {"nargs": "+", "action": "extend", "metavar": "TRAIN"}, is_path=True),
    Option("--collect", "collect", "sweep folder", ("sweep",), {"metavar": "DIR"},
           is_path=True),
    Option("--groups", "groups", "CSV with columns run, config (and optionally seed)",
           ("repeats",), is_path=True),
    Option("PATH", "recordings", "recordings", ("arc3",), None, is_path=True),
    Option("--baselines", "baselines", "baselines", ("arc3",), None, is_path=True),
)
_BY_DEST = {o.dest: o for o in OPTIONS}


def add_option(p, command: str, dest: str, **overrides) -> None:
    """Add the registered option ``dest`` to ``p`` (a parser or a group) of
    ``command``; ``overrides`` (help, required, nargs, ...) word it for that command."""
    opt = _BY_DEST[dest]
    if command not in opt.commands or opt.kwargs is None:
        raise RuntimeError(f"the option {opt.flag} is not registered for {command}")
    kwargs = {**opt.kwargs, "help": opt.helps.get(command, opt.help), **overrides}
    if opt.flag.startswith("--"):
        kwargs["dest"] = dest
    p.add_argument(opt.flag if opt.flag.startswith("--") else dest, **kwargs)


def add_eval_options(p, command: str, *names: str) -> None:
    """The evaluation options ``names`` (default: every one ``command`` takes, in
    EvalOptions' order)."""
    for name in names or [o.dest for o in OPTIONS if o.dest in EvalOptions.names()
                          and command in o.commands]:
        add_option(p, command, name)


def add_result_options(p, command: str, *, out_help: str, overwrite_help: str | None = None) -> None:
    """``--json``, ``--out`` and ``--overwrite``: what a command whose result is a summary
    and an output folder takes (its run ends with :func:`show_result`); ``out_help``
    says what the folder holds, ``overwrite_help`` words ``--overwrite`` for it."""
    add_option(p, command, "json")
    add_option(p, command, "out", help=out_help)
    add_option(p, command, "overwrite", **({"help": overwrite_help} if overwrite_help else {}))


def json_line(obj) -> str:
    """``obj`` as the one JSON line a command prints under ``--json`` (keys sorted)."""
    return json.dumps(to_jsonable(obj), sort_keys=True)


def show_result(args, summary, text: Callable[[], str],
                write: Callable[[str], object] | None = None) -> int:
    """The end of a command with :func:`add_result_options`: the result written into
    ``--out`` (``write(out)``) when given, then shown: ``summary`` as one JSON line
    (:func:`json_line`) under ``--json``, else ``text()``; last, ``wrote OUT`` (on
    stderr under ``--json``, so that stdout stays one JSON object). Returns 0."""
    if args.out and write is not None:
        write(args.out)
    print(json_line(summary) if args.json else text())
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr if args.json else sys.stdout)
    return 0


def eval_options(args) -> EvalOptions:
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


def add_scoring_inputs(p, predictions_help: str) -> None:
    """``--dataset``, ``--predictions`` and ``--tasks``: what a command that scores
    predictions reads (``score``, ``candidates``)."""
    command = p.prog.split()[-1]
    add_option(p, command, "dataset", required=True)
    add_option(p, command, "predictions", required=True, help=predictions_help)
    add_option(p, command, "tasks")


def scored_input(args):
    """The task set (:func:`arcnb.front.task_set`: ``--tasks``, else the tasks a run
    directory records, else the whole dataset) and what ``--predictions`` names: a run
    directory is opened through the front door (its recorded numbers checked) and its
    :class:`~arcnb.runs.Run` given; anything else as the path it is."""
    ds = task_set([args.predictions], args.dataset, args.tasks)
    if is_run_dir(args.predictions):
        return ds, open_run(args.predictions, dataset=args.dataset)
    return ds, args.predictions


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
        lines.append(f"{k:>3}  {number(summary[f'pass@{k}']):>8}  "
                     f"{number(summary[f'pass@{k}_per_output']):>17}  "
                     f"{number(summary[f'pass@{k}_all_or_nothing']):>21}")
    # a NaN end read back from metrics.json is None: NaN, as any missing number
    lo, hi = (float("nan") if v is None else v
              for v in summary.get("pass@2_ci95", [float("nan")] * 2))
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


def path_dests(command) -> tuple[str, ...]:
    """The options of ``command`` that hold paths (the registry's ``is_path`` marks),
    for the commands that hand their paths to a kernel, a worker or a run's provenance
    (``score`` and ``overlap`` print and read them as given)."""
    if command not in (*RUN_COMMANDS, "arc3"):
        return ()
    return tuple(o.dest for o in OPTIONS if o.is_path and command in o.commands)


def resolve_paths(args) -> dict:
    """Make every path of the command line absolute against the caller's working
    directory, before it reaches a notebook kernel or a worker process (which run
    elsewhere); names such as ``arc-agi-1:evaluation`` or ``copy-input`` are kept.
    Returns ``{"cwd": ..., "--name": {"given": ..., "resolved": ...}}`` for the
    provenance."""
    names = tuple(n for n in path_dests(getattr(args, "command", None)) if n != "out")
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
def user_paths_env(record: dict):
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
