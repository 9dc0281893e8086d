"""Whole-grid families: rotations, flips and transposes; tiling, mirroring and
scaling (with :func:`fits`, whether a shape is a grid's); gravity."""
from __future__ import annotations

import numpy as np

from .core import DIHEDRAL, MAX, Context, Primitive, background_guess

__all__ = ["geometry", "fits", "tiling", "gravities"]


def geometry(ctx: Context) -> list[Primitive]:
    swap = ("rot90", "rot270", "transpose", "anti_transpose")
    return [Primitive(n, 1, f, "whole-grid transforms", shape="swap" if n in swap else "same")
            for n, f in DIHEDRAL.items() if n != "identity"]


# -- tiling, mirroring and scaling ----------------------------------------------------

def fits(shape) -> bool:
    """Is ``shape`` a grid shape ARC allows (each side 1 to 30)?"""
    return 0 < shape[0] <= MAX and 0 < shape[1] <= MAX


def _tile(f, mode):
    fy, fx = f

    def fn(g):
        h, w = g.shape
        if not fits((h * fy, w * fx)):
            return None
        if mode == "plain":
            return np.tile(g, f)
        rows = []
        for i in range(fy):
            row = []
            for j in range(fx):
                t = g
                if (mode in ("lr", "both") and j % 2) or (mode == "row_lr" and i % 2):
                    t = np.fliplr(t)
                if (mode in ("ud", "both") and i % 2) or (mode == "col_ud" and j % 2):
                    t = np.flipud(t)
                row.append(t)
            rows.append(np.hstack(row))
        return np.vstack(rows)
    return fn


def _cat(kind):
    def fn(g):
        a, b = {"lr": (g, np.fliplr(g)), "rl": (np.fliplr(g), g),
                "ud": (g, np.flipud(g)), "du": (np.flipud(g), g)}[kind]
        out = np.hstack([a, b]) if kind in ("lr", "rl") else np.vstack([a, b])
        return out if fits(out.shape) else None
    return fn


def _fractal(invert):
    def fn(g):
        if not fits((g.shape[0] ** 2, g.shape[1] ** 2)) or g.size < 2:
            return None
        m = g != background_guess(g)
        if invert:
            m = ~m
        return np.where(np.kron(m, np.ones_like(m)), np.tile(g, g.shape), background_guess(g))
    return fn


def _quad_rot(clockwise):
    """A 2x2 arrangement of the grid's four rotations, turning around the square."""
    def fn(g):
        if g.shape[0] != g.shape[1] or not fits((2 * g.shape[0], 2 * g.shape[1])):
            return None
        r = [np.rot90(g, k) for k in range(4)]
        top, bottom = ((r[0], r[3]), (r[1], r[2])) if clockwise else ((r[0], r[1]), (r[2], r[3]))
        return np.vstack([np.hstack(top), np.hstack(bottom)])
    return fn


def _invert(g):
    """Background and the one foreground colour swap places."""
    bg = background_guess(g)
    fg = np.unique(g[g != bg])
    if fg.size != 1:
        return None
    return np.where(g == bg, fg[0], bg).astype(g.dtype)


def _by_colours(upscale):
    """Tile (or upscale) by the number of colours in the grid, each way."""
    def fn(g):
        n = int(np.unique(g).size)
        if not fits((g.shape[0] * n, g.shape[1] * n)):
            return None
        return _upscale((n, n))(g) if upscale else np.tile(g, (n, n))
    return fn


def _fractal_neg(g):
    """Each foreground cell becomes the grid's negative (see :func:`_invert`)."""
    neg = _invert(g)
    if neg is None or not fits((g.shape[0] ** 2, g.shape[1] ** 2)):
        return None
    m = g != background_guess(g)
    return np.where(np.kron(m, np.ones_like(m)), np.tile(neg, g.shape), background_guess(g))


