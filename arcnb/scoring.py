"""Official ARC Prize scoring over a dataset, as tidy tables.

A test output is *solved at K* when any of its first K attempts (in attempt order)
equals the truth exactly: same shape and every cell. Three conventions are reported
side by side:

* ``pass@K``: mean over each task's test outputs, then mean over tasks (the ARC Prize
  rule);
* ``pass@K_per_output``: mean over all test outputs;
* ``pass@K_all_or_nothing``: a task counts only when all its outputs are solved.

The denominator is always the dataset's task list (after any filter): a task or test
output missing from the predictions counts as wrong, extra tasks are ignored and
reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from .data import Dataset, load_dataset
from .grids import best_attempt, shape_str
from .metrics import partial_credit
from .predictions import Predictions, load_predictions
from .stats import bootstrap_ci

__all__ = ["Results", "score", "SUMMARY_KEYS", "METRIC_DEFINITIONS"]

#: Keys every summary carries (plus pass@K variants for extra K).
SUMMARY_KEYS = (
    "pass@1", "pass@2", "pass@1_per_output", "pass@2_per_output",
    "pass@1_all_or_nothing", "pass@2_all_or_nothing",
    "n_tasks", "n_outputs", "n_missing_outputs", "n_invalid_attempts", "n_extra_tasks",
    "n_extra_outputs", "n_bad_attempt_keys",
)

METRIC_DEFINITIONS = {
    "pass@K": "per task: fraction of the task's test outputs solved within K attempts, "
              "then the mean over tasks (ARC Prize rule)",
    "pass@K_per_output": "fraction of all test outputs solved within K attempts",
    "pass@K_all_or_nothing": "fraction of tasks whose test outputs are all solved within K "
                             "attempts",
    "cell_accuracy": "per output: the best attempt's fraction of correct cells, where the "
                     "best attempt is the first exact one, else the right-shaped one with "
                     "the most correct cells (NaN when no attempt has the truth's shape)",
    "cell_accuracy_right_shape": "mean cell accuracy over the outputs that have a "
                                 "right-shaped attempt only (n_right_shape_outputs of them); "
                                 "not a score over the whole dataset",
    "shape_accuracy": "fraction of test outputs whose attempt 1 has the truth's height and "
                      "width",
    "partial_credit": "per output: the highest graded score among the attempts, rows ratio "
                      "x columns ratio x fraction of correct cells on the top-left overlap; "
                      "1 only when exact",
}

#: Share of submitted tasks missing from the dataset above which scoring warns that
#: the predictions were probably made for another dataset.
FOREIGN_TASKS_WARNING = 0.5


@dataclass
class Results:
    """Scored predictions: one tidy table per output, one per task, and a summary.

    ``outputs`` has one row per task x test output with the columns ``task_id``,
    ``test_index``, ``n_attempts``, ``n_invalid_attempts``, ``missing``,
    ``first_correct`` (1-based attempt position, <NA> when none is right),
    ``best_attempt`` (1-based position of the best attempt, see
    :func:`arcnb.grids.best_attempt`; <NA> when no attempt is valid),
    ``solved@K`` for each K, ``shape_correct``, ``cell_accuracy``, ``partial_credit``,
    ``truth_shape`` / ``pred_shape`` (``"HxW"``; pred is attempt 1's) and
    ``truth_h``, ``truth_w``, ``pred_h``, ``pred_w``.
    """

    dataset: Dataset
    predictions: Predictions
    outputs: pd.DataFrame
    tasks: pd.DataFrame
    summary: dict
    ks: tuple[int, ...]
    extra_tasks: list[str] = field(default_factory=list)

    def truth(self, task_id: str, test_index: int) -> np.ndarray:
        return self.dataset[task_id].test[test_index].output

    def test_input(self, task_id: str, test_index: int) -> np.ndarray:
        return self.dataset[task_id].test[test_index].input

    def attempts(self, task_id: str, test_index: int) -> list[np.ndarray | None]:
        return self.predictions.get(task_id, test_index)

    def summary_table(self) -> pd.DataFrame:
        """The headline numbers in the three conventions, one row per K."""
        rows = []
        for k in self.ks:
            rows.append({
                "K": k,
                "pass@K": self.summary[f"pass@{k}"],
                "pass@K_per_output": self.summary[f"pass@{k}_per_output"],
                "pass@K_all_or_nothing": self.summary[f"pass@{k}_all_or_nothing"],
            })
        return pd.DataFrame(rows).set_index("K")

    def pass_at_k_table(self, max_k: int | None = None, *, n_boot: int | None = None,
                        seed: int | None = None) -> pd.DataFrame:
        """pass@K for K = 1 .. ``max_k`` in the three conventions, with a seeded bootstrap
        interval over tasks for ``pass@K`` (columns ``K``, ``pass@K``,
        ``pass@K_per_output``, ``pass@K_all_or_nothing``, ``ci_low``, ``ci_high``).

        Computed from ``first_correct``, so any K works, not only the scored ones;
        ``max_k`` defaults to the most attempts any output has (at least max(ks)).
        ``n_boot`` and ``seed`` default to the summary's.
        """
        boot = self.summary.get("bootstrap", {})
        n_boot = boot.get("n_boot", 1000) if n_boot is None else n_boot
        seed = boot.get("seed", 0) if seed is None else seed
        out = self.outputs
        if max_k is None:
            max_k = int(max(max(self.ks), out["n_attempts"].max() if len(out) else 1))
        first = out["first_correct"].astype("Float64").fillna(np.inf).to_numpy(float)
        task_ids = out["task_id"].to_numpy()
        rows = []
        for k in range(1, max_k + 1):
            solved = pd.Series(first <= k).groupby(task_ids)
            per_task, all_solved = solved.mean(), solved.all()
            lo, hi = bootstrap_ci(per_task.to_numpy(float), n_boot=n_boot, seed=seed)
            rows.append({"K": k, "pass@K": _mean(per_task), "pass@K_per_output": _mean(first <= k),
                         "pass@K_all_or_nothing": _mean(all_solved), "ci_low": lo, "ci_high": hi})
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        """Jupyter's rich view: the headline table in the three conventions, the
        bootstrap interval and the counts."""
        from html import escape

        s = self.summary
        table = self.summary_table().to_html(float_format=lambda v: f"{v:.4f}",
                                             na_rep="NaN", classes="arcnb-results")
        lo, hi = s.get("pass@2_ci95", [float("nan")] * 2)
        counts = ", ".join(f"{label}: {s.get(key, 0)}" for key, label in (
            ("n_tasks", "tasks"), ("n_outputs", "test outputs"),
            ("n_missing_outputs", "missing outputs"), ("n_invalid_attempts", "invalid attempts"),
            ("n_extra_tasks", "extra tasks"), ("n_extra_outputs", "extra outputs")))
        warn = "".join(f"<p><b>warning:</b> {escape(w)}</p>" for w in s.get("warnings", []))
        return (f"<div><p><b>Results</b> on {escape(str(self.dataset.name))} "
                f"({escape(str(self.dataset.version))})</p>{table}"
                f"<p>pass@2 (ARC Prize rule) 95% bootstrap interval over tasks: "
                f"[{lo:.4f}, {hi:.4f}]</p><p>{escape(counts)}</p>{warn}</div>")

    def __repr__(self) -> str:
        s = self.summary
        return (f"Results({self.dataset.name}, tasks={s['n_tasks']}, outputs={s['n_outputs']}, "
                f"pass@2={s['pass@2']:.4f})")


def _score_output(truth: np.ndarray, attempts: list, ks: Sequence[int]) -> dict:
    max_k = max(ks)
    considered = attempts[:max_k]
    correct = [g is not None and g.shape == truth.shape and np.array_equal(g, truth)
               for g in attempts]
    first = next((i + 1 for i, c in enumerate(correct) if c), None)
    same_shape = [g for g in considered if g is not None and g.shape == truth.shape]
    best, cell_acc = best_attempt(truth, attempts, max_k)
    pc = max((partial_credit(truth, g) for g in considered), default=0.0)
    a1 = attempts[0] if attempts else None
    row = {
        "n_attempts": len(attempts),
        "n_invalid_attempts": sum(g is None for g in attempts),
        "missing": len(attempts) == 0,
        "first_correct": first,
        "best_attempt": None if best is None else best + 1,
    }
    for k in ks:
        row[f"solved@{k}"] = first is not None and first <= k
    row.update({
        "shape_correct": bool(same_shape),
        "cell_accuracy": cell_acc,
        "partial_credit": pc,
        "truth_shape": shape_str(truth),
        "pred_shape": shape_str(a1),
        "truth_h": truth.shape[0], "truth_w": truth.shape[1],
        "pred_h": None if a1 is None else a1.shape[0],
        "pred_w": None if a1 is None else a1.shape[1],
    })
    return row


def _mean(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.mean()) if x.size else float("nan")


def score(dataset: Dataset | str, predictions, *, ks: Sequence[int] = (1, 2), tasks=None,
          n_boot: int = 1000, seed: int = 0) -> Results:
    """Score ``predictions`` on ``dataset`` with the official rule.

    ``dataset`` is a :class:`~arcnb.data.Dataset` or anything
    :func:`~arcnb.data.load_dataset` takes; ``predictions`` a path, a dict in the ARC
    Prize format or a :class:`~arcnb.predictions.Predictions`. ``ks`` always includes
    1 and 2. The summary's ``pass@2_ci95`` is a seeded percentile bootstrap over tasks.
    """
    ds = load_dataset(dataset, tasks=tasks)
    preds = load_predictions(predictions)
    ks = tuple(sorted(set(int(k) for k in ks) | {1, 2}))
    if any(k < 1 for k in ks):
        raise ValueError(f"K must be >= 1, got {ks}")
    rows = []
    for task in ds:
        for i, pair in enumerate(task.test):
            if pair.output is None:
                raise ValueError(f"task {task.id} test {i}: truth missing, cannot score")
            row = {"task_id": task.id, "test_index": i}
            row.update(_score_output(pair.output, preds.get(task.id, i), ks))
            rows.append(row)
    out = pd.DataFrame(rows, columns=_output_columns(ks))
    for c in ("first_correct", "best_attempt", "pred_h", "pred_w"):
        out[c] = out[c].astype("Int64")
    for c in ("truth_h", "truth_w", "n_attempts", "n_invalid_attempts", "test_index"):
        out[c] = out[c].astype("int64")
    for c in ["missing", "shape_correct"] + [f"solved@{k}" for k in ks]:
        out[c] = out[c].astype(bool)
    for c in ("cell_accuracy", "partial_credit"):
        out[c] = out[c].astype(float)

    g = out.groupby("task_id", sort=True)
    per_task = pd.DataFrame({"n_outputs": g.size()})
    for k in ks:
        per_task[f"pass@{k}"] = g[f"solved@{k}"].mean()
        per_task[f"all_solved@{k}"] = g[f"solved@{k}"].all()
    per_task["cell_accuracy"] = g["cell_accuracy"].mean()  # NaNs skipped
    per_task["partial_credit"] = g["partial_credit"].mean()
    per_task["n_missing_outputs"] = g["missing"].sum().astype("int64")
    per_task["n_invalid_attempts"] = g["n_invalid_attempts"].sum().astype("int64")
    per_task = per_task.reset_index()

    extra = sorted(set(preds.task_ids) - set(ds.task_ids))
    # invalid attempts are counted over the scored tasks only (extra tasks are ignored)
    summary: dict = {}
    for k in ks:
        summary[f"pass@{k}"] = _mean(per_task[f"pass@{k}"])
        summary[f"pass@{k}_per_output"] = _mean(out[f"solved@{k}"])
        summary[f"pass@{k}_all_or_nothing"] = _mean(per_task[f"all_solved@{k}"])
    summary.update({
        "n_tasks": int(len(per_task)),
        "n_outputs": int(len(out)),
        "n_missing_outputs": int(out["missing"].sum()),
        "n_invalid_attempts": int(out["n_invalid_attempts"].sum()),
        "n_extra_tasks": len(extra),
        "extra_tasks": extra,
        "n_extra_outputs": _extra_outputs(ds, preds),
        "n_bad_attempt_keys": int(preds.n_bad_attempt_keys),
        "cell_accuracy_right_shape": float(out["cell_accuracy"].mean())
        if out["cell_accuracy"].notna().any() else float("nan"),
        "n_right_shape_outputs": int(out["cell_accuracy"].notna().sum()),
        "shape_accuracy": _mean(out["pred_shape"] == out["truth_shape"]),
        "partial_credit": _mean(per_task["partial_credit"]),
    })
    summary["warnings"] = _warnings(ds, preds, summary)
    lo, hi = bootstrap_ci(per_task["pass@2"], n_boot=n_boot, seed=seed)
    summary["pass@2_ci95"] = [lo, hi]
    summary["bootstrap"] = {"n_boot": n_boot, "seed": seed, "level": 0.95, "unit": "task"}
    summary["dataset"] = ds.info
    return Results(ds, preds, out, per_task, summary, ks, extra)


def _extra_outputs(ds: Dataset, preds: Predictions) -> int:
    """Test-input entries in the predictions beyond a scored task's test inputs."""
    return int(sum(max(0, len(preds.attempts[t]) - len(ds[t].test))
                   for t in preds.task_ids if t in ds))


def _warnings(ds: Dataset, preds: Predictions, summary: dict) -> list[str]:
    """Plain-words warnings that the numbers may not mean what they seem."""
    out = []
    n_sub = len(preds.task_ids)
    n_foreign = summary["n_extra_tasks"]
    if n_sub and n_foreign / n_sub > FOREIGN_TASKS_WARNING:
        msg = (f"{n_foreign} of the {n_sub} submitted tasks are not in {ds.name}: the "
               "predictions look made for another dataset")
        better = _better_dataset(preds.task_ids, exclude=ds.name)
        if better is not None:
            name, hits = better
            msg += f"; {name} holds {hits} of the {n_sub}"
        out.append(msg)
    if summary["n_extra_outputs"]:
        out.append(f"{summary['n_extra_outputs']} test-output entries in the predictions have "
                   f"no test input in {ds.name}: they may be aligned with another version of "
                   "the dataset (entries are matched to test inputs by position)")
    return out


def _better_dataset(task_ids, *, exclude: str) -> tuple[str, int] | None:
    """The bundled dataset holding the most of ``task_ids`` (ties: first listed)."""
    from .data import DATASETS, bundled_task_ids

    ids = set(task_ids)
    best = None
    for name in DATASETS:
        if name == exclude:
            continue
        hits = len(ids & bundled_task_ids(name))
        if hits and (best is None or hits > best[1]):
            best = (name, hits)
    return best


def _output_columns(ks) -> list[str]:
    return (["task_id", "test_index", "n_attempts", "n_invalid_attempts", "missing",
             "first_correct", "best_attempt"] + [f"solved@{k}" for k in ks]
            + ["shape_correct", "cell_accuracy", "partial_credit", "truth_shape", "pred_shape",
               "truth_h", "truth_w", "pred_h", "pred_w"])
