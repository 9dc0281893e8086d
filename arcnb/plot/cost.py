"""The cost charts: score against cost per task (:func:`cost_vs_score`), cost by outcome
(:func:`cost_by_outcome`) and the comparison's score against cost with its Pareto front
(:func:`leaderboard`); costs on a log axis."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..columns import label as column_label
from ..errors import ParameterError
from ..stats import pareto_front
from ..text import fmt_significant
from .charts import LABEL_GID, all_zero_note, value_label, value_limit
from .palette import pyplot
from .paper import SINGLE_COLUMN

__all__ = ["cost_vs_score", "cost_by_outcome", "leaderboard"]


def _log_axis(ax, which: str) -> None:
    """A log scale with plain numbers on the major ticks only (no crowded minor labels)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt_significant(v)))
    axis.set_minor_formatter(NullFormatter())


def _task_costs(results):
    t = results.tasks
    if "cost" not in t.columns:
        raise ParameterError("these results carry no cost column")
    return t


def cost_vs_score(results, *, metric: str = "pass@2", ax=None):
    """Score against cost per task, the cost on a log axis: one faint point per task
    with a known, positive cost (its ``metric`` and cost), and the run's point
    (cost per task over the dataset's tasks, the summary's ``metric`` with its
    interval) labelled with both numbers. Tasks without cost are counted in the
    title."""
    t = _task_costs(results)
    cost = t["cost"].to_numpy(float)
    y = t[metric].to_numpy(float)
    ok = np.isfinite(cost) & (cost > 0) & np.isfinite(y)
    if ax is None:
        _, ax = pyplot().subplots(figsize=(SINGLE_COLUMN * 1.3, 2.4))
    ax.scatter(cost[ok], y[ok], s=10, color="#0072B2", alpha=0.35, edgecolor="none",
               label="tasks")
    s = results.summary
    cx, cy = s.get("cost_per_task"), s.get(metric)
    lo, hi = (s.get(f"{metric}_ci95") or [None, None]) if metric == "pass@2" else (None, None)
    if cx is not None and np.isfinite(cx) and cx > 0 and cy is not None:
        yerr = None
        if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi):
            yerr = [[max(cy - lo, 0.0)], [max(hi - cy, 0.0)]]
        ax.errorbar([cx], [cy], yerr=yerr, fmt="D", color="#D55E00", markersize=5,
                    capsize=3, elinewidth=1, label="run", zorder=4)
        high = cy > 0.6 * value_limit(y[ok], [hi] if hi is not None else None)
        ax.annotate(f"{metric} {value_label(cy)} at {fmt_significant(cx, 3)} per task", (cx, cy),
                    xytext=(5, -5 if high else 5), textcoords="offset points",
                    va="top" if high else "bottom", fontsize=6, color="#D55E00",
                    gid=LABEL_GID)
    if ok.any():
        _log_axis(ax, "x")
    lim = value_limit(y[ok], [hi] if hi is not None else None)
    ax.set_ylim(-0.04 * lim, 1.04 * lim)  # points at 0 and at the top stay whole
    ax.set_xlabel("cost per task (log scale)")
    ax.set_ylabel(column_label(metric))
    n_out = int((~ok).sum())
    ax.set_title(f"{int(ok.sum())} tasks with a cost" +
                 (f"; {n_out} without one not shown" if n_out else ""), fontsize=8)
    all_zero_note(ax, y[ok], f"task's {metric}")
    ax.legend(fontsize=6, loc="upper left")
    return ax


def cost_by_outcome(results, *, columns: Sequence[str] = ("cost", "total_tokens")):
    """Cost and tokens per task for solved and unsolved tasks (solved: every test
    output right within 2 attempts), one panel per column on a log axis: a point per
    task (spread sideways, deterministically) and the median as a bar, written on
    it. Returns the Figure (``fig.arcnb_medians``: ``{column: {outcome: median}}``)."""
    t = _task_costs(results)
    solved = t["all_solved@2"].to_numpy(bool)
    cols = [c for c in columns if c in t.columns]
    fig, axes = pyplot().subplots(1, len(cols), squeeze=False,
                                  figsize=(SINGLE_COLUMN * 0.9 * len(cols) + 0.6, 2.4))
    rng = np.random.default_rng(0)
    medians: dict = {}
    for ax, c in zip(axes[0], cols):
        v = t[c].to_numpy(float)
        medians[c] = {}
        for i, (name, mask) in enumerate((("solved", solved), ("not solved", ~solved))):
            x = v[mask & np.isfinite(v) & (v > 0)]
            jitter = rng.uniform(-0.18, 0.18, size=x.size)
            ax.scatter(i + jitter, x, s=8, alpha=0.45, edgecolor="none",
                       color="#009E73" if i == 0 else "#0072B2")
            med = float(np.median(x)) if x.size else float("nan")
            medians[c][name] = med
            if np.isfinite(med):
                ax.hlines(med, i - 0.3, i + 0.3, color="#333333", linewidth=1.5)
                ax.annotate(f"median {fmt_significant(med, 3)}", (i + 0.3, med), xytext=(2, 0),
                            textcoords="offset points", va="center", fontsize=6,
                            gid=LABEL_GID)
        n = [int(solved.sum()), int((~solved).sum())]
        ax.set_xticks([0, 1], [f"solved\n(n={n[0]})", f"not solved\n(n={n[1]})"])
        ax.set_xlim(-0.6, 1.9)
        if (np.isfinite(v) & (v > 0)).any():
            _log_axis(ax, "y")
        ax.set_ylabel(f"{c.replace('_', ' ')} per task (log scale)")
    if fig.get_layout_engine() is None:
        fig.subplots_adjust(wspace=0.6)
    fig.arcnb_medians = medians
    return fig


