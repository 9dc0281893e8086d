"""Result charts: accuracy per colour (:func:`color_accuracy`), the colour confusion
heatmap (:func:`confusion_heatmap`), bars per group (:func:`breakdown_bars`), pass@K
curves (:func:`pass_at_k`) and run against run (:func:`compare`).

Each takes ``ax=None`` (a new single-column figure) or an Axes, and returns the Axes.
Values are fractions, drawn on a [0, 1] axis; NaN (an empty denominator) is shown as
"n/a" or left blank, never as 0.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .palette import PALETTE, PALETTE_RGB, _plt
from .paper import SINGLE_COLUMN
from .pixelfont import plain_label

__all__ = ["color_accuracy", "confusion_heatmap", "breakdown_bars", "pass_at_k", "compare",
           "cost_vs_score"]


def _compact(n) -> str:
    n = int(n)
    if n >= 10**6:
        return f"{n / 1e6:.1f}M"
    if n >= 10**4:
        return f"{n / 1e3:.0f}k"
    return f"{n / 1e3:.1f}k" if n >= 10**3 else str(n)


def color_accuracy(data, *, ax=None, value: str = "accuracy", ci_low: str | None = "ci_low",
                   ci_high: str | None = "ci_high", annotate: bool = True):
    """Accuracy per true colour as bars in the ARC colours (thin dark outline so grey and
    yellow stay visible), with interval error bars when the columns exist.

    ``data`` is a DataFrame with columns ``color`` and ``value`` (such as
    :func:`arcnb.breakdown.color_accuracy`'s) or a :class:`~arcnb.scoring.Results`
    (then :func:`arcnb.breakdown.color_accuracy` is computed with its defaults). A NaN
    accuracy (colour never present) is drawn as an empty slot marked "n/a".
    """
    if hasattr(data, "outputs"):
        from ..breakdown import color_accuracy as _table

        df = _table(data)
    else:
        df = data
    if ax is None:
        _, ax = _plt().subplots(figsize=(SINGLE_COLUMN, 2.2))
    colors = df["color"].to_numpy(int)
    vals = df[value].to_numpy(float)
    x = np.arange(len(df))
    ax.bar(x, np.nan_to_num(vals, nan=0.0), color=[PALETTE[c] for c in colors],
           edgecolor="#333333", linewidth=0.5, width=0.75)
    if ci_low in df.columns and ci_high in df.columns:
        lo, hi = df[ci_low].to_numpy(float), df[ci_high].to_numpy(float)
        ok = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(vals)
        ax.errorbar(x[ok], vals[ok], yerr=[vals[ok] - lo[ok], hi[ok] - vals[ok]], fmt="none",
                    ecolor="#333333", elinewidth=0.8, capsize=2)
    for xi, v in zip(x, vals):
        if not np.isfinite(v):
            ax.text(xi, 0.02, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
    if annotate and "n_cells" in df.columns:
        labels = [f"{c}\n{_compact(n)}" for c, n in zip(colors, df["n_cells"])]
        ax.set_xlabel("true colour (cells)")
    else:
        labels = [str(c) for c in colors]
        ax.set_xlabel("true colour")
    ax.set_xticks(x, labels)
    if annotate and "n_cells" in df.columns:
        ax.tick_params(axis="x", labelsize=6)
    ax.set_ylim(0, 1)
    ax.set_ylabel("cell accuracy" if value == "accuracy" else value)
    return ax


def confusion_heatmap(data, *, ax=None, normalize: bool = True, annot: bool = True,
                      cmap: str = "Blues"):
    """Colour confusion heatmap: true colour (rows) vs predicted colour (columns).

    ``normalize=True`` divides each row by its total, so row ``a`` shows where cells of
    true colour ``a`` went (rows sum to 1; a colour that never occurs is a NaN row,
    drawn blank). ``data`` is a 10 x 10 count table (rows truth, columns prediction,
    such as :func:`arcnb.breakdown.color_confusion`'s) or a Results (then that table is
    computed with its defaults). Palette swatches next to the tick labels show each
    colour.
    """
    import seaborn as sns

    if hasattr(data, "outputs"):
        from ..breakdown import color_confusion

        counts = color_confusion(data)
    else:
        counts = data
    m = np.asarray(counts, dtype=float)
    if m.shape != (10, 10):
        raise ValueError(f"confusion table must be 10 x 10, got {m.shape}")
    if normalize:
        tot = m.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = np.where(tot > 0, m / np.where(tot > 0, tot, 1), np.nan)
    if ax is None:
        _, ax = _plt().subplots(figsize=(SINGLE_COLUMN, SINGLE_COLUMN * 0.92))
    sns.heatmap(m, ax=ax, mask=np.isnan(m), cmap=cmap, vmin=0, vmax=1 if normalize else None,
                annot=annot, fmt=".2f" if normalize else ".0f", annot_kws={"fontsize": 5},
                square=True, cbar_kws={"shrink": 0.8, "label": "fraction of row" if normalize
                                       else "cells"}, linewidths=0.3, linecolor="white")
    ax.set_xlabel("predicted colour")
    ax.set_ylabel("true colour")
    ax.set_xticks(np.arange(10) + 0.5, [str(i) for i in range(10)], rotation=0)
    ax.set_yticks(np.arange(10) + 0.5, [str(i) for i in range(10)], rotation=0)
    # palette swatches along both axes
    strip = PALETTE_RGB[np.arange(10)]
    left = ax.inset_axes((-0.07, 0, 0.04, 1))
    left.imshow(strip[:, None, :], aspect="auto", interpolation="nearest")
    left.set_axis_off()
    bottom = ax.inset_axes((0, -0.07, 1, 0.04))
    bottom.imshow(strip[None, :, :], aspect="auto", interpolation="nearest")
    bottom.set_axis_off()
    ax.tick_params(axis="y", pad=10)
    ax.tick_params(axis="x", pad=10)
    ax.arcnb_matrix = m
    return ax


# ------------------------------------------------------------------ breakdowns
def _default_group(df, group):
    """Group labels: the ``group`` column given, else a ``group`` column, else a named
    or non-default index, else the first text column."""
    import pandas as pd

    if group is not None:
        if group not in df.columns:
            raise ValueError(f"no column {group!r}; columns are {list(df.columns)}")
        return df[group].astype(str).to_numpy()
    if "group" in df.columns:
        return df["group"].astype(str).to_numpy()
    if df.index.name is not None or not isinstance(df.index, pd.RangeIndex):
        return df.index.astype(str).to_numpy()
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]):
            return df[c].astype(str).to_numpy()
    raise ValueError("cannot tell which column names the groups: pass group=")


def breakdown_bars(table, *, value: str = "pass@2", group: str | None = None,
                   ci_low: str | None = None, ci_high: str | None = None, n: str | None = None,
                   hue: str | None = None, ax=None, horizontal: bool = False,
                   color: str = "#0072B2", sort: bool = False, ylabel: str | None = None):
    """Bars of ``value`` per group with interval error bars: accuracy per category,
    per grid size, per shape change, ...

    ``table`` is a plain DataFrame, one row per group (per group and ``hue`` level for
    side-by-side runs). Column defaults: ``group`` (else the index or the first text
    column); ``ci_low``/``ci_high`` = ``f"{value}_ci_low"``/``f"{value}_ci_high"`` when
    present; ``n`` = ``n_tasks`` (else ``n_outputs``) when present, shown in the tick
    labels as ``"name (n=..)"``. Values are fractions, so the value axis is [0, 1].
    NaN values (empty groups) are left blank and marked "n/a".
    """
    import pandas as pd

    df = table.copy()
    if value not in df.columns:
        raise ValueError(f"no column {value!r}; columns are {list(df.columns)}")
    groups = _default_group(df, group)
    df["_group"] = groups
    ci_low = ci_low or (f"{value}_ci_low" if f"{value}_ci_low" in df.columns else None)
    ci_high = ci_high or (f"{value}_ci_high" if f"{value}_ci_high" in df.columns else None)
    if n is None:
        n = next((c for c in ("n_tasks", "n_outputs", "n") if c in df.columns), None)
    if sort:
        order = df.groupby("_group", sort=False)[value].mean().sort_values(ascending=False).index
    else:
        order = pd.unique(df["_group"])
    order = list(order)
    if ax is None:
        h = max(1.8, 0.22 * len(order) + 0.6) if horizontal else 2.2
        _, ax = _plt().subplots(figsize=(SINGLE_COLUMN, h))
    hues = [None] if hue is None else list(pd.unique(df[hue]))
    width = 0.8 / len(hues)
    from matplotlib import rcParams

    cycle = rcParams["axes.prop_cycle"].by_key().get("color", [color])
    pos = np.arange(len(order))
    for j, hv in enumerate(hues):
        sub = df if hv is None else df[df[hue] == hv]
        _bar_series(ax, sub.set_index("_group").reindex(order), value=value,
                    ci=(ci_low, ci_high) if ci_low and ci_high else None,
                    at=pos + (j - (len(hues) - 1) / 2) * width, width=width,
                    color=color if hv is None else cycle[j % len(cycle)],
                    label=None if hv is None else plain_label(hv), horizontal=horizontal)
    if n is not None and hue is None:
        nn = df.set_index("_group").reindex(order)[n]
        labels = [f"{plain_label(g)} (n={int(k)})" if pd.notna(k) else plain_label(g)
                  for g, k in zip(order, nn)]
    else:
        labels = [plain_label(g) for g in order]
    _bar_axes(ax, pos, labels, ylabel or value, horizontal=horizontal)
    if hue is not None:
        ax.legend(title=hue)
    return ax


def _bar_series(ax, sub, *, value, ci, at, width, color, label, horizontal) -> None:
    """One series of bars (one ``hue`` level): ``sub[value]`` per group at positions
    ``at``, error bars from the ``ci`` columns ``(low, high)`` when given, NaN values
    drawn as an empty slot marked "n/a"."""
    vals = sub[value].to_numpy(float)
    err = None
    if ci is not None:
        lo, hi = sub[ci[0]].to_numpy(float), sub[ci[1]].to_numpy(float)
        err = np.vstack([np.where(np.isfinite(lo), vals - lo, 0.0),
                         np.where(np.isfinite(hi), hi - vals, 0.0)])
        err = np.nan_to_num(err, nan=0.0)
    plot_vals = np.nan_to_num(vals, nan=0.0)
    kw = dict(color=color, label=label, edgecolor="none")
    if horizontal:
        ax.barh(at, plot_vals, height=width * 0.95, xerr=err,
                error_kw=dict(ecolor="#333333", elinewidth=0.8, capsize=2), **kw)
    else:
        ax.bar(at, plot_vals, width=width * 0.95, yerr=err,
               error_kw=dict(ecolor="#333333", elinewidth=0.8, capsize=2), **kw)
    for p, v in zip(at, vals):
        if not np.isfinite(v):
            if horizontal:
                ax.text(0.01, p, "n/a", va="center", ha="left", fontsize=6)
            else:
                ax.text(p, 0.01, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)


def _bar_axes(ax, pos, labels, value_label, *, horizontal) -> None:
    """Group labels on the category axis, the value axis fixed to [0, 1]."""
    if horizontal:
        ax.set_yticks(pos, labels)
        ax.set_xlim(0, 1)
        ax.set_xlabel(value_label)
        ax.invert_yaxis()
    else:
        long = max(map(len, labels), default=0) > 6
        ax.set_xticks(pos, labels, rotation=30 if long else 0, ha="right" if long else "center")
        ax.set_ylim(0, 1)
        ax.set_ylabel(value_label)


def pass_at_k(data, *, ax=None, max_k: int | None = None, k: str = "K", value: str = "pass@K",
              ci_low: str | None = "ci_low", ci_high: str | None = "ci_high",
              run: str | None = "run", labels: Sequence[str] | None = None):
    """pass@K curves (K on x, fraction on y, [0, 1]) with interval bands.

    ``data``: a Results, a dict ``{label: Results}``, or a DataFrame with columns ``K``
    and ``pass@K`` (e.g. ``Results.pass_at_k_table()``), optionally ``ci_low`` /
    ``ci_high`` and a ``run`` column for several curves.
    """
    if hasattr(data, "outputs"):
        tables = {labels[0] if labels else "": data.pass_at_k_table(max_k)}
    elif isinstance(data, Mapping):
        tables = {str(name): (r.pass_at_k_table(max_k) if hasattr(r, "outputs") else r)
                  for name, r in data.items()}
    else:
        df = data.reset_index() if k not in data.columns else data
        if run and run in df.columns:
            tables = {str(name): g for name, g in df.groupby(run, sort=False)}
        else:
            tables = {labels[0] if labels else "": df}
    if ax is None:
        _, ax = _plt().subplots(figsize=(SINGLE_COLUMN, 2.2))
    for name, df in tables.items():
        df = df.sort_values(k)
        x = df[k].to_numpy(float)
        y = df[value].to_numpy(float)
        (line,) = ax.plot(x, y, marker="o", label=plain_label(name) if name else None)
        if ci_low in df.columns and ci_high in df.columns:
            ax.fill_between(x, df[ci_low].to_numpy(float), df[ci_high].to_numpy(float),
                            color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel("K (attempts)")
    ax.set_ylabel("pass@K")
    ax.set_ylim(0, 1)
    xs = sorted({int(v) for df in tables.values() for v in df[k]})
    if xs:
        ax.set_xticks(xs)
    if any(tables):
        ax.legend()
    return ax


def _per_task(obj, metric: str):
    import pandas as pd

    df = obj.tasks if hasattr(obj, "tasks") and hasattr(obj, "outputs") else obj
    if not isinstance(df, pd.DataFrame):
        raise TypeError("compare() takes Results or per-task DataFrames")
    if metric not in df.columns:
        raise ValueError(f"no column {metric!r}; columns are {list(df.columns)}")
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
        raise ValueError(f"kind must be 'scatter', 'bars' or 'paired', got {kind!r}")
    sa, sb = _per_task(a, metric), _per_task(b, metric)
    common = sa.index.intersection(sb.index)
    if len(common) == 0:
        raise ValueError("the two runs share no task ids")
    x, y = sa.loc[common].to_numpy(float), sb.loc[common].to_numpy(float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, ids = x[ok], y[ok], np.asarray(common)[ok]
    if ax is None:
        if kind == "paired":
            n_shown = min(max_tasks, int((x != y).sum()))
            size = (SINGLE_COLUMN, max(1.6, 0.16 * n_shown + 0.8))
        else:
            size = (SINGLE_COLUMN, SINGLE_COLUMN if kind == "scatter" else 2.2)
        _, ax = _plt().subplots(figsize=size)
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
    ax.plot([0, 1], [0, 1], color="#999999", linewidth=0.8, linestyle="--", zorder=0)
    ax.scatter(pts[:, 0], pts[:, 1], s=8 + 60 * np.sqrt(counts / counts.max()),
               color="#0072B2", alpha=0.6, edgecolor="none")
    if len(pts) <= 40:
        for (px, py), c in zip(pts, counts):
            if c > 1:
                ax.annotate(str(c), (px, py), textcoords="offset points", xytext=(4, 3),
                            fontsize=6)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_aspect("equal")
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
        ax.text(i, v, str(v), ha="center", va="bottom", fontsize=7)
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
    ax.set_xlim(0, 1)
    ax.set_xlabel(metric)
    n_diff = int((diff != 0).sum())
    ax.set_title(f"{n_diff} of {len(x)} tasks differ" +
                 (f"; largest {len(order)} shown" if len(order) < n_diff else ""))
    if order:
        ax.legend()


# ---------------------------------------------------------------- score against cost
def cost_vs_score(table, *, ax=None, cost: str = "cost_per_task", score: str = "pass@2",
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
    :func:`arcnb.compare.pareto_front` of the two columns. A run with a NaN cost or
    score is left out; a run whose cost is 0 (or below) cannot sit on a log axis: it is
    drawn at the left edge, a decade below the cheapest other run, labelled "$0".
    The runs drawn are in ``ax.arcnb_points`` (label, x drawn, score). Returns the Axes.
    """
    from ..compare import pareto_front

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
        _, ax = _plt().subplots(figsize=(SINGLE_COLUMN, 2.6))
    ax.set_xscale("log")
    if ci_low in df.columns and ci_high in df.columns:
        lo, hi = df[ci_low].to_numpy(float), df[ci_high].to_numpy(float)
        has = ok & np.isfinite(lo) & np.isfinite(hi)
        ax.errorbar(x[has], y[has], yerr=[y[has] - lo[has], hi[has] - y[has]], fmt="none",
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
    ax.set_xlabel(f"{cost.replace('_', ' ')} (log scale)")
    ax.set_ylabel(f"{score} (ARC Prize rule)" if score == "pass@2" else score)
    ax.set_title(f"{int(ok.sum())} runs, {int(f.sum())} on the Pareto front", fontsize=8)
    ax.legend(fontsize=6, loc="lower right")
    ax.arcnb_points = [(names[i], float(x[i]), float(y[i])) for i in np.flatnonzero(ok)]
    return ax
