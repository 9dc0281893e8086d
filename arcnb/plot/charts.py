"""Result charts: accuracy per colour (:func:`color_accuracy`), the colour confusion
heatmap (:func:`confusion_heatmap`), bars per group (:func:`breakdown_bars`), one
panel per metric of a breakdown (:func:`breakdown_panels`), the distribution of cell
accuracy (:func:`cell_accuracy_hist`), pass@K curves (:func:`pass_at_k`), cost
(:func:`cost_vs_score`, :func:`cost_by_outcome`) and run against run
(:func:`compare`).

Each takes ``ax=None`` (a new single-column figure) or an Axes, and returns the Axes
(the multi-panel ones return the Figure).

Every chart scales to its data and writes its values on it. A fraction's axis runs
from 0 to ``max(value, interval high) * 1.15`` rounded up to a round number, at
least 0.01 and at most 1, so a pass@2 of 0.0025 fills a quarter of its axis instead
of a pixel of a [0, 1] axis. A bar of 0 is drawn as a thick stub on the baseline and
labelled ``0``; intervals are drawn whenever the table has them (a zero-width
interval as a cap); when every value of a chart is 0 the chart says so in a note on
the Axes. NaN (an empty denominator) is shown as "NaN" or left blank, never as 0.
"""
from __future__ import annotations

import textwrap

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..breakdown import color_accuracy as color_accuracy_table
from ..breakdown import color_confusion, lead_metric
from ..columns import NEAR_MISS, graded_columns
from ..columns import label as column_label
from ..errors import ParameterError
from ..runs import Run
from ..scoring import Results
from ..stats import pareto_front
from ..text import MISSING, fmt_compact, fmt_count, fmt_number, fmt_significant
from .palette import PALETTE, pyplot
from .paper import DOUBLE_COLUMN, SINGLE_COLUMN
from .pixelfont import plain_label

__all__ = ["color_accuracy", "confusion_heatmap", "breakdown_bars", "pass_at_k", "compare",
           "leaderboard"]


# ------------------------------------------------------------ scaling and labels
#: The smallest upper limit of a fraction axis (1%), so an all-zero chart keeps a scale.
FRACTION_FLOOR = 0.01
#: Room above the largest value (or interval end) for its label.
HEADROOM = 1.15
#: The view of a fraction axis that reaches 1 runs to 1.12: room for value labels.
FULL_ROOM = 1.12
_NICE = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
_ZERO_GID = "arcnb-zero-bar"
_NOTE_GID = "arcnb-all-zero"
_LABEL_GID = "arcnb-value"
#: The smallest text a chart writes, in points (the figure check's floor).
MIN_LABEL_SIZE = 6


def _nice_ceil(x: float) -> float:
    """The smallest round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power
    of ten) that is >= ``x``."""
    if not np.isfinite(x) or x <= 0:
        return 0.0
    e = np.floor(np.log10(x))
    for m in _NICE:
        v = float(m * 10.0**e)
        if v >= x * (1 - 1e-12):
            return float(np.round(v, 11 - int(e)))  # m * 10**e without the float noise
    return float(10.0 ** (e + 1))


def _finite_max(*arrays) -> float:
    vals = [np.asarray(a, dtype=float).ravel() for a in arrays if a is not None]
    vals = np.concatenate(vals) if vals else np.array([])
    vals = vals[np.isfinite(vals)]
    return float(vals.max()) if vals.size else float("nan")


def value_limit(*arrays, count: bool = False, floor: float | None = None) -> float:
    """The upper limit of a value axis for ``arrays`` (values and interval ends):
    ``max * 1.15`` rounded up to a round number; for fractions at least
    0.01 (``FRACTION_FLOOR``) and at most 1, for counts at least 1."""
    top = _finite_max(*arrays)
    floor = (1.0 if count else FRACTION_FLOOR) if floor is None else floor
    lim = max(_nice_ceil(top * HEADROOM) if np.isfinite(top) else 0.0, floor)
    return lim if count else min(lim, 1.0)


def value_label(v, *, count: bool = False) -> str:
    """A value as written on a chart: ``0`` for zero, ``NaN`` for NaN, counts as
    integers, fractions with 2 decimals from 0.1 up and 2 significant digits below
    (0.0025, 0.013), so a small score is never rounded to 0."""
    if v is None or not np.isfinite(float(v)):
        return MISSING
    v = float(v)
    if count:
        return fmt_count(v)
    if v == 0:
        return "0"
    return fmt_number(v, least=2, most=8)  # the one rule (arcnb.text)


