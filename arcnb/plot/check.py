"""Check a finished figure before it goes into a paper: :func:`check_figure`.

The figure is drawn once, at its own size, with a renderer that records what is drawn
and in which order. From matplotlib's own bounding boxes of the texts drawn
(``Text.get_window_extent``), never from pixels, it reports:

* two texts that overlap (a tick label under a value label, two annotations),
* a text hidden under something drawn after it: an image, or a filled, mostly opaque
  shape (a swatch strip over an axis title),
* a text that falls outside the canvas (cut off in the saved file, or making a
  ``bbox_inches="tight"`` figure wider than the column it was made for),
* a text smaller than 6 pt as printed (a figure wider than ``print_width`` is printed
  scaled down, and its text with it),
* an axis label, title or legend title that is a column name (``partial_credit``,
  ``cost_per_task``) or a program's marker (``"(leads)"``) instead of words.

Usage::

    from arcnb.plot import check_figure
    problems = check_figure(fig)        # [] when the figure is fine
    assert not problems, "\\n".join(problems)

Text written into an image's pixels (the galleries' default) is part of the image and
not checked here.
"""
from __future__ import annotations

import re

import numpy as np

from ..text import fmt_number, fmt_percent, fmt_significant
from .paper import DOUBLE_COLUMN

__all__ = ["check_figure", "MIN_FONT_SIZE", "looks_like_column_name"]

#: The smallest text size, in points as printed, that a figure may use.
MIN_FONT_SIZE = 6.0
# a snake_case identifier (two words or more joined by "_", e.g. partial_credit,
# n_near_miss, pass@2_per_output) or a program's parenthesised marker
_COLUMN = re.compile(r"(?<![\w@.])[A-Za-z][A-Za-z0-9@]*(?:_[A-Za-z0-9@]+)+(?![\w@])")
_MARKERS = ("(leads)", "(all)")
_TOL = 1.0  # pixels two boxes may share before they count as overlapping
_HIDDEN = 0.2  # fraction of a text's box an opaque shape drawn later may cover


def looks_like_column_name(text: str) -> str | None:
    """The part of ``text`` that reads as a column name (a snake_case identifier such
    as ``partial_credit``) or a program's marker such as ``(leads)``; ``None`` when
    ``text`` is words."""
    for m in _MARKERS:
        if m in text:
            return m
    hit = _COLUMN.search(text)
    return hit.group(0) if hit else None


class _Recorder:
    """Wraps an Agg renderer's drawing methods: every text drawn (the Text artist)
    and every opaque region drawn (an image, a filled path), in drawing order."""

    def __init__(self, renderer):
        from matplotlib.backend_bases import RendererBase

        self.r = renderer
        self.events: list = []  # ("text", Text) or ("fill", (x0, y0, x1, y1))
        base = RendererBase
        self._saved = {name: renderer.__dict__.get(name) for name in
                       ("draw_text", "draw_path", "draw_image", "draw_markers",
                        "draw_path_collection", "draw_quad_mesh")}
        r = renderer
        orig_text, orig_path, orig_image = r.draw_text, r.draw_path, r.draw_image

        def draw_text(gc, x, y, s, prop, angle, ismath=False, mtext=None):
            if mtext is not None and (not self.events or self.events[-1][1] is not mtext):
                self.events.append(("text", mtext))
            return orig_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

        def draw_path(gc, path, transform, rgbFace=None):
            if rgbFace is not None and self._opaque(gc, rgbFace) and len(path.vertices):
                ext = path.get_extents(transform)
                self._fill(gc, (ext.x0, ext.y0, ext.x1, ext.y1))
            return orig_path(gc, path, transform, rgbFace)

        def draw_image(gc, x, y, im, *args):
            h, w = im.shape[:2]
            if gc.get_alpha() is None or gc.get_alpha() >= 0.5:
                self._fill(gc, (x, y, x + w, y + h))
            return orig_image(gc, x, y, im, *args)

        r.draw_text, r.draw_path, r.draw_image = draw_text, draw_path, draw_image
        # collections, meshes and markers go through draw_path one shape at a time
        for name in ("draw_markers", "draw_path_collection", "draw_quad_mesh"):
            setattr(r, name, getattr(base, name).__get__(r))

    @staticmethod
    def _opaque(gc, rgb) -> bool:
        alpha = rgb[3] if len(rgb) > 3 else 1.0
        if gc.get_forced_alpha():
            alpha = gc.get_alpha()
        return alpha is not None and alpha >= 0.5

    def _fill(self, gc, box) -> None:
        clip = gc.get_clip_rectangle()
        x0, y0, x1, y1 = box
        if clip is not None:
            x0, y0 = max(x0, clip.x0), max(y0, clip.y0)
            x1, y1 = min(x1, clip.x1), min(y1, clip.y1)
        if x1 - x0 > 0 and y1 - y0 > 0:
            self.events.append(("fill", (x0, y0, x1, y1)))

    def restore(self) -> None:
        for name, v in self._saved.items():
            if v is None:
                self.r.__dict__.pop(name, None)
            else:
                setattr(self.r, name, v)


def _describe(t) -> str:
    s = t.get_text().replace("\n", " ")
    return repr(s if len(s) <= 40 else s[:37] + "...")


def _label_texts(fig):
    """(kind, Text) of every axis label, title and legend title of the figure."""
    for ax in fig.get_axes():
        yield "x axis label", ax.xaxis.label
        yield "y axis label", ax.yaxis.label
        for t in (ax.title, ax._left_title, ax._right_title):
            yield "title", t
        leg = ax.get_legend()
        if leg is not None:
            yield "legend title", leg.get_title()
    for t in (getattr(fig, "_suptitle", None), getattr(fig, "_supxlabel", None),
              getattr(fig, "_supylabel", None)):
        if t is not None:
            yield "figure title", t


