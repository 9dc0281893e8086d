"""Breakdowns of scored results by category, colour, grid size, shape change or
difficulty, with seeded bootstrap intervals; per-colour accuracy and colour confusion;
CSV and LaTeX export.

Every table is a view of ``Results.outputs`` (one row per task x test output); no
correctness is recomputed here.

Group metrics, for a group G holding the outputs O_G of the tasks T_G:

* ``n_tasks = |T_G|``, ``n_outputs = |O_G|``;
* ``pass@K``: for each task t in T_G, the mean of the run's per-output ``pass@K``
  over *its outputs in G* (with the ranked estimator: the fraction solved within K
  attempts), then the mean over T_G (the ARC Prize rule restricted to G); it follows the
  run's estimator, so the ``(all)`` row equals the headline pass@K;
* ``pass@K_per_output``: the mean of the outputs' ``pass@K`` over O_G;
* ``pass@K_all_or_nothing``: for each task, the product of its outputs' ``pass@K`` in G
  (ranked: whether they are all solved), then the mean over T_G; an undefined (NaN)
  output leaves its task and group NaN, as in the summary;
* ``cell_accuracy``: the mean of the outputs' ``cell_accuracy`` over O_G (outputs
  without a right-shaped attempt are NaN and skipped, as in the overall summary);
  ``n_right_shape`` counts the outputs it averages over;
* ``shape_accuracy``: for each task, the fraction of its outputs in G whose attempt 1
  has the truth's shape, then the mean over T_G;
* ``partial_credit``: for each task, the mean partial credit of its outputs in G, then
  the mean over T_G;
* ``n_near_miss``: outputs in G not solved within 2 attempts whose cell accuracy is at
  least ``near_miss`` (default :data:`arcnb.columns.NEAR_MISS`, 0.9);
* ``<metric>_ci_low`` / ``<metric>_ci_high`` for ``pass@2``, ``shape_accuracy``,
  ``partial_credit`` and ``cell_accuracy``: a seeded percentile bootstrap interval
  resampling the tasks of G (:func:`arcnb.stats.bootstrap_ci`; for ``cell_accuracy``
  the ratio of the resampled sums, since it is a mean over outputs).

These graded columns carry the signal when almost nothing is solved (the usual case on
ARC-AGI-2); :func:`lead_metric` picks which one a chart should lead with.

For task-level groupings (taxonomies, difficulty) a task's outputs all share its
groups, so "its outputs in G" are all its outputs. Output-level groupings (grid size,
shape change, colour) assign each test output on its own. In a multi-label grouping a
task or output counts in *each* of its groups, so the counts of the rows can add up to
more than the totals; the ``multi_label`` column and ``df.attrs["note"]`` say so.
A task without a category is shown as ``uncategorized``, never dropped.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from . import metrics
from .columns import GROUPS, NEAR_MISS, graded_columns, is_near_miss
from .errors import ArcnbError, ParameterError
from .grids import COLOR_NAMES, PAD_TOKEN, pad_grids
from .io import atomic_write_text, csv_text
from .text import MISSING, escape_latex, fmt_number, fmt_percent, fmt_significant
from .stats import bootstrap_ci, bootstrap_indices, ratio_bootstrap_ci
from .taxonomy import UNCATEGORIZED, Taxonomy, load_taxonomy

__all__ = [
    "breakdown",
    "group_membership",
    "GROUPINGS",
    "GRID_SIZE_BINS",
    "COLOR_NAMES",
    "scored_pairs",
    "color_accuracy",
    "color_confusion",
    "to_csv",
    "to_latex",
    "latex_table",
    "lead_metric",
    "lead_reason",
    "GRADED_COLUMNS",
    "overall",
    "cost_by_outcome",
]

#: The graded columns of every breakdown, shown next to the exact pass@K ones.
GRADED_COLUMNS = graded_columns()

#: The integer counts of a breakdown's rows (0, never NaN, for an empty group).
_COUNTS = ("n_tasks", "n_outputs") + tuple(c.name for c in GROUPS if c.dtype == "int64")

#: Grid-size bins on the larger side of the truth grid, ``(label, low, high)`` inclusive.
GRID_SIZE_BINS = (("1-5", 1, 5), ("6-10", 6, 10), ("11-15", 11, 15), ("16-20", 16, 20),
                  ("21-25", 21, 25), ("26-30", 26, 30))

#: Named groupings accepted by :func:`breakdown` (besides taxonomies and files).
GROUPINGS = {
    "grid_size": "per output: the larger side of the truth grid, binned as GRID_SIZE_BINS",
    "shape_change": "per output: truth shape vs test input shape: same_shape, output_smaller "
                    "(no taller, no wider, smaller), output_larger (no shorter, no narrower, "
                    "larger) or shape_mixed",
    "color": "per output, multi-label: each colour present in the truth grid ('0 black' ... "
             "'9 maroon')",
    "structural": "per task, multi-label: the automatic structural taxonomy of the "
                  "demonstration pairs (arcnb.taxonomy.STRUCTURAL_CATEGORIES)",
    "folder": "per task: the folder the task file sits in (folder datasets)",
    "task": "per task: one group per task",
}

_NOTE_MULTI = ("multi-label grouping: a task or output with several categories counts in "
               "each of them, so the rows' counts can add up to more than the totals")
_NOTE_SINGLE = "single-label grouping: each task or output is in exactly one group"


def _size_bin(side: np.ndarray) -> np.ndarray:
    out = np.empty(side.shape, dtype=object)
    for label, lo, hi in GRID_SIZE_BINS:
        out[(side >= lo) & (side <= hi)] = label
    return out


def _shape_change(ih, iw, oh, ow) -> np.ndarray:
    same = (ih == oh) & (iw == ow)
    le = (oh <= ih) & (ow <= iw)
    ge = (oh >= ih) & (ow >= iw)
    return np.select([same, le, ge], ["same_shape", "output_smaller", "output_larger"],
                     default="shape_mixed").astype(object)


def group_membership(results, by, *, taxonomy: str | None = None
                     ) -> tuple[pd.DataFrame, dict]:
    """Which outputs belong to which groups.

    Returns a long table ``task_id, test_index, group`` (one row per output-group
    pair; every scored output appears at least once) and a dict with ``grouping``
    (name), ``level`` ("task" or "output"), ``order`` (the group order) and, for
    taxonomies, ``coverage``. ``by`` is a name from :data:`GROUPINGS`, a
    :class:`~arcnb.taxonomy.Taxonomy`, a ``{task_id: category | [categories]}`` dict,
    or a taxonomy ``.csv`` / ``.json`` file (``taxonomy=`` picks one taxonomy of a
    multi-taxonomy CSV), e.g. the ARC-Game difficulty levels.
    """
    out = results.outputs[["task_id", "test_index"]].reset_index(drop=True)
    info: dict = {}
    if isinstance(by, str) and by in ("grid_size", "shape_change", "color"):
        info.update(grouping=by, level="output")
        th = results.outputs["truth_h"].to_numpy()
        tw = results.outputs["truth_w"].to_numpy()
        if by == "grid_size":
            info["order"] = [b[0] for b in GRID_SIZE_BINS]
            return out.assign(group=_size_bin(np.maximum(th, tw))), info
        if by == "shape_change":
            shapes = np.array([results.test_input(t, int(i)).shape
                               for t, i in zip(out["task_id"], out["test_index"])],
                              dtype=np.int64).reshape(-1, 2)
            info["order"] = ["same_shape", "output_smaller", "output_larger", "shape_mixed"]
            return out.assign(group=_shape_change(shapes[:, 0], shapes[:, 1], th, tw)), info
        # colours present in each truth grid: an [n_outputs, 10] presence matrix
        present = np.zeros((len(out), 10), dtype=bool)
        for r, (t, i) in enumerate(zip(out["task_id"], out["test_index"])):
            present[r, np.unique(results.truth(t, int(i)))] = True
        rows, cols = np.nonzero(present)
        labels = np.array([f"{c} {COLOR_NAMES[c]}" for c in range(10)], dtype=object)
        info["order"] = list(labels)
        m = out.iloc[rows].reset_index(drop=True).assign(group=labels[cols])
        return m, info
    if isinstance(by, str) and by == "task":
        info.update(grouping="task", level="task", order=sorted(out["task_id"].unique()))
        return out.assign(group=out["task_id"].astype(object)), info
    if isinstance(by, str) and by in ("structural", "folder"):
        tax = load_taxonomy(by, dataset=results.dataset)
    elif isinstance(by, (Taxonomy, dict)):
        tax = load_taxonomy(by, taxonomy=taxonomy)
    elif isinstance(by, (str, os.PathLike)):
        if not Path(by).exists():
            raise ArcnbError(f"cannot group by {str(by)!r}: not a grouping "
                             f"({', '.join(GROUPINGS)}) and no such taxonomy file")
        tax = load_taxonomy(by, taxonomy=taxonomy)
    else:
        raise ArcnbError(f"cannot group by {by!r}: use one of {', '.join(GROUPINGS)}, a "
                         "Taxonomy, a dict or a taxonomy .csv/.json file")
    task_ids = list(results.tasks["task_id"])
    mem = tax.membership(task_ids)
    m = out.merge(mem.rename(columns={"category": "group"}), on="task_id", how="left",
                  validate="many_to_many")
    info.update(grouping=tax.name, level="task", order=list(tax.order),
                coverage={k: v for k, v in tax.coverage(task_ids).items()
                          if k != "uncategorized"})
    return m, info


def breakdown(results, by="structural", *, taxonomy: str | None = None,
              ks: Sequence[int] = (1, 2), n_boot: int = 1000, seed: int = 0,
              level: float = 0.95, include_empty: bool = False,
              total: bool = False, near_miss: float = NEAR_MISS) -> pd.DataFrame:
    """Break scored ``results`` down by a grouping; one row per group.

    ``by``: ``"grid_size"``, ``"shape_change"``, ``"color"``, ``"structural"``,
    ``"folder"``, ``"task"``, a :class:`~arcnb.taxonomy.Taxonomy`, a dict or a
    taxonomy file (e.g. the difficulty-level CSV); see :func:`group_membership`.

    Columns: ``group``, ``n_tasks``, ``n_outputs``, ``fraction_of_tasks``,
    ``pass@K`` / ``pass@K_per_output`` / ``pass@K_all_or_nothing`` for each K in
    ``ks``, ``pass@2_ci_low``, ``pass@2_ci_high`` (seeded ``level`` bootstrap over
    the group's tasks, ``n_boot`` resamples), the graded columns ``shape_accuracy``,
    ``cell_accuracy``, ``n_right_shape``, ``partial_credit`` (each with ``_ci_low`` /
    ``_ci_high``) and ``n_near_miss``, and ``multi_label``. The formulas are in the module docstring. Groups are in the
    grouping's natural order with ``uncategorized`` last; ``include_empty`` adds the
    known groups without members (counts 0, metrics NaN); ``total`` appends an
    ``(all)`` row over every scored output. ``df.attrs`` holds ``grouping``,
    ``level``, ``multi_label``, ``note``, ``n_tasks``, ``n_outputs``, ``bootstrap``
    and (for taxonomies) ``coverage``.
    """
    ks = tuple(sorted(set(int(k) for k in ks) | {2}))
    missing = [k for k in ks if f"solved@{k}" not in results.outputs.columns]
    if missing:
        raise ArcnbError(f"the results were scored without K={missing}; score with ks=...")
    mem, info = group_membership(results, by, taxonomy=taxonomy)
    data = mem.merge(_metric_data(results, ks, near_miss), on=["task_id", "test_index"],
                     how="left")
    data["group"] = data["group"].astype(object)
    multi = bool(mem.duplicated(["task_id", "test_index"]).any())
    n_tasks_all = int(results.tasks.shape[0])

    table = _group_table(data, ks, n_boot, seed, level)
    table.insert(2, "fraction_of_tasks",
                 table["n_tasks"] / n_tasks_all if n_tasks_all else np.nan)

    order = [g for g in info.get("order", []) if g != UNCATEGORIZED]
    present = list(table.index)
    rows = [g for g in order if g in present or include_empty]
    rows += sorted(g for g in present if g not in set(order) and g != UNCATEGORIZED)
    if UNCATEGORIZED in present:
        rows.append(UNCATEGORIZED)
    table = table.reindex(rows)
    table.index.name = "group"
    table = table.reset_index()
    for c in _COUNTS:
        table[c] = table[c].fillna(0).astype("int64")
    table["fraction_of_tasks"] = table["fraction_of_tasks"].fillna(0.0)
    if total:
        table = pd.concat([table, _total_row(results, ks, n_boot, seed, level, near_miss)],
                          ignore_index=True)
    table["multi_label"] = multi
    table.attrs.update({
        "grouping": info["grouping"],
        "level": info["level"],
        "multi_label": multi,
        "note": _NOTE_MULTI if multi else _NOTE_SINGLE,
        "n_tasks": n_tasks_all,
        "n_outputs": int(results.outputs.shape[0]),
        "bootstrap": {"n_boot": n_boot, "seed": seed, "level": level, "unit": "task"},
        "dataset": dict(results.dataset.info),
        "near_miss": near_miss,
    })
    if "coverage" in info:
        table.attrs["coverage"] = info["coverage"]
    return table


def _metric_data(results, ks, near_miss: float) -> pd.DataFrame:
    """Per output: the columns the group metrics are computed from. pass@K is the
    run's own per-output column, so a breakdown follows the run's estimator (ranked:
    ``solved@K`` as 0/1; unbiased: the per-output probability, NaN where undefined)."""
    out = results.outputs
    data = out[["task_id", "test_index", "cell_accuracy", "partial_credit"]].copy()
    for k in ks:
        col = f"pass@{k}" if f"pass@{k}" in out.columns else f"solved@{k}"
        data[f"pass@{k}"] = out[col].to_numpy(float)
        data[f"undef@{k}"] = np.isnan(data[f"pass@{k}"].to_numpy(float)).astype(float)
    data["shape_ok"] = (out["pred_shape"] == out["truth_shape"]).to_numpy(float)
    data["right_shape"] = out["cell_accuracy"].notna().to_numpy(float)
    data["cell_sum"] = out["cell_accuracy"].fillna(0.0).to_numpy(float)
    data["near_miss"] = is_near_miss(out["solved@2"], out["cell_accuracy"], near_miss)
    return data


def _task_ci(values: np.ndarray, **boot) -> tuple[float, float]:
    """Bootstrap interval over tasks; NaN when some task's value is undefined (as the
    headline's interval)."""
    if np.isnan(values).any():
        return (float("nan"), float("nan"))
    return bootstrap_ci(values, **boot)


def _group_table(data: pd.DataFrame, ks, n_boot, seed, level) -> pd.DataFrame:
    """The metric columns per ``group`` of ``data`` (one row per group x output)."""
    per_task = data.groupby(["group", "task_id"], sort=False)
    agg = {}
    for k in ks:  # an undefined output (NaN) leaves its task, and its group, undefined
        agg[f"pass@{k}"] = ["mean", "prod"]
        agg[f"undef@{k}"] = ["max"]
    agg.update({"shape_ok": ["mean"], "partial_credit": ["mean"], "cell_sum": ["sum"],
                "right_shape": ["sum"]})
    pt = per_task.agg(agg)
    pt.columns = [f"{a}|{b}" for a, b in pt.columns]
    for k in ks:
        undef = pt[f"undef@{k}|max"] > 0
        pt[f"pass@{k}|mean"] = pt[f"pass@{k}|mean"].mask(undef)
        pt[f"pass@{k}|prod"] = pt[f"pass@{k}|prod"].mask(undef)
    pt = pt.reset_index()
    g_task = pt.groupby("group", sort=False)
    g_out = data.groupby("group", sort=False)
    table = pd.DataFrame({"n_tasks": g_task.size(), "n_outputs": g_out.size()})
    for k in ks:
        table[f"pass@{k}"] = g_task[f"pass@{k}|mean"].mean().mask(
            g_task[f"undef@{k}|max"].max() > 0)
    for k in ks:
        table[f"pass@{k}_per_output"] = g_out[f"pass@{k}"].mean().mask(
            g_out[f"undef@{k}"].max() > 0)
    for k in ks:
        table[f"pass@{k}_all_or_nothing"] = g_task[f"pass@{k}|prod"].mean().mask(
            g_task[f"undef@{k}|max"].max() > 0)
    table["cell_accuracy"] = g_out["cell_accuracy"].mean()
    table["n_right_shape"] = g_out["right_shape"].sum()
    table["shape_accuracy"] = g_task["shape_ok|mean"].mean()
    table["partial_credit"] = g_task["partial_credit|mean"].mean()
    table["n_near_miss"] = g_out["near_miss"].sum()
    boot = dict(n_boot=n_boot, seed=seed, level=level)
    for name, col in (("pass@2", "pass@2|mean"), ("shape_accuracy", "shape_ok|mean"),
                      ("partial_credit", "partial_credit|mean")):
        ci = {grp: _task_ci(v.to_numpy(float), **boot) for grp, v in g_task[col]}
        table[f"{name}_ci_low"] = pd.Series({g: v[0] for g, v in ci.items()}, dtype=float)
        table[f"{name}_ci_high"] = pd.Series({g: v[1] for g, v in ci.items()}, dtype=float)
    ci = {grp: ratio_bootstrap_ci(v["cell_sum|sum"].to_numpy(float), v["right_shape|sum"].to_numpy(float),
                         **boot) for grp, v in g_task}
    table["cell_accuracy_ci_low"] = pd.Series({g: v[0] for g, v in ci.items()}, dtype=float)
    table["cell_accuracy_ci_high"] = pd.Series({g: v[1] for g, v in ci.items()}, dtype=float)
    return table


def lead_metric(table: pd.DataFrame, *, min_groups: int = 3) -> str:
    """Which metric a breakdown chart should lead with: ``"pass@2"`` when at least
    ``min_groups`` groups (or every group, if fewer) have something solved, else
    ``"partial_credit"``, which is graded and so still separates the groups when almost
    nothing is solved. The ``(all)`` row is ignored."""
    rows = table[table["group"] != "(all)"] if "group" in table else table
    solved = int((rows["pass@2"].fillna(0) > 0).sum())
    return "pass@2" if len(rows) and solved >= min(min_groups, len(rows)) else "partial_credit"


def lead_reason(table: pd.DataFrame, lead: str | None = None, *, min_groups: int = 3) -> str:
    """One sentence saying which metric leads a breakdown chart and why (the rule of
    :func:`lead_metric`), for the chart's caption."""
    rows = table[table["group"] != "(all)"] if "group" in table else table
    lead = lead or lead_metric(table, min_groups=min_groups)
    solved = int((rows["pass@2"].fillna(0) > 0).sum())
    need = min(min_groups, len(rows))
    what = f"{solved} of {len(rows)} groups have a solved output"
    if lead == "pass@2":
        return f"pass@2 leads: {what} (at least {need} needed)."
    if lead == "partial_credit":
        return (f"partial_credit leads, not pass@2: only {what} (pass@2 leads from {need}), "
                "and the graded partial credit still tells the groups apart.")
    return f"{lead} leads ({what})."


def overall(results, *, ks: Sequence[int] = (1, 2), n_boot: int = 1000, seed: int = 0,
            level: float = 0.95, near_miss: float = NEAR_MISS) -> pd.DataFrame:
    """The breakdown's columns over every scored output, as one row (group
    ``(all)``): pass@K in the three conventions, the graded columns and their
    intervals, computed exactly as a breakdown's groups are (so shape accuracy is the
    mean over tasks of each task's fraction of right-shaped attempts 1)."""
    ks = tuple(sorted(set(int(k) for k in ks) | {2}))
    row = _total_row(results, ks, n_boot, seed, level, near_miss)
    for c in _COUNTS:
        row[c] = row[c].fillna(0).astype("int64")
    return row


def cost_by_outcome(results) -> pd.DataFrame:
    """Cost, tokens and time per task for solved tasks (every test output right within
    2 attempts) and the others: ``outcome``, ``n_tasks``, ``n_with_cost``,
    ``total_cost``, ``mean_cost``, ``median_cost``, ``mean_total_tokens``,
    ``median_total_tokens``, ``mean_reasoning_tokens``, ``mean_duration_s``. Means and
    medians are over the tasks that have the value (NaN when none has it, never 0)."""
    t = results.tasks
    solved = t["all_solved@2"].to_numpy(bool)
    rows = []
    for name, mask in (("solved", solved), ("not solved", ~solved)):
        sub = t[mask]

        def col(c, how):
            if c not in sub.columns:
                return float("nan")
            v = sub[c].dropna().to_numpy(float)
            return float(getattr(np, how)(v)) if v.size else float("nan")

        n_cost = int(sub["cost"].notna().sum()) if "cost" in sub.columns else 0
        rows.append({"outcome": name, "n_tasks": int(mask.sum()), "n_with_cost": n_cost,
                     "total_cost": col("cost", "sum") if n_cost else float("nan"),
                     "mean_cost": col("cost", "mean"), "median_cost": col("cost", "median"),
                     "mean_total_tokens": col("total_tokens", "mean"),
                     "median_total_tokens": col("total_tokens", "median"),
                     "mean_reasoning_tokens": col("reasoning_tokens", "mean"),
                     "mean_duration_s": col("duration_s", "mean")})
    return pd.DataFrame(rows)


def _total_row(results, ks, n_boot, seed, level, near_miss) -> pd.DataFrame:
    """The ``(all)`` row: the same computation with every output in one group."""
    data = _metric_data(results, ks, near_miss).assign(group="(all)")
    row = _group_table(data, ks, n_boot, seed, level)
    row.insert(2, "fraction_of_tasks", 1.0 if len(results.tasks) else np.nan)
    row.index.name = "group"
    return row.reset_index()


# ------------------------------------------------------------------ colour metrics
def scored_pairs(results, *, attempt: int | str = 1) -> tuple[list, list, dict]:
    """The (prediction, truth) grid pairs the colour metrics are computed on.

    ``attempt=1`` (default) takes each output's first attempt; ``attempt=2`` its
    second; ``attempt="best"`` the output's best attempt, ``Results.outputs
    ["best_attempt"]`` (:func:`arcnb.grids.best_attempt`: the attempt behind
    ``cell_accuracy``). An output is *used* only when the chosen attempt exists and has the
    truth's shape, since a cell-by-cell colour comparison needs aligned grids; the
    others are counted as excluded. Returns ``(preds, truths, counts)`` with
    ``counts = {"n_outputs", "n_used", "n_excluded", "attempt"}``.
    """
    preds, truths, _, counts = _select(results, attempt)
    return preds, truths, counts


def _select(results, attempt):
    if attempt not in (1, 2, "best") and not (isinstance(attempt, int) and attempt >= 1):
        raise ArcnbError(f"attempt must be a positive int or 'best', got {attempt!r}")
    preds, truths, tids = [], [], []
    out = results.outputs
    best = (out["best_attempt"] if "best_attempt" in out
            else pd.Series([pd.NA] * len(out), index=out.index))
    for t, i, b in zip(out["task_id"], out["test_index"], best):
        truth = results.truth(t, int(i))
        atts = results.attempts(t, int(i))
        k = (None if pd.isna(b) else int(b)) if attempt == "best" else attempt
        pick = atts[k - 1] if k is not None and len(atts) >= k else None
        if pick is not None and pick.shape == truth.shape:
            preds.append(np.asarray(pick))
            truths.append(np.asarray(truth))
            tids.append(t)
    counts = {"attempt": attempt, "n_outputs": int(len(out)), "n_used": len(preds),
              "n_excluded": int(len(out)) - len(preds)}
    return preds, truths, tids, counts


def _cells(grids) -> np.ndarray:
    """Every cell of ``grids`` in one flat int64 array (colours 0-9, no padding)."""
    return np.concatenate([np.asarray(g, dtype=np.int64).ravel() for g in grids])


def _padded(results, attempt, pad_token, device, *, with_ids: bool = False):
    preds, truths, tids, counts = _select(results, attempt)
    if with_ids:
        counts = dict(counts, _task_ids=tids)
    if not preds:
        return None, None, counts
    h = max(g.shape[0] for g in truths)
    w = max(g.shape[1] for g in truths)
    p = pad_grids(preds, pad_token=pad_token, size=(h, w), device=device)
    t = pad_grids(truths, pad_token=pad_token, size=(h, w), device=device)
    return p, t, counts


def color_confusion(results, *, attempt: int | str = 1, pad_token: int = PAD_TOKEN, device=None,
                    normalize: str | None = None) -> pd.DataFrame:
    """10 x 10 colour confusion over the scored outputs: rows are truth colours,
    columns predicted colours, cells count grid cells (padding excluded): with
    ``device=None`` the aligned cells are counted with numpy (no torch); with a
    ``device``, by :func:`arcnb.metrics.color_confusion` on padded batches there (the
    same counts). Which attempt is used, and
    which outputs, is :func:`scored_pairs`'s rule (default: attempt 1 where its shape
    matches the truth). ``normalize="true"`` divides each row by its total (NaN for a
    colour absent from the truth). ``df.attrs`` holds the counts of used / excluded
    outputs."""
    if device is None:  # on the CPU: the aligned cells counted directly (no torch)
        preds, truths, _, counts = _select(results, attempt)
        mat = np.zeros((10, 10), dtype=np.int64)
        if preds:
            p, t = _cells(preds), _cells(truths)
            mat = np.bincount(t * 10 + p, minlength=100).reshape(10, 10)
    else:
        p, t, counts = _padded(results, attempt, pad_token, device)
        if p is None:
            mat = np.zeros((10, 10), dtype=np.int64)
        else:
            mat = np.asarray(metrics.color_confusion(p, t, pad_token=pad_token).detach().cpu())
            mat = mat.astype(np.int64)[:10, :10]
    labels = [f"{c} {COLOR_NAMES[c]}" for c in range(10)]
    df = pd.DataFrame(mat, index=pd.Index(labels, name="truth"),
                      columns=pd.Index(labels, name="predicted"))
    if normalize == "true":
        tot = df.sum(axis=1).replace(0, np.nan)
        df = df.div(tot, axis=0)
    elif normalize is not None:
        raise ArcnbError(f"normalize must be None or 'true', got {normalize!r}")
    df.attrs.update(counts)
    return df


def color_accuracy(results, *, attempt: int | str = 1, pad_token: int = PAD_TOKEN, device=None,
                   n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Per-colour accuracy over the scored outputs, with bootstrap intervals.

    For each colour c, ``accuracy`` = truth cells of colour c predicted as c / truth
    cells of colour c (NaN when c never occurs in the used truth grids), the same ratio as
    :func:`arcnb.metrics.reconstruction_metrics`' ``per_color_accuracy`` on padded
    batches (counted with numpy for ``device=None``, with torch on a ``device``).
    Attempt and output selection as :func:`scored_pairs` (default: attempt 1 where its
    shape matches the truth). Columns ``color``, ``name``, ``n_cells`` (truth
    cells of that colour), ``n_tasks`` (tasks with such cells), ``accuracy``,
    ``ci_low``, ``ci_high``: a seeded percentile bootstrap resampling *tasks* (cells of
    one task are not independent), the ratio of the resampled sums
    ``sum correct / sum cells`` per colour; resamples without any cell of c are
    skipped. ``accuracy`` and its interval are both float64 ratios of the same integer
    counts. ``df.attrs`` holds the counts of used / excluded outputs.
    """
    lo = np.full(10, np.nan)
    hi = np.full(10, np.nan)
    if device is None:  # on the CPU: the aligned cells counted directly (no torch)
        preds, truths, tids, counts = _select(results, attempt)
        p = preds or None
    else:
        p, t, counts = _padded(results, attempt, pad_token, device, with_ids=True)
        tids = counts.pop("_task_ids")
    if p is None:
        acc = np.full(10, np.nan)
        n = np.zeros(10, dtype=np.int64)
        n_tasks = np.zeros(10, dtype=np.int64)
    else:
        # per-task counts [n_tasks, 10] of truth cells and correct cells, vectorised
        uniq, inv = np.unique(np.asarray(tids), return_inverse=True)
        size = len(uniq) * 10
        if device is None:
            tc, pc = _cells(truths), _cells(preds)
            task_of = np.repeat(inv, [g.size for g in truths])
            code = task_of * 10 + tc
            total = np.bincount(code, minlength=size).reshape(len(uniq), 10)
            right = np.bincount(code[pc == tc], minlength=size).reshape(len(uniq), 10)
        else:
            import torch

            task_of = torch.as_tensor(inv, device=t.device).view(-1, 1, 1).expand_as(t)
            valid = t != pad_token
            code = (task_of * 10 + t.clamp(0, 9))
            total = torch.bincount(code[valid], minlength=size).view(len(uniq), 10)
            right = torch.bincount(code[valid & (p == t)], minlength=size).view(len(uniq), 10)
            total = total.cpu().numpy()
            right = right.cpu().numpy()
        total = total.astype(np.int64)
        right = right.astype(np.int64)
        n = total.sum(axis=0)
        n_tasks = (total > 0).sum(axis=0)
        # the accuracy from the same integer counts as its interval, in float64 (a
        # float32 ratio can fall just outside its own float64 interval)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = np.where(n > 0, right.sum(axis=0) / np.maximum(n, 1), np.nan)
        idx = bootstrap_indices(len(uniq), n_boot=n_boot, seed=seed)
        tot_b = total[idx].sum(axis=1).astype(float)          # [n_boot, 10]
        right_b = right[idx].sum(axis=1).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(tot_b > 0, right_b / tot_b, np.nan)
        alpha = (1.0 - level) / 2.0
        for c in range(10):
            r = ratio[:, c]
            r = r[np.isfinite(r)]
            if n[c] == 0 or r.size == 0:
                continue
            if np.all(right[:, c] == total[:, c]) or np.all(right[:, c] == 0):
                lo[c] = hi[c] = acc[c]  # a constant ratio (all right / all wrong)
            else:
                lo[c], hi[c] = np.quantile(r, [alpha, 1.0 - alpha])
    df = pd.DataFrame({"color": np.arange(10), "name": list(COLOR_NAMES), "n_cells": n,
                       "n_tasks": n_tasks, "accuracy": acc, "ci_low": lo, "ci_high": hi})
    df.attrs.update(counts)
    df.attrs["bootstrap"] = {"n_boot": n_boot, "seed": seed, "level": level, "unit": "task"}
    return df


# ------------------------------------------------------------------------ export
def to_csv(df: pd.DataFrame, path: str | os.PathLike, *, overwrite: bool = False,
           index: bool = False) -> Path:
    """Write a table as CSV, atomically; an existing file is kept unless
    ``overwrite``. Floats are written with full precision, NaN as an empty cell. User
    strings that a spreadsheet would run as a formula are neutralised
    (:func:`arcnb.io.csv_text`)."""
    return atomic_write_text(path, csv_text(df, index=index), overwrite=overwrite)


def _tex(text) -> str:
    return escape_latex(text)  # the one escaper: control and bidirectional characters too


def _adaptive(v: float) -> str:
    """At least 3 decimals, and as many more (up to 6) as keep two significant digits,
    so a small nonzero score (0.0025) is never printed as something else (0.003)."""
    return fmt_number(v, least=3, most=6)  # the one rule (arcnb.text)


def _two_significant(v: float) -> str:
    """A p-value as a paper table shows it: two significant digits (``3.1e-05``)."""
    return fmt_significant(v, 2)


def _paper_columns(d: pd.DataFrame, columns, metric: str | None) -> list:
    """The columns a LaTeX table shows: ``columns="all"`` every column; a list those
    columns; ``None`` the columns a paper shows of a breakdown (a table with a
    ``group`` column and a metric with ``_ci_low`` / ``_ci_high`` columns): the group,
    ``n_tasks``, the metric (``metric``, default pass@2) and its interval; every
    column of any other table."""
    if isinstance(columns, str) and columns == "all":
        return list(d.columns)
    if columns is not None:
        missing = [c for c in columns if c not in d.columns]
        if missing:
            raise ParameterError(f"no column {missing[0]!r} to put in the table; columns are "
                             f"{list(d.columns)}")
        return list(columns)
    if metric is not None and metric not in d.columns:
        raise ParameterError(f"no column {metric!r} to put in the table; columns are "
                         f"{list(d.columns)}")
    m = metric or "pass@2"
    if "group" in d.columns and {m, f"{m}_ci_low", f"{m}_ci_high"} <= set(d.columns):
        return [c for c in ("group", "n_tasks") if c in d.columns] + [m]
    return list(d.columns)


def _not_zero(v: float, text: str, pct: bool) -> str:
    """``text`` (``v`` formatted), or ``v`` with as many decimals as show it when the
    format rounded a nonzero value to zero."""
    try:
        shown = float(text)
    except ValueError:
        return text
    if v == 0 or shown != 0 or not np.isfinite(v):
        return text
    return fmt_number(v, least=0, most=8)  # two significant digits (arcnb.text)


def latex_table(df: pd.DataFrame, *, float_format: str | None = None, percent: bool = False,
                caption: str | None = None, label: str | None = None, index: bool = False,
                formats: dict | None = None, columns=None, metric: str | None = None) -> str:
    """A booktabs LaTeX table of ``df`` (needs ``\\usepackage{booktabs}``), written by
    hand so it works without jinja2. Text is escaped; NaN and missing values are shown as
    ``NaN`` (:data:`arcnb.text.MISSING`, as everywhere); numbers are right-aligned.

    Columns: a breakdown (:func:`breakdown`) shows what a paper shows, narrow enough
    for one column: the group, ``n_tasks``, ``metric`` (default pass@2) and its
    interval (one column, ``low--high``); ``columns=[...]`` picks other columns (each
    metric with ``_ci_low`` / ``_ci_high`` columns among them is followed by its
    interval), ``columns="all"`` shows every column as it is. Any other table shows
    every column.

    Floats: by default at least 3 decimals and more for small values (two significant
    digits, up to 6), so that 0.0025 prints as ``0.0025``, never ``0.003``;
    ``percent=True`` prints fractions as percent with 2 decimals (``0.25``, the way
    papers quote ARC scores; the header says ``(%)``); ``float_format`` (e.g.
    ``"{:.3f}"``) fixes one format for every float; ``formats[column]`` (a format string
    or a function of the value) overrides a column (p-value columns, named ``p_value`` or
    ending in ``_p``, default to two significant digits, :func:`arcnb.text.fmt_significant`,
    so tiny p-values stay visible and are never turned into percent). A
    nonzero value is never printed as zero: a format that would round it to 0 gets
    the decimals that show it (0.00004 as percent: ``0.004``)."""
    d = df.reset_index() if index else df
    chosen = _paper_columns(d, columns, metric)
    intervals = not (isinstance(columns, str) and columns == "all")
    boot = d.attrs.get("bootstrap") if isinstance(d.attrs.get("bootstrap"), dict) else {}
    level = float(boot.get("level", 0.95))
    cols, spans = [], {}
    for c in chosen:
        cols.append(c)
        lo, hi = f"{c}_ci_low", f"{c}_ci_high"
        if intervals and lo in d.columns and hi in d.columns and lo not in chosen:
            key = ("interval", c)  # shown as "95% interval"
            cols.append(key)
            spans[key] = (lo, hi, c)
    fmt = {c: _two_significant for c in d.columns if str(c) == "p_value" or str(c).endswith("_p")}
    fmt.update(formats or {})

    def numeric(c):
        c = spans[c][2] if c in spans else c
        return pd.api.types.is_numeric_dtype(d[c]) and not pd.api.types.is_bool_dtype(d[c])

    align = "".join("r" if numeric(c) else "l" for c in cols)
    col_fmt = [fmt.get(spans[c][2] if c in spans else c, float_format) for c in cols]
    as_pct = [percent and (spans[c][2] if c in spans else c) not in fmt and
              pd.api.types.is_float_dtype(d[spans[c][2] if c in spans else c]) for c in cols]

    def cell(v, f, pct):
        if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and np.isnan(v)):
            return MISSING
        if isinstance(v, (float, np.floating)):
            v = float(v) * (100.0 if pct else 1.0)
            if pct and f is None:
                return _not_zero(v, fmt_number(v, least=2, most=2), pct)
            if f is None:
                return _adaptive(v)
            return _not_zero(v, f(v) if callable(f) else f.format(v), pct)
        return _tex(v)

    # values column by column: a row of an all-numeric table (``iterrows``) would turn
    # its integers (K, counts) into floats
    values = {c: d[c].tolist() for c in d.columns}

    def value(i, c, f, pct):
        if c in spans:
            lo, hi = (cell(values[spans[c][j]][i], f, pct) for j in (0, 1))
            return MISSING if MISSING in (lo, hi) else f"{lo}--{hi}"
        return cell(values[c][i], f, pct)

    header = [_tex(f"{fmt_percent(level, least=0, most=0)} interval" if c in spans else c) + (r" (\%)" if pct else "")
              for c, pct in zip(cols, as_pct)]
    lines = []
    if caption is not None or label is not None:
        lines += [r"\begin{table}[ht]", r"\centering"]
        if caption is not None:
            lines.append(rf"\caption{{{_tex(caption)}}}")
        if label is not None:
            lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule",
              " & ".join(header) + r" \\", r"\midrule"]
    for i in range(len(d)):
        lines.append(" & ".join(value(i, c, f, p) for c, f, p in zip(cols, col_fmt, as_pct))
                     + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption is not None or label is not None:
        lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def to_latex(df: pd.DataFrame, path: str | os.PathLike, *, overwrite: bool = False,
             **kwargs) -> Path:
    """Write :func:`latex_table` ``(df, **kwargs)`` to ``path`` atomically; an existing
    file is kept unless ``overwrite``."""
    return atomic_write_text(path, latex_table(df, **kwargs), overwrite=overwrite)
