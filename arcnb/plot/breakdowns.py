"""The breakdown charts: bars per group (:func:`breakdown_bars`), one panel per metric
of a breakdown (:func:`breakdown_panels`) and the distribution of cell accuracy
(:func:`cell_accuracy_hist`); each scales to its data and writes its values on it
(``charts.py``: :func:`~arcnb.plot.value_limit`, :func:`~arcnb.plot.value_label`)."""
from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np
import pandas as pd

from ..breakdown import lead_metric
from ..columns import NEAR_MISS, graded_columns
from ..columns import label as column_label
from ..errors import ParameterError
from ..text import MISSING, fmt_significant
from .charts import (MIN_LABEL_SIZE, NOTE_GID, all_zero_note, is_count, label_value, results_of,
                     value_axis, value_limit, zero_stub)
from .palette import pyplot
from .paper import DOUBLE_COLUMN, SINGLE_COLUMN
from .pixelfont import plain_label

__all__ = ["breakdown_bars", "breakdown_panels", "cell_accuracy_hist", "PANEL_METRICS"]


def _default_group(df, group):
    """Group labels: the ``group`` column given, else a ``group`` column, else a named
    or non-default index, else the first text column."""
    if group is not None:
        if group not in df.columns:
            raise ParameterError(f"no column {group!r}; columns are {list(df.columns)}")
        return df[group].astype(str).to_numpy()
    if "group" in df.columns:
        return df["group"].astype(str).to_numpy()
    if df.index.name is not None or not isinstance(df.index, pd.RangeIndex):
        return df.index.astype(str).to_numpy()
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]):
            return df[c].astype(str).to_numpy()
    raise ParameterError("cannot tell which column names the groups: pass group=")


