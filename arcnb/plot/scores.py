"""A run's scores as curves and run against run: pass@K curves with their intervals
(:func:`pass_at_k`) and two runs compared task by task (:func:`compare`: a scatter,
counts of who is higher, paired bars)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .charts import (LABEL_GID, MIN_LABEL_SIZE, all_zero_note, finite_max, is_count, label_value,
                     results_of, value_axis, value_limit, zero_stub)
from .palette import pyplot
from .paper import SINGLE_COLUMN
from .pixelfont import plain_label

__all__ = ["pass_at_k", "compare"]


def pass_at_k(data, *, ax=None, max_k: int | None = None, k: str = "K", value: str = "pass@K",
              ci_low: str | None = "ci_low", ci_high: str | None = "ci_high",
              run: str | None = "run", labels: Sequence[str] | None = None):
    """pass@K curves (K on x, fraction on y) with interval bands and error bars, each
    point's value written above it; the y axis scales to the values and interval ends
    (:func:`value_limit`), and a curve that is 0 everywhere says so.

    ``data``: a Results, a dict ``{label: Results}``, or a DataFrame with columns ``K``
    and ``pass@K`` (e.g. ``Results.pass_at_k_table()``), optionally ``ci_low`` /
    ``ci_high`` and a ``run`` column for several curves.
    """
    if (res := results_of(data)) is not None:
        tables = {labels[0] if labels else "": res.pass_at_k_table(max_k)}
    elif isinstance(data, Mapping):
        tables = {str(name): (results_of(r).pass_at_k_table(max_k)
                              if results_of(r) is not None else r)
                  for name, r in data.items()}
    else:
        df = data.reset_index() if k not in data.columns else data
        if run and run in df.columns:
            tables = {str(name): g for name, g in df.groupby(run, sort=False)}
        else:
            tables = {labels[0] if labels else "": df}
    if ax is None:
        _, ax = pyplot().subplots(figsize=(SINGLE_COLUMN, 2.2))
    ys, his = [], []
    for name, df in tables.items():
        df = df.sort_values(k)
        x = df[k].to_numpy(float)
        y = df[value].to_numpy(float)
        (line,) = ax.plot(x, y, marker="o", label=plain_label(name) if name else None)
        ends = y
        if ci_low in df.columns and ci_high in df.columns:
            lo, hi = df[ci_low].to_numpy(float), df[ci_high].to_numpy(float)
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
            ok = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(y)
            ax.errorbar(x[ok], y[ok], yerr=[np.clip(y[ok] - lo[ok], 0, None),
                                            np.clip(hi[ok] - y[ok], 0, None)],
                        fmt="none", ecolor=line.get_color(), elinewidth=0.8, capsize=2)
            ends = np.where(np.isfinite(hi), np.fmax(hi, y), y)
            his.append(hi)
        for xi, yi, e in zip(x, y, ends):
            if np.isfinite(yi):
                label_value(ax, xi, yi, e, horizontal=False, count=False,
                             color=line.get_color())
        ys.append(y)
    ax.set_xlabel("K (attempts)")
    ax.set_ylabel("pass@K")
    value_axis(ax, value_limit(*ys, *his))
    xs = sorted({int(v) for df in tables.values() for v in df[k]})
    if xs:
        ax.set_xticks(xs)
        ax.set_xlim(min(xs) - 0.4, max(xs) + 0.4)
    if any(tables):
        ax.legend()
    if ys:
        all_zero_note(ax, np.concatenate(ys), "pass@K (no test output solved)")
    return ax


def _per_task(obj, metric: str):
    res = results_of(obj)
    df = res.tasks if res is not None else obj
    if not isinstance(df, pd.DataFrame):
        raise TypeError("compare() takes Results or per-task DataFrames")
    if metric not in df.columns:
        raise ParameterError(f"no column {metric!r}; columns are {list(df.columns)}")
    key = df["task_id"] if "task_id" in df.columns else df.index
    return pd.Series(df[metric].to_numpy(float), index=pd.Index(key, name="task_id"))


def compare(a, b, *, metric: str = "pass@2", kind: str = "scatter",
            labels: Sequence[str] = ("run A", "run B"), max_tasks: int = 30, ax=None):
    """Compare two runs task by task.

    ``a``, ``b``: Results or per-task DataFrames (``task_id`` + ``metric``), aligned on
    the task ids they share (an error when they share none; tasks where either value is
    NaN are left out). ``kind="scatter"``: one point per distinct ``(a, b)`` pair sized
    by the number of tasks there (annotated), with the diagonal; ``kind="bars"``:
    numbers of tasks where A is higher, both equal, B is higher; ``kind="paired"``:
    paired horizontal bars (A and B) for the tasks where the runs differ, largest
    ``|B - A|`` first, at most ``max_tasks``.
    """
    if kind not in ("scatter", "bars", "paired"):
        raise ParameterError(f"kind must be 'scatter', 'bars' or 'paired', got {kind!r}")
    sa, sb = _per_task(a, metric), _per_task(b, metric)
    common = sa.index.intersection(sb.index)
    if len(common) == 0:
        raise ParameterError("the two runs share no task ids")
    x, y = sa.loc[common].to_numpy(float), sb.loc[common].to_numpy(float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, ids = x[ok], y[ok], np.asarray(common)[ok]
    if ax is None:
        if kind == "paired":
            n_shown = min(max_tasks, int((x != y).sum()))
            size = (SINGLE_COLUMN, max(1.6, 0.16 * n_shown + 0.8))
        else:
            size = (SINGLE_COLUMN, SINGLE_COLUMN if kind == "scatter" else 2.2)
        _, ax = pyplot().subplots(figsize=size)
    if kind == "scatter":
        _compare_scatter(ax, x, y, metric=metric, labels=labels)
    elif kind == "bars":
        _compare_bars(ax, x, y, metric=metric, labels=labels)
    else:
        _compare_paired(ax, x, y, ids, metric=metric, labels=labels, max_tasks=max_tasks)
    return ax


def _compare_scatter(ax, x, y, *, metric, labels) -> None:
    la, lb = map(plain_label, labels)
    pts, counts = np.unique(np.round(np.column_stack([x, y]), 6), axis=0, return_counts=True)
    lim = value_limit(x, y, count=is_count(metric) or finite_max(x, y) > 1)
    ax.plot([0, lim], [0, lim], color="#999999", linewidth=0.8, linestyle="--", zorder=0)
    ax.scatter(pts[:, 0], pts[:, 1], s=8 + 60 * np.sqrt(counts / counts.max()),
               color="#0072B2", alpha=0.6, edgecolor="none")
    if len(pts) <= 40:
        for (px, py), c in zip(pts, counts):
            if c > 1:
                ax.annotate(str(c), (px, py), textcoords="offset points", xytext=(4, 3),
                            fontsize=6)
    ax.set_xlim(-0.03 * lim, 1.03 * lim)
    ax.set_ylim(-0.03 * lim, 1.03 * lim)
    ax.set_aspect("equal")
    all_zero_note(ax, np.concatenate([x, y]), f"task's {metric}, in both runs,")
    ax.set_xlabel(f"{metric}, {la}")
    ax.set_ylabel(f"{metric}, {lb}")
    ax.set_title(f"{len(x)} tasks: {la} higher {int((x > y).sum())}, "
                 f"{lb} higher {int((y > x).sum())}")


def _compare_bars(ax, x, y, *, metric, labels) -> None:
    la, lb = map(plain_label, labels)
    cats = [f"{la} higher", "equal", f"{lb} higher"]
    vals = [int((x > y).sum()), int((x == y).sum()), int((y > x).sum())]
    ax.bar(cats, vals, color=["#0072B2", "#BBBBBB", "#E69F00"])
    for i, v in enumerate(vals):
        ax.text(i, v, str(v), ha="center", va="bottom", fontsize=7, gid=LABEL_GID)
    ax.set_ylim(0, value_limit(vals, count=True))
    ax.set_ylabel("tasks")
    ax.set_title(f"{metric} per task ({len(x)} tasks)")


def _compare_paired(ax, x, y, ids, *, metric, labels, max_tasks) -> None:
    la, lb = map(plain_label, labels)
    diff = y - x
    order = [i for i in np.lexsort((ids, -np.abs(diff))) if diff[i] != 0][:max_tasks]
    pos = np.arange(len(order))
    ax.barh(pos - 0.2, x[order], height=0.4, color="#0072B2", label=la)
    ax.barh(pos + 0.2, y[order], height=0.4, color="#E69F00", label=lb)
    ax.set_yticks(pos, [plain_label(ids[i]) for i in order])
    ax.invert_yaxis()
    lim = value_limit(x[order], y[order], count=is_count(metric) or
                      finite_max(x[order], y[order]) > 1)
    for p, a, b in zip(pos, x[order], y[order]):
        for off, v in ((-0.2, a), (0.2, b)):
            if v == 0:
                zero_stub(ax, p + off, 0.4, horizontal=True, color="#333333")
            label_value(ax, p + off, v, v, horizontal=True, count=False, fontsize=MIN_LABEL_SIZE)
    ax.set_xlim(0, lim)
    ax.set_xlabel(metric)
    n_diff = int((diff != 0).sum())
    ax.set_title(f"{n_diff} of {len(x)} tasks differ" +
                 (f"; largest {len(order)} shown" if len(order) < n_diff else ""))
    if order:
        ax.legend()
