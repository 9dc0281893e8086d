"""Panels of single grids and tasks: :func:`grid` (one grid), :func:`pair`
(truth | prediction | difference) and :func:`task` (demonstrations, then each test
input with its truth and the attempts).

:func:`grid` draws one pixel per cell (``imshow`` of an ``H x W x 3`` array whose every
pixel is exactly ``PALETTE_RGB[value]``) with thin vector cell lines, so PDF/SVG output
stays sharp.

Difference panel
    Cell ``(r, c)`` is marked wrong iff ``truth[r, c] != prediction[r, c]``; it is only
    defined when the shapes agree. A shape mismatch (or a missing prediction) is stated
    in words instead.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ParameterError
from ..grids import PAD_TOKEN, cell_accuracy, check_pad_token, same_grid
from ..predictions import Predictions, load_predictions
from ..scoring import Results
from ..text import fmt_number
from .palette import (DIFF_OK_COLOR, DIFF_WRONG_COLOR, LINE_COLOR, PAD_HATCH_COLOR, RIGHT_COLOR,
                      WRONG_COLOR, as_grid_array, diff_mask, grid_image, hex_to_rgb, is_dark,
                      mismatch_text, pyplot, shape_text)
from .paper import DOUBLE_COLUMN
from .pixelfont import plain_label

__all__ = ["grid", "pair", "task"]


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
    arr = as_grid_array(g, pad_token=pad_token)
    img = grid_image(arr, pad_token=pad_token)
    if ax is None:
        plt = pyplot()
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
        dark = is_dark(img.astype(float))
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
        parts = [p for p in (plain_label(title) if title else None,
                             shape_text(arr) if label else None) if p]
        ax.set_title(" ".join(parts), fontsize=fontsize)
    return ax


def _diff_panel(ax, truth: np.ndarray, pred: np.ndarray | None, *, title: str = "difference",
                lines: bool = True, linewidth: float = 0.5, fontsize: float | None = None):
    """Draw the difference panel; returns the number of wrong cells or None."""
    from matplotlib.collections import LineCollection

    title = plain_label(title)

    mask = diff_mask(truth, pred)
    h, w = truth.shape
    ax.set_xticks([])
    ax.set_yticks([])
    if mask is None:
        ax.set_xlim(-0.5, w - 0.5)
        ax.set_ylim(h - 0.5, -0.5)
        ax.set_aspect("equal")
        msg = mismatch_text(truth, pred)
        ax.text(0.5, 0.5, msg.replace(": ", ":\n").replace(", ", ",\n"), transform=ax.transAxes,
                ha="center", va="center", fontsize=8, color=WRONG_COLOR, wrap=True,
                gid="arcnb-mismatch")
        ax.set_title(f"{title}\nshape mismatch" if pred is not None else f"{title}\nno prediction",
                     fontsize=fontsize)
        for s in ax.spines.values():
            s.set_edgecolor(WRONG_COLOR)
        return None
    img = np.empty((h, w, 3), np.uint8)
    img[...] = hex_to_rgb(DIFF_OK_COLOR)
    img[mask] = hex_to_rgb(DIFF_WRONG_COLOR)
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
    t = as_grid_array(truth, name="truth")
    p = None if pred is None else as_grid_array(pred, name="prediction")
    if axes is None:
        from .figures import new_subplots

        fig, axes = new_subplots(1, 3, figsize=(DOUBLE_COLUMN * 0.75, 2.4), layout="constrained")
    else:
        axes = list(axes)
        if len(axes) != 3:
            raise ParameterError(f"pair() needs 3 axes (truth, prediction, difference), got {len(axes)}")
        fig = axes[0].figure
    grid(t, ax=axes[0], values=values, lines=lines, title=titles[0])
    if p is None:
        axes[1].set_xticks([])
        axes[1].set_yticks([])
        axes[1].text(0.5, 0.5, "no prediction", transform=axes[1].transAxes, ha="center",
                     va="center", color=WRONG_COLOR)
        axes[1].set_title(plain_label(titles[1]))
    else:
        grid(p, ax=axes[1], values=values, lines=lines, title=titles[1])
    _diff_panel(axes[2], t, p, title=titles[2], lines=lines)
    if suptitle:
        fig.suptitle(plain_label(suptitle))
    return fig


# ------------------------------------------------------------------ task
def task_attempts(task, predictions) -> list[list[np.ndarray | None]]:
    """Normalise ``predictions`` to one list of attempts per test input of ``task``."""
    n = len(task.test)
    if predictions is None:
        return [[] for _ in range(n)]

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
            out.append([None if a is None else as_grid_array(a, name="attempt") for a in atts])
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
    attempts = task_attempts(t, predictions)
    if max_attempts is not None:
        attempts = [a[:max_attempts] for a in attempts]
    n_att = max((len(a) for a in attempts), default=0)
    ncols = max(2, 2 + n_att)
    nrows = len(t.train) + len(t.test)
    if fig is None:
        from .figures import new_figure

        fig = new_figure(figsize=(ncols * cell, nrows * (cell + 0.25)), layout="constrained")
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
            _attempt_panel(axs[r, 2 + j], j, a, truth, **kw)
    fig.suptitle(f"task {plain_label(t.id)}", fontsize=fontsize + 1)
    return fig


def _attempt_panel(ax, j: int, a: np.ndarray | None, truth: np.ndarray | None, *,
                   values: bool, lines: bool, fontsize: float) -> None:
    """Draw attempt ``j`` (0-based) of a test input; marked right (green ✓) iff it equals
    ``truth`` exactly, else wrong (red ✗); unmarked when the truth is unknown."""
    kw = dict(values=values, lines=lines, fontsize=fontsize)
    ax.set_axis_on()
    if a is None:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "invalid", transform=ax.transAxes, ha="center", va="center",
                color=WRONG_COLOR, fontsize=fontsize)
        ax.set_title(f"attempt {j + 1} ✗ wrong\ninvalid grid", color=WRONG_COLOR,
                     fontsize=fontsize)
        return
    if truth is None:
        grid(a, ax=ax, title=f"attempt {j + 1}", **kw)
        return
    right = same_grid(a, truth)
    color = RIGHT_COLOR if right else WRONG_COLOR
    grid(a, ax=ax, label=False, border_color=color, **kw)
    if right:
        note = f"✓ right\n{shape_text(a)}"
    elif a.shape != truth.shape:
        note = f"✗ wrong\nshape {shape_text(a)}"
    else:
        note = f"✗ wrong\n{fmt_number(cell_accuracy(a, truth), least=2, most=2)} of cells right"
    ax.set_title(f"attempt {j + 1} {note}", color=color, fontsize=fontsize)