def breakdown_bars(table, *, value: str = "pass@2", group: str | None = None,
                   ci_low: str | None = None, ci_high: str | None = None, n: str | None = None,
                   hue: str | None = None, ax=None, horizontal: bool = False,
                   color: str = "#0072B2", sort: bool = False, ylabel: str | None = None,
                   limit: float | None = None, labels: bool = True,
                   count: bool | None = None):
    """Bars of ``value`` per group with interval error bars: accuracy per category,
    per grid size, per shape change, ...

    ``table`` is a plain DataFrame, one row per group (per group and ``hue`` level for
    side-by-side runs). Column defaults: ``group`` (else the index or the first text
    column); ``ci_low``/``ci_high`` = ``f"{value}_ci_low"``/``f"{value}_ci_high"`` when
    present; ``n`` = ``n_tasks`` (else ``n_outputs``) when present, shown in the tick
    labels as ``"name (n=..)"``.

    The value axis scales to the data (:func:`value_limit`; ``limit`` fixes it):
    fractions up to at most 1, counts (``count=True``, by default a column named
    ``n_...``) from 0 up. Each bar's
    value is written past its end (``labels``); a bar of 0 is a stub labelled ``0``;
    when every value is 0 the chart says so. NaN values (empty groups) are left blank
    and marked "NaN".
    """
    df = table.copy()
    if value not in df.columns:
        raise ParameterError(f"no column {value!r}; columns are {list(df.columns)}")
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
        _, ax = pyplot().subplots(figsize=(SINGLE_COLUMN, h))
    count = is_count(value) if count is None else bool(count)
    highs = [df[ci_high].to_numpy(float)] if ci_high else []
    lim = float(limit) if limit is not None else value_limit(df[value].to_numpy(float),
                                                             *highs, count=count)
    hues = [None] if hue is None else list(pd.unique(df[hue]))
    width = 0.8 / len(hues)
    from matplotlib import rcParams

    cycle = rcParams["axes.prop_cycle"].by_key().get("color", [color])
    pos = np.arange(len(order))
    finite = df[value].to_numpy(float)
    finite = finite[np.isfinite(finite)]
    if finite.size and not finite.any():
        labels = False  # the note says every value is 0; a "0" per bar would crowd it
    for j, hv in enumerate(hues):
        sub = df if hv is None else df[df[hue] == hv]
        _bar_series(ax, sub.set_index("_group").reindex(order), value=value,
                    ci=(ci_low, ci_high) if ci_low and ci_high else None,
                    at=pos + (j - (len(hues) - 1) / 2) * width, width=width,
                    color=color if hv is None else cycle[j % len(cycle)],
                    label=None if hv is None else plain_label(hv), horizontal=horizontal,
                    labels=labels, count=count, lim=lim, small=len(hues) > 2)
    if n is not None and hue is None:
        nn = df.set_index("_group").reindex(order)[n]
        ticks = [f"{plain_label(g)} (n={int(k)})" if pd.notna(k) else plain_label(g)
                 for g, k in zip(order, nn)]
    else:
        ticks = [plain_label(g) for g in order]
    _bar_axes(ax, pos, ticks, ylabel or column_label(value), horizontal=horizontal, lim=lim,
              count=count)
    all_zero_note(ax, df[value].to_numpy(float), value)
    if hue is not None:  # beside the Axes, never over a bar
        ax.legend(title=hue, fontsize=6, title_fontsize=6, loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    ax.arcnb_limit = lim
    return ax


def _bar_series(ax, sub, *, value, ci, at, width, color, label, horizontal, labels=True,
                count=False, lim=1.0, small=False) -> None:
    """One series of bars (one ``hue`` level): ``sub[value]`` per group at positions
    ``at``, error bars from the ``ci`` columns ``(low, high)`` when given (an unknown
    end as a zero-length arm), each value written past its bar (or interval) end, a
    bar of 0 as a labelled stub, NaN values as an empty slot marked "NaN"."""
    vals = sub[value].to_numpy(float)
    err = None
    hi = np.full(vals.shape, np.nan)
    if ci is not None:
        lo, hi = sub[ci[0]].to_numpy(float), sub[ci[1]].to_numpy(float)
        err = np.vstack([np.where(np.isfinite(lo), vals - lo, 0.0),
                         np.where(np.isfinite(hi), hi - vals, 0.0)])
        err = np.clip(np.nan_to_num(err, nan=0.0), 0.0, None)
    plot_vals = np.nan_to_num(vals, nan=0.0)
    kw = dict(color=color, label=label, edgecolor="none")
    ekw = dict(ecolor="#333333", elinewidth=0.8, capsize=2)
    if horizontal:
        ax.barh(at, plot_vals, height=width * 0.95, xerr=err, error_kw=ekw, **kw)
    else:
        ax.bar(at, plot_vals, width=width * 0.95, yerr=err, error_kw=ekw, **kw)
    for p, v, h in zip(at, vals, hi):
        if not np.isfinite(v):
            if horizontal:
                ax.text(0.01 * lim, p, MISSING, va="center", ha="left", fontsize=6)
            else:
                ax.text(p, 0.01 * lim, MISSING, ha="center", va="bottom", fontsize=6, rotation=90)
            continue
        if v == 0:
            zero_stub(ax, p, width * 0.95, horizontal=horizontal, color=color)
        if labels:
            label_value(ax, p, v, max(v, h) if np.isfinite(h) else v, horizontal=horizontal,
                         count=count, fontsize=MIN_LABEL_SIZE)


def _bar_axes(ax, pos, labels, value_label_, *, horizontal, lim=1.0, count=False) -> None:
    """Group labels on the category axis, the value axis from 0 to ``lim`` (the first
    group on top for horizontal bars; idempotent, so shared axes stay right)."""
    top, bottom = (len(pos) - 0.5, -0.5) if len(pos) else (0.5, -0.5)
    if horizontal:
        ax.set_yticks(pos, labels)
        value_axis(ax, lim, which="x", count=count)
        ax.set_xlabel(value_label_)
        ax.set_ylim(top, bottom)
    else:
        long = max(map(len, labels), default=0) > 6
        ax.set_xticks(pos, labels, rotation=30 if long else 0, ha="right" if long else "center")
        value_axis(ax, lim, which="y", count=count)
        ax.set_ylabel(value_label_)


#: The metrics of a breakdown chart, exact first, then the graded ones.
PANEL_METRICS = ("pass@2",) + graded_columns()


def breakdown_panels(table, *, metrics: Sequence[str] | None = None, lead: str | None = None,
                     group: str | None = None, sort: bool = False, width: float | None = None,
                     lead_color: str = "#0072B2", color: str = "#7FA7C9"):
    """One horizontal-bar panel per metric of a breakdown table
    (:func:`arcnb.breakdown.breakdown`), side by side with the groups shared: the
    leading metric first (``lead``, default :func:`arcnb.breakdown.lead_metric`:
    pass@2 when enough groups have something solved, else partial credit), then the
    others of ``metrics`` (default: those of ``pass@2``, ``shape_accuracy``,
    ``cell_accuracy``, ``partial_credit``, ``n_near_miss`` in the table), each
    with its interval, its values written on it and its own scale. Returns the Figure
    (``fig.arcnb_lead``: the leading metric, ``fig.arcnb_axes``: ``{metric: Axes}``).
    """
    df = table[table["group"] != "(all)"] if "group" in table.columns else table
    metrics = [m for m in (metrics or PANEL_METRICS) if m in df.columns]
    lead = lead or lead_metric(df)
    if lead not in df.columns:
        raise ParameterError(f"no column {lead!r}; columns are {list(df.columns)}")
    order = [lead] + [m for m in metrics if m != lead]
    n_groups = len(pd.unique(_default_group(df, group)))
    w = width or DOUBLE_COLUMN
    fig, axes = pyplot().subplots(1, len(order), sharey=True, squeeze=False,
                                  figsize=(w, max(1.6, 0.2 * n_groups + 0.9)))
    axes = list(axes[0])
    for i, (ax, m) in enumerate(zip(axes, order)):
        breakdown_bars(df, value=m, group=group, horizontal=True, ax=ax, sort=sort,
                       color=lead_color if m == lead else color, ylabel=column_label(m))
        # a panel is narrow: the label on lines of a few words
        ax.set_title(textwrap.fill(column_label(m), 14), fontsize=8, fontweight="bold" if m == lead else "normal")
        ax.set_xlabel("")
        if i:
            ax.tick_params(axis="y", labelleft=False, left=False)
    if fig.get_layout_engine() is None:
        fig.subplots_adjust(wspace=0.3)
    fig.arcnb_lead = lead
    fig.arcnb_axes = dict(zip(order, axes))
    return fig


def cell_accuracy_hist(data, *, bins: int = 20, near_miss: float | None = NEAR_MISS, ax=None,
                       color: str = "#0072B2"):
    """The distribution of cell accuracy over the outputs with a right-shaped attempt:
    a histogram on [0, 1] in ``bins`` equal bins (the last one closed), each bar's
    count written on it, with the near-miss threshold marked.

    ``data``: a Results (its ``outputs["cell_accuracy"]``: the best right-shaped
    attempt's fraction of correct cells, NaN when no attempt has the truth's shape)
    or an array of cell accuracies (NaN skipped). ``ax.arcnb_counts`` holds the
    counts, ``ax.arcnb_edges`` the bin edges.
    """
    res = results_of(data)
    if res is not None:
        acc = res.outputs["cell_accuracy"].to_numpy(float)
    else:
        acc = np.asarray(data, dtype=float).ravel()
    n_all = acc.size
    acc = acc[np.isfinite(acc)]
    edges = np.linspace(0.0, 1.0, bins + 1)
    counts, _ = np.histogram(acc, bins=edges)
    if ax is None:
        _, ax = pyplot().subplots(figsize=(SINGLE_COLUMN * 1.6, 2.2))
    mids, w = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
    ax.bar(mids, counts, width=w * 0.92, color=color, edgecolor="none")
    for x, c in zip(mids, counts):
        if c:
            label_value(ax, x, c, c, horizontal=False, count=True, fontsize=MIN_LABEL_SIZE)
    if near_miss is not None and 0 <= near_miss <= 1:
        ax.axvline(near_miss, color="#D55E00", linestyle="--", linewidth=0.8)
        ax.annotate(f"near miss from {fmt_significant(near_miss)}", (near_miss, 1), xycoords=("data",
                    "axes fraction"), xytext=(-3, -3), textcoords="offset points",
                    ha="right", va="top", fontsize=6, color="#D55E00")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, value_limit(counts, count=True))
    ax.set_xlabel("cell accuracy of the best right-shaped attempt")
    ax.set_ylabel("outputs")
    ax.set_title(f"{acc.size} of {n_all} outputs have a right-shaped attempt", fontsize=8)
    if acc.size == 0:
        ax.text(0.5, 0.55, "no output has a right-shaped attempt", transform=ax.transAxes,
                ha="center", va="center", fontsize=7, gid=NOTE_GID)
    ax.arcnb_counts, ax.arcnb_edges = counts, edges
    return ax
