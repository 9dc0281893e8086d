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
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .breakdown import group_membership, latex_table
from .errors import OutputExistsError
from .io import atomic_write_json, atomic_write_text
from .runs import Run, RunDirError
from .stats import bootstrap_ci, mcnemar_table, paired_bootstrap_ci
from .taxonomy import UNCATEGORIZED

__all__ = ["CompareError", "RunScore", "Comparison", "load_run", "compare", "TABLES"]

#: The tables a comparison writes (``<name>.csv`` and ``<name>.tex``).
TABLES = ("runs", "differences", "only_one_solved", "categories")


#: The comparison's JSON summary, written beside the tables.
SUMMARY_FILE = "summary.json"


class CompareError(RunDirError):
    """Runs cannot be compared (different task sets, different truths, bad run dir).

    A subclass of :class:`arcnb.runs.RunDirError` (itself an ArcnbError and a
    ValueError) because :func:`load_run` raises it for a bad run directory."""


class RunScore(Run):
    """The former name of :class:`arcnb.runs.Run` in this module, kept for code that
    builds one positionally as ``RunScore(label, results, path, metrics)``."""

    def __init__(self, label: str, results, path: str | None = None,
                 metrics: dict | None = None):
        super().__init__(results, dict(metrics or {}), Path(path) if path else None, label)


def load_run(run_dir: str | os.PathLike, *, dataset=None, label: str | None = None,
             n_boot: int = 1000, seed: int = 0, _cache: dict | None = None) -> Run:
    """Re-score a run directory: :meth:`arcnb.runs.Run.open` (see it for how the
    dataset and the task set are found), with :class:`CompareError` for a run
    directory that is missing, incomplete or inconsistent."""
    try:
        return Run.open(run_dir, dataset=dataset, label=label, n_boot=n_boot, seed=seed,
                        cache=_cache)
    except CompareError:
        raise
    except RunDirError as exc:
        raise CompareError(str(exc)) from None


# ---------------------------------------------------------------------- comparison
@dataclass
class Comparison:
    """The result of :func:`compare`: the runs, the common task list, a JSON-able
    ``summary`` and the tables of :data:`TABLES`."""

    runs: list[Run]
    task_ids: list[str]
    summary: dict
    tables: dict[str, pd.DataFrame]

    def write(self, out: str | os.PathLike, *, overwrite: bool = False,
              latex: bool = True) -> list[Path]:
        """Write ``<table>.csv`` (and ``.tex``) for every table and ``summary.json``
        into ``out``, each file atomically. Nothing is written when any target exists
        and ``overwrite`` is False."""
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise CompareError(f"{out} exists and is not a directory")
        targets = [out / SUMMARY_FILE]
        for name in self.tables:
            targets.append(out / f"{name}.csv")
            if latex:
                targets.append(out / f"{name}.tex")
        existing = [p for p in targets if p.exists()]
        if existing and not overwrite:
            raise OutputExistsError(f"{existing[0]} already exists; refusing to overwrite it "
                                    "(pass overwrite=True / --overwrite)")
        written = []
        for name, df in self.tables.items():
            written.append(atomic_write_text(out / f"{name}.csv",
                                             df.to_csv(index=False, lineterminator="\n"),
                                             overwrite=True))
            if latex:
                written.append(atomic_write_text(out / f"{name}.tex",
                                                 latex_table(df, caption=_CAPTIONS[name]),
                                                 overwrite=True))
        written.append(atomic_write_json(out / SUMMARY_FILE, self.summary, overwrite=True))
        return written

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
    seen: dict[str, int] = {}
    for r in runs:
        n = seen.get(r.label, 0)
        seen[r.label] = n + 1
        if n:
            r.label = f"{r.label}#{n + 1}"


def _restrict(run: Run, task_ids: list[str], n_boot: int, seed: int) -> Run:
    from .scoring import score

    res = run.results
    if list(res.tasks["task_id"]) == task_ids:
        return run
    ds = res.dataset.select(task_ids, label=f"{len(task_ids)} common tasks")
    return Run(score(ds, res.predictions, ks=res.ks, n_boot=n_boot, seed=seed), run.metrics,
               run.run_dir, run.label)


def _check_truths(runs: Sequence[Run], task_ids: list[str]) -> None:
    ref = runs[0].results.dataset
    for r in runs[1:]:
        ds = r.results.dataset
        if ds is ref:
            continue
        for t in task_ids:
            a, b = ref[t].test, ds[t].test
            if len(a) != len(b) or any(x.output.shape != y.output.shape or
                                       not np.array_equal(x.output, y.output)
                                       for x, y in zip(a, b)):
                raise CompareError(f"runs {runs[0].label} and {r.label} disagree on the truth "
                                   f"of task {t} ({ref.name} vs {ds.name}); they cannot be "
                                   "compared")


