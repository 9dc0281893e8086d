"""Drawing families: enclosed background filled, outlines, interiors, bounding boxes,
lines between same-colour cells; rays to the border and a frame."""
from __future__ import annotations

import numpy as np

from ...grids import same_grid
from .core import MARK, Context, Primitive, background_guess
from .objects import STEPS4, STEPS8, find_objects

__all__ = ["fills", "lines"]

# -- outlines and fills ----------------------------------------------------------------

def _shift_or(m: np.ndarray, steps) -> np.ndarray:
    """Cells with a True neighbour along any of ``steps``."""
    H, W = m.shape
    p = np.pad(m, 1)
    out = np.zeros_like(m)
    for dr, dc in steps:
        out |= p[1 + dr:1 + dr + H, 1 + dc:1 + dc + W]
    return out


def _fill_enclosed(g):
    bg = background_guess(g)
    free = g == bg
    edge = np.ones_like(free)
    edge[1:-1, 1:-1] = False
    reach = free & edge
    while True:
        nxt = (reach | _shift_or(reach, STEPS4)) & free
        if (nxt == reach).all():
            break
        reach = nxt
    hole = free & ~reach
    if not hole.any():
        return None
    return np.where(hole, MARK, g).astype(np.int16)


def _outline(steps):
    def fn(g):
        bg = background_guess(g)
        ring = _shift_or(g != bg, steps) & (g == bg)
        if not ring.any():
            return None
        return np.where(ring, MARK, g).astype(np.int16)
    return fn


def _interior(g):
    bg = background_guess(g)
    fg = g != bg
    inner = fg & ~_shift_or(~np.pad(fg, 1), STEPS4)[1:-1, 1:-1]
    if not inner.any():
        return None
    return np.where(inner, MARK, g).astype(np.int16)


def _fill_boxes(g):
    bg = background_guess(g)
    out = g.astype(np.int16).copy()
    for o in find_objects(g, "x8"):
        box = out[o.r0:o.r1, o.c0:o.c1]
        box[box == bg] = MARK
    return None if same_grid(out, g) else out


def _connect(axis, mark=False):
    """Background between two cells of one colour in a row (``axis`` 1) or column
    (``axis`` 0) takes that colour, or the marker."""
    def fn(g):
        bg = background_guess(g)
        out = (g if axis == 1 else g.T).astype(np.int16)
        src = g if axis == 1 else g.T
        for i in range(src.shape[0]):
            row = src[i]
            for c in np.unique(row):
                if c == bg:
                    continue
                idx = np.nonzero(row == c)[0]
                if idx.size >= 2:
                    seg = out[i, idx[0]:idx[-1] + 1]
                    seg[seg == bg] = MARK if mark else c
        out = out if axis == 1 else out.T
        return None if same_grid(out, g) else out
    return fn


def fills(ctx: Context) -> list[Primitive]:
    fam = "outlines and fills"
    return [Primitive("fill_enclosed", 1, _fill_enclosed, fam),
            Primitive("outline8", 1, _outline(STEPS8), fam),
            Primitive("outline4", 1, _outline(STEPS4), fam),
            Primitive("interior", 1, _interior, fam),
            Primitive("fill_boxes", 1, _fill_boxes, fam),
            Primitive("connect_rows", 1, _connect(1), fam),
            Primitive("connect_cols", 1, _connect(0), fam),
            Primitive("connect_rows_mark", 1, _connect(1, True), fam),
            Primitive("connect_cols_mark", 1, _connect(0, True), fam)]


# -- rays and frames -----------------------------------------------------------------

def _ffill_down(g: np.ndarray, bg: int) -> np.ndarray:
    """Each background cell takes the nearest non-background value above it."""
    fg = g != bg
    idx = np.where(fg, np.arange(g.shape[0])[:, None], -1)
    idx = np.maximum.accumulate(idx, axis=0)
    vals = np.take_along_axis(g, np.maximum(idx, 0), axis=0)
    return np.where(idx >= 0, vals, bg)


def _rays(dirs):
    def fn(g):
        bg = background_guess(g)
        out = g.copy()
        for k in dirs:  # quarter turns of "down"
            r = np.rot90(g, k)
            painted = np.rot90(_ffill_down(r, bg), -k)
            out = np.where(out == bg, painted, out)
        return None if same_grid(out, g) else out
    return fn


def _frame(g):
    out = g.astype(np.int16).copy()
    out[0, :], out[-1, :], out[:, 0], out[:, -1] = MARK, MARK, MARK, MARK
    return out


def lines(ctx: Context) -> list[Primitive]:
    fam = "outlines and fills"
    dirs = {"down": (0,), "right": (1,), "up": (2,), "left": (3,), "v": (0, 2), "h": (1, 3),
            "hv": (0, 1, 2, 3)}
    out = [Primitive(f"ray_{name}", 1, _rays(d), fam) for name, d in dirs.items()]
    out.append(Primitive("frame", 1, _frame, fam))
    return out