def _upscale(f):
    def fn(g):
        if not fits((g.shape[0] * f[0], g.shape[1] * f[1])):
            return None
        return np.repeat(np.repeat(g, f[0], axis=0), f[1], axis=1)
    return fn


def _downscale(f):
    def fn(g):
        h, w = g.shape
        if h % f[0] or w % f[1]:
            return None
        return g[::f[0], ::f[1]]
    return fn


def _dedupe(g):
    keep_r = np.ones(g.shape[0], dtype=bool)
    keep_r[1:] = (g[1:] != g[:-1]).any(axis=1)
    g = g[keep_r]
    keep_c = np.ones(g.shape[1], dtype=bool)
    keep_c[1:] = (g[:, 1:] != g[:, :-1]).any(axis=0)
    return g[:, keep_c]


def _compress(g):
    bg = background_guess(g)
    fg = g != bg
    out = g[fg.any(axis=1)][:, fg.any(axis=0)]
    return out if out.size else None


def tiling(ctx: Context) -> list[Primitive]:
    fam, sfam = "tiling and mirroring", "scaling"
    wide, tall = (lambda s: (s[0], 2 * s[1])), (lambda s: (2 * s[0], s[1]))
    out = [Primitive(f"cat_{k}", 1, _cat(k), fam, shape=wide if k in ("lr", "rl") else tall)
           for k in ("lr", "rl", "ud", "du")]
    square = lambda s: (s[0] * s[0], s[1] * s[1])  # noqa: E731
    double = lambda s: (2 * s[0], 2 * s[1])  # noqa: E731
    out += [Primitive("fractal", 1, _fractal(False), fam, shape=square),
            Primitive("fractal_inv", 1, _fractal(True), fam, shape=square),
            Primitive("fractal_neg", 1, _fractal_neg, fam, shape=square),
            Primitive("quad_rot_ccw", 1, _quad_rot(False), fam, shape=double),
            Primitive("quad_rot_cw", 1, _quad_rot(True), fam, shape=double),
            Primitive("tile_ncolours", 1, _by_colours(False), fam, shape=None),
            Primitive("upscale_ncolours", 1, _by_colours(True), sfam, shape=None),
            Primitive("invert", 1, _invert, "colour maps and filters")]
    for f in ctx.up:
        tag = f"{f[0]}x{f[1]}"
        times = lambda s, f=f: (s[0] * f[0], s[1] * f[1])  # noqa: E731
        for mode in ("plain", "lr", "ud", "both", "row_lr", "col_ud"):
            out.append(Primitive(f"tile_{mode}_{tag}", 1, _tile(f, mode), fam, shape=times))
        out.append(Primitive(f"upscale_{tag}", 1, _upscale(f), sfam, shape=times))
    for f in ctx.down:
        part = lambda s, f=f: (s[0] // f[0], s[1] // f[1]) if s[0] % f[0] == 0 and \
            s[1] % f[1] == 0 else None  # noqa: E731
        out.append(Primitive(f"downscale_{f[0]}x{f[1]}", 1, _downscale(f), sfam, shape=part))
    out += [Primitive("dedupe", 1, _dedupe, sfam, shape="le"),
            Primitive("compress", 1, _compress, sfam, shape="le")]
    return out


# -- gravity -------------------------------------------------------------------------

def _gravity(k):
    """Cells fall towards one side (k quarter turns of 'down'), keeping their order."""
    def fn(g):
        bg = background_guess(g)
        r = np.rot90(g, k)
        out = np.full_like(r, bg)
        fg = r != bg
        if not fg.any():
            return None
        for j in range(r.shape[1]):
            vals = r[fg[:, j], j]
            if vals.size:
                out[r.shape[0] - vals.size:, j] = vals
        return np.rot90(out, -k)
    return fn


def gravities(ctx: Context) -> list[Primitive]:
    return [Primitive(f"gravity_{d}", 1, _gravity(k), "gravity")
            for k, d in enumerate(("down", "right", "up", "left"))]
