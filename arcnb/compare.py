"""Compare runs on the same tasks: paired bootstrap interval for the difference in
pass@2, exact McNemar test on solved / unsolved outputs, the outputs only one run
solved, and a per-category table of differences.

A run is a run directory (as written by ``arcnb evaluate`` / ``arcnb report``; see
:mod:`arcnb.runs`), a :class:`~arcnb.runs.Run` or an in-memory
:class:`~arcnb.scoring.Results`. Run directories are *re-scored* from their
predictions on the dataset their metrics record (never trusting the tables), by
:meth:`arcnb.runs.Run.open`; the re-scored headline numbers must match the recorded
ones.

For runs A and B (A listed first) over the same tasks T and outputs O:

* ``difference = mean_t (pass@2_B(t) - pass@2_A(t))`` = pass@2(B) - pass@2(A), with a
  seeded paired percentile bootstrap interval resampling tasks
  (:func:`arcnb.stats.paired_bootstrap_ci`);
* McNemar: over O, ``n_a_only`` outputs solved within 2 attempts by A only and
  ``n_b_only`` by B only; exact two-sided p-value
  (:func:`arcnb.stats.mcnemar_exact`);
* a task is *solved* when all its test outputs are solved within 2 attempts;
  ``tasks_a_only`` lists tasks solved by A and not by B, and vice versa.

Runs over different task sets are refused (:class:`CompareError`) unless
``common_only=True``, which re-scores every run on the tasks they share.

Estimators. Each run is re-scored with the estimator its metrics.json records
(``ranked`` or ``unbiased``, see :mod:`arcnb.scoring`). The difference, its interval and
the per-category differences use each run's per-task ``pass@2``, so they follow the
estimator. The McNemar test, the outputs only one run solved and the solved tasks need a
yes / no per output: they always use ``solved@2`` (the ranked rule: right within the
first 2 attempts in file order), which for an unordered sample depends on the file's
order. The summary's ``notes`` say so when a run is unbiased, and when the runs use
different estimators.

The leaderboard picture. When every run has a cost (its attempts' metadata
``cost.total_cost``), :meth:`Comparison.leaderboard` draws one point per run, pass@2
(ARC Prize rule, the runs table's value) with its 95% bootstrap interval against cost
per task on a log axis, with the Pareto front (:func:`arcnb.stats.pareto_front`) marked;
:meth:`Comparison.write` saves it as ``leaderboard.png`` and ``leaderboard.pdf``. Without
cost the summary's ``leaderboard`` says so in one line.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .breakdown import group_membership, latex_table
from .difficulty import DIFFICULTY_FILE, PRIOR_SD, Difficulty, fit_difficulty
from .errors import CompareError
from .front import PredictionsSource, RunDirSource, parse_source
from .grids import same_grid
from .harness_logs import run_log_rates
from .runs import (METRICS, SUMMARY_JSON, Run, RunDirError, provenance_block, unique_labels,
                   write_result_folder)
from .scoring import Results, missing_tasks_warning, score, task_means
from .stats import bootstrap_ci, check_n_boot, mcnemar_table, paired_bootstrap_ci, pareto_front
from .taxonomy import UNCATEGORIZED
from .plot import leaderboard
from .plot.paper import figure_bytes
from .plot.palette import pyplot

__all__ = ["CompareError", "Comparison", "load_run", "compare", "TABLES",
           "pareto_front", "LEADERBOARD", "LEADERBOARD_FORMATS"]

#: The tables a comparison writes (``<name>.csv`` and ``<name>.tex``).
TABLES = ("runs", "differences", "only_one_solved", "categories")


#: The comparison's JSON summary, written beside the tables.
SUMMARY_FILE = SUMMARY_JSON

#: The leaderboard picture's file name (without suffix) and formats, written beside
#: the tables when every run has a cost.
LEADERBOARD = "leaderboard"
#: The formats the leaderboard picture is written in.
LEADERBOARD_FORMATS = ("png", "pdf")




def load_run(run_dir: str | os.PathLike, *, dataset=None, label: str | None = None,
             n_boot: int = 1000, seed: int = 0, _cache: dict | None = None) -> Run:
    """Re-score a run directory: ``RunDirSource(run_dir).open(...)`` (the front door,
    ``arcnb.open``; :meth:`arcnb.runs.Run.open` says how the dataset and the task set
    are found; the recorded estimator is used) for pass@1 and pass@2, with
    :class:`CompareError` for a run directory that is missing, incomplete or
    inconsistent, or unscored (no truth). Kept as a thin wrapper for the callers that
    use it; ``arcnb.open(run_dir)`` opens any source."""
    return _open(RunDirSource(str(run_dir)), dataset=dataset, label=label, n_boot=n_boot,
                 seed=seed, cache=_cache)


def _open(source, *, dataset, label: str | None, n_boot: int, seed: int,
          cache: dict | None, tasks=None) -> Run:
    """A scored run from a typed source's ``open``; its errors as :class:`CompareError`."""
    try:
        run = source.open(dataset=dataset, tasks=tasks, label=label, ks=(1, 2), n_boot=n_boot,
                          seed=seed, cache=cache)
    except CompareError:
        raise
    except RunDirError as exc:
        raise CompareError(str(exc)) from None
    if not run.scored:
        raise CompareError(f"{run.path or run.label} is not scored (its dataset has no truth: "
                           "a hidden test set); it cannot be compared")
    return run


