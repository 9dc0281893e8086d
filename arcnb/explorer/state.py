"""The explorer's state: what it browses (the runs, read through the front door and
the run package), the selections and the words it writes about an output."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ArcnbError, ExploreError
from ..front import PredictionsSource, RunDirSource, open_run, parse_source
from ..grids import best_attempt, same_grid
from ..text import MISSING, fmt_number
from ..report.sources import DEFAULT_DATASET, require_scored
from ..resources import example
from ..candidates import candidates
from ..runs import PREDICTIONS, Run, unique_labels
from ..scoring import Results
from ..data import Dataset, load_dataset


#: The selection filter: name -> definition (K is ``k=``, default 2).
SELECTIONS = {
    "all": "every test output",
    "solved": "solved@K: one of the first K attempts equals the truth",
    "failed": "not solved@K",
    "near_miss": "not solved@K, and cell_accuracy (best fraction of right cells among the "
                 "attempts with the truth's shape) is at least the near-miss threshold",
    "wrong_shape": "at least one attempt is a valid grid, but no scored attempt has the "
                   "truth's shape (shape_correct is False)",
    "invalid_or_missing": "the output is missing from the predictions, or one of its "
                          "attempts is not a valid grid",
    "disagree": "the runs (this one and the compared ones) do not all agree on solved@K",
}
#: The selection filter as the widget names it: name -> label.
SELECTION_LABELS = {"all": "all", "solved": "solved", "failed": "failed",
                    "near_miss": "near misses", "wrong_shape": "wrong shape",
                    "invalid_or_missing": "invalid or missing", "disagree": "runs disagree"}
#: The category filter's "no filter" choice.
ANY_CATEGORY = "(any category)"


# ====================================================================== sources
@dataclass
class RunView:
    """One scored run as the explorer sees it: its label, its Results and its table
    (``Results.outputs`` plus columns read from the run's files, aligned row by row
    with the explored run's outputs)."""

    label: str
    results: Any
    table: pd.DataFrame
    files: dict = field(default_factory=dict)


class TasksOnly:
    """The few attributes :func:`arcnb.breakdown.group_membership` reads, for a dataset
    browsed without predictions."""

    def __init__(self, dataset, outputs: pd.DataFrame):
        self.dataset = dataset
        self.outputs = outputs
        self.tasks = pd.DataFrame({"task_id": dataset.task_ids})

    def truth(self, task_id: str, test_index: int):
        return self.dataset[task_id].test[test_index].output

    def test_input(self, task_id: str, test_index: int):
        return self.dataset[task_id].test[test_index].input


def _open_run(source, *, dataset=None, label: str | None = None, base=None):
    """``source`` -> ``(scored Run, label or None)`` through the front door: what
    :func:`arcnb.front.parse_source` reads as a run directory or a predictions file is
    opened by its ``open``; None when it is not a scored source (a dataset, or a name
    that is not a file). A compared predictions file is scored on the explored run's
    dataset (``base``, a Results) for its K."""
    if isinstance(source, Results):
        return open_run(source, label=label or "run"), label
    if isinstance(source, Run):
        return _scored(source), label or source.label
    if isinstance(source, str) and source == "default":
        run = PredictionsSource(str(example())).open(dataset=DEFAULT_DATASET)
        return run, label or run.label
    if not isinstance(source, (str, os.PathLike)):
        return None
    try:
        src = parse_source(source)
    except ArcnbError:
        return None  # not a run: said by the dataset loader
    if isinstance(src, RunDirSource):
        run = _scored(src.open(label=label))
        return run, run.label
    if isinstance(src, PredictionsSource) and Path(src.path).is_file():
        if base is not None:  # a compared predictions file is scored on the explored dataset
            return src.open(dataset=base.dataset, ks=base.ks), label or src.label
        if dataset is None:
            raise ExploreError(f"{src.path} is a predictions file: pass dataset= (e.g. "
                               "'arc-agi-1:evaluation') to score it on")
        return src.open(dataset=dataset), label or src.label
    return None


def _scored(run):
    """``run`` when it has scores; an unscored run (a hidden test set) is refused in one
    line that says what can be browsed instead."""
    return require_scored(run, "the browser", error=ExploreError,
                          hint="Browse its tasks with explore(<dataset>), its predictions in "
                               "the report's gallery (arcnb report)")


def _open_dataset(source, dataset):
    if isinstance(source, Dataset):
        return source
    spec = dataset if source is None else source
    if spec is None:
        raise ExploreError("explore() needs a source: a run directory, a Results, a "
                           "predictions file with dataset=, or a dataset")
    try:
        return load_dataset(spec)
    except ArcnbError as exc:
        raise ExploreError(f"cannot explore {str(spec)!r}: it is not a run directory (no "
                           f"{PREDICTIONS}), a predictions file or a dataset ({exc})") from None


def tasks_table(ds) -> pd.DataFrame:
    """One row per test output of a dataset browsed without predictions: its task, its
    number of demonstrations and its shapes."""
    rows = []
    for t in ds:
        for i, p in enumerate(t.test):
            rows.append({"task_id": t.id, "test_index": i, "n_demonstrations": len(t.train),
                         "input_shape": f"{p.input.shape[0]}x{p.input.shape[1]}",
                         "truth_shape": None if p.output is None
                         else f"{p.output.shape[0]}x{p.output.shape[1]}",
                         "truth_h": 0 if p.output is None else p.output.shape[0],
                         "truth_w": 0 if p.output is None else p.output.shape[1]})
    return pd.DataFrame(rows, columns=["task_id", "test_index", "n_demonstrations",
                                       "input_shape", "truth_shape", "truth_h", "truth_w"])


def _align(main: RunView, other: RunView) -> RunView:
    """Reorder ``other``'s table to the explored run's outputs; refuse other tasks or
    other truths."""
    keys = ["task_id", "test_index"]
    a = main.table[keys]
    b = other.table.set_index(keys)
    n_a, n_b = len(a), len(b)
    missing = pd.MultiIndex.from_frame(a).difference(b.index)
    if len(missing) or n_a != n_b:
        raise ExploreError(
            f"run {other.label!r} has {n_b} outputs over {other.results.tasks.shape[0]} tasks, "
            f"run {main.label!r} {n_a} over {main.results.tasks.shape[0]}"
            + (f" ({len(missing)} outputs of {main.label!r} are not in it, e.g. "
               f"{missing[0][0]} test {missing[0][1]})" if len(missing) else "")
            + ": compared runs must cover the same tasks")
    if other.results.dataset is not main.results.dataset:
        for tid, i in zip(a["task_id"], a["test_index"]):
            ta, tb = main.results.truth(tid, int(i)), other.results.truth(tid, int(i))
            if not same_grid(ta, tb):
                raise ExploreError(f"runs {main.label!r} and {other.label!r} disagree on the "
                                   f"truth of task {tid} test {i}: not the same dataset")
    other.table = b.loc[pd.MultiIndex.from_frame(a)].reset_index()
    return other


def open_runs(source, *, dataset, compare, labels):
    """-> (dataset, [run views] (empty for tasks only))."""
    opened = _open_run(source, dataset=dataset)
    if opened is None:
        return _open_dataset(source, dataset), []
    run, label = opened
    results = run.results
    default = "run" if label is None else str(label)
    if compare is None:
        compare = []
    elif isinstance(compare, (str, os.PathLike, Run, Results)):
        compare = [compare]
    views = [RunView(default, results, run.table, {"run": run})]
    for c in compare:
        got = _open_run(c, base=results)
        if got is None:
            raise ExploreError(f"cannot compare with {c!r}: not a run directory, a Results "
                               "or a predictions file")
        other, lab = got
        views.append(RunView(str(lab or f"run {len(views) + 1}"), other.results, other.table,
                             {"run": other}))
    names = list(labels) if labels is not None else [v.label for v in views]
    if len(names) != len(views):
        raise ExploreError(f"labels= has {len(names)} names for {len(views)} runs")
    for v, name in zip(views, unique_labels([str(n) for n in names])):
        v.label = name
    for v in views[1:]:
        _align(views[0], v)
    return results.dataset, views


# ====================================================================== helpers
def shape_text(g) -> str:
    """A grid's shape in words, ``"HxW"``, or ``"none"``."""
    return "none" if g is None else f"{g.shape[0]}x{g.shape[1]}"


def format_value(v, digits: int = 3) -> str:
    """A table value as the explorer writes it: NaN when missing (``arcnb.text.MISSING``,
    the one spelling), yes / no, or a number with ``digits`` decimals."""
    if v is None or v is pd.NA:
        return MISSING
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        return MISSING if not np.isfinite(v) else fmt_number(v, least=digits, most=digits)
    return str(v)


def choose_attempt(attempts: list, truth, row, attempt, max_k: int):
    """``(0-based index or None, grid or None)`` of the attempt to draw.

    ``"best"``: the table's ``best_attempt`` (:func:`arcnb.grids.best_attempt`, the one
    rule: the first right attempt among the first ``max_k``, else the right-shaped one
    with the most right cells, else the first valid one). An integer picks that attempt
    (1-based)."""
    if attempt != "best":
        j = int(attempt) - 1
        return (j, attempts[j]) if j < len(attempts) else (j, None)
    ba = row.get("best_attempt") if row is not None else None
    if ba is not None and not pd.isna(ba):  # the table's column: nothing recomputed
        return int(ba) - 1, attempts[int(ba) - 1]
    if truth is not None:
        j, _ = best_attempt(truth, attempts, max_k)
        if j is not None:
            return j, attempts[j]
    return (0, None) if attempts[:max_k] else (None, None)


def attempt_words(label: str, j, g, truth, n_attempts: int) -> tuple[str, str | None]:
    """Title of an attempt panel and, when something is off, a sentence saying what."""
    who = f"{label}: " if label else ""
    if j is None or (g is None and j >= n_attempts):
        if n_attempts == 0:
            return f"{who}no attempt", (f"{who}no attempt: this output is missing from the "
                                        "predictions")
        return f"{who}no attempt {j + 1}", f"{who}there is no attempt {j + 1} (only {n_attempts})"
    if g is None:
        return (f"{who}attempt {j + 1}: invalid",
                f"{who}attempt {j + 1} is not a valid grid (malformed in the predictions)")
    if truth is not None and g.shape != truth.shape:
        return (f"{who}attempt {j + 1}: {shape_text(g)}",
                f"{who}shape mismatch: truth {shape_text(truth)}, attempt {j + 1} {shape_text(g)}")
    return f"{who}attempt {j + 1}: {shape_text(g)}", None


# ====================================================================== explorer


def candidate_pool(view: RunView, dataset):
    """The run's candidate pool measured against ``dataset``
    (:class:`arcnb.candidates.CandidateAnalysis`, read once and kept), or None when the
    run has none (:meth:`arcnb.runs.Run.candidates`: the run directory's candidates
    file, else the attempts themselves when an output has more than 2)."""
    if "candidates" not in view.files:
        run = view.files.get("run")
        source = run.candidates() if run is not None else None
        view.files["candidates"] = (None if source is None else
                                    candidates(dataset, source, taxonomy=None, n_boot=1))
    return view.files["candidates"]