def leaderboard(table, *, ax=None, cost: str = "cost_per_task", score: str = "pass@2",
                  ci_low: str | None = "pass@2_ci_low", ci_high: str | None = "pass@2_ci_high",
                  label: str = "run", front: str | None = "pareto_front",
                  annotate: bool = True):
    """The leaderboard picture: one point per run, ``score`` (default pass@2, the ARC
    Prize rule) with its interval as an error bar, against ``cost`` per task on a log
    x axis, the Pareto front of lower cost and higher score marked (a ring around each
    front run and a dashed line through them in cost order), each point labelled.

    ``table`` is a DataFrame with one row per run (such as
    ``arcnb.compare.compare(...).tables["runs"]``) or a :class:`~arcnb.compare.Comparison`.
    The front is the ``front`` column when present, else
    :func:`arcnb.stats.pareto_front` of the two columns. A run with a NaN cost or
    score is left out; a run whose cost is 0 (or below) cannot sit on a log axis: it is
    drawn at the left edge, a decade below the cheapest other run, labelled "$0".
    The runs drawn are in ``ax.arcnb_points`` (label, x drawn, score). Returns the Axes.
    """
    df = table.tables["runs"] if hasattr(table, "tables") else table
    c = df[cost].to_numpy(float)
    y = df[score].to_numpy(float)
    names = [str(v) for v in df[label]] if label in df.columns else [str(i) for i in range(len(df))]
    on_front = (df[front].to_numpy(bool) if front and front in df.columns
                else pareto_front(c, y))
    ok = np.isfinite(c) & np.isfinite(y)
    positive = ok & (c > 0)
    floor = 10.0 ** (np.floor(np.log10(c[positive].min())) - 1) if positive.any() else 1e-3
    x = np.where(c > 0, c, floor)
    if ax is None:
        _, ax = pyplot().subplots(figsize=(SINGLE_COLUMN, 2.6))
    _log_axis(ax, "x")
    if ci_low in df.columns and ci_high in df.columns:
        lo, hi = df[ci_low].to_numpy(float), df[ci_high].to_numpy(float)
        has = ok & np.isfinite(lo) & np.isfinite(hi)
        ax.errorbar(x[has], y[has], yerr=[np.clip(y[has] - lo[has], 0, None),
                                          np.clip(hi[has] - y[has], 0, None)], fmt="none",
                    ecolor="#555555", elinewidth=0.8, capsize=2, zorder=1)
    ax.scatter(x[ok], y[ok], s=22, color="#0072B2", zorder=3, gid="arcnb-runs",
               label="run (pass@2, 95% interval)")
    f = ok & on_front
    if f.any():
        order = np.argsort(x[f], kind="stable")
        ax.plot(x[f][order], y[f][order], linestyle="--", color="#D55E00", linewidth=1,
                zorder=2, gid="arcnb-pareto-front", label="Pareto front")
        ax.scatter(x[f], y[f], s=70, facecolors="none", edgecolors="#D55E00", linewidths=1,
                   zorder=4, gid="arcnb-pareto-points")
    if annotate:
        for i in np.flatnonzero(ok):
            text = names[i] + (" ($0)" if c[i] <= 0 else "")
            ax.annotate(text, (x[i], y[i]), textcoords="offset points", xytext=(4, 4),
                        fontsize=6)
    highs = df[ci_high].to_numpy(float) if ci_high in df.columns else y
    vals = np.concatenate([y[ok], highs[ok]])
    vals = vals[np.isfinite(vals)]
    # headroom above 1 for the labels; the ticks stay within [0, 1]
    ax.set_ylim(0, min(1.08, 1.15 * max(0.05, vals.max() if vals.size else 0.0) + 0.02))
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= 1 + 1e-9])
    if ok.any():
        # whole decades around the points, so that at least two decades are labelled
        # (the minor ticks are not: labels at 6, 7, 8 x 10^-3 ran into each other)
        lo_x, hi_x = float(x[ok].min()), float(x[ok].max())
        ax.set_xlim(10.0 ** np.floor(np.log10(lo_x) - 0.05),
                    10.0 ** np.ceil(np.log10(hi_x) + 0.05))
    ax.set_xlabel(f"{cost.replace('_', ' ')} (log scale)")
    ax.set_ylabel(f"{score} (ARC Prize rule)" if score == "pass@2" else score)
    ax.set_title(f"{int(ok.sum())} runs, {int(f.sum())} on the Pareto front", fontsize=8)
    ax.legend(fontsize=6, loc="best")
    ax.arcnb_points = [(names[i], float(x[i]), float(y[i])) for i in np.flatnonzero(ok)]
    return ax
