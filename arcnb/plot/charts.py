"""Result charts and the scale and labels every result chart shares: accuracy per
colour (:func:`color_accuracy`) and the colour confusion heatmap
(:func:`confusion_heatmap`); :func:`value_limit` and :func:`value_label`. The other
result charts are in their families' modules: ``breakdowns.py`` (bars per group,
:func:`breakdown_bars`; one panel per metric, :func:`breakdown_panels`; the distribution
of cell accuracy, :func:`cell_accuracy_hist`), ``scores.py`` (pass@K curves,
:func:`pass_at_k`; run against run, :func:`compare`) and ``cost.py``
(:func:`cost_vs_score`, :func:`cost_by_outcome`, the comparison's :func:`leaderboard`).

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

import numpy as np

from ..breakdown import color_accuracy as color_accuracy_table
from ..breakdown import color_confusion
from ..errors import ParameterError
from ..runs import Run
from ..scoring import Results
from ..text import MISSING, fmt_compact, fmt_count, fmt_number
from .palette import PALETTE, pyplot
from .paper import SINGLE_COLUMN

__all__ = ["color_accuracy", "confusion_heatmap", "value_limit", "value_label"]


# ------------------------------------------------------------ scaling and labels
#: The smallest upper limit of a fraction axis (1%), so an all-zero chart keeps a scale.
FRACTION_FLOOR = 0.01
#: Room above the largest value (or interval end) for its label.
HEADROOM = 1.15
#: The view of a fraction axis that reaches 1 runs to 1.12: room for value labels.
FULL_ROOM = 1.12
_NICE = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
#: The ``gid`` of a bar of 0's stub, of the note "every value is 0" and of a value label
#: (the result charts of ``breakdowns.py``, ``scores.py`` and ``cost.py`` draw them too;
#: tests find them by it).
ZERO_GID = "arcnb-zero-bar"
NOTE_GID = "arcnb-all-zero"
LABEL_GID = "arcnb-value"
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
            return float(f"{v:.12g}")  # m * 10**e without the float noise: a number, not a text
    return float(10.0 ** (e + 1))


def finite_max(*arrays) -> float:
    """The largest finite value of ``arrays`` (NaN when there is none)."""
    vals = [np.asarray(a, dtype=float).ravel() for a in arrays if a is not None]
    vals = np.concatenate(vals) if vals else np.array([])
    vals = vals[np.isfinite(vals)]
    return float(vals.max()) if vals.size else float("nan")


def value_limit(*arrays, count: bool = False, floor: float | None = None) -> float:
    """The upper limit of a value axis for ``arrays`` (values and interval ends):
    ``max * 1.15`` rounded up to a round number; for fractions at least
    0.01 (``FRACTION_FLOOR``) and at most 1, for counts at least 1."""
    top = finite_max(*arrays)
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


def value_axis(ax, lim: float, *, which: str = "y", count: bool = False) -> None:
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


def all_zero_note(ax, vals, what: str) -> bool:
    """When every finite value of ``vals`` is 0 (and there is one), write on the Axes
    that they are all 0; returns whether it did."""
    v = np.asarray(vals, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0 or np.any(v != 0):
        return False
    ax.text(0.5, 0.55, f"every {what} is 0", transform=ax.transAxes, ha="center",
            va="center", fontsize=7, color="#444444", gid=NOTE_GID, zorder=5,
            bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="#999999", lw=0.5))
    return True


def label_value(ax, pos, v, end, *, horizontal: bool, count: bool, fontsize=6,
                 color="#222222") -> None:
    """Write ``v`` just past ``end`` (the bar's end or its interval's high end)."""
    text = value_label(v, count=count)
    if horizontal:
        ax.annotate(text, (end, pos), xytext=(2, 0), textcoords="offset points",
                    ha="left", va="center", fontsize=fontsize, color=color, gid=LABEL_GID,
                    annotation_clip=False)
    else:
        ax.annotate(text, (pos, end), xytext=(0, 1.5), textcoords="offset points",
                    ha="center", va="bottom", fontsize=fontsize, color=color,
                    gid=LABEL_GID, annotation_clip=False)


def zero_stub(ax, pos, width, *, horizontal: bool, color) -> None:
    """A bar of 0 as a thick stub on the baseline, so it is seen to be drawn."""
    a, b = pos - width / 2, pos + width / 2
    xy = ([0, 0], [a, b]) if horizontal else ([a, b], [0, 0])
    ax.plot(*xy, color=color, linewidth=2.5, solid_capstyle="butt", clip_on=False,
            gid=ZERO_GID, zorder=3)


def is_count(name: str) -> bool:
    """Whether the column ``name`` holds a count (``n_...``)."""
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
    res = results_of(data)
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
            zero_stub(ax, xi, 0.75, horizontal=False, color=PALETTE[c])
        label_value(ax, xi, v, max(v, h) if np.isfinite(h) else v, horizontal=False,
                     count=False, fontsize=MIN_LABEL_SIZE)
    if not all_zero_note(ax, vals, "colour's accuracy"):
        if not np.isfinite(vals).any():
            ax.text(0.5, 0.55, "no output with the truth's shape: nothing to compare",
                    transform=ax.transAxes, ha="center", va="center", fontsize=7,
                    gid=NOTE_GID)
    if annotate and "n_cells" in df.columns:
        labels = [f"{c}\n{fmt_compact(n)}" for c, n in zip(colors, df["n_cells"])]
        ax.set_xlabel("true colour (cells)")
    else:
        labels = [str(c) for c in colors]
        ax.set_xlabel("true colour")
    ax.set_xticks(x, labels)
    if annotate and "n_cells" in df.columns:
        ax.tick_params(axis="x", labelsize=MIN_LABEL_SIZE)
    value_axis(ax, lim)
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

    res = results_of(data)
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
                transform=ax.transAxes, ha="center", va="center", fontsize=7, gid=NOTE_GID)
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


def results_of(data) -> Results | None:
    """The scored :class:`~arcnb.scoring.Results` a chart reads from ``data``: ``data``
    itself, or a :class:`~arcnb.runs.Run`'s results; None when ``data`` is a table or
    an array that the chart reads as it is. An unscored run is refused."""
    if isinstance(data, Run):
        if data.results is None:
            raise ParameterError(f"run {data.label!r} has no scores to chart (an unscored "
                                 "run, or one read without scoring: open it with arcnb.open)")
        return data.results
    return data if isinstance(data, Results) else None
