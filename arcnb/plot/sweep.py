"""Figures of a checkpoint sweep (:mod:`arcnb.sweep`): learning curves with bootstrap
bands, outputs gained and lost between checkpoints, the task x step heatmap and
curves per category. Each function takes ``ax=None`` and returns the Axes."""
from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np

from .palette import axes_or_new
from .paper import DOUBLE_COLUMN
from .pixelfont import plain_label

__all__ = ["learning_curve", "learning_curves", "changes_bars", "solved_heatmap",
           "category_curves"]

#: How the sweep's metrics are named on the figures.
METRIC_LABELS = {
    "pass@2": "pass@2",
    "shape_accuracy": "shape accuracy",
    "cell_accuracy": "cell accuracy (right-shaped outputs)",
    "partial_credit": "partial credit",
    "near_miss_rate": "near misses (fraction of outputs)",
}


def _integer_steps(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _xlabel(table) -> str:
    src = str(table["step_source"].iloc[0]) if "step_source" in table and len(table) else ""
    return {"checkpoint": "training step (recorded in the checkpoint)",
            "file name": "training step (from the file name)",
            "order given": "checkpoint (in the order given)"}.get(src, "step")


def learning_curve(table, metric: str = "pass@2", *, ax=None, color: str = "C0",
                   label: str | None = None):
    """``metric`` of a sweep table (``sweep.csv``) against step: a line with a marker
    per checkpoint and its 95 % bootstrap interval as a band. Returns the Axes."""
    ax = axes_or_new(ax)
    t = table.sort_values("step")
    x = t["step"].to_numpy(float)
    y = t[metric].to_numpy(float)
    ax.plot(x, y, marker="o", ms=3.5, lw=1.4, color=color,
            label=plain_label(label or METRIC_LABELS.get(metric, metric)))
    lo, hi = f"{metric}_ci_low", f"{metric}_ci_high"
    if lo in t and hi in t:
        ax.fill_between(x, t[lo].to_numpy(float), t[hi].to_numpy(float), color=color,
                        alpha=0.2, lw=0, label="95% interval")
    ax.set_xlabel(_xlabel(t))
    _integer_steps(ax)
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    top = np.nanmax(np.concatenate([y, t[hi].to_numpy(float) if hi in t else y]))
    ax.set_ylim(0, max(0.05, min(1.0, float(top) * 1.15)) if np.isfinite(top) else 1.0)
    ax.grid(alpha=0.3)
    return ax


def learning_curves(table, metrics: Sequence[str] = ("pass@2", "shape_accuracy",
                                                     "cell_accuracy", "partial_credit",
                                                     "near_miss_rate"), *, axes=None):
    """One :func:`learning_curve` panel per metric, side by side; returns the Axes."""
    if axes is None:  # at most three panels a row, a page wide (7.2 in)
        from .figures import new_subplots

        ncols = min(3, len(metrics))
        nrows = -(-len(metrics) // ncols)
        _, grid = new_subplots(nrows, ncols, figsize=(DOUBLE_COLUMN, 2.2 * nrows),
                               layout="constrained", squeeze=False)
        grid = list(grid.ravel())
        for extra in grid[len(metrics):]:
            extra.set_visible(False)
        axes = grid[:len(metrics)]
    for i, (m, ax) in enumerate(zip(metrics, axes)):
        learning_curve(table, m, ax=ax, color=f"C{i}")
        # a long name on two lines, so it stays over its own panel
        ax.set_title(textwrap.fill(METRIC_LABELS.get(m, m), 26), fontsize=8)
        ax.set_ylabel("")
    return axes


def changes_bars(changes, steps: Sequence[int], *, ax=None):
    """Outputs gained (up, green) and lost (down, red) between consecutive checkpoints
    (``changes.csv``), one pair of bars per step change. Returns the Axes."""
    ax = axes_or_new(ax)
    steps = list(steps)
    pairs = list(zip(steps[:-1], steps[1:]))
    x = np.arange(len(pairs))
    gained = [int(((changes["to_step"] == b) & (changes["change"] == "gained")).sum())
              for _, b in pairs]
    lost = [int(((changes["to_step"] == b) & (changes["change"] == "lost")).sum())
            for _, b in pairs]
    ax.bar(x, gained, color="#2ca02c", label="gained")
    ax.bar(x, [-v for v in lost], color="#d62728", label="lost")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(x, [f"{a}→{b}" for a, b in pairs], rotation=45 if len(pairs) > 6 else 0,
                  ha="right" if len(pairs) > 6 else "center", fontsize=8)
    ax.set_ylabel("test outputs (lost below 0)")
    ax.set_xlabel("from step → to step")
    ax.legend(fontsize=8, frameon=False)
    return ax


def solved_heatmap(matrix, *, ax=None, max_labels: int = 60):
    """Tasks x steps of each task's pass@2 (``solved.csv``: tasks ordered by the step
    they were first solved), white 0 to dark blue 1. Task ids label the rows when
    there are at most ``max_labels``. Returns the Axes."""
    n = len(matrix)
    ax = axes_or_new(ax, figsize=(max(3.5, 0.45 * matrix.shape[1] + 2),
                                  min(12, max(2.4, 1.2 + 0.16 * n))))
    values = matrix.to_numpy(float) if n else np.zeros((1, matrix.shape[1]))
    im = ax.imshow(values, aspect="auto", cmap="Blues", vmin=0, vmax=1,
                   interpolation="nearest")
    ax.set_xticks(range(matrix.shape[1]), [str(c) for c in matrix.columns],
                  rotation=45 if matrix.shape[1] > 8 else 0, fontsize=8)
    if 0 < n <= max_labels:
        ax.set_yticks(range(n), [plain_label(str(t)) for t in matrix.index], fontsize=7)
    else:
        ax.set_yticks([])
        if n:
            ax.set_ylabel(f"{n} tasks")
        else:  # said on the empty picture, where it has room
            ax.text(0.5, 0.5, "no task solved\nat any checkpoint", transform=ax.transAxes,
                    ha="center", va="center", fontsize=8)
    ax.set_xlabel("step")
    ax.figure.colorbar(im, ax=ax, label="pass@2 of the task", shrink=0.8)
    return ax


def category_curves(categories, metric: str = "pass@2", *, ax=None, min_tasks: int = 1):
    """``metric`` per structural category against step (``categories.csv``), one line
    per category with at least ``min_tasks`` tasks. Returns the Axes."""
    ax = axes_or_new(ax, figsize=(6.0, 3.4))
    groups = [g for g in dict.fromkeys(categories["group"])
              if categories.loc[categories["group"] == g, "n_tasks"].max() >= min_tasks]
    for i, g in enumerate(groups):
        t = categories[categories["group"] == g].sort_values("step")
        n = int(t["n_tasks"].max())
        ax.plot(t["step"].to_numpy(float), t[metric].to_numpy(float), marker="o", ms=3,
                lw=1.2, color=f"C{i % 10}", ls="-" if i < 10 else "--",
                label=plain_label(f"{g} ({n})"))
    ax.set_xlabel("step")
    _integer_steps(ax)
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return ax