def _load_one(r, i: int, lab: str | None, *, dataset, n_boot: int, seed: int,
              cache: dict, tasks=None) -> Run:
    """One of :func:`compare`'s runs as a scored Run: a Run, a Results, or a path
    :func:`arcnb.front.parse_source` reads as a run directory or predictions."""
    if isinstance(r, Run) and r.results is not None:
        return replace(r, label=lab or r.label)
    if isinstance(r, Run) and not r.scored:
        raise CompareError(f"run {r.label!r} is not scored (no truth: a hidden test set); it "
                           "cannot be compared")
    if isinstance(r, Run):  # read without scoring (Run.read): open its directory
        if r.run_dir is None:
            raise CompareError(f"run {r.label!r} has neither results nor a run directory")
        return load_run(r.run_dir, dataset=dataset, label=lab or r.label, n_boot=n_boot,
                        seed=seed, _cache=cache)
    if isinstance(r, Results):
        return Run(r, {}, None, lab or f"run{i + 1}")
    # a path that does not exist is said as a missing run directory (Run.open's words)
    source = parse_source(r) if Path(r).exists() else RunDirSource(str(r))
    if isinstance(source, PredictionsSource) and dataset is None:
        raise CompareError(f"{r} is not a run directory (no {METRICS}); to compare "
                           "predictions (a submission file or a benchmarking-harness run "
                           "folder) pass the dataset they were made for (dataset= / "
                           "--dataset)")
    if not isinstance(source, (RunDirSource, PredictionsSource)):
        raise CompareError(f"{r} is not a run directory or predictions (a submission file "
                           "or a benchmarking-harness run folder): it cannot be compared")
    return _open(source, dataset=dataset, label=lab, n_boot=n_boot, seed=seed, cache=cache,
                 tasks=tasks)