def check_figure(fig, *, min_size: float = MIN_FONT_SIZE,
                 print_width: float | None = None, tight: bool = False) -> list[str]:
    """The problems of ``fig`` (a Figure, or an Axes of one) as sentences; ``[]`` when
    there are none.

    The figure is drawn at its own size (its layout engine runs as when it is saved).
    ``print_width``: the width in inches the figure is printed at (default: its own
    width, at most a double column, 7.2 in); text sizes are scaled by
    ``print_width / width`` before they are compared with ``min_size`` (6 pt).
    ``tight=True``: the figure is saved with ``bbox_inches="tight"`` for a screen (the
    canvas grows to hold every text), so no text is reported outside it; leave it
    False for a paper figure, whose size is the column it was made for.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if hasattr(fig, "get_figure") and not hasattr(fig, "savefig"):
        fig = fig.get_figure(root=True) if _has_root(fig) else fig.get_figure()
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)  # a headless canvas; matplotlib keeps it on the figure
    fig.canvas.draw()  # the layout, as when saving
    renderer = fig.canvas.get_renderer()
    rec = _Recorder(renderer)
    try:
        fig.draw(renderer)
    finally:
        rec.restore()
    width_in = fig.get_figwidth()
    scale = (print_width if print_width is not None else min(width_in, DOUBLE_COLUMN)) / width_in
    problems: list[str] = []

    texts, order, boxes = [], [], []
    fills, fill_order = [], []
    seen = set()
    for i, (kind, obj) in enumerate(rec.events):
        if kind == "fill":
            fills.append(obj)
            fill_order.append(i)
        elif id(obj) not in seen and obj.get_text().strip():
            seen.add(id(obj))
            bb = obj.get_window_extent(renderer)
            texts.append(obj)
            order.append(i)
            boxes.append((bb.x0, bb.y0, bb.x1, bb.y1))
    boxes = np.array(boxes, dtype=float).reshape(-1, 4)
    fills = np.array(fills, dtype=float).reshape(-1, 4)
    order, fill_order = np.array(order, dtype=int), np.array(fill_order, dtype=int)

    # 1. text smaller than min_size as printed (one sentence per size)
    small: dict = {}
    for t in texts:
        size = float(t.get_fontsize()) * scale
        if size < min_size - 1e-6:
            small.setdefault((round(size, 1), float(t.get_fontsize())), []).append(t)
    for (size, own), ts in sorted(small.items()):
        extra = (f" ({fmt_significant(own)} pt on a figure {fmt_number(width_in, least=2, most=2)} in "
                 "wide)" if scale < 1 else "")
        names = ", ".join(_describe(t) for t in ts[:6]) + (", ..." if len(ts) > 6 else "")
        problems.append(f"{len(ts)} text{'s' if len(ts) > 1 else ''} {fmt_number(size, least=1, most=1)} pt as "
                        f"printed, smaller than {fmt_significant(min_size)} pt{extra}: {names}")
    # 2. text outside the canvas
    W, H = fig.bbox.width, fig.bbox.height
    for t, (x0, y0, x1, y1) in zip(texts, boxes):
        if not tight and (x0 < -_TOL or y0 < -_TOL or x1 > W + _TOL or y1 > H + _TOL):
            problems.append(f"text {_describe(t)} falls outside the canvas")
    # 3. two texts overlapping
    if len(texts) > 1:
        ix = np.minimum(boxes[:, None, 2], boxes[None, :, 2]) - \
            np.maximum(boxes[:, None, 0], boxes[None, :, 0])
        iy = np.minimum(boxes[:, None, 3], boxes[None, :, 3]) - \
            np.maximum(boxes[:, None, 1], boxes[None, :, 1])
        hit = np.triu((ix > _TOL) & (iy > _TOL), k=1)
        for a, b in zip(*np.nonzero(hit)):
            problems.append(f"texts {_describe(texts[a])} and {_describe(texts[b])} overlap")
    # 4. text hidden under an opaque shape or image drawn after it
    if len(texts) and len(fills):
        ix = np.clip(np.minimum(boxes[:, None, 2], fills[None, :, 2]) -
                     np.maximum(boxes[:, None, 0], fills[None, :, 0]), 0, None)
        iy = np.clip(np.minimum(boxes[:, None, 3], fills[None, :, 3]) -
                     np.maximum(boxes[:, None, 1], fills[None, :, 1]), 0, None)
        area = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1e-9)
        later = fill_order[None, :] > order[:, None]
        covered = np.where(later, ix * iy, 0.0).max(axis=1) / area
        for k in np.flatnonzero(covered > _HIDDEN):
            problems.append(f"text {_describe(texts[k])} is hidden under a shape or image "
                            f"drawn over it ({fmt_percent(covered[k], least=0, most=0)} of it covered)")
    # 5. labels that are column names
    drawn = set(map(id, texts))
    for kind, t in _label_texts(fig):
        if id(t) not in drawn:
            continue
        hit = looks_like_column_name(t.get_text())
        if hit:
            problems.append(f"{kind} {_describe(t)} shows the column name {hit!r}, "
                            "not words")
    return problems


def _has_root(artist) -> bool:
    import inspect

    try:
        return "root" in inspect.signature(artist.get_figure).parameters
    except (TypeError, ValueError):
        return False
