"""Plots of ARC grids and results: the official palette, grid / pair / task panels,
fast galleries, breakdown charts and paper-ready figures.

Everything works offline and headless (no fonts or styles are fetched; the Agg
backend is enough). Plotting functions take ``ax=None`` (or ``axes=None`` for
multi-panel figures) and return the Axes or the Figure they drew on.

Colours
    ``PALETTE[c]`` is the official ARC colour of value ``c`` (0 black, 1 blue, 2 red,
    3 green, 4 yellow, 5 grey, 6 magenta, 7 orange, 8 azure, 9 maroon). Padding
    (the pad token, default 10) is never drawn black: it is white with a grey hatch.

Images
    :func:`grid` draws one pixel per cell (``imshow`` of an ``H x W x 3`` array whose
    every pixel is exactly ``PALETTE_RGB[value]``) with thin vector cell lines, so
    PDF/SVG output stays sharp. :func:`gallery` instead tiles hundreds of
    truth / prediction / difference triples into one RGBA image per figure (a single
    image artist, labels written into the pixels), which is tens of times faster than
    one Axes per grid.

Difference panel
    Cell ``(r, c)`` is marked wrong iff ``truth[r, c] != prediction[r, c]``; it is only
    defined when the shapes agree. A shape mismatch (or a missing prediction) is
    stated in words instead.
"""
from __future__ import annotations

import io
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .grids import COLOR_NAMES, PAD_TOKEN, check_pad_token

__all__ = [
    "PALETTE", "PALETTE_RGB", "COLOR_NAMES", "PAD_COLOR", "PAD_HATCH_COLOR", "LINE_COLOR",
    "DIFF_OK_COLOR", "DIFF_WRONG_COLOR", "SINGLE_COLUMN", "DOUBLE_COLUMN", "STYLE",
    "grid_image", "diff_mask", "grid", "pair", "task", "gallery", "gallery_items",
    "gallery_pages", "color_accuracy", "confusion_heatmap",
    "breakdown_bars", "pass_at_k", "compare", "paper_style",
    "figsize", "save", "GridView", "PairView", "TaskView", "view", "enable_rich_display",
]

# ------------------------------------------------------------------ palette
#: Official ARC colours, index = cell value.
PALETTE = ("#000000", "#0074D9", "#FF4136", "#2ECC40", "#FFDC00",
           "#AAAAAA", "#F012BE", "#FF851B", "#7FDBFF", "#870C25")


def _rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))


#: ``PALETTE`` as a ``(10, 3)`` uint8 array.
PALETTE_RGB = np.array([_rgb(c) for c in PALETTE], dtype=np.uint8)
PALETTE_RGB.setflags(write=False)

#: Padding cells: white under a grey hatch (never black, never an ARC colour).
PAD_COLOR = "#FFFFFF"
PAD_HATCH_COLOR = "#B4B4B4"
#: Thin lines between cells.
LINE_COLOR = "#555555"
#: Difference panel: a correct cell / a wrong cell.
DIFF_OK_COLOR = "#EBEBEB"
DIFF_WRONG_COLOR = "#D62728"
#: Shape mismatch hatch in galleries.
_MISMATCH_COLOR = "#FFFFFF"
_MISMATCH_HATCH = "#D62728"
_BACKGROUND = "#FFFFFF"
_RIGHT = "#1A9850"
_WRONG = "#D62728"

#: Column widths in inches (single- and double-column paper figures).
SINGLE_COLUMN = 3.5
DOUBLE_COLUMN = 7.2

#: Name of the packaged style: ``plt.style.context(arcnb.plot.STYLE)``.
STYLE = "arcnb.paper"
_STYLE_PATH = Path(__file__).with_name("paper.mplstyle")

# token layout of the gallery's look-up table (values 0-9 are the ARC colours)
(_T_PAD, _T_BG, _T_OK, _T_WRONG, _T_MISMATCH, _T_LINE, _T_DIFF_LINE, _T_PAD_HATCH,
 _T_MISMATCH_HATCH) = range(10, 19)
_LUT = np.array([_rgb(c) for c in PALETTE]
                + [_rgb(c) for c in (PAD_COLOR, _BACKGROUND, DIFF_OK_COLOR, DIFF_WRONG_COLOR,
                                     _MISMATCH_COLOR, LINE_COLOR, "#C8C8C8", PAD_HATCH_COLOR,
                                     _MISMATCH_HATCH)], dtype=np.uint8)
_LUT4 = np.ascontiguousarray(np.concatenate([_LUT, np.full((len(_LUT), 1), 255, np.uint8)], axis=1))


# ------------------------------------------------------------------ helpers
def _plt():
    # pyplot picks a non-interactive backend (Agg) by itself when there is no display
    import matplotlib.pyplot as plt

    return plt


def _as_array(g: Any, *, pad_token: int | None = PAD_TOKEN, name: str = "grid") -> np.ndarray:
    """A 2-D int array with values 0-9 (or the pad token). Accepts lists, numpy, torch."""
    if g is None:
        raise ValueError(f"{name} is None")
    if hasattr(g, "detach"):
        g = g.detach().cpu().numpy()
    arr = np.asarray(g)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D grid, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    ok = (arr >= 0) & (arr <= 9)
    if pad_token is not None:
        ok |= arr == pad_token
    if not ok.all():
        bad = arr[~ok].ravel()[0]
        extra = "" if pad_token is None else f" or the pad token {pad_token}"
        raise ValueError(f"{name} holds value {bad} outside the ARC colours 0-9{extra}")
    return arr


def _shape(g: np.ndarray) -> str:
    return f"{g.shape[0]}x{g.shape[1]}"


def grid_image(g: Any, *, pad_token: int | None = PAD_TOKEN) -> np.ndarray:
    """The ``H x W x 3`` uint8 image of a grid: ``PALETTE_RGB[g]`` per cell.

    Pad cells (value ``pad_token``) get :data:`PAD_COLOR` (white; :func:`grid` adds a
    hatch over them), never black.
    """
    pad_token = check_pad_token(pad_token)
    arr = _as_array(g, pad_token=pad_token)
    lut = np.vstack([PALETTE_RGB, np.array([_rgb(PAD_COLOR)], np.uint8)])
    idx = np.where(arr == pad_token, 10, arr) if pad_token is not None else arr
    return lut[idx]


def diff_mask(truth: Any, pred: Any) -> np.ndarray | None:
    """Boolean ``H x W`` mask of the wrong cells (``truth != pred``), or None when the
    prediction is missing or its shape differs from the truth's."""
    t = _as_array(truth, name="truth")
    if pred is None:
        return None
    p = _as_array(pred, name="prediction")
    if p.shape != t.shape:
        return None
    return t != p


def _mismatch_text(truth: np.ndarray, pred: np.ndarray | None) -> str:
    if pred is None:
        return "no prediction"
    return f"shape mismatch: truth {_shape(truth)}, prediction {_shape(pred)}"