# ---------------------------------------------------------------------- comparison
@dataclass
class Comparison:
    """The result of :func:`compare`: the runs, the common task list, a JSON-able
    ``summary`` and the tables of :data:`TABLES`."""

    runs: list[Run]
    task_ids: list[str]
    summary: dict
    tables: dict[str, pd.DataFrame]
    #: Task difficulty across the runs (:mod:`arcnb.difficulty`); None when not fitted.
    difficulty: Difficulty | None = None

    @property
    def has_cost(self) -> bool:
        """True when every run has a cost (the leaderboard picture can be drawn)."""
        return bool(self.runs) and all(bool(getattr(r.results, "has_cost", False))
                                       for r in self.runs)

    def leaderboard(self, ax=None):
        """The leaderboard picture (:func:`arcnb.plot.leaderboard` of the runs
        table): pass@2 with its interval against cost per task, log cost axis, Pareto
        front marked. Returns the Axes, or None when some run has no cost."""
        if not self.has_cost:
            return None
        return leaderboard(self.tables["runs"], ax=ax)

    def write(self, out: str | os.PathLike, *, overwrite: bool = False,
              latex: bool = True) -> list[Path]:
        """Write ``<table>.csv`` (and ``.tex``) for every table, ``difficulty.csv``,
        and, when every run has a cost, the leaderboard picture (``leaderboard.png`` and
        ``.pdf``), then ``summary.json``, into ``out`` as one result folder
        (:func:`arcnb.runs.write_result_folder`: through the guarded output folder, each
        file atomically; CSV cells a spreadsheet would run as a formula get a leading
        ``'``). Nothing is written when any target exists and ``overwrite`` is False; a
        write that fails (a full disk) takes back the files it created."""
        extra = {}
        if latex:
            for name, df in self.tables.items():
                extra[f"{name}.tex"] = (lambda n=name, d=df:
                                        latex_table(d, caption=_CAPTIONS[n]).encode("utf-8"))
        if self.has_cost:
            pictures = self._leaderboard_pictures()
            for fmt in LEADERBOARD_FORMATS:
                extra[f"{LEADERBOARD}.{fmt}"] = (lambda f=fmt: pictures()[f])
        tables = {f"{name}.csv": df for name, df in self.tables.items()}
        if self.difficulty is not None:
            tables[DIFFICULTY_FILE] = self.difficulty.csv_table
        return write_result_folder(out, self.summary, tables, extra_files=extra,
                                   overwrite=overwrite, hint="pass overwrite=True / --overwrite")

    def _leaderboard_pictures(self):
        """A function giving the leaderboard picture in each of
        :data:`LEADERBOARD_FORMATS` (``{fmt: bytes}``), drawn once, at its first call."""
        drawn: dict = {}

        def pictures() -> dict:
            if not drawn:
                fig = self.leaderboard().get_figure()
                try:
                    drawn.update({fmt: figure_bytes(fig, fmt) for fmt in LEADERBOARD_FORMATS})
                finally:
                    pyplot().close(fig)
            return drawn
        return pictures

    def __repr__(self) -> str:
        return (f"Comparison(runs={[r.label for r in self.runs]}, tasks={len(self.task_ids)})")


_CAPTIONS = {
    "runs": "Runs compared (re-scored on the common tasks)",
    "differences": "Paired differences in pass@2 (B - A) with 95% paired bootstrap "
                   "intervals over tasks and exact McNemar tests on outputs",
    "only_one_solved": "Test outputs solved within 2 attempts by only one run",
    "categories": "Per-category differences in pass@2 (B - A); multi-label tasks count in "
                  "each of their categories",
}


def _labels(runs: Sequence[Run]) -> None:
    for r, label in zip(runs, unique_labels([r.label for r in runs])):
        r.label = label


def _restrict(run: Run, task_ids: list[str], n_boot: int, seed: int) -> Run:
    res = run.results
    if list(res.tasks["task_id"]) == task_ids:
        return run
    ds = res.dataset.select(task_ids, label=f"{len(task_ids)} common tasks")
    return Run(score(ds, res.predictions, ks=res.ks, n_boot=n_boot, seed=seed,
                     estimator=res.estimator), run.metrics, run.run_dir, run.label)


def _check_truths(runs: Sequence[Run], task_ids: list[str]) -> None:
    ref = runs[0].results.dataset
    for r in runs[1:]:
        ds = r.results.dataset
        if ds is ref:
            continue
        for t in task_ids:
            a, b = ref[t].test, ds[t].test
            if len(a) != len(b) or any(not same_grid(x.output, y.output) for x, y in zip(a, b)):
                raise CompareError(f"runs {runs[0].label} and {r.label} disagree on the truth "
                                   f"of task {t} ({ref.name} vs {ds.name}); they cannot be "
                                   "compared")