def _value_axis(ax, lim: float, *, which: str = "y", count: bool = False) -> None:
    """Set the value axis to ``[0, lim]``; a fraction axis that reaches 1 gets room
    above 1 for the value labels (ticks and the axis line stop at 1), so a label of a
    bar or interval ending at 1 stays inside the Axes."""
    set_lim = ax.set_ylim if which == "y" else ax.set_xlim
    if count or lim < 1.0:
        set_lim(0, lim)
        return
    set_lim(0, lim * FULL_ROOM)
    ticks = ([0, 0.25, 0.5, 0.75, 1.0] if which == "y" else [0, 0.5, 1.0]) \
        if lim == 1.0 else None
    if ticks is not None:
        (ax.set_yticks if which == "y" else ax.set_xticks)(ticks)
    spine = ax.spines["left" if which == "y" else "bottom"]
    spine.set_bounds(0, lim)


def _all_zero_note(ax, vals, what: str) -> bool:
    """When every finite value of ``vals`` is 0 (and there is one), write on the Axes
    that they are all 0; returns whether it did."""
    v = np.asarray(vals, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0 or np.any(v != 0):
        return False
    ax.text(0.5, 0.55, f"every {what} is 0", transform=ax.transAxes, ha="center",
            va="center", fontsize=7, color="#444444", gid=_NOTE_GID, zorder=5,
            bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="#999999", lw=0.5))
    return True


def _label_value(ax, pos, v, end, *, horizontal: bool, count: bool, fontsize=6,
                 color="#222222") -> None:
    """Write ``v`` just past ``end`` (the bar's end or its interval's high end)."""
    text = value_label(v, count=count)
    if horizontal:
        ax.annotate(text, (end, pos), xytext=(2, 0), textcoords="offset points",
                    ha="left", va="center", fontsize=fontsize, color=color, gid=_LABEL_GID,
                    annotation_clip=False)
    else:
        ax.annotate(text, (pos, end), xytext=(0, 1.5), textcoords="offset points",
                    ha="center", va="bottom", fontsize=fontsize, color=color,
                    gid=_LABEL_GID, annotation_clip=False)


def _zero_stub(ax, pos, width, *, horizontal: bool, color) -> None:
    """A bar of 0 as a thick stub on the baseline, so it is seen to be drawn."""
    a, b = pos - width / 2, pos + width / 2
    xy = ([0, 0], [a, b]) if horizontal else ([a, b], [0, 0])
    ax.plot(*xy, color=color, linewidth=2.5, solid_capstyle="butt", clip_on=False,
            gid=_ZERO_GID, zorder=3)


def _is_count(name: str) -> bool:
    return str(name).startswith("n_")