def _contrast(rgb: np.ndarray) -> np.ndarray:
    """Black or white text per colour (relative luminance threshold)."""
    lum = (0.2126 * rgb[..., 0] + 0.7152 * rgb[..., 1] + 0.0722 * rgb[..., 2]) / 255.0
    return lum < 0.5


# ------------------------------------------------------------------ grid
def grid(g: Any, *, ax=None, values: bool = False, lines: bool = True, title: str | None = None,
         label: bool = True, pad_token: int | None = PAD_TOKEN, linewidth: float = 0.5,
         border_color: str | None = None, fontsize: float | None = None):
    """Draw one grid and return the Axes.

    One ``imshow`` of :func:`grid_image` (exact palette colours, one pixel per cell,
    no interpolation), thin cell lines as one line collection, pad cells hatched,
    optional cell values (``values=True``) and the shape ``HxW`` in the title
    (``label=True``; the title is ``"{title} HxW"``).
    """
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.patches import Rectangle

    pad_token = check_pad_token(pad_token)
    arr = _as_array(g, pad_token=pad_token)
    img = grid_image(arr, pad_token=pad_token)
    if ax is None:
        plt = _plt()
        h, w = arr.shape
        scale = 2.4 / max(h, w)
        _, ax = plt.subplots(figsize=(max(1.0, w * scale + 0.3), max(1.0, h * scale + 0.45)))
    h, w = arr.shape
    ax.imshow(img, interpolation="nearest", resample=False, extent=(-0.5, w - 0.5, h - 0.5, -0.5))
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(h - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    if pad_token is not None and (arr == pad_token).any():
        rr, cc = np.nonzero(arr == pad_token)
        rects = [Rectangle((c - 0.5, r - 0.5), 1, 1) for r, c in zip(rr, cc)]
        ax.add_collection(PatchCollection(rects, facecolor="none", edgecolor=PAD_HATCH_COLOR,
                                          hatch="////", linewidth=0, gid="arcnb-padding"))
    if lines:
        segs = [((-0.5, y - 0.5), (w - 0.5, y - 0.5)) for y in range(h + 1)]
        segs += [((x - 0.5, -0.5), (x - 0.5, h - 0.5)) for x in range(w + 1)]
        ax.add_collection(LineCollection(segs, colors=LINE_COLOR, linewidths=linewidth,
                                         gid="arcnb-cell-lines"))
    if values:
        dark = _contrast(img.astype(float))
        fs = max(3.0, min(9.0, 60.0 / max(h, w)))
        for r in range(h):
            for c in range(w):
                v = arr[r, c]
                ax.text(c, r, "·" if v == pad_token else str(v), ha="center", va="center",
                        fontsize=fs, color="white" if dark[r, c] else "black")
    for s in ax.spines.values():
        s.set_visible(border_color is not None)
        if border_color is not None:
            s.set_edgecolor(border_color)
            s.set_linewidth(2.0)
    if label or title:
        parts = [p for p in (title, _shape(arr) if label else None) if p]
        ax.set_title(" ".join(parts), fontsize=fontsize)
    return ax


def _diff_panel(ax, truth: np.ndarray, pred: np.ndarray | None, *, title: str = "difference",
                lines: bool = True, linewidth: float = 0.5, fontsize: float | None = None):
    """Draw the difference panel; returns the number of wrong cells or None."""
    from matplotlib.collections import LineCollection

    mask = diff_mask(truth, pred)
    h, w = truth.shape
    ax.set_xticks([])
    ax.set_yticks([])
    if mask is None:
        ax.set_xlim(-0.5, w - 0.5)
        ax.set_ylim(h - 0.5, -0.5)
        ax.set_aspect("equal")
        msg = _mismatch_text(truth, pred)
        ax.text(0.5, 0.5, msg.replace(": ", ":\n").replace(", ", ",\n"), transform=ax.transAxes,
                ha="center", va="center", fontsize=8, color=_WRONG, wrap=True, gid="arcnb-mismatch")
        ax.set_title(f"{title}\nshape mismatch" if pred is not None else f"{title}\nno prediction",
                     fontsize=fontsize)
        for s in ax.spines.values():
            s.set_edgecolor(_WRONG)
        return None
    img = np.empty((h, w, 3), np.uint8)
    img[...] = _rgb(DIFF_OK_COLOR)
    img[mask] = _rgb(DIFF_WRONG_COLOR)
    ax.imshow(img, interpolation="nearest", resample=False, extent=(-0.5, w - 0.5, h - 0.5, -0.5))
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(h - 0.5, -0.5)
    ax.set_aspect("equal")
    if lines:
        segs = [((-0.5, y - 0.5), (w - 0.5, y - 0.5)) for y in range(h + 1)]
        segs += [((x - 0.5, -0.5), (x - 0.5, h - 0.5)) for x in range(w + 1)]
        ax.add_collection(LineCollection(segs, colors="#BBBBBB", linewidths=linewidth))
    n = int(mask.sum())
    ax.set_title(f"{title}\n{n} of {mask.size} cells wrong" if n else f"{title}\nall cells right",
                 fontsize=fontsize)
    for s in ax.spines.values():
        s.set_visible(False)
    return n


def pair(truth: Any, pred: Any, *, axes=None, values: bool = False, lines: bool = True,
         titles: Sequence[str] = ("truth", "prediction", "difference"), suptitle: str | None = None):
    """Truth | prediction | difference, returned as a Figure.

    The difference panel paints cell ``(r, c)`` in :data:`DIFF_WRONG_COLOR` iff
    ``truth[r, c] != pred[r, c]`` and every other cell in :data:`DIFF_OK_COLOR`; its title
    counts the wrong cells. When the shapes differ (or ``pred`` is None) no cell is
    marked and the panel states ``"shape mismatch: truth HxW, prediction HxW"`` (or
    ``"no prediction"``). ``axes`` is an optional sequence of three Axes.
    """
    t = _as_array(truth, name="truth")
    p = None if pred is None else _as_array(pred, name="prediction")
    if axes is None:
        plt = _plt()
        fig, axes = plt.subplots(1, 3, figsize=(DOUBLE_COLUMN * 0.75, 2.4), layout="constrained")
    else:
        axes = list(axes)
        if len(axes) != 3:
            raise ValueError(f"pair() needs 3 axes (truth, prediction, difference), got {len(axes)}")
        fig = axes[0].figure
    grid(t, ax=axes[0], values=values, lines=lines, title=titles[0])
    if p is None:
        axes[1].set_xticks([])
        axes[1].set_yticks([])
        axes[1].text(0.5, 0.5, "no prediction", transform=axes[1].transAxes, ha="center",
                     va="center", color=_WRONG)
        axes[1].set_title(titles[1])
    else:
        grid(p, ax=axes[1], values=values, lines=lines, title=titles[1])
    _diff_panel(axes[2], t, p, title=titles[2], lines=lines)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


# ------------------------------------------------------------------ task
def _task_attempts(task, predictions) -> list[list[np.ndarray | None]]:
    """Normalise ``predictions`` to one list of attempts per test input of ``task``."""
    n = len(task.test)
    if predictions is None:
        return [[] for _ in range(n)]
    from .predictions import Predictions, load_predictions
    from .scoring import Results

    if isinstance(predictions, Results):
        return [list(predictions.attempts(task.id, i)) for i in range(n)]
    if isinstance(predictions, Predictions):
        return [list(predictions.get(task.id, i)) for i in range(n)]
    if isinstance(predictions, Mapping):
        if task.id in predictions:
            preds = load_predictions({task.id: predictions[task.id]})
        else:
            preds = load_predictions(dict(predictions))
        return [list(preds.get(task.id, i)) for i in range(n)]
    if isinstance(predictions, (list, tuple)):
        if len(predictions) and isinstance(predictions[0], Mapping):  # ARC Prize entries
            preds = load_predictions({task.id: list(predictions)})
            return [list(preds.get(task.id, i)) for i in range(n)]
        out = []
        for i in range(n):
            atts = predictions[i] if i < len(predictions) else []
            if atts is None or (hasattr(atts, "ndim") and np.asarray(atts).ndim == 2):
                atts = [atts]
            out.append([None if a is None else _as_array(a, name="attempt") for a in atts])
        return out
    raise TypeError("predictions must be None, Results, Predictions, an ARC Prize dict or a "
                    f"list of attempts per test input, got {type(predictions).__name__}")


def task(t, predictions=None, *, values: bool = False, lines: bool = True,
         max_attempts: int | None = None, cell: float = 1.3, fontsize: float = 7, fig=None):
    """Draw a task: each demonstration pair (input, output), then each test input with
    its truth and the attempts, each attempt marked right (green ✓) or wrong (red ✗).

    ``predictions`` may be a :class:`~arcnb.scoring.Results`, a
    :class:`~arcnb.predictions.Predictions`, an ARC Prize dict, or a list with one list
    of attempt grids per test input. An attempt is right iff it equals the truth
    exactly (same shape and every cell). Returns the Figure.
    """
    attempts = _task_attempts(t, predictions)
    if max_attempts is not None:
        attempts = [a[:max_attempts] for a in attempts]
    n_att = max((len(a) for a in attempts), default=0)
    ncols = max(2, 2 + n_att)
    nrows = len(t.train) + len(t.test)
    if fig is None:
        plt = _plt()
        fig = plt.figure(figsize=(ncols * cell, nrows * (cell + 0.25)), layout="constrained")
    axs = np.atleast_2d(fig.subplots(nrows, ncols, squeeze=False))
    for ax in axs.ravel():
        ax.set_axis_off()
    kw = dict(values=values, lines=lines, fontsize=fontsize)
    for r, p in enumerate(t.train):
        grid(p.input, ax=axs[r, 0], title=f"demo {r + 1} input", **kw)
        axs[r, 0].set_axis_on()
        if p.output is not None:
            grid(p.output, ax=axs[r, 1], title=f"demo {r + 1} output", **kw)
            axs[r, 1].set_axis_on()
    for i, p in enumerate(t.test):
        r = len(t.train) + i
        grid(p.input, ax=axs[r, 0], title=f"test {i + 1} input", **kw)
        axs[r, 0].set_axis_on()
        truth = p.output
        if truth is not None:
            grid(truth, ax=axs[r, 1], title=f"test {i + 1} truth", **kw)
            axs[r, 1].set_axis_on()
        for j, a in enumerate(attempts[i]):
            ax = axs[r, 2 + j]
            ax.set_axis_on()
            if a is None:
                ax.set_xticks([])
                ax.set_yticks([])
                ax.text(0.5, 0.5, "invalid", transform=ax.transAxes, ha="center", va="center",
                        color=_WRONG, fontsize=fontsize)
                ax.set_title(f"attempt {j + 1} ✗ wrong\ninvalid grid", color=_WRONG,
                             fontsize=fontsize)
                continue
            if truth is None:
                grid(a, ax=ax, title=f"attempt {j + 1}", **kw)
                continue
            right = a.shape == truth.shape and np.array_equal(a, truth)
            color = _RIGHT if right else _WRONG
            grid(a, ax=ax, label=False, border_color=color, **kw)
            if right:
                note = f"✓ right\n{_shape(a)}"
            elif a.shape != truth.shape:
                note = f"✗ wrong\nshape {_shape(a)}"
            else:
                note = f"✗ wrong\n{np.mean(a == truth):.2f} of cells right"
            ax.set_title(f"attempt {j + 1} {note}", color=color, fontsize=fontsize)
    fig.suptitle(f"task {t.id}", fontsize=fontsize + 1)
    return fig


# ------------------------------------------------------------------ gallery
def _best_attempt(truth: np.ndarray, attempts: Sequence, max_k: int) -> tuple[int | None, Any]:
    """The attempt a gallery shows for ``attempt="best"``.

    Among the first ``max_k`` attempts: the first exactly correct one; else the
    same-shape attempt with the highest cell accuracy (the first on ties; this is the
    attempt behind ``Results.outputs["cell_accuracy"]``); else the first valid attempt.
    Returns ``(0-based index, grid)`` or ``(None, None)``.
    """
    considered = list(attempts)[:max_k]
    best, best_acc = None, -1.0
    for j, g in enumerate(considered):
        if g is not None and g.shape == truth.shape:
            acc = float(np.mean(g == truth))
            if acc == 1.0:
                return j, g
            if acc > best_acc:
                best, best_acc = j, acc
    if best is not None:
        return best, considered[best]
    for j, g in enumerate(considered):
        if g is not None:
            return j, g
    return None, None


def _category_lists(results, categories) -> dict[str, list[str]] | None:
    out = results.outputs
    if categories is None:
        for col in ("categories", "category"):
            if col in out.columns:
                categories = col
                break
        else:
            return None
    if isinstance(categories, str):
        if categories not in out.columns:
            raise ValueError(f"results.outputs has no column {categories!r} to select categories by")
        mapping: dict[str, list[str]] = {}
        for tid, v in zip(out["task_id"], out[categories]):
            mapping.setdefault(tid, [])
            mapping[tid].extend(_as_list(v))
        return mapping
    if isinstance(categories, Mapping):
        return {str(k): _as_list(v) for k, v in categories.items()}
    raise TypeError("categories must be a column name of results.outputs or a mapping "
                    "{task_id: [category, ...]}")


def _as_list(v) -> list[str]:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return []
    if isinstance(v, str):
        return [v]
    return [str(x) for x in v]


def gallery_items(results, select: str = "failed", *, tasks: Iterable[str] | None = None,
                  category: str | Sequence[str] | None = None, categories=None,
                  near_miss: float = 0.9, k: int = 2, sort: str | None = None,
                  max_items: int | None = None, rows=None):
    """The rows of ``results.outputs`` a gallery draws, in drawing order.

    ``select``: ``"all"``; ``"solved"`` (``solved@k``); ``"failed"`` (not ``solved@k``);
    ``"near_miss"`` (not solved but ``cell_accuracy >= near_miss``). ``tasks`` keeps
    only these task ids. ``category`` keeps tasks carrying that category (or any of
    several), looked up in ``categories`` (a mapping ``{task_id: [categories]}`` or a
    column of ``results.outputs``; by default a ``categories`` or ``category`` column).
    ``sort``: None (task id, test index) or ``"cell_accuracy"`` (descending).
    ``rows`` replaces the table (e.g. a filtered copy of ``results.outputs``).
    """
    out = results.outputs if rows is None else rows
    col = f"solved@{k}"
    if col not in out.columns:
        raise ValueError(f"no column {col!r} in the outputs table (scored ks: {results.ks})")
    if select == "all":
        keep = np.ones(len(out), bool)
    elif select == "solved":
        keep = out[col].to_numpy(bool)
    elif select == "failed":
        keep = ~out[col].to_numpy(bool)
    elif select in ("near_miss", "near-miss"):
        acc = out["cell_accuracy"].to_numpy(float)
        keep = ~out[col].to_numpy(bool) & (np.nan_to_num(acc, nan=-1.0) >= near_miss)
    else:
        raise ValueError(f"select must be 'all', 'solved', 'failed' or 'near_miss', got {select!r}")
    if tasks is not None:
        tasks = [tasks] if isinstance(tasks, str) else list(tasks)
        unknown = sorted(set(tasks) - set(out["task_id"]))
        if unknown and rows is None:
            raise ValueError(f"task ids not in the results: {', '.join(unknown[:5])}")
        keep &= out["task_id"].isin(tasks).to_numpy()
    if category is not None:
        mapping = _category_lists(results, categories)
        if mapping is None:
            raise ValueError("no category information: pass categories={task_id: [...]} or a "
                             "column name of results.outputs")
        wanted = {category} if isinstance(category, str) else set(category)
        keep &= np.array([bool(wanted & set(mapping.get(t, []))) for t in out["task_id"]], bool)
    sel = out[keep]
    if sort == "cell_accuracy":
        sel = sel.sort_values(["cell_accuracy", "task_id", "test_index"],
                              ascending=[False, True, True], na_position="last", kind="mergesort")
    elif sort is not None:
        raise ValueError(f"sort must be None or 'cell_accuracy', got {sort!r}")
    if max_items is not None:
        sel = sel.iloc[:max_items]
    return sel


def _render_tiles(triples: list[tuple[np.ndarray, np.ndarray | None]], slot: int,
                  lines: bool = True) -> np.ndarray:
    """Render N (truth, prediction) pairs into ``[N, 3, slot, slot]`` uint8 *tokens*
    (indices into ``_LUT``: colours 0-9, padding, background, difference, lines, hatch).

    Each triple uses one cell size ``c = (slot - 1) // max(dims of truth and prediction)``
    for its three panels (so the panels are comparable); grids are top-left aligned,
    with a 1-px line around every cell (only the outer border when ``c`` is 2 or 3,
    none when ``c == 1``). The
    difference panel holds ``_T_WRONG`` exactly where ``truth != prediction`` and
    ``_T_OK`` elsewhere; a missing prediction or a shape mismatch fills the truth's area
    with a red hatch instead. All pixel work is batched over the grids that share a
    cell size (one numpy pass per distinct ``c``).
    """
    n = len(triples)
    tiles = np.full((n, 3, slot, slot), _T_BG, np.uint8)
    if n == 0:
        return tiles
    dims = np.array([max(t.shape + (p.shape if p is not None else ())) for t, p in triples])
    cells = np.maximum(1, (slot - 1) // dims)
    for c in np.unique(cells):
        idx = np.flatnonzero(cells == c)
        m = len(idx)
        Hm = max(max(triples[i][0].shape[0], 0 if triples[i][1] is None else triples[i][1].shape[0])
                 for i in idx)
        Wm = max(max(triples[i][0].shape[1], 0 if triples[i][1] is None else triples[i][1].shape[1])
                 for i in idx)
        G = np.full((3, m, Hm, Wm), _T_BG, np.uint8)  # truth, prediction, difference
        shapes = np.zeros((3, m, 2), np.int64)
        for j, i in enumerate(idx):  # stacking only; all pixel work below is batched
            t, p = triples[i]
            G[0, j, : t.shape[0], : t.shape[1]] = t
            shapes[0, j] = shapes[2, j] = t.shape
            if p is not None:
                G[1, j, : p.shape[0], : p.shape[1]] = p
                shapes[1, j] = p.shape
        same = (shapes[0] == shapes[1]).all(axis=1)  # [m]
        in_truth = G[0] != _T_BG
        G[2] = np.where(G[0] == G[1], _T_OK, _T_WRONG)
        G[2][~same] = _T_MISMATCH
        G[2][~in_truth] = _T_BG
        G = G.reshape(3 * m, Hm, Wm)
        shapes = shapes.reshape(3 * m, 2)
        ph, pw = min(Hm * c + 1, slot), min(Wm * c + 1, slot)
        yy = np.minimum(np.arange(ph) // c, Hm - 1)
        xx = np.minimum(np.arange(pw) // c, Wm - 1)
        pix = G[:, yy[:, None], xx[None, :]]  # [3m, ph, pw] upsampled tokens
        ys, xs = np.arange(ph)[None, :, None], np.arange(pw)[None, None, :]
        hh = shapes[:, 0][:, None, None] * c
        ww = shapes[:, 1][:, None, None] * c
        stripes = ((ys + xs) % 6) < 2
        pix[(pix == _T_PAD) & stripes] = _T_PAD_HATCH
        pix[(pix == _T_MISMATCH) & stripes] = _T_MISMATCH_HATCH
        if lines and c >= 4:
            on_line = (ys % c == 0) | (xs % c == 0)
        elif c >= 2:  # too small for cell lines: only the outer border
            on_line = (ys == 0) | (xs == 0) | (ys == hh) | (xs == ww)
        else:  # one pixel per cell: no room for any line
            on_line = np.zeros((1, 1, 1), bool)
        line = on_line & (ys <= hh) & (xs <= ww) & (hh > 0)
        is_diff = (np.arange(3 * m) >= 2 * m)[:, None, None]
        pix[line & ~is_diff] = _T_LINE
        pix[line & is_diff] = _T_DIFF_LINE
        panel = np.repeat(np.arange(3), m)
        tiles[np.tile(idx, 3), panel, :ph, :pw] = pix
    return tiles


def _fmt_acc(acc: float) -> str:
    return "n/a" if acc is None or not np.isfinite(acc) else f"{acc:.3f}"


class _PixelFont:
    """Text rasterised straight into an RGB(A) array: glyphs rendered once by FreeType
    (DejaVu Sans, shipped with matplotlib), then placed for all strings at once.

    Drawing hundreds of matplotlib Text artists costs several ms each; a gallery's
    labels are composed here in a few numpy operations instead.
    """

    _cache: dict = {}

    def __new__(cls, size_pt: float, dpi: float):
        key = (float(size_pt), float(dpi))
        if key not in cls._cache:
            self = super().__new__(cls)
            self._init(size_pt, dpi)
            cls._cache[key] = self
        return cls._cache[key]

    def _init(self, size_pt: float, dpi: float) -> None:
        from matplotlib import font_manager as fm
        from matplotlib.ft2font import FT2Font

        self.font = FT2Font(fm.findfont(fm.FontProperties(family="DejaVu Sans")))
        self.font.set_size(size_pt, dpi)
        px = size_pt * dpi / 72.0
        em = self.font.units_per_EM
        self.ascent = int(np.ceil(self.font.ascender * px / em))
        self.height = self.ascent + int(np.ceil(-self.font.descender * px / em)) + 1
        # per glyph: ink bitmap, its offset from (pen x, line top), advance
        self.glyphs: dict[str, tuple[np.ndarray, int, int, float]] = {}

    def _glyph(self, ch: str):
        g = self.glyphs.get(ch)
        if g is None:
            from matplotlib.ft2font import LoadFlags

            gl = self.font.load_char(ord(ch), flags=LoadFlags.NO_HINTING)
            adv = gl.linearHoriAdvance / 65536.0
            top = max(0, self.ascent - int(np.ceil(gl.horiBearingY / 64.0)))
            buf = np.zeros((self.height + 2, int(np.ceil(adv)) + 8), np.uint8)
            self.font.draw_glyph_to_bitmap(buf, 3, top, gl)
            rows, cols = np.nonzero(buf)
            if rows.size:
                ink = buf[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
                g = (ink, int(cols.min()) - 3, int(rows.min()), adv)
            else:
                g = (np.zeros((0, 0), np.uint8), 0, 0, adv)
            self.glyphs[ch] = g
        return g

    def width(self, text: str) -> int:
        return int(np.ceil(sum(self._glyph(c)[3] for c in text)))

    def draw_many(self, canvas: np.ndarray, items) -> None:
        """Blend many strings into ``canvas`` (``H x W x 3|4`` uint8, in place).

        ``items``: ``(x, y, text, colour, anchor, background)`` with (x, y) the top-left
        (``anchor="left"``) or top-centre (``"center"``) of the line; ``background`` a
        colour to fill the text's box with first, or None.
        """
        H, W = canvas.shape[:2]
        by_color: dict[str, dict[str, list]] = {}
        for x, y, text, color, anchor, background in items:
            adv = np.array([self._glyph(c)[3] for c in text], float)
            w = int(np.ceil(adv.sum()))
            if anchor == "center":
                x = int(round(x - w / 2))
            if background is not None:
                canvas[max(0, y):max(0, min(H, y + self.height)),
                       max(0, x - 1):max(0, min(W, x + w + 1)), :3] = _rgb(background)
            pens = x + np.round(np.concatenate([[0.0], np.cumsum(adv)[:-1]])).astype(int)
            per = by_color.setdefault(color, {})
            for ch, px in zip(text, pens):
                per.setdefault(ch, []).append((px, y))
        flat_rgb = canvas.reshape(H * W, canvas.shape[2])
        for color, per in by_color.items():
            alpha = np.zeros(H * W, np.uint8)
            touched = []
            for ch, pos in per.items():
                ink, dx, dy, _ = self._glyph(ch)
                if ink.size == 0:
                    continue
                pos = np.asarray(pos)
                h, w = ink.shape
                Y = pos[:, 1][:, None, None] + dy + np.arange(h)[None, :, None]
                X = pos[:, 0][:, None, None] + dx + np.arange(w)[None, None, :]
                Y, X = np.broadcast_arrays(Y, X)
                vals = np.broadcast_to(ink, Y.shape)
                ok = (Y >= 0) & (Y < H) & (X >= 0) & (X < W) & (vals > 0)
                flat = Y[ok] * W + X[ok]
                np.maximum.at(alpha, flat, vals[ok])
                touched.append(flat)
            if not touched:
                continue
            # blend at the inked pixels only (a pixel listed twice gets the same value twice)
            flat = np.concatenate(touched)
            a = alpha[flat].astype(np.float32)[:, None] / 255.0
            px = flat_rgb[flat, :3].astype(np.float32)
            flat_rgb[flat, :3] = (px * (1.0 - a) + np.array(_rgb(color), np.float32) * a
                                  + 0.5).astype(np.uint8)


_EXACT_IMAGE = None


def _exact_image_class():
    """An AxesImage that hands its RGBA uint8 array to a raster renderer untouched when
    the array maps 1:1 onto device pixels (no resampling pass, the costly part of
    drawing a large image); in every other case it draws exactly like AxesImage."""
    global _EXACT_IMAGE
    if _EXACT_IMAGE is None:
        from matplotlib.image import AxesImage
        from matplotlib.transforms import IdentityTransform

        class ExactImage(AxesImage):
            def make_image(self, renderer, magnification=1.0, unsampled=False):
                A = self._A
                if (not unsampled and magnification == 1.0 and A is not None and A.ndim == 3
                        and A.shape[2] == 4 and A.dtype == np.uint8
                        and self._get_scalar_alpha() == 1.0):
                    x1, x2, y1, y2 = self.get_extent()
                    (l, b), (r, t) = self.get_transform().transform([[x1, y1], [x2, y2]])
                    h, w = A.shape[:2]
                    exact = (abs((r - l) - w) < 1e-6 and abs((t - b) - h) < 1e-6
                             and abs(l - round(l)) < 1e-6 and abs(b - round(b)) < 1e-6)
                    if exact:
                        fig_bbox = self.get_figure(root=True).bbox
                        inside = (l >= -1e-6 and b >= -1e-6 and r <= fig_bbox.width + 1e-6
                                  and t <= fig_bbox.height + 1e-6)
                        if inside:
                            # raster renderers take the rows bottom-up
                            return (np.ascontiguousarray(A[::-1]), round(l), round(b),
                                    IdentityTransform())
                return super().make_image(renderer, magnification, unsampled=unsampled)

        _EXACT_IMAGE = ExactImage
    return _EXACT_IMAGE


def gallery(results, select: str = "failed", *, tasks=None, category=None, categories=None,
            near_miss: float = 0.9, k: int = 2, sort: str | None = None,
            max_items: int | None = None, rows=None, attempt: str | int = "best",
            ncols: int | None = None, slot: int = 64, dpi: int = 100, lines: bool = True,
            text: str = "pixels", fontsize: float = 7.5, title: str | None = None, fig=None):
    """Many truth | prediction | difference triples in one figure, drawn fast.

    The triples chosen by :func:`gallery_items` (same selection arguments) are rendered
    into one RGBA image shown by one image artist (see :func:`_render_tiles`), each
    panel in a square slot of ``slot`` pixels, labelled ``"{task_id} test {i}"`` over
    ``"cell acc {a}"`` (plus ``attempt j`` when there are several attempts and ``✓``
    when solved@k).

    ``attempt`` is ``"best"`` (the first correct attempt, else the same-shape attempt
    behind the table's ``cell_accuracy``, else the first valid one) or a 1-based
    attempt number. The label's cell accuracy is that of the drawn attempt: the
    fraction of cells equal to the truth (``n/a`` when its shape is wrong or it is
    missing; the difference tile is then hatched red with the reason written on it).

    ``text="pixels"`` (default) writes the labels into the image (fast: hundreds of
    matplotlib Text artists take seconds to draw); ``text="artists"`` adds them as Text
    artists instead (searchable text in PDF/SVG, slower). Either way the label strings
    are in ``fig.arcnb_labels``, the drawn rows in ``fig.arcnb_items`` and the RGB image
    in ``fig.arcnb_image``. The figure's size equals the image's at ``dpi``, so a PNG
    saved at that dpi holds the image pixel for pixel. Returns the Figure.
    """
    items = gallery_items(results, select, tasks=tasks, category=category, categories=categories,
                          near_miss=near_miss, k=k, sort=sort, max_items=max_items, rows=rows)
    what = f"{select}, k={k}" if select != "all" else "all"
    return _gallery(results, items, what=what, k=k, attempt=attempt, ncols=ncols, slot=slot,
                    dpi=dpi, lines=lines, text=text, fontsize=fontsize, title=title, fig=fig)


def _gallery(results, items, *, what, k, attempt, ncols, slot, dpi, lines, text, fontsize,
             title, fig):
    if text not in ("pixels", "artists"):
        raise ValueError(f"text must be 'pixels' or 'artists', got {text!r}")
    if slot < 31:
        raise ValueError(f"slot must be at least 31 pixels (a 30x30 grid at one pixel per "
                         f"cell plus its border), got {slot}")
    if attempt != "best" and (isinstance(attempt, bool) or not isinstance(attempt, (int, np.integer))
                              or attempt < 1):
        raise ValueError(f"attempt must be 'best' or a 1-based attempt number, got {attempt!r}")
    max_k = max(results.ks)
    triples, heads, tails, notes = [], [], [], []
    solved_col = f"solved@{k}"
    for tid, i, solved in zip(items["task_id"], items["test_index"], items[solved_col]):
        truth = np.asarray(results.truth(tid, int(i)))
        atts = results.attempts(tid, int(i))
        if attempt == "best":
            j, p = _best_attempt(truth, atts, max_k)
        else:
            j, p = (attempt - 1, atts[attempt - 1]) if attempt <= len(atts) else (None, None)
        same = p is not None and p.shape == truth.shape
        acc = float(np.mean(p == truth)) if same else float("nan")
        tail = f"cell acc {_fmt_acc(acc)}"
        if j is not None and len(atts) > 1:
            tail += f"  attempt {j + 1}"
        if bool(solved):
            tail += "  ✓"
        heads.append(f"{tid} test {int(i)}")
        tails.append(tail)
        if p is None:
            notes.append(("no|prediction", "no|prediction"))
        elif not same:
            notes.append((None, f"shape mismatch|{_shape(truth)} vs|{_shape(p)}"))
        else:
            notes.append((None, None))
        triples.append((truth, p))
    labels = [f"{h}  {t}" for h, t in zip(heads, tails)]
    n = len(triples)
    if ncols is None:
        ncols = int(min(max(1, n), 5))
    nrows = max(1, -(-n // ncols))
    font = _PixelFont(fontsize, dpi)
    small_pt = max(4.0, fontsize - 1.5)
    small = _PixelFont(small_pt, dpi)
    gin, gout, gv, margin = 4, 18, 8, 8
    label_px = 2 * font.height + 2
    header_px = font.height + 6
    tiles = _render_tiles(triples, slot, lines=lines)  # [n, 3, S, S] tokens
    n_slots = nrows * ncols
    if n_slots > n:
        tiles = np.concatenate([tiles, np.full((n_slots - n, 3, slot, slot), _T_BG, np.uint8)])
    # tokens [N, 3, S, S] -> label band above, gaps right/below -> one canvas, by reshapes
    t = np.pad(tiles, ((0, 0), (0, 0), (label_px, gv), (0, gin)), constant_values=_T_BG)
    Y = t.shape[2]
    t = t.transpose(0, 2, 1, 3).reshape(n_slots, Y, 3 * t.shape[3])
    t = np.pad(t, ((0, 0), (0, 0), (0, gout - gin)), constant_values=_T_BG)
    Xb = t.shape[2]
    tok = t.reshape(nrows, ncols, Y, Xb).transpose(0, 2, 1, 3).reshape(nrows * Y, ncols * Xb)
    tok = np.pad(tok[:, : tok.shape[1] - gout], ((margin + header_px, margin), (margin, margin)),
                 constant_values=_T_BG)
    # the one colour look-up for the whole figure (RGBA gathered as 32-bit words)
    rgba = _LUT4.view(np.uint32).ravel()[tok].view(np.uint8).reshape(tok.shape + (4,))
    H, W = tok.shape
    head = (f"{title}: " if title else "") + f"{n} outputs ({what})" + \
        "   panels: truth | prediction | difference"
    text_items = [(margin, margin, head, "#000000", "left", None)]
    note_items = []
    if n == 0:
        text_items.append((W // 2, margin + header_px, "no outputs match the selection",
                           "#000000", "center", None))
    for q in range(n):
        r, cidx = divmod(q, ncols)
        x0 = margin + cidx * Xb
        y0 = margin + header_px + r * Y
        text_items.append((x0, y0, heads[q], "#222222", "left", None))
        text_items.append((x0, y0 + font.height, tails[q], "#222222", "left", None))
        for panel, note in ((1, notes[q][0]), (2, notes[q][1])):
            if note:
                xc = x0 + panel * (slot + gin) + slot // 2
                parts = note.split("|")
                yc = y0 + label_px + slot // 2 - (len(parts) * small.height) // 2
                for li, line in enumerate(parts):
                    note_items.append((xc, yc + li * small.height, line, _WRONG, "center",
                                       "#FFFFFF"))
    if text == "pixels":
        font.draw_many(rgba, text_items)
        small.draw_many(rgba, note_items)
    if fig is None:
        fig = _plt().figure(figsize=(W / dpi, H / dpi), dpi=dpi, layout="none")
    ax = fig.add_axes((0, 0, 1, 1))
    im = _exact_image_class()(ax, interpolation="nearest", resample=False, origin="upper",
                               extent=(-0.5, W - 0.5, H - 0.5, -0.5), gid="arcnb-gallery-image")
    im.set_data(rgba)
    ax.add_image(im)
    ax.set_xlim(-0.5, W - 0.5)
    ax.set_ylim(H - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_axis_off()
    if text == "artists":
        for x, y, s, color, anchor, bg in text_items + note_items:
            ax.text(x - 0.5, y - 0.5, s, fontsize=fontsize if bg is None else small_pt,
                    color=color, ha=anchor, va="top",
                    gid="arcnb-gallery-text", clip_on=False,
                    bbox=None if bg is None else dict(facecolor=bg, edgecolor="none", pad=0.5))
    fig.arcnb_png_compress_level = 3
    fig.arcnb_items = items.reset_index(drop=True)
    fig.arcnb_labels = labels
    fig.arcnb_image = rgba[..., :3]
    fig.arcnb_layout = {"slot": slot, "gap": gin, "block_width": Xb, "block_height": Y,
                        "label_px": label_px, "origin": (margin, margin + header_px),
                        "ncols": ncols}
    return fig


def gallery_pages(results, select: str = "failed", *, per_page: int = 100, tasks=None,
                  category=None, categories=None, near_miss: float = 0.9, k: int = 2,
                  sort: str | None = None, max_items: int | None = None, rows=None,
                  **kwargs) -> list:
    """:func:`gallery` split into figures of at most ``per_page`` triples each (same
    arguments); always at least one figure."""
    if per_page < 1:
        raise ValueError(f"per_page must be >= 1, got {per_page}")
    items = gallery_items(results, select, tasks=tasks, category=category, categories=categories,
                          near_miss=near_miss, k=k, sort=sort, max_items=max_items, rows=rows)
    what = f"{select}, k={k}" if select != "all" else "all"
    opts = dict(attempt="best", ncols=None, slot=64, dpi=100, lines=True, text="pixels",
                fontsize=7.5, title=None, fig=None)
    unknown = set(kwargs) - set(opts)
    if unknown:
        raise TypeError(f"gallery_pages() got unexpected arguments {sorted(unknown)}")
    opts.update(kwargs)
    figs = []
    n_pages = max(1, -(-len(items) // per_page))
    for p in range(n_pages):
        chunk = items.iloc[p * per_page:(p + 1) * per_page]
        o = dict(opts)
        o["title"] = f"{opts['title'] + ', ' if opts['title'] else ''}page {p + 1}/{n_pages}"
        figs.append(_gallery(results, chunk, what=what, k=k, **o))
    return figs


# ------------------------------------------------------------------ colour analysis
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
        from .breakdown import color_accuracy as _table

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
        from .breakdown import color_confusion

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
        sub = sub.set_index("_group").reindex(order)
        vals = sub[value].to_numpy(float)
        off = pos + (j - (len(hues) - 1) / 2) * width
        c = color if hv is None else cycle[j % len(cycle)]
        err = None
        if ci_low and ci_high:
            lo, hi = sub[ci_low].to_numpy(float), sub[ci_high].to_numpy(float)
            err = np.vstack([np.where(np.isfinite(lo), vals - lo, 0.0),
                             np.where(np.isfinite(hi), hi - vals, 0.0)])
            err = np.nan_to_num(err, nan=0.0)
        plot_vals = np.nan_to_num(vals, nan=0.0)
        kw = dict(color=c, label=None if hv is None else str(hv), edgecolor="none")
        if horizontal:
            ax.barh(off, plot_vals, height=width * 0.95, xerr=err,
                    error_kw=dict(ecolor="#333333", elinewidth=0.8, capsize=2), **kw)
        else:
            ax.bar(off, plot_vals, width=width * 0.95, yerr=err,
                   error_kw=dict(ecolor="#333333", elinewidth=0.8, capsize=2), **kw)
        for p, v in zip(off, vals):
            if not np.isfinite(v):
                if horizontal:
                    ax.text(0.01, p, "n/a", va="center", ha="left", fontsize=6)
                else:
                    ax.text(p, 0.01, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
    if n is not None and hue is None:
        nn = df.set_index("_group").reindex(order)[n]
        labels = [f"{g} (n={int(k)})" if pd.notna(k) else str(g) for g, k in zip(order, nn)]
    else:
        labels = [str(g) for g in order]
    lab = ylabel or value
    if horizontal:
        ax.set_yticks(pos, labels)
        ax.set_xlim(0, 1)
        ax.set_xlabel(lab)
        ax.invert_yaxis()
    else:
        ax.set_xticks(pos, labels, rotation=30 if max(map(len, labels), default=0) > 6 else 0,
                      ha="right" if max(map(len, labels), default=0) > 6 else "center")
        ax.set_ylim(0, 1)
        ax.set_ylabel(lab)
    if hue is not None:
        ax.legend(title=hue)
    return ax


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
        (line,) = ax.plot(x, y, marker="o", label=name or None)
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
    la, lb = labels
    if kind == "scatter":
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
    elif kind == "bars":
        cats = [f"{la} higher", "equal", f"{lb} higher"]
        vals = [int((x > y).sum()), int((x == y).sum()), int((y > x).sum())]
        ax.bar(cats, vals, color=["#0072B2", "#BBBBBB", "#E69F00"])
        for i, v in enumerate(vals):
            ax.text(i, v, str(v), ha="center", va="bottom", fontsize=7)
        ax.set_ylabel("tasks")
        ax.set_title(f"{metric} per task ({len(x)} tasks)")
    else:  # paired
        diff = y - x
        order = [i for i in np.lexsort((ids, -np.abs(diff))) if diff[i] != 0][:max_tasks]
        pos = np.arange(len(order))
        ax.barh(pos - 0.2, x[order], height=0.4, color="#0072B2", label=la)
        ax.barh(pos + 0.2, y[order], height=0.4, color="#E69F00", label=lb)
        ax.set_yticks(pos, [str(ids[i]) for i in order])
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel(metric)
        n_diff = int((diff != 0).sum())
        ax.set_title(f"{n_diff} of {len(x)} tasks differ" +
                     (f"; largest {len(order)} shown" if len(order) < n_diff else ""))
        if order:
            ax.legend()
    return ax


# ------------------------------------------------------------------ paper style and saving
@contextmanager
def paper_style():
    """Context manager applying the packaged paper style (same as
    ``plt.style.context("arcnb.paper")``)."""
    import matplotlib.pyplot as plt

    with plt.style.context(str(_STYLE_PATH)):
        yield


def figsize(columns: int = 1, aspect: float = 0.62) -> tuple[float, float]:
    """Figure size in inches for a single (3.5 in) or double (7.2 in) column figure;
    height = width x ``aspect``."""
    if columns not in (1, 2):
        raise ValueError(f"columns must be 1 or 2, got {columns!r}")
    w = SINGLE_COLUMN if columns == 1 else DOUBLE_COLUMN
    return (w, round(w * aspect, 3))


_FORMATS = {"pdf", "svg", "png"}


def save(fig, path: str | os.PathLike, *, format: str | None = None, dpi: float | str | None = None,
         overwrite: bool = False, compress_level: int | None = None, **kwargs) -> Path:
    """Write ``fig`` to ``path`` as PDF, SVG or PNG, deterministically and atomically.

    Same figure, same bytes: PDF without creation date, fonts embedded as TrueType
    (``pdf.fonttype`` 42); SVG without date, with a fixed ``svg.hashsalt`` (stable ids)
    and text kept as text (``svg.fonttype`` ``none``); PNG without software stamp
    beyond matplotlib's. The file is written via a temporary file and rename; an
    existing file is only replaced with ``overwrite=True``. ``dpi`` defaults to
    ``savefig.dpi`` (a gallery figure defaults to its own dpi, so its PNG keeps the
    image pixel for pixel). ``compress_level`` is the PNG zlib level (0-9; default 6,
    or the figure's ``arcnb_png_compress_level``: galleries use 3, which writes large
    images much faster for ~15% more bytes). A ``fig`` that is an Axes is resolved to
    its figure.
    """
    import matplotlib

    from .io import atomic_write_bytes

    if hasattr(fig, "get_figure") and not hasattr(fig, "savefig"):
        fig = fig.get_figure()
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in _FORMATS:
        raise ValueError(f"save() writes pdf, svg or png; got {fmt or 'no extension'!r} for {path}")
    if path.exists() and not overwrite:
        from .errors import OutputExistsError

        raise OutputExistsError(f"{path} already exists; refusing to overwrite it "
                                "(pass overwrite=True)")
    meta = {"pdf": {"CreationDate": None, "ModDate": None},
            "svg": {"Date": None},
            "png": {}}[fmt]
    meta.update(kwargs.pop("metadata", {}) or {})
    rc = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none",
          "svg.hashsalt": matplotlib.rcParams.get("svg.hashsalt") or "arcnb"}
    if fmt == "png":
        level = compress_level if compress_level is not None else \
            getattr(fig, "arcnb_png_compress_level", 6)
        pil = dict(kwargs.pop("pil_kwargs", None) or {})
        pil.setdefault("compress_level", int(level))
        kwargs["pil_kwargs"] = pil
    if dpi is None:
        dpi = "figure" if hasattr(fig, "arcnb_image") else matplotlib.rcParams["savefig.dpi"]
    buf = io.BytesIO()
    with matplotlib.rc_context(rc):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=meta, **kwargs)
    return atomic_write_bytes(path, buf.getvalue(), overwrite=overwrite)


# ------------------------------------------------------------------ rich display
def _png_bytes(draw, dpi: int = 100) -> bytes:
    """Render with a pyplot-free Figure (no window, no double display) to PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


class GridView:
    """A grid that displays as a picture in Jupyter (``_repr_png_``)."""

    def __init__(self, g, *, values: bool = False, title: str | None = None,
                 pad_token: int | None = PAD_TOKEN):
        self.grid = _as_array(g, pad_token=pad_token)
        self.values, self.title, self.pad_token = values, title, pad_token

    def _draw(self, fig):
        h, w = self.grid.shape
        s = 2.4 / max(h, w)
        fig.set_size_inches(max(1.2, w * s + 0.3), max(1.2, h * s + 0.5))
        grid(self.grid, ax=fig.add_subplot(), values=self.values, title=self.title,
             pad_token=self.pad_token)

    def _repr_png_(self) -> bytes:
        return _png_bytes(self._draw)

    def __repr__(self) -> str:
        return f"GridView({_shape(self.grid)})"


class PairView:
    """Truth | prediction | difference that displays as a picture (``_repr_png_``).
    With ``pred=None`` and a data :class:`~arcnb.data.Pair`, shows input | output."""

    def __init__(self, truth, pred=None, *, values: bool = False):
        from .data import Pair

        if isinstance(truth, Pair):
            self.is_pair, self.a, self.b = True, truth.input, truth.output
        else:
            self.is_pair, self.a, self.b = False, truth, pred
        self.values = values

    def _draw(self, fig):
        if self.is_pair:
            fig.set_size_inches(5.0, 2.6)
            axs = fig.subplots(1, 2)
            grid(self.a, ax=axs[0], values=self.values, title="input")
            if self.b is not None:
                grid(self.b, ax=axs[1], values=self.values, title="output")
            else:
                axs[1].set_axis_off()
        else:
            fig.set_size_inches(7.0, 2.6)
            pair(self.a, self.b, axes=fig.subplots(1, 3), values=self.values)

    def _repr_png_(self) -> bytes:
        return _png_bytes(self._draw)


class TaskView:
    """A task (optionally with predictions) that displays as a picture (``_repr_png_``)."""

    def __init__(self, t, predictions=None, *, values: bool = False, cell: float = 1.15):
        self.task, self.predictions, self.values, self.cell = t, predictions, values, cell

    def _draw(self, fig):
        attempts = _task_attempts(self.task, self.predictions)
        ncols = max(2, 2 + max((len(a) for a in attempts), default=0))
        nrows = len(self.task.train) + len(self.task.test)
        fig.set_size_inches(ncols * self.cell, nrows * (self.cell + 0.25))
        task(self.task, self.predictions, values=self.values, fig=fig)

    def _repr_png_(self) -> bytes:
        return _png_bytes(self._draw)

    def __repr__(self) -> str:
        return f"TaskView({self.task.id})"


def view(obj, predictions=None, **kwargs):
    """Wrap a grid, a :class:`~arcnb.data.Pair` or a :class:`~arcnb.data.Task` in a view
    that Jupyter shows as a picture when it is the last expression of a cell."""
    from .data import Pair, Task

    if isinstance(obj, Task):
        return TaskView(obj, predictions, **kwargs)
    if isinstance(obj, Pair):
        return PairView(obj, **kwargs)
    return GridView(obj, **kwargs)


def enable_rich_display(shell=None) -> bool:
    """Register PNG formatters so a :class:`~arcnb.data.Task` or
    :class:`~arcnb.data.Pair` that ends a notebook cell shows as a picture.

    Uses the running IPython shell (or ``shell``); returns False when there is none.
    Called automatically when ``arcnb.plot`` is imported inside IPython.
    """
    from .data import Pair, Task

    if shell is None:
        ipython = sys.modules.get("IPython")  # no IPython imported -> no shell running
        if ipython is None:
            return False
        shell = ipython.get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    png = shell.display_formatter.formatters["image/png"]
    png.for_type(Task, lambda t: TaskView(t)._repr_png_())
    png.for_type(Pair, lambda p: PairView(p)._repr_png_())
    return True


enable_rich_display()