def _load_all(runs: Sequence, labels, *, dataset, n_boot: int, seed: int,
              common_only: bool, tasks=None) -> tuple[list[Run], list[str], list[set], bool]:
    """Load, label and restrict the runs: ``(runs, common task ids, each run's task
    set, restricted)``."""
    if len(runs) < 2:
        raise CompareError("compare needs at least two runs")
    if labels is not None and len(labels) != len(runs):
        raise CompareError(f"{len(labels)} labels for {len(runs)} runs")
    cache: dict = {}  # each dataset is loaded once
    loaded = [_load_one(r, i, labels[i] if labels is not None else None, dataset=dataset,
                        n_boot=n_boot, seed=seed, cache=cache, tasks=tasks)
              for i, r in enumerate(runs)]
    _labels(loaded)
    sets = [set(r.results.tasks["task_id"]) for r in loaded]
    common = sorted(set.intersection(*sets))
    restricted = any(s != set(common) for s in sets)
    if restricted and not common_only:
        sizes = ", ".join(f"{r.label}: {len(s)}" for r, s in zip(loaded, sets))
        raise CompareError(f"the runs cover different task sets ({sizes}; {len(common)} in "
                           "common); pass tasks= / --tasks FILE to score them all on the same tasks (a "
                           "task a run has no predictions for counts as wrong), or "
                           "common_only=True / --common-tasks to compare them on their common "
                           "tasks")
    if not common:
        raise CompareError("the runs have no task in common")
    _check_truths(loaded, common)
    loaded = [_restrict(r, common, n_boot, seed) for r in loaded]
    return loaded, common, sets, restricted


def _run_row(r: Run, *, n_boot: int, seed: int, level: float) -> dict:
    s = r.results.summary
    lo, hi = bootstrap_ci(r.results.tasks["pass@2"].to_numpy(), n_boot=n_boot, seed=seed,
                          level=level)
    return {"run": r.label, "path": r.path, "dataset": s["dataset"]["name"],
            "version": s["dataset"]["version"], "estimator": r.results.estimator,
            "n_tasks": s["n_tasks"], "n_outputs": s["n_outputs"], "pass@1": s["pass@1"],
            "pass@2": s["pass@2"], "pass@2_per_output": s["pass@2_per_output"],
            "pass@2_all_or_nothing": s["pass@2_all_or_nothing"],
            "pass@2_ci_low": lo, "pass@2_ci_high": hi,
            "total_cost": _num(s.get("total_cost")), "cost_per_task": _num(s.get("cost_per_task")),
            "total_tokens": _num(s.get("total_tokens")),
            "tokens_per_task": _num(s.get("tokens_per_task")), "model": s.get("model"),
            "cost_cached_per_task": _num(s.get("cost_cached_per_task")),
            "total_tool_calls": _num(s.get("total_tool_calls")),
            **_log_rates(r)}


def _log_rates(r: Run) -> dict:
    """The run's retry, timeout and failure rates from the harness's API logs beside
    it (:func:`arcnb.harness_logs.run_log_rates`); NaN without logs."""
    rates = run_log_rates(r.results.predictions) or {}
    return {k: _num(rates.get(k)) for k in ("retry_rate", "timeout_rate", "failure_rate")}


def _num(v) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float("nan")


def _leaderboard_summary(loaded: Sequence[Run], runs_table: pd.DataFrame) -> dict:
    """The summary's ``leaderboard``: cost per task, pass@2 and the Pareto front, or a
    one-line note naming the runs without cost."""
    no_cost = [r.label for r in loaded if not r.results.has_cost]
    if no_cost:
        return {"drawn": False, "files": [],
                "note": "no leaderboard picture (pass@2 against cost per task): "
                        + ("no run has a cost" if len(no_cost) == len(loaded) else
                           f"run {no_cost[0]} has no cost" if len(no_cost) == 1 else
                           "runs " + ", ".join(no_cost) + " have no cost")
                        + " (attempt metadata cost.total_cost)"}
    placed = np.isfinite(runs_table["cost_per_task"].to_numpy(float)) & \
        np.isfinite(runs_table["pass@2"].to_numpy(float))
    if not placed.any():  # never an empty picture that claims to be drawn
        return {"drawn": False, "files": [],
                "note": "no leaderboard picture (pass@2 against cost per task): no run has "
                        "both a cost per task and a defined pass@2"}
    return {"drawn": True, "files": [f"{LEADERBOARD}.{fmt}" for fmt in LEADERBOARD_FORMATS],
            "x": "cost_per_task", "y": "pass@2", "x_scale": "log",
            "pareto_front": [str(r) for r, f in zip(runs_table["run"],
                                                    runs_table["pareto_front"]) if f],
            "note": "pass@2 (ARC Prize rule) with its 95% bootstrap interval against cost "
                    "per task (log axis); the Pareto front joins the runs no other run beats "
                    "on both cost and score"}


