"""Colour families: keep or drop one colour; one colour or one value per block
(summaries); local rules, each cell's colour from its neighbourhood (last step only)."""
from __future__ import annotations

import numpy as np

from .core import MARK, Context, Primitive, background_guess
from .objects import KINDS, SELECT, STEPS4, STEPS8, find_objects
from .regions import cell_grid

__all__ = ["colour_filters", "summaries", "local_rules"]

# -- colour filters ------------------------------------------------------------------

def _keep_colour(c):
    def fn(g):
        if not (g == c).any():
            return None
        return np.where(g == c, g, background_guess(g))
    return fn


def _drop_colour(c):
    def fn(g):
        bg = background_guess(g)
        if c == bg or not (g == c).any():
            return None
        return np.where(g == c, bg, g)
    return fn


def colour_filters(ctx: Context) -> list[Primitive]:
    fam = "colour maps and filters"
    out = []
    for c in ctx.colours:
        out.append(Primitive(f"keep_{c}", 2, _keep_colour(c), fam))
        out.append(Primitive(f"drop_{c}", 2, _drop_colour(c), fam))
    return out


# -- summaries: one colour, one value per block ------------------------------------

def _colour_of(how, kind=None):
    """A 1x1 grid: the colour of the largest / smallest object, or the most / least
    common non-background colour."""
    def fn(g):
        if kind is not None:
            objs = find_objects(g, kind)
            o = SELECT[how](objs) if len(objs) >= 2 else None
            return None if o is None else np.full((1, 1), o.colours[0], dtype=g.dtype)
        counts = np.bincount(g.ravel())
        counts[background_guess(g)] = 0
        present = np.nonzero(counts)[0]
        if present.size == 0:
            return None
        vals = counts[present]
        pick = vals.max() if how == "most" else vals.min()
        if (vals == pick).sum() != 1:
            return None
        return np.full((1, 1), present[vals == pick][0], dtype=g.dtype)
    return fn


def _block_colour(f):
    """Each ``f`` block becomes its largest non-background value (the background when
    it has none)."""
    def fn(g):
        h, w = g.shape
        if h % f[0] or w % f[1]:
            return None
        bg = background_guess(g)
        b = g.reshape(h // f[0], f[0], w // f[1], f[1]).transpose(0, 2, 1, 3)
        b = b.reshape(h // f[0], w // f[1], -1)
        v = np.where(b != bg, b, -1).max(axis=2)
        return np.where(v < 0, bg, v).astype(g.dtype)
    return fn


def _blocks_to(shape):
    def fn(g):
        h, w = g.shape
        if h % shape[0] or w % shape[1] or (h, w) == shape:
            return None
        return _block_colour((h // shape[0], w // shape[1]))(g)
    return fn


def _cells_summary(g):
    """A grid split by separator lines becomes one value per cell: the cell's most
    common non-background value (its background when it has none)."""
    split = cell_grid(g)
    if split is None:
        return None
    cells, nr, nc = split
    bg = background_guess(g)
    vals = []
    for x in cells:
        counts = np.bincount(x.ravel())
        if bg < counts.size:
            counts[bg] = 0
        vals.append(int(counts.argmax()) if counts.any() else bg)
    return np.array(vals, dtype=g.dtype).reshape(nr, nc)


def summaries(ctx: Context) -> list[Primitive]:
    one = lambda s: (1, 1)  # noqa: E731
    out = [Primitive(f"colour_{how}", 1, _colour_of(how), "colour maps and filters", shape=one)
           for how in ("most", "least")]
    for kind in KINDS:
        for how in ("largest", "smallest"):
            out.append(Primitive(f"colour_{how}_{kind}", 1, _colour_of(how, kind),
                                 "largest or smallest object", shape=one))
    for f in ctx.down:
        part = lambda s, f=f: (s[0] // f[0], s[1] // f[1]) if s[0] % f[0] == 0 and \
            s[1] % f[1] == 0 else None  # noqa: E731
        out.append(Primitive(f"blocks_{f[0]}x{f[1]}", 1, _block_colour(f), "scaling", shape=part))
    for H, W in ctx.fixed:  # blocks as large as it takes to reach the fixed output shape
        to = lambda s, H=H, W=W: (H, W) if s[0] % H == 0 and s[1] % W == 0 else None  # noqa
        out.append(Primitive(f"blocks_to_{H}x{W}", 1, _blocks_to((H, W)), "scaling", shape=to))
    out.append(Primitive("cells_summary", 2, _cells_summary, "cells and halves", shape="le"))
    return out


# -- local rules: each cell's colour from its neighbourhood ---------------------------

def _neighbours(g: np.ndarray, steps, fill: int) -> list[np.ndarray]:
    H, W = g.shape
    p = np.pad(g.astype(np.int64), 1, constant_values=fill)
    return [p[1 + dr:1 + dr + H, 1 + dc:1 + dc + W] for dr, dc in steps]


def _local_rule(kind):
    """A *feature* grid (values from ``MARK`` up) that the learnt map turns into
    colours: each cell's colour with its 4 or 8 neighbours (colours, or only whether
    they are background), or with the count of its non-background 8-neighbours."""
    def fn(g):
        bg = background_guess(g)
        key = g.astype(np.int64)
        if kind in ("nbr4", "nbr8"):
            for n in _neighbours(g, STEPS4 if kind == "nbr4" else STEPS8, 10):
                key = key * 11 + n
        elif kind in ("fg4", "fg8"):
            for n in _neighbours(g, STEPS4 if kind == "fg4" else STEPS8, bg):
                key = key * 2 + (n != bg)
        else:  # count8
            key = key * 9 + sum((n != bg).astype(np.int64) for n in _neighbours(g, STEPS8, bg))
        return key + MARK
    return fn


def local_rules(ctx: Context) -> list[Primitive]:
    fam = "local rules"
    return [Primitive(f"rule_{k}", 2 if k in ("fg4", "count8") else 3, _local_rule(k), fam,
                      final_only=True) for k in ("fg4", "count8", "fg8", "nbr4", "nbr8")]
