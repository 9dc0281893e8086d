"""Figures of task difficulty across systems (:mod:`arcnb.difficulty`): each system's
ability with its 95 % interval, accuracy by difficulty bin (one curve per system), the
fitted task difficulty against people's solve rates, and a system's surprises (truth,
prediction, difference). The first three take ``ax=None`` and return the Axes;
:func:`surprise_gallery` is figure-level and returns the Figure."""
from __future__ import annotations

import numpy as np

from .galleries import gallery
from .palette import axes_or_new
from .pixelfont import plain_label

__all__ = ["ability_intervals", "accuracy_by_difficulty", "difficulty_vs_human",
           "surprise_gallery"]


def _short(text: str, most: int = 24) -> str:
    return text if len(text) <= most else "..." + text[-(most - 3):]


def ability_intervals(abilities, *, ax=None):
    """One row per system (``Difficulty.abilities``), lowest ability at the bottom: the
    ability (logit scale, 0 = even odds on an output of average difficulty) with its 95 %
    interval. Returns the Axes."""
    t = abilities.sort_values("ability", kind="mergesort").reset_index(drop=True)
    n = len(t)
    ax = axes_or_new(ax, figsize=(5.0, min(12.0, max(2.2, 0.9 + 0.25 * n))))
    y = np.arange(n)
    a = t["ability"].to_numpy(float)
    err = np.vstack([a - t["ci_low"].to_numpy(float), t["ci_high"].to_numpy(float) - a])
    ax.errorbar(a, y, xerr=err, fmt="o", ms=4, color="C0", ecolor="0.45", capsize=2, lw=1)
    ax.axvline(0.0, color="0.7", lw=0.8, ls="--")
    if n <= 40:
        ax.set_yticks(y, [_short(plain_label(str(s))) for s in t["system"]], fontsize=7)
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{n} systems, lowest ability first")
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel("ability (logit scale) with 95% interval")
    return ax


def accuracy_by_difficulty(curves, *, ax=None, max_legend: int = 10):
    """Per system, the share of outputs solved in each difficulty bin
    (``Difficulty.curves``) against the bin's mean difficulty: one curve per system.
    Returns the Axes."""
    ax = axes_or_new(ax, figsize=(5.0, 3.2))
    systems = list(dict.fromkeys(curves["system"]))
    for i, s in enumerate(systems):
        c = curves[curves["system"] == s].sort_values("bin_index")
        ax.plot(c["mean_difficulty"], c["accuracy"], marker="o", ms=3, lw=1,
                color=f"C{i % 10}", alpha=1.0 if len(systems) <= max_legend else 0.5,
                label=_short(plain_label(str(s)), 18) if len(systems) <= max_legend else None)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("difficulty (mean of the bin's outputs)")
    ax.set_ylabel("share of outputs solved")
    if 0 < len(systems) <= max_legend:
        ax.legend(fontsize=7, frameon=False, loc="upper right")
    return ax


def difficulty_vs_human(human, *, ax=None):
    """Each task's fitted difficulty (with its 95 % interval) against people's solve
    rate (``Difficulty.human``). Returns the Axes."""
    ax = axes_or_new(ax, figsize=(4.5, 3.2))
    d = human["difficulty"].to_numpy(float)
    err = np.vstack([d - human["ci_low"].to_numpy(float), human["ci_high"].to_numpy(float) - d])
    ax.errorbar(d, human["solve_rate"].to_numpy(float), xerr=err, fmt="o", ms=3, color="C0",
                ecolor="0.75", lw=0.6, alpha=0.8)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("task difficulty across the systems")
    ax.set_ylabel("people's solve rate")
    return ax


def surprise_gallery(results, outputs, *, title: str | None = None, max_items: int = 24):
    """The outputs ``outputs`` (``task_id``, ``test_index``: a system's surprises) of
    the system's scored ``results``: truth, its prediction and their difference
    (:func:`arcnb.plot.gallery`). Returns the Figure."""
    keys = outputs[["task_id", "test_index"]].head(max_items)
    rows = results.outputs.merge(keys, on=["task_id", "test_index"], how="inner")
    order = {(t, int(i)): k for k, (t, i) in enumerate(zip(keys["task_id"], keys["test_index"]))}
    rows = rows.iloc[np.argsort([order[(t, int(i))] for t, i in
                                 zip(rows["task_id"], rows["test_index"])], kind="stable")]
    # three triples wide at least, so that the header (title, panels) fits above one
    return gallery(results, "all", rows=rows, title=title, ncols=min(5, max(3, len(rows))))