def _estimator_notes(loaded: Sequence[Run]) -> list[str]:
    notes = []
    est = {r.label: r.results.estimator for r in loaded}
    unbiased = [lab for lab, e in est.items() if e == "unbiased"]
    if unbiased:
        who = (f"run {unbiased[0]} uses" if len(unbiased) == 1 else
               "runs " + ", ".join(unbiased) + " use")
        notes.append(who + " the unbiased estimator: their "
                     "pass@2, the differences and the per-category differences are unbiased "
                     "estimates (per task, the mean of each output's probability of a right "
                     "answer among 2 attempts drawn from its sample); the McNemar test, the "
                     "outputs only one run solved and the solved tasks use the ranked rule "
                     "(right within the first 2 attempts in file order), which for sampled "
                     "attempts depends on the file's order")
    if len(set(est.values())) > 1:
        notes.append("the runs use different estimators ("
                     + ", ".join(f"{lab}: {e}" for lab, e in est.items())
                     + "): their pass@2 differences compare different quantities")
    return notes


def compare(runs: Sequence, *, labels: Sequence[str] | None = None, common_only: bool = False,
            taxonomy="structural", dataset=None, n_boot: int = 1000, seed: int = 0,
            level: float = 0.95, tasks=None, difficulty: str | None = "rasch",
            prior_sd: float = PRIOR_SD, pool=None, solve_rates=None) -> Comparison:
    """Compare two or more runs (run directories, :class:`~arcnb.runs.Run` or
    :class:`~arcnb.scoring.Results`; with ``dataset``, also predictions: a submission
    file or a benchmarking-harness run folder, scored on it in memory).

    Every pair (A, B) with A listed before B is compared as described in the module
    docstring; ``taxonomy`` (a taxonomy spec for
    :func:`arcnb.breakdown.group_membership`, default the automatic structural one;
    None to skip) gives the per-category table. ``dataset`` re-scores every run
    directory on that dataset instead of the recorded one. The runs table carries each
    run's estimator, cost and tokens (NaN without metadata) and ``pareto_front``
    (whether the run is on the Pareto front of cost per task and pass@2; False for
    every run when some run has no cost); ``summary["leaderboard"]`` says whether the
    leaderboard picture can be drawn, and ``summary["notes"]`` how to read the numbers.
    ``tasks`` (a task-id file or list) scores every run on those tasks of its dataset
    (a task a run has no predictions for counts as wrong; the rule of
    :func:`arcnb.front.task_set`); without it each run directory keeps the tasks it
    records, and runs made on different tasks are refused (or, with ``common_only``,
    compared on the tasks they share). ``summary["warnings"]`` names the runs scored
    with tasks they have no predictions for.
    ``difficulty`` (``"rasch"``, ``"2pl"``, or None / ``"none"``) fits task difficulty across the runs
    (:func:`arcnb.difficulty.fit_difficulty` with ``prior_sd``, ``pool`` and
    ``solve_rates``): ``summary["difficulty"]`` and ``difficulty.csv``.
    """
    n_boot = check_n_boot(n_boot)  # before any run is loaded
    loaded, common, sets, restricted = _load_all(runs, labels, dataset=dataset,
                                                 n_boot=n_boot, seed=seed,
                                                 common_only=common_only, tasks=tasks)
    run_rows = [_run_row(r, n_boot=n_boot, seed=seed, level=level) for r in loaded]
    runs_table = pd.DataFrame(run_rows)
    all_cost = all(r.results.has_cost for r in loaded)
    runs_table["pareto_front"] = (pareto_front(runs_table["cost_per_task"], runs_table["pass@2"])
                                  if all_cost else False)
    run_rows = runs_table.to_dict(orient="records")

    mem = None
    tax_info: dict = {}
    if taxonomy is not None:
        mem, tax_info = group_membership(loaded[0].results, taxonomy)
        multi = bool(mem.duplicated(["task_id", "test_index"]).any())
        tax_info["multi_label"] = multi

    diff_rows, only_rows, cat_rows, pairs = [], [], [], []
    for i in range(len(loaded)):
        for j in range(i + 1, len(loaded)):
            a, b = loaded[i], loaded[j]
            pair = _compare_pair(a, b, n_boot=n_boot, seed=seed, level=level)
            diff_rows.append(pair["row"])
            only_rows.append(pair["only"])
            pairs.append(pair["json"])
            if mem is not None:
                cat_rows.append(_category_diffs(a, b, mem, tax_info, n_boot, seed, level))
    only_cols = ["run_a", "run_b", "task_id", "test_index", "solved_by", "pass@2_a", "pass@2_b"]
    tables = {
        "runs": runs_table,
        "differences": pd.DataFrame(diff_rows),
        "only_one_solved": pd.concat(only_rows, ignore_index=True) if only_rows else
        pd.DataFrame(columns=only_cols),
    }
    if mem is not None:
        tables["categories"] = pd.concat(cat_rows, ignore_index=True)
    summary = {
        "runs": [{k: v for k, v in row.items()} for row in run_rows],
        "n_tasks": len(common),
        "n_outputs": int(loaded[0].results.summary["n_outputs"]),
        "common_tasks_only": bool(restricted),
        "tasks_dropped": {r.label: len(s) - len(common) for r, s in zip(loaded, sets)},
        "pairs": pairs,
        "bootstrap": {"n_boot": n_boot, "seed": seed, "level": level, "unit": "task",
                      "paired": True},
        "definitions": _DEFINITIONS,
        "leaderboard": _leaderboard_summary(loaded, runs_table),
        "notes": _estimator_notes(loaded),
        "provenance": provenance_block(
            loaded[0].results.dataset, estimator="/".join(sorted({r.results.estimator
                                                                 for r in loaded}))),
        "warnings": [f"run {r.label}: {w}" for r in loaded
                     for w in [missing_tasks_warning(r.results.dataset,
                                                     r.results.predictions.task_ids)] if w],
    }
    if mem is not None:
        summary["taxonomy"] = {"name": tax_info["grouping"], "level": tax_info["level"],
                               "multi_label": tax_info["multi_label"],
                               "coverage": tax_info.get("coverage"),
                               "note": ("multi-label: a task counts in each of its categories"
                                        if tax_info["multi_label"] else "single-label")}
    fit = (fit_difficulty(loaded, model=difficulty, prior_sd=prior_sd, pool=pool,
                          solve_rates=solve_rates) if difficulty not in (None, "none") else None)
    if fit is not None:
        summary["difficulty"] = fit.summary()
    return Comparison(loaded, common, summary, tables, difficulty=fit)


