"""Figures of many runs analysed together (:mod:`arcnb.repeats`): the spread of pass@2
over the runs of each configuration, union coverage against the number of runs, and the
task x run solve matrix ordered by difficulty. Each function takes ``ax=None`` and
returns the Axes."""
from __future__ import annotations

import numpy as np

from .palette import axes_or_new
from .pixelfont import plain_label

__all__ = ["seed_spread", "union_coverage", "solve_matrix", "winners_curse"]


def seed_spread(summary: dict, *, ax=None):
    """Per configuration (``summary["configs"]`` of :class:`arcnb.repeats.Repeats`): a
    point per run, the mean with a bar of one SD either side, and the 95 % interval over
    tasks and runs as a thin line beside it (none for a configuration of one run).
    Returns the Axes."""
    configs = summary["configs"]
    ax = axes_or_new(ax, figsize=(max(3.0, 0.9 * len(configs) + 1.6), 3.0))
    scores = {r["run"]: r["pass@2"] for r in summary["runs"]}
    for i, (name, c) in enumerate(configs.items()):
        ys = np.array([scores[r] for r in c["runs"]], dtype=float)
        jitter = (np.arange(len(ys)) - (len(ys) - 1) / 2) * min(0.05, 0.3 / max(1, len(ys)))
        ax.scatter(i - 0.12 + jitter, ys, s=12, color="0.45", zorder=3,
                   label="one run" if i == 0 else None)
        p = c["pass@2"]
        sd = p["sd"] if p["sd"] == p["sd"] else 0.0
        ax.errorbar(i + 0.1, p["mean"], yerr=sd, fmt="o", color="C0", capsize=3, ms=4,
                    label="mean ± SD" if i == 0 else None)
        lo, hi = p["ci95"]
        if lo == lo and hi == hi:
            ax.plot([i + 0.22, i + 0.22], [lo, hi], color="C3", lw=2,
                    label="95% interval (tasks and runs)" if i == 0 else None)
    ax.set_xticks(range(len(configs)), [plain_label(str(n)) for n in configs],
                  rotation=30 if len(configs) > 4 else 0, fontsize=8)
    ax.set_xlim(-0.6, len(configs) - 0.4)
    ax.set_ylabel("pass@2")
    ax.legend(fontsize=7, frameon=False, loc="best")
    return ax


def union_coverage(by_n_runs, *, ax=None, mean_single: float | None = None):
    """Union coverage (pass@2 of "any of the runs solves it") against the number of runs,
    from ``summary["union"]["by_n_runs"]``. Returns the Axes."""
    ys = np.asarray(by_n_runs, dtype=float)
    ax = axes_or_new(ax)
    xs = np.arange(1, len(ys) + 1)
    ax.plot(xs, ys, marker="o", ms=3, color="C0", label="any of k runs")
    if mean_single is not None:
        ax.axhline(mean_single, color="0.5", lw=0.8, ls="--", label="one run (mean)")
    ax.set_xlabel("number of runs k")
    ax.set_ylabel("union pass@2")
    if len(xs):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    return ax


def _short(text: str, most: int = 16) -> str:
    """A run's name for a tick label: its end (where names differ) when it is long."""
    return text if len(text) <= most else "..." + text[-(most - 3):]


def _height_in(ax) -> float:
    return ax.get_position().height * ax.figure.get_figheight()


def _width_in(ax) -> float:
    return ax.get_position().width * ax.figure.get_figwidth()


def solve_matrix(matrix, *, ax=None, max_labels: int = 60):
    """The task x run pass@2 matrix (``Repeats.matrix``), tasks ordered from the most
    to the least solved (then by id), white 0 to dark blue 1. Returns the Axes."""
    rate = matrix.mean(axis=1)
    order = sorted(range(len(matrix)), key=lambda i: (-rate.iloc[i], str(matrix.index[i])))
    m = matrix.iloc[order]
    n = len(m)
    ax = axes_or_new(ax, figsize=(max(3.5, 0.35 * m.shape[1] + 2),
                                  min(12, max(2.4, 1.2 + 0.12 * n))))
    values = m.to_numpy(float) if n else np.zeros((1, m.shape[1]))
    im = ax.imshow(values, aspect="auto", cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
    names = [_short(plain_label(str(c))) for c in m.columns]
    long_names = m.shape[1] > 6 or sum(len(t) for t in names) * 0.06 > _width_in(ax)
    ax.set_xticks(range(m.shape[1]), names, rotation=90 if long_names else 0, fontsize=7)
    # a task id per row only where the rows leave room for a line of text each
    if 0 < n <= max_labels and _height_in(ax) / n >= 0.12:
        ax.set_yticks(range(n), [plain_label(str(t)) for t in m.index], fontsize=7)
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{n} tasks, most solved first")
    ax.set_xlabel("run")
    ax.figure.colorbar(im, ax=ax, label="pass@2 of the task", shrink=0.8)
    return ax


def winners_curse(curse: dict, *, ax=None):
    """Per configuration (``summary["winners_curse"]``): the best run's pass@2 on the
    public half it was picked on, its pass@2 on the private half, and the configuration's
    mean, side by side. Returns the Axes."""
    ax = axes_or_new(ax, figsize=(max(3.0, 0.9 * len(curse) + 1.6), 3.0))
    xs = np.arange(len(curse))
    for k, (key, label, color) in enumerate((("public", "picked run, public half", "C3"),
                                             ("private", "picked run, private half", "C0"),
                                             ("mean", "configuration mean", "0.6"))):
        ys = [float(c[key]) for c in curse.values()]
        ax.bar(xs + (k - 1) * 0.27, ys, width=0.25, color=color, label=label)
    ax.set_xticks(xs, [plain_label(str(n)) for n in curse],
                  rotation=30 if len(curse) > 4 else 0, fontsize=8)
    ax.set_ylabel("pass@2")
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    return ax