def color_accuracy(data, *, ax=None, value: str = "accuracy", ci_low: str | None = "ci_low",
                   ci_high: str | None = "ci_high", annotate: bool = True):
    """Accuracy per true colour as bars in the ARC colours (thin dark outline so grey and
    yellow stay visible), with interval error bars when the columns exist.

    ``data`` is a DataFrame with columns ``color`` and ``value`` (such as
    :func:`arcnb.breakdown.color_accuracy`'s) or a :class:`~arcnb.scoring.Results`
    (then :func:`arcnb.breakdown.color_accuracy` is computed with its defaults). A NaN
    accuracy (colour never present) is drawn as an empty slot marked "NaN".
    """
    res = _results_of(data)
    df = color_accuracy_table(res) if res is not None else data
    if ax is None:
        _, ax = pyplot().subplots(figsize=(SINGLE_COLUMN, 2.2))
    colors = df["color"].to_numpy(int)
    vals = df[value].to_numpy(float)
    x = np.arange(len(df))
    ax.bar(x, np.nan_to_num(vals, nan=0.0), color=[PALETTE[c] for c in colors],
           edgecolor="#333333", linewidth=0.5, width=0.75)
    hi = np.full(vals.shape, np.nan)
    if ci_low in df.columns and ci_high in df.columns:
        lo, hi = df[ci_low].to_numpy(float), df[ci_high].to_numpy(float)
        ok = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(vals)
        # clipped at zero: a rounding difference must never make a negative arm
        ax.errorbar(x[ok], vals[ok], yerr=[np.clip(vals[ok] - lo[ok], 0, None),
                                           np.clip(hi[ok] - vals[ok], 0, None)], fmt="none",
                    ecolor="#333333", elinewidth=0.8, capsize=2)
    lim = value_limit(vals, hi)
    for xi, v, h, c in zip(x, vals, hi, colors):
        if not np.isfinite(v):
            ax.text(xi, 0.02 * lim, MISSING, ha="center", va="bottom", fontsize=6, rotation=90)
            continue
        if v == 0:
            _zero_stub(ax, xi, 0.75, horizontal=False, color=PALETTE[c])
        _label_value(ax, xi, v, max(v, h) if np.isfinite(h) else v, horizontal=False,
                     count=False, fontsize=MIN_LABEL_SIZE)
    if not _all_zero_note(ax, vals, "colour's accuracy"):
        if not np.isfinite(vals).any():
            ax.text(0.5, 0.55, "no output with the truth's shape: nothing to compare",
                    transform=ax.transAxes, ha="center", va="center", fontsize=7,
                    gid=_NOTE_GID)
    if annotate and "n_cells" in df.columns:
        labels = [f"{c}\n{fmt_compact(n)}" for c, n in zip(colors, df["n_cells"])]
        ax.set_xlabel("true colour (cells)")
    else:
        labels = [str(c) for c in colors]
        ax.set_xlabel("true colour")
    ax.set_xticks(x, labels)
    if annotate and "n_cells" in df.columns:
        ax.tick_params(axis="x", labelsize=MIN_LABEL_SIZE)
    _value_axis(ax, lim)
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

    res = _results_of(data)
    counts = color_confusion(res) if res is not None else data
    m = np.asarray(counts, dtype=float)
    if m.shape != (10, 10):
        raise ParameterError(f"confusion table must be 10 x 10, got {m.shape}")
    if normalize:
        tot = m.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = np.where(tot > 0, m / np.where(tot > 0, tot, 1), np.nan)
    if ax is None:
        _, ax = pyplot().subplots(figsize=(SINGLE_COLUMN, SINGLE_COLUMN * 0.92))
    sns.heatmap(m, ax=ax, mask=np.isnan(m), cmap=cmap, vmin=0, vmax=1 if normalize else None,
                annot=annot, fmt=".2f" if normalize else ".0f",
                annot_kws={"fontsize": MIN_LABEL_SIZE},
                square=True, cbar_kws={"shrink": 0.8, "label": "fraction of row" if normalize
                                       else "cells"}, linewidths=0.3, linecolor="white")
    ax.set_xlabel("predicted colour")
    ax.set_ylabel("true colour")
    ax.set_xticks(np.arange(10) + 0.5, [str(i) for i in range(10)], rotation=0)
    ax.set_yticks(np.arange(10) + 0.5, [str(i) for i in range(10)], rotation=0)
    _swatches(ax)
    if not np.isfinite(m).any():
        ax.text(0.5, 0.5, "no output with the truth's shape: nothing to compare",
                transform=ax.transAxes, ha="center", va="center", fontsize=7, gid=_NOTE_GID)
    ax.arcnb_matrix = m
    return ax


#: Swatch strip width and its gaps, in points (fixed, whatever the figure's size).
_SWATCH_PT, _SWATCH_GAP_PT = 5.0, 1.5


def _swatches(ax) -> None:
    """Palette swatches along both axes of a 10 x 10 heatmap: one thick line per
    colour, a fixed number of points away from the Axes, between the heatmap and the
    tick labels (which are pushed out past them), so they never cover the colour
    digits or the axis titles at any figure size."""
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    fig = ax.get_figure()
    off = (_SWATCH_GAP_PT + _SWATCH_PT / 2) / 72
    left = blended_transform_factory(ax.transAxes, ax.transData) + \
        ScaledTranslation(-off, 0, fig.dpi_scale_trans)
    below = blended_transform_factory(ax.transData, ax.transAxes) + \
        ScaledTranslation(0, -off, fig.dpi_scale_trans)
    for i in range(10):
        kw = dict(color=PALETTE[i], linewidth=_SWATCH_PT, solid_capstyle="butt",
                  clip_on=False, gid="arcnb-swatch")
        # rows run top to bottom in a heatmap: row i spans y in [i, i + 1]
        ax.plot([0, 0], [i, i + 1], transform=left, **kw)
        ax.plot([i, i + 1], [0, 0], transform=below, **kw)
    pad = _SWATCH_GAP_PT * 2 + _SWATCH_PT
    ax.tick_params(axis="both", length=0, pad=pad)


# ------------------------------------------------------------------ breakdowns
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
    count = _is_count(value) if count is None else bool(count)
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
    _all_zero_note(ax, df[value].to_numpy(float), value)
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
            _zero_stub(ax, p, width * 0.95, horizontal=horizontal, color=color)
        if labels:
            _label_value(ax, p, v, max(v, h) if np.isfinite(h) else v, horizontal=horizontal,
                         count=count, fontsize=MIN_LABEL_SIZE)