_DEFINITIONS = {
    "difference": "mean over the common tasks of pass@2(B) - pass@2(A); B is the run listed "
                  "later; each run's pass@2 follows its estimator",
    "mcnemar_p": "exact two-sided McNemar test on outputs solved within 2 attempts (ranked "
                 "rule): p = min(1, 2 * sum_{i<=min(b,c)} C(b+c, i) / 2^(b+c))",
    "task solved": "all of the task's test outputs solved within 2 attempts (ranked rule)",
    "cost_per_task": "total cost of the run's attempts (metadata cost.total_cost) divided by "
                     "the number of common tasks",
    "cost_cached_per_task": "the cost per task with the provider's cache priced (cache reads "
                            "at 0.1 x, writes at 1.25 x the input price); NaN without cache "
                            "counts",
    "retry_rate": "from the harness's API logs beside a run: requests that repeat an attempt "
                  "over the requests (failure_rate: failed over finished requests; "
                  "timeout_rate: tasks that timed out over the tasks logged); NaN without "
                  "logs",
    "pareto_front": "no other run has a cost per task at most as high and a pass@2 at least "
                    "as high, with one of the two strictly better",
}


def _aligned(a: Run, b: Run):
    ta = a.results.tasks.set_index("task_id")
    tb = b.results.tasks.set_index("task_id").reindex(ta.index)
    oa = a.results.outputs.set_index(["task_id", "test_index"])
    ob = b.results.outputs.set_index(["task_id", "test_index"]).reindex(oa.index)
    return ta, tb, oa, ob


