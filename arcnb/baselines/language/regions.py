"""Families that keep part of a grid: cropping (to the non-background cells, a colour,
an object, a frame's inside), the cells of a grid split by separator lines and its
halves combined, a half or a quarter."""
from __future__ import annotations

import numpy as np

from .core import MARK, Context, Primitive, background_guess
from .objects import KINDS, SELECT, find_objects, odd_one, unique_best

__all__ = ["cropping", "cell_grid", "halves", "half_masks", "splitting", "parts"]

# -- cropping ------------------------------------------------------------------------

def _crop_nonbg(g):
    bg = background_guess(g)
    rows, cols = np.nonzero(g != bg)
    if rows.size == 0:
        return None
    return g[rows.min():rows.max() + 1, cols.min():cols.max() + 1]


def _crop_colour(c):
    def fn(g):
        rows, cols = np.nonzero(g == c)
        if rows.size == 0:
            return None
        return g[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
    return fn


def _crop_inner(g):
    return g[1:-1, 1:-1] if min(g.shape) > 2 else None


def _pick_object(kind, how, extract):
    select = SELECT[how]

    def fn(g):
        objs = find_objects(g, kind)
        if len(objs) < 2:
            return None
        o = select(objs)
        if o is None:
            return None
        box = o.box(g)
        return np.where(o.mask, box, background_guess(g)) if extract else box
    return fn


def cropping(ctx: Context) -> list[Primitive]:
    fam = "cropping"
    out = [Primitive("crop_nonbg", 1, _crop_nonbg, fam, shape="le"),
           Primitive("crop_inner", 1, _crop_inner, fam, shape="le")]
    for kind in KINDS:
        for how in SELECT:
            if how == "most_colours" and kind != "x8":
                continue
            out.append(Primitive(f"crop_{how}_{kind}", 1, _pick_object(kind, how, False), fam,
                                 shape="le"))
            out.append(Primitive(f"extract_{how}_{kind}", 2, _pick_object(kind, how, True), fam,
                                 shape="le"))
    out += [Primitive(f"crop_colour_{c}", 2, _crop_colour(c), fam, shape="le") for c in ctx.colours]
    return out


# -- separator-split cells and halves --------------------------------------------------

def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of False in ``flags`` as (start, stop)."""
    out, start = [], None
    for i, f in enumerate(flags.tolist() + [True]):
        if not f and start is None:
            start = i
        elif f and start is not None:
            out.append((start, i))
            start = None
    return out


def _cells(g: np.ndarray) -> list[np.ndarray] | None:
    """The cells of a grid split by separator lines, in reading order (see
    :func:`cell_grid`)."""
    split = cell_grid(g)
    return None if split is None else split[0]


def cell_grid(g: np.ndarray) -> tuple[list[np.ndarray], int, int] | None:
    """The cells of a grid split by full rows / columns of one separator colour (at
    least 2 cells, all of one shape), with the number of cell rows and columns;
    separator colours other than the background are tried first."""
    bg = background_guess(g)
    cands = sorted({int(v) for v in np.unique(g)}, key=lambda c: (c == bg, c))
    for s in cands:
        full_r = (g == s).all(axis=1)
        full_c = (g == s).all(axis=0)
        if not full_r.any() and not full_c.any():
            continue
        rr, cc = _runs(full_r), _runs(full_c)
        cells = [g[a:b, c:d] for a, b in rr for c, d in cc]
        if len(cells) >= 2 and len({x.shape for x in cells}) == 1:
            return cells, len(rr), len(cc)
    return None


def halves(g: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Two halves along ``axis`` (0: top/bottom, 1: left/right): split at separator
    lines when there are exactly two cells that way, else at the middle (dropping a
    middle line when the side is odd and that line is uniform)."""
    cells = _cells(g)
    if cells is not None and len(cells) == 2:
        a, b = cells
        same = a.shape[1 - axis] == g.shape[1 - axis]
        if same:
            return a, b
    n = g.shape[axis]
    h = n // 2
    if n % 2 == 0:
        return (g[:h], g[h:]) if axis == 0 else (g[:, :h], g[:, h:])
    mid = g[h] if axis == 0 else g[:, h]
    if n > 1 and (mid == mid[0]).all():
        return (g[:h], g[h + 1:]) if axis == 0 else (g[:, :h], g[:, h + 1:])
    return None


_BOOL = {
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "nor": lambda a, b: ~(a | b), "a_not_b": lambda a, b: a & ~b, "b_not_a": lambda a, b: b & ~a,
}


def half_masks(g: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The two equal halves of ``g`` (split by a separator line) as masks of their
    non-background cells, or None. The halves' own background is the grid's most common
    colour outside the split."""
    h = halves(g, axis)
    if h is None or h[0].shape != h[1].shape:
        return None
    a, b = h
    bg = background_guess(np.concatenate([a.ravel(), b.ravel()]))
    return a != bg, b != bg


def _bool_halves(axis, op):
    f = _BOOL[op]

    def fn(g):
        m = half_masks(g, axis)
        return None if m is None else np.where(f(*m), MARK, MARK + 1).astype(np.int16)
    return fn


def _overlay_halves(axis, reverse):
    def fn(g):
        h = halves(g, axis)
        if h is None or h[0].shape != h[1].shape:
            return None
        a, b = h[::-1] if reverse else h
        bg = background_guess(np.concatenate([a.ravel(), b.ravel()]))
        return np.where(a != bg, a, b)
    return fn


def _cell_select(how):
    def fn(g):
        cells = _cells(g)
        if cells is None or len(cells) < 2:
            return None
        bg = background_guess(g)
        if how == "odd":
            return odd_one(cells, lambda x: x.tobytes())
        if how == "most_fg":
            return unique_best(cells, lambda x: int((x != bg).sum()))
        if how == "least_fg":
            return unique_best(cells, lambda x: -int((x != bg).sum()))
        if how == "most_colours":
            return unique_best(cells, lambda x: len(np.unique(x)))
        return unique_best(cells, lambda x: -len(np.unique(x)))
    return fn


def _overlay_cells(g):
    cells = _cells(g)
    if cells is None:
        return None
    bg = background_guess(g)
    out = cells[0].copy()
    for x in cells[1:]:
        out = np.where(out != bg, out, x)
    return out


def splitting(ctx: Context) -> list[Primitive]:
    fam = "cells and halves"
    out = []
    for axis, ax in ((0, "rows"), (1, "cols")):
        for op in _BOOL:
            out.append(Primitive(f"bool_{op}_{ax}", 2, _bool_halves(axis, op), fam, shape="le"))
        out.append(Primitive(f"overlay_{ax}", 2, _overlay_halves(axis, False), fam, shape="le"))
        out.append(Primitive(f"overlay_{ax}_rev", 2, _overlay_halves(axis, True), fam, shape="le"))
    for how in ("odd", "most_fg", "least_fg", "most_colours", "least_colours"):
        out.append(Primitive(f"cell_{how}", 2, _cell_select(how), fam, shape="le"))
    out.append(Primitive("overlay_cells", 2, _overlay_cells, fam, shape="le"))
    return out


# -- halves and parts --------------------------------------------------------------

def _half(axis, second):
    def fn(g):
        h = halves(g, axis)
        return None if h is None else h[int(second)]
    return fn


def _halves4(axis):
    """Both halves' cells compared: 10 where both are set, 11 only the first, 12 only
    the second, 13 neither."""
    def fn(g):
        m = half_masks(g, axis)
        if m is None:
            return None
        fa, fb = m
        out = np.select([fa & fb, fa, fb], [MARK, MARK + 1, MARK + 2], MARK + 3)
        return out.astype(np.int16)
    return fn


def parts(ctx: Context) -> list[Primitive]:
    fam = "cells and halves"
    out = []
    for axis, ax, names in ((0, "rows", ("top", "bottom")), (1, "cols", ("left", "right"))):
        for second, name in enumerate(names):
            out.append(Primitive(f"half_{name}", 1, _half(axis, second), fam, shape="le"))
        out.append(Primitive(f"halves4_{ax}", 2, _halves4(axis), fam, shape="le"))
    for name, (i, j) in (("tl", (0, 0)), ("tr", (0, 1)), ("bl", (1, 0)), ("br", (1, 1))):
        out.append(Primitive(f"quarter_{name}", 1, _quarter(i, j), fam, shape="le"))
    return out


def _quarter(i, j):
    def fn(g):
        h = halves(g, 0)
        if h is None:
            return None
        q = halves(h[i], 1)
        return None if q is None else q[j]
    return fn