def compare(runs: Sequence, *, labels: Sequence[str] | None = None, common_only: bool = False,
            taxonomy="structural", dataset=None, n_boot: int = 1000, seed: int = 0,
            level: float = 0.95) -> Comparison:
    """Compare two or more runs (run directories, :class:`~arcnb.runs.Run` or
    :class:`~arcnb.scoring.Results`).

    Every pair (A, B) with A listed before B is compared as described in the module
    docstring; ``taxonomy`` (a taxonomy spec for
    :func:`arcnb.breakdown.group_membership`, default the automatic structural one;
    None to skip) gives the per-category table. ``dataset`` re-scores every run
    directory on that dataset instead of the recorded one.
    """
    from .scoring import Results

    if len(runs) < 2:
        raise CompareError("compare needs at least two runs")
    if labels is not None and len(labels) != len(runs):
        raise CompareError(f"{len(labels)} labels for {len(runs)} runs")
    loaded: list[Run] = []
    cache: dict = {}  # each dataset is loaded once
    for i, r in enumerate(runs):
        lab = labels[i] if labels is not None else None
        if isinstance(r, Run) and r.results is not None:
            loaded.append(Run(r.results, r.metrics, r.run_dir, lab or r.label))
        elif isinstance(r, Run):  # read without scoring (Run.read): open its directory
            if r.run_dir is None:
                raise CompareError(f"run {r.label!r} has neither results nor a run directory")
            loaded.append(load_run(r.run_dir, dataset=dataset, label=lab or r.label,
                                   n_boot=n_boot, seed=seed, _cache=cache))
        elif isinstance(r, Results):
            loaded.append(Run(r, {}, None, lab or f"run{i + 1}"))
        else:
            loaded.append(load_run(r, dataset=dataset, label=lab, n_boot=n_boot, seed=seed,
                                   _cache=cache))
    _labels(loaded)
    sets = [set(r.results.tasks["task_id"]) for r in loaded]
    common = sorted(set.intersection(*sets))
    restricted = any(s != set(common) for s in sets)
    if restricted and not common_only:
        sizes = ", ".join(f"{r.label}: {len(s)}" for r, s in zip(loaded, sets))
        raise CompareError(f"the runs cover different task sets ({sizes}; {len(common)} in "
                           "common); pass common_only=True / --common-tasks to compare them "
                           "on their common tasks")
    if not common:
        raise CompareError("the runs have no task in common")
    _check_truths(loaded, common)
    loaded = [_restrict(r, common, n_boot, seed) for r in loaded]

    run_rows = []
    for r in loaded:
        s = r.results.summary
        lo, hi = bootstrap_ci(r.results.tasks["pass@2"].to_numpy(), n_boot=n_boot, seed=seed,
                              level=level)
        run_rows.append({"run": r.label, "path": r.path, "dataset": s["dataset"]["name"],
                         "version": s["dataset"]["version"], "n_tasks": s["n_tasks"],
                         "n_outputs": s["n_outputs"], "pass@1": s["pass@1"],
                         "pass@2": s["pass@2"], "pass@2_per_output": s["pass@2_per_output"],
                         "pass@2_all_or_nothing": s["pass@2_all_or_nothing"],
                         "pass@2_ci_low": lo, "pass@2_ci_high": hi})
    runs_table = pd.DataFrame(run_rows)

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
        "definitions": {
            "difference": "mean over the common tasks of pass@2(B) - pass@2(A); B is the "
                          "run listed later",
            "mcnemar_p": "exact two-sided McNemar test on outputs solved within 2 attempts: "
                         "p = min(1, 2 * sum_{i<=min(b,c)} C(b+c, i) / 2^(b+c))",
            "task solved": "all of the task's test outputs solved within 2 attempts",
        },
    }
    if mem is not None:
        summary["taxonomy"] = {"name": tax_info["grouping"], "level": tax_info["level"],
                               "multi_label": tax_info["multi_label"],
                               "coverage": tax_info.get("coverage"),
                               "note": ("multi-label: a task counts in each of its categories"
                                        if tax_info["multi_label"] else "single-label")}
    return Comparison(loaded, common, summary, tables)


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
    ta, tb, oa, ob = _aligned(a, b)
    key = ["task_id", "test_index"]
    m = mem.merge(oa["solved@2"].rename("a").reset_index(), on=key) \
        .merge(ob["solved@2"].rename("b").reset_index(), on=key)
    rows = []
    present = set(m["group"])
    order = [g for g in info.get("order", []) if g in present and g != UNCATEGORIZED]
    order += sorted(present - set(order) - {UNCATEGORIZED})
    if UNCATEGORIZED in present:
        order.append(UNCATEGORIZED)
    grouped = dict(tuple(m.groupby("group", sort=False)))
    for g in order:
        d = grouped[g]
        per_task = d.groupby("task_id")[["a", "b"]].mean()
        diff, lo, hi = paired_bootstrap_ci(per_task["a"].to_numpy(), per_task["b"].to_numpy(),
                                           n_boot=n_boot, seed=seed, level=level)
        mc = mcnemar_table(d["a"].to_numpy(bool), d["b"].to_numpy(bool))
        rows.append({"run_a": a.label, "run_b": b.label, "category": g,
                     "n_tasks": len(per_task), "n_outputs": len(d),
                     "pass@2_a": float(per_task["a"].mean()),
                     "pass@2_b": float(per_task["b"].mean()),
                     "difference": diff, "ci_low": lo, "ci_high": hi,
                     "n_a_only": mc["n_a_only"], "n_b_only": mc["n_b_only"],
                     "mcnemar_p": mc["p_value"], "multi_label": info["multi_label"]})
    return pd.DataFrame(rows)