def _compare_pair(a: Run, b: Run, *, n_boot, seed, level) -> dict:
    ta, tb, oa, ob = _aligned(a, b)
    diff, lo, hi = paired_bootstrap_ci(ta["pass@2"].to_numpy(), tb["pass@2"].to_numpy(),
                                       n_boot=n_boot, seed=seed, level=level)
    sa = oa["solved@2"].to_numpy(bool)
    sb = ob["solved@2"].to_numpy(bool)
    mc = mcnemar_table(sa, sb)
    tasks_a = sorted(ta.index[ta["all_solved@2"].to_numpy(bool) & ~tb["all_solved@2"].to_numpy(bool)])
    tasks_b = sorted(ta.index[~ta["all_solved@2"].to_numpy(bool) & tb["all_solved@2"].to_numpy(bool)])
    disc = sa != sb
    idx = oa.index[disc]
    only = pd.DataFrame({
        "run_a": a.label, "run_b": b.label,
        "task_id": idx.get_level_values(0), "test_index": idx.get_level_values(1),
        "solved_by": np.where(sa[disc], a.label, b.label),
        "pass@2_a": ta["pass@2"].reindex(idx.get_level_values(0)).to_numpy(),
        "pass@2_b": tb["pass@2"].reindex(idx.get_level_values(0)).to_numpy(),
    })
    row = {"run_a": a.label, "run_b": b.label, "n_tasks": len(ta), "n_outputs": len(oa),
           "pass@1_a": a.results.summary["pass@1"], "pass@1_b": b.results.summary["pass@1"],
           "pass@2_a": a.results.summary["pass@2"], "pass@2_b": b.results.summary["pass@2"],
           "difference": diff, "ci_low": lo, "ci_high": hi,
           "n_both": mc["n_both"], "n_a_only": mc["n_a_only"], "n_b_only": mc["n_b_only"],
           "n_neither": mc["n_neither"], "mcnemar_p": mc["p_value"],
           "n_tasks_a_only": len(tasks_a), "n_tasks_b_only": len(tasks_b)}
    js = dict(row)
    js["tasks_a_only"] = list(tasks_a)
    js["tasks_b_only"] = list(tasks_b)
    return {"row": row, "only": only, "json": js}


def _category_diffs(a: Run, b: Run, mem: pd.DataFrame, info: dict, n_boot, seed,
                    level) -> pd.DataFrame:
    """Per category: the difference of the mean over its tasks of the per-task mean of
    the outputs' ``pass@2`` (the estimator's value; NaN when one output is undefined)
    and McNemar on ``solved@2``."""
    ta, tb, oa, ob = _aligned(a, b)
    key = ["task_id", "test_index"]
    m = mem.merge(oa[["solved@2", "pass@2"]].rename(columns={"solved@2": "a",
                                                             "pass@2": "pa"}).reset_index(),
                  on=key) \
        .merge(ob[["solved@2", "pass@2"]].rename(columns={"solved@2": "b",
                                                          "pass@2": "pb"}).reset_index(),
               on=key)
    rows = []
    present = set(m["group"])
    order = [g for g in info.get("order", []) if g in present and g != UNCATEGORIZED]
    order += sorted(present - set(order) - {UNCATEGORIZED})
    if UNCATEGORIZED in present:
        order.append(UNCATEGORIZED)
    grouped = dict(tuple(m.groupby("group", sort=False)))
    for g in order:
        d = grouped[g]
        per_task, _ = task_means(d[["pa", "pb"]], d["task_id"].to_numpy())
        diff, lo, hi = paired_bootstrap_ci(per_task["pa"].to_numpy(), per_task["pb"].to_numpy(),
                                           n_boot=n_boot, seed=seed, level=level)
        mc = mcnemar_table(d["a"].to_numpy(bool), d["b"].to_numpy(bool))
        rows.append({"run_a": a.label, "run_b": b.label, "category": g,
                     "n_tasks": len(per_task), "n_outputs": len(d),
                     "pass@2_a": float(per_task["pa"].mean(skipna=False)),
                     "pass@2_b": float(per_task["pb"].mean(skipna=False)),
                     "difference": diff, "ci_low": lo, "ci_high": hi,
                     "n_a_only": mc["n_a_only"], "n_b_only": mc["n_b_only"],
                     "mcnemar_p": mc["p_value"], "multi_label": info["multi_label"]})
    return pd.DataFrame(rows)