def _bar_axes(ax, pos, labels, value_label_, *, horizontal, lim=1.0, count=False) -> None:
    """Group labels on the category axis, the value axis from 0 to ``lim`` (the first
    group on top for horizontal bars; idempotent, so shared axes stay right)."""
    top, bottom = (len(pos) - 0.5, -0.5) if len(pos) else (0.5, -0.5)
    if horizontal:
        ax.set_yticks(pos, labels)
        _value_axis(ax, lim, which="x", count=count)
        ax.set_xlabel(value_label_)
        ax.set_ylim(top, bottom)
    else:
        long = max(map(len, labels), default=0) > 6
        ax.set_xticks(pos, labels, rotation=30 if long else 0, ha="right" if long else "center")
        _value_axis(ax, lim, which="y", count=count)
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
    res = _results_of(data)
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
            _label_value(ax, x, c, c, horizontal=False, count=True, fontsize=MIN_LABEL_SIZE)
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
                ha="center", va="center", fontsize=7, gid=_NOTE_GID)
    ax.arcnb_counts, ax.arcnb_edges = counts, edges
    return ax


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
                    gid=_LABEL_GID)
    if ok.any():
        _log_axis(ax, "x")
    lim = value_limit(y[ok], [hi] if hi is not None else None)
    ax.set_ylim(-0.04 * lim, 1.04 * lim)  # points at 0 and at the top stay whole
    ax.set_xlabel("cost per task (log scale)")
    ax.set_ylabel(column_label(metric))
    n_out = int((~ok).sum())
    ax.set_title(f"{int(ok.sum())} tasks with a cost" +
                 (f"; {n_out} without one not shown" if n_out else ""), fontsize=8)
    _all_zero_note(ax, y[ok], f"task's {metric}")
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
                            gid=_LABEL_GID)
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


__all__ += ["breakdown_panels", "cell_accuracy_hist", "cost_vs_score", "cost_by_outcome",
            "value_limit", "value_label", "PANEL_METRICS"]


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
    if (res := _results_of(data)) is not None:
        tables = {labels[0] if labels else "": res.pass_at_k_table(max_k)}
    elif isinstance(data, Mapping):
        tables = {str(name): (_results_of(r).pass_at_k_table(max_k)
                              if _results_of(r) is not None else r)
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
                _label_value(ax, xi, yi, e, horizontal=False, count=False,
                             color=line.get_color())
        ys.append(y)
    ax.set_xlabel("K (attempts)")
    ax.set_ylabel("pass@K")
    _value_axis(ax, value_limit(*ys, *his))
    xs = sorted({int(v) for df in tables.values() for v in df[k]})
    if xs:
        ax.set_xticks(xs)
        ax.set_xlim(min(xs) - 0.4, max(xs) + 0.4)
    if any(tables):
        ax.legend()
    if ys:
        _all_zero_note(ax, np.concatenate(ys), "pass@K (no test output solved)")
    return ax


def _results_of(data) -> Results | None:
    """The scored :class:`~arcnb.scoring.Results` a chart reads from ``data``: ``data``
    itself, or a :class:`~arcnb.runs.Run`'s results; None when ``data`` is a table or
    an array that the chart reads as it is. An unscored run is refused."""
    if isinstance(data, Run):
        if data.results is None:
            raise ParameterError(f"run {data.label!r} has no scores to chart (an unscored "
                                 "run, or one read without scoring: open it with arcnb.open)")
        return data.results
    return data if isinstance(data, Results) else None


def _per_task(obj, metric: str):
    res = _results_of(obj)
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
    lim = value_limit(x, y, count=_is_count(metric) or _finite_max(x, y) > 1)
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
    _all_zero_note(ax, np.concatenate([x, y]), f"task's {metric}, in both runs,")
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
        ax.text(i, v, str(v), ha="center", va="bottom", fontsize=7, gid=_LABEL_GID)
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
    lim = value_limit(x[order], y[order], count=_is_count(metric) or
                      _finite_max(x[order], y[order]) > 1)
    for p, a, b in zip(pos, x[order], y[order]):
        for off, v in ((-0.2, a), (0.2, b)):
            if v == 0:
                _zero_stub(ax, p + off, 0.4, horizontal=True, color="#333333")
            _label_value(ax, p + off, v, v, horizontal=True, count=False, fontsize=MIN_LABEL_SIZE)
    ax.set_xlim(0, lim)
    ax.set_xlabel(metric)
    n_diff = int((diff != 0).sum())
    ax.set_title(f"{n_diff} of {len(x)} tasks differ" +
                 (f"; largest {len(order)} shown" if len(order) < n_diff else ""))
    if order:
        ax.legend()


# ---------------------------------------------------------------- score against cost
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
