"""The program search's language: about a hundred grid primitives in families.

A *primitive* maps a grid to a grid (or fails); :func:`primitives` gives a task's
primitive set in search order and :data:`FAMILIES` names the families (see
:mod:`arcnb.baselines` for what each family holds). Primitives that paint new cells use
*marker* values (:data:`MARK`, 10 and up) instead of colours. The search over their
compositions is ``arcnb.baselines.search``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..augment import dihedral_fn
from ..data import Task
from ..grids import MAX_SIZE, background

__all__ = ["GridFn", "DIHEDRAL", "MARK", "FAMILIES", "Primitive", "primitives", "fits",
           "clear_object_cache"]

#: A grid program: a grid in, a grid (or None: it does not apply) out.
GridFn = Callable[[np.ndarray], "np.ndarray | None"]

#: The dihedral transforms (:mod:`arcnb.augment`), in the order the tiny heuristic tries
#: them (:func:`arcnb.baselines.heuristic_submission`) and the whole-grid primitives list them.
DIHEDRAL: dict[str, GridFn] = {
    n: dihedral_fn(n) for n in ("identity", "rot90", "rot180", "rot270", "flip_lr", "flip_ud",
                                "transpose", "anti_transpose")}


# --------------------------------------------------------------------------------------
# program search: grid helpers
# --------------------------------------------------------------------------------------

_MAX = MAX_SIZE  # largest ARC grid side
#: The first marker value: a painted cell whose colour the final colour map learns.
MARK = 10


def _bg(g: np.ndarray) -> int:
    """The search's background guess (:func:`arcnb.grids.background` with
    ``prefer_black``): black when the grid has black, else the most common value."""
    return background(g, prefer_black=True)


class _Obj:
    """A connected component: bounding box ``[r0:r1, c0:c1]``, size, colours and (built
    on first use) its mask inside the box."""

    __slots__ = ("r0", "c0", "r1", "c1", "size", "colours", "_cells", "_W", "_mask", "_sig")

    def __init__(self, cells: list, W: int, colours: tuple):
        rows = [p // W for p in cells]
        cols = [p % W for p in cells]
        self.r0, self.r1 = min(rows), max(rows) + 1
        self.c0, self.c1 = min(cols), max(cols) + 1
        self.size = len(cells)
        self.colours = colours
        self._cells, self._W, self._mask, self._sig = cells, W, None, None

    @property
    def shape_sig(self) -> tuple:
        """The object's shape, up to translation."""
        if self._sig is None:
            W, w = self._W, self.c1 - self.c0
            self._sig = (self.r1 - self.r0, w, tuple(sorted(
                (p // W - self.r0) * w + p % W - self.c0 for p in self._cells)))
        return self._sig

    @property
    def mask(self) -> np.ndarray:
        if self._mask is None:
            idx = np.asarray(self._cells)
            m = np.zeros((self.r1 - self.r0, self.c1 - self.c0), dtype=bool)
            m[idx // self._W - self.r0, idx % self._W - self.c0] = True
            self._mask = m
        return self._mask

    def box(self, g: np.ndarray) -> np.ndarray:
        return g[self.r0:self.r1, self.c0:self.c1]


_STEPS4 = ((-1, 0), (1, 0), (0, -1), (0, 1))
_STEPS8 = _STEPS4 + ((-1, -1), (-1, 1), (1, -1), (1, 1))
_OBJ_CACHE: dict = {}


def _objects(g: np.ndarray, kind: str) -> tuple[_Obj, ...]:
    """Connected components of the non-background cells, in reading order of their
    first cell. ``kind``: ``m4`` / ``m8`` one colour, 4- or 8-connected; ``x8`` any
    colours, 8-connected."""
    key = (kind, g.shape, g.tobytes())
    hit = _OBJ_CACHE.get(key)
    if hit is not None:
        return hit
    if len(_OBJ_CACHE) > 4096:
        _OBJ_CACHE.clear()
    bg = _bg(g)
    H, W = g.shape
    flat = g.ravel().tolist()
    seen = [False] * (H * W)
    steps = _STEPS4 if kind[1] == "4" else _STEPS8
    multi = kind[0] == "x"
    objs = []
    for s in range(H * W):
        if seen[s] or flat[s] == bg:
            continue
        col = flat[s]
        seen[s] = True
        stack, cells = [s], []
        while stack:
            p = stack.pop()
            cells.append(p)
            r, c = divmod(p, W)
            for dr, dc in steps:
                rr, cc = r + dr, c + dc
                if 0 <= rr < H and 0 <= cc < W:
                    q = rr * W + cc
                    if not seen[q]:
                        v = flat[q]
                        if v != bg and (multi or v == col):
                            seen[q] = True
                            stack.append(q)
        objs.append(_Obj(cells, W, (col,) if not multi else
                         tuple(sorted({flat[p] for p in cells}))))
    out = tuple(objs)
    _OBJ_CACHE[key] = out
    return out


def _unique_best(objs: Sequence, key) -> object | None:
    """The one item with the largest ``key`` (None when tied or empty)."""
    if not objs:
        return None
    vals = [key(o) for o in objs]
    best = max(vals)
    return objs[vals.index(best)] if vals.count(best) == 1 else None


def _odd_one(items: Sequence, sig) -> object | None:
    """The one item whose signature no other item shares (None unless exactly one)."""
    if len(items) < 3:
        return None
    sigs = [sig(o) for o in items]
    counts = Counter(sigs)
    lone = [o for o, s in zip(items, sigs) if counts[s] == 1]
    return lone[0] if len(lone) == 1 else None


def _shape_sig(o: _Obj):
    return o.shape_sig


_SELECT = {
    "largest": lambda objs: _unique_best(objs, lambda o: o.size),
    "smallest": lambda objs: _unique_best(objs, lambda o: -o.size),
    "most_colours": lambda objs: _unique_best(objs, lambda o: len(o.colours)),
    "odd_colour": lambda objs: _odd_one(objs, lambda o: o.colours),
    "odd_shape": lambda objs: _odd_one(objs, _shape_sig),
    "symmetric": lambda objs: _only(objs, lambda o: o.size > 1 and
                                    bool((o.mask == o.mask[:, ::-1]).all())),
}


def _only(objs: Sequence, test) -> object | None:
    """The one item passing ``test`` (None unless exactly one does)."""
    hits = [o for o in objs if test(o)]
    return hits[0] if len(hits) == 1 else None


# --------------------------------------------------------------------------------------
# program search: primitives, by family
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Primitive:
    """One grid program: ``fn(grid) -> grid | None``. ``cost`` counts toward a
    program's complexity; a ``first_only`` primitive only reads the task's own inputs
    (it is expensive, or only meaningful there)."""

    name: str
    cost: int
    fn: GridFn
    #: the family it belongs to (one of :data:`FAMILIES`)
    family: str
    first_only: bool = False
    #: only as a program's last step (its output is a feature grid for the colour map)
    final_only: bool = False
    #: the output's shape from the input's: "same", "swap" (transposed), "le" (no
    #: side grows) or a function ``(h, w) -> (H, W)``
    shape: object = "same"

    def may_give(self, shape: tuple, target: tuple) -> bool:
        """Can this primitive turn a grid of ``shape`` into one of ``target``?"""
        s = self.shape
        if s is None:
            return True
        if s == "same":
            return shape == target
        if s == "swap":
            return shape[::-1] == target
        if s == "le":
            return target[0] <= shape[0] and target[1] <= shape[1]
        return s(shape) == target


@dataclass(frozen=True)
class _Context:
    """What a task's primitive set depends on: its colours and its size ratios."""

    colours: tuple
    up: tuple   # (fy, fx) factors for tiling and upscaling
    down: tuple  # (fy, fx) factors for downscaling
    fixed: tuple  # the demonstration outputs' shape when they all share it


def _context(task: Task) -> _Context:
    grids = [p.input for p in task.train] + [p.input for p in task.test]
    colours = tuple(sorted({int(v) for g in grids for v in np.unique(g)}))
    up, down = {(2, 2), (3, 3)}, {(2, 2), (3, 3)}
    ups, downs = set(), set()
    for p in task.train:
        (h, w), (H, W) = p.input.shape, p.output.shape
        ups.add((H // h, W // w) if H % h == 0 and W % w == 0 else None)
        downs.add((h // H, w // W) if h % H == 0 and w % W == 0 else None)
    for learnt, into in ((ups, up), (downs, down)):
        if len(learnt) == 1 and None not in learnt and learnt != {(1, 1)}:
            into |= learnt
    shapes = {p.output.shape for p in task.train}
    fixed = tuple(shapes) if len(shapes) == 1 else ()
    up |= set(fixed)  # a 1x1 grid scales up to the fixed output shape
    return _Context(colours, tuple(sorted(up)), tuple(sorted(down)), fixed)


def _geometry(ctx: _Context) -> list[Primitive]:
    swap = ("rot90", "rot270", "transpose", "anti_transpose")
    return [Primitive(n, 1, f, "whole-grid transforms", shape="swap" if n in swap else "same")
            for n, f in DIHEDRAL.items() if n != "identity"]


# -- cropping ------------------------------------------------------------------------

def _crop_nonbg(g):
    bg = _bg(g)
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
    select = _SELECT[how]

    def fn(g):
        objs = _objects(g, kind)
        if len(objs) < 2:
            return None
        o = select(objs)
        if o is None:
            return None
        box = o.box(g)
        return np.where(o.mask, box, _bg(g)) if extract else box
    return fn


_KINDS = ("m4", "m8", "x8")


def _cropping(ctx: _Context) -> list[Primitive]:
    fam = "cropping"
    out = [Primitive("crop_nonbg", 1, _crop_nonbg, fam, shape="le"),
           Primitive("crop_inner", 1, _crop_inner, fam, shape="le")]
    for kind in _KINDS:
        for how in _SELECT:
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
    :func:`_cell_grid`)."""
    split = _cell_grid(g)
    return None if split is None else split[0]


def _cell_grid(g: np.ndarray) -> tuple[list[np.ndarray], int, int] | None:
    """The cells of a grid split by full rows / columns of one separator colour (at
    least 2 cells, all of one shape), with the number of cell rows and columns;
    separator colours other than the background are tried first."""
    bg = _bg(g)
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


def _halves(g: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray] | None:
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


def _half_masks(g: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The two equal halves of ``g`` (split by a separator line) as masks of their
    non-background cells, or None. The halves' own background is the grid's most common
    colour outside the split."""
    h = _halves(g, axis)
    if h is None or h[0].shape != h[1].shape:
        return None
    a, b = h
    bg = _bg(np.concatenate([a.ravel(), b.ravel()]))
    return a != bg, b != bg


def _bool_halves(axis, op):
    f = _BOOL[op]

    def fn(g):
        m = _half_masks(g, axis)
        return None if m is None else np.where(f(*m), MARK, MARK + 1).astype(np.int16)
    return fn


def _overlay_halves(axis, reverse):
    def fn(g):
        h = _halves(g, axis)
        if h is None or h[0].shape != h[1].shape:
            return None
        a, b = h[::-1] if reverse else h
        bg = _bg(np.concatenate([a.ravel(), b.ravel()]))
        return np.where(a != bg, a, b)
    return fn


def _cell_select(how):
    def fn(g):
        cells = _cells(g)
        if cells is None or len(cells) < 2:
            return None
        bg = _bg(g)
        if how == "odd":
            return _odd_one(cells, lambda x: x.tobytes())
        if how == "most_fg":
            return _unique_best(cells, lambda x: int((x != bg).sum()))
        if how == "least_fg":
            return _unique_best(cells, lambda x: -int((x != bg).sum()))
        if how == "most_colours":
            return _unique_best(cells, lambda x: len(np.unique(x)))
        return _unique_best(cells, lambda x: -len(np.unique(x)))
    return fn


def _overlay_cells(g):
    cells = _cells(g)
    if cells is None:
        return None
    bg = _bg(g)
    out = cells[0].copy()
    for x in cells[1:]:
        out = np.where(out != bg, out, x)
    return out


def _splitting(ctx: _Context) -> list[Primitive]:
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


# -- colour filters ------------------------------------------------------------------

def _keep_colour(c):
    def fn(g):
        if not (g == c).any():
            return None
        return np.where(g == c, g, _bg(g))
    return fn


def _drop_colour(c):
    def fn(g):
        bg = _bg(g)
        if c == bg or not (g == c).any():
            return None
        return np.where(g == c, bg, g)
    return fn


def _colour_filters(ctx: _Context) -> list[Primitive]:
    fam = "colour maps and filters"
    out = []
    for c in ctx.colours:
        out.append(Primitive(f"keep_{c}", 2, _keep_colour(c), fam))
        out.append(Primitive(f"drop_{c}", 2, _drop_colour(c), fam))
    return out


# -- symmetry ------------------------------------------------------------------------

def _mirror_and(flip):
    """Foreground cells whose mirror image is foreground too become the marker."""
    def fn(g):
        bg = _bg(g)
        fg = g != bg
        both = fg & flip(fg)
        if not both.any():
            return None
        return np.where(both, MARK, g).astype(np.int16)
    return fn


def _mirror_or(kind):
    def fn(g):
        bg = _bg(g)
        out = g.copy()
        if kind in ("rot4", "diag") and g.shape[0] != g.shape[1]:
            return None
        imgs = {"lr": [np.fliplr(g)], "ud": [np.flipud(g)],
                "lrud": [np.fliplr(g), np.flipud(g), np.rot90(g, 2)],
                "rot4": [np.rot90(g, 1), np.rot90(g, 2), np.rot90(g, 3)],
                "diag": [g.T]}[kind]
        for im in imgs:
            out = np.where(out == bg, im, out)
        return out
    return fn


def _symmetry_maps(g: np.ndarray, unknown: np.ndarray) -> list[np.ndarray]:
    """Mirror symmetries of ``g`` on its known cells: for each family (left-right,
    up-down, both, the two diagonals) the axis with the most agreeing known pairs and
    no disagreeing one, kept when it pairs up at least half the known cells. Each map
    is the flat index of every cell's mirror image (-1 outside the grid)."""
    H, W = g.shape
    rr, cc = np.indices((H, W))
    flat = g.ravel()
    known = ~unknown.ravel()
    n_known = int(known.sum())

    def score(r2, c2):
        ok = (r2 >= 0) & (r2 < H) & (c2 >= 0) & (c2 < W)
        src = np.where(ok, r2 * W + c2, 0).ravel()
        ok = ok.ravel()
        both = ok & known & known[src] & (src != np.arange(src.size))  # no self-pairs
        if (flat[both] != flat[src[both]]).any():
            return -1, None
        return int(both.sum()), np.where(ok, src, -1)

    fams = {
        "lr": [(rr, s - cc) for s in range(0, 2 * W - 1)],
        "ud": [(t - rr, cc) for t in range(0, 2 * H - 1)],
        "diag": [(cc + k, rr - k) for k in range(-W + 1, H)],
        "anti": [(s - cc, s - rr) for s in range(0, H + W - 1)],
    }
    maps, best_st = [], {}
    for name, cands in fams.items():
        best, best_map = 0, None
        for i, (r2, c2) in enumerate(cands):
            n, m = score(r2, c2)
            if n > best:
                best, best_map = n, m
                best_st[name] = i
        if best_map is not None and best * 2 >= n_known:
            maps.append(best_map)
    if "lr" in best_st and "ud" in best_st:  # the point symmetry through both axes
        n, m = score(best_st["ud"] - rr, best_st["lr"] - cc)
        if m is not None and n * 2 >= n_known:
            maps.append(m)
    return maps


def _complete(g: np.ndarray, unknown: np.ndarray) -> np.ndarray | None:
    """Fill the ``unknown`` cells of ``g`` from its mirror symmetries (None when no
    symmetry is found or some cell stays unknown)."""
    if not unknown.any() or unknown.all():
        return None
    maps = _symmetry_maps(g, unknown)
    if not maps:
        return None
    flat = g.ravel().copy()
    unk = unknown.ravel().copy()
    for _ in range(4):
        for m in maps:
            take = unk & (m >= 0)
            take[take] &= ~unk[m[take]]
            flat[take] = flat[m[take]]
            unk &= ~take
        if not unk.any():
            return flat.reshape(g.shape)
    return None


def _fill_unknown(complete, c, patch):
    """A primitive: the cells of colour ``c`` are unknown, ``complete`` fills them; with
    ``patch`` the result is only the filled patch (its bounding box)."""
    def fn(g):
        unknown = g == c
        out = complete(g, unknown)
        if out is None or not patch:
            return out
        rows, cols = np.nonzero(unknown)
        return out[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
    return fn


def _sym_fill(c, patch):
    return _fill_unknown(_complete, c, patch)


def _symmetry(ctx: _Context) -> list[Primitive]:
    fam = "symmetry completion"
    out = [Primitive(f"mirror_or_{k}", 1, _mirror_or(k), fam)
           for k in ("lr", "ud", "lrud", "rot4", "diag")]
    out += [Primitive("mirror_and_lr", 1, _mirror_and(np.fliplr), fam),
            Primitive("mirror_and_ud", 1, _mirror_and(np.flipud), fam)]
    for c in ctx.colours:
        out.append(Primitive(f"sym_fill_{c}", 2, _sym_fill(c, False), fam, first_only=True))
        out.append(Primitive(f"sym_patch_{c}", 2, _sym_fill(c, True), fam, first_only=True,
                                 shape="le"))
    return out


# -- tiling, mirroring and scaling ----------------------------------------------------

def fits(shape) -> bool:
    """Is ``shape`` a grid shape ARC allows (each side 1 to 30)?"""
    return 0 < shape[0] <= _MAX and 0 < shape[1] <= _MAX


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
        m = g != _bg(g)
        if invert:
            m = ~m
        return np.where(np.kron(m, np.ones_like(m)), np.tile(g, g.shape), _bg(g))
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
    bg = _bg(g)
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
    m = g != _bg(g)
    return np.where(np.kron(m, np.ones_like(m)), np.tile(neg, g.shape), _bg(g))


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
    bg = _bg(g)
    fg = g != bg
    out = g[fg.any(axis=1)][:, fg.any(axis=0)]
    return out if out.size else None


def _tiling(ctx: _Context) -> list[Primitive]:
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
        bg = _bg(g)
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


def _gravities(ctx: _Context) -> list[Primitive]:
    return [Primitive(f"gravity_{d}", 1, _gravity(k), "gravity")
            for k, d in enumerate(("down", "right", "up", "left"))]


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
    bg = _bg(g)
    free = g == bg
    edge = np.ones_like(free)
    edge[1:-1, 1:-1] = False
    reach = free & edge
    while True:
        nxt = (reach | _shift_or(reach, _STEPS4)) & free
        if (nxt == reach).all():
            break
        reach = nxt
    hole = free & ~reach
    if not hole.any():
        return None
    return np.where(hole, MARK, g).astype(np.int16)


def _outline(steps):
    def fn(g):
        bg = _bg(g)
        ring = _shift_or(g != bg, steps) & (g == bg)
        if not ring.any():
            return None
        return np.where(ring, MARK, g).astype(np.int16)
    return fn


def _interior(g):
    bg = _bg(g)
    fg = g != bg
    inner = fg & ~_shift_or(~np.pad(fg, 1), _STEPS4)[1:-1, 1:-1]
    if not inner.any():
        return None
    return np.where(inner, MARK, g).astype(np.int16)


def _fill_boxes(g):
    bg = _bg(g)
    out = g.astype(np.int16).copy()
    for o in _objects(g, "x8"):
        box = out[o.r0:o.r1, o.c0:o.c1]
        box[box == bg] = MARK
    return None if (out == g).all() else out


def _connect(axis, mark=False):
    """Background between two cells of one colour in a row (``axis`` 1) or column
    (``axis`` 0) takes that colour, or the marker."""
    def fn(g):
        bg = _bg(g)
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
        return None if (out == g).all() else out
    return fn


def _fills(ctx: _Context) -> list[Primitive]:
    fam = "outlines and fills"
    return [Primitive("fill_enclosed", 1, _fill_enclosed, fam),
            Primitive("outline8", 1, _outline(_STEPS8), fam),
            Primitive("outline4", 1, _outline(_STEPS4), fam),
            Primitive("interior", 1, _interior, fam),
            Primitive("fill_boxes", 1, _fill_boxes, fam),
            Primitive("connect_rows", 1, _connect(1), fam),
            Primitive("connect_cols", 1, _connect(0), fam),
            Primitive("connect_rows_mark", 1, _connect(1, True), fam),
            Primitive("connect_cols_mark", 1, _connect(0, True), fam)]


# -- objects: keep, drop, recolour ---------------------------------------------------

def _keep_object(kind, how):
    select = _SELECT[how]

    def fn(g):
        objs = _objects(g, kind)
        o = select(objs) if len(objs) >= 2 else None
        if o is None:
            return None
        out = np.full_like(g, _bg(g))
        box = out[o.r0:o.r1, o.c0:o.c1]
        box[o.mask] = o.box(g)[o.mask]
        return out
    return fn


def _drop_small(kind, size):
    def fn(g):
        out, bg = g.copy(), _bg(g)
        hit = False
        for o in _objects(g, kind):
            if o.size <= size:
                out[o.r0:o.r1, o.c0:o.c1][o.mask] = bg
                hit = True
        return out if hit else None
    return fn


def _recolour(kind, by):
    def fn(g):
        objs = _objects(g, kind)
        if len(objs) < 2:
            return None
        H, W = g.shape
        out = g.astype(np.int16).copy()
        sizes = [o.size for o in objs]
        big, small = max(sizes), min(sizes)
        for o in objs:
            if by == "size":
                v = 100 + o.size
            elif by == "rank":
                v = MARK if o.size == big else MARK + 1 if o.size == small else MARK + 2
            else:  # border
                v = MARK if (o.r0 == 0 or o.c0 == 0 or o.r1 == H or o.c1 == W) else MARK + 1
            out[o.r0:o.r1, o.c0:o.c1][o.mask] = v
        return out
    return fn


def _object_edits(ctx: _Context) -> list[Primitive]:
    fam = "largest or smallest object"
    out = []
    for kind in _KINDS:
        for how in ("largest", "smallest"):
            out.append(Primitive(f"keep_{how}_{kind}", 1, _keep_object(kind, how), fam))
    out += [Primitive("drop_size1_m8", 1, _drop_small("m8", 1), fam),
            Primitive("drop_size2_m8", 1, _drop_small("m8", 2), fam)]
    for kind in ("m4", "m8"):
        for by in ("size", "rank", "border"):
            out.append(Primitive(f"recolour_{by}_{kind}", 2 if by == "size" else 1,
                                 _recolour(kind, by), "colour maps and filters"))
    return out


# -- summaries: one colour, one value per block ------------------------------------

def _colour_of(how, kind=None):
    """A 1x1 grid: the colour of the largest / smallest object, or the most / least
    common non-background colour."""
    def fn(g):
        if kind is not None:
            objs = _objects(g, kind)
            o = _SELECT[how](objs) if len(objs) >= 2 else None
            return None if o is None else np.full((1, 1), o.colours[0], dtype=g.dtype)
        counts = np.bincount(g.ravel())
        counts[_bg(g)] = 0
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
        bg = _bg(g)
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
    split = _cell_grid(g)
    if split is None:
        return None
    cells, nr, nc = split
    bg = _bg(g)
    vals = []
    for x in cells:
        counts = np.bincount(x.ravel())
        if bg < counts.size:
            counts[bg] = 0
        vals.append(int(counts.argmax()) if counts.any() else bg)
    return np.array(vals, dtype=g.dtype).reshape(nr, nc)


def _summaries(ctx: _Context) -> list[Primitive]:
    one = lambda s: (1, 1)  # noqa: E731
    out = [Primitive(f"colour_{how}", 1, _colour_of(how), "colour maps and filters", shape=one)
           for how in ("most", "least")]
    for kind in _KINDS:
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


# -- halves and parts --------------------------------------------------------------

def _half(axis, second):
    def fn(g):
        h = _halves(g, axis)
        return None if h is None else h[int(second)]
    return fn


def _halves4(axis):
    """Both halves' cells compared: 10 where both are set, 11 only the first, 12 only
    the second, 13 neither."""
    def fn(g):
        m = _half_masks(g, axis)
        if m is None:
            return None
        fa, fb = m
        out = np.select([fa & fb, fa, fb], [MARK, MARK + 1, MARK + 2], MARK + 3)
        return out.astype(np.int16)
    return fn


def _parts(ctx: _Context) -> list[Primitive]:
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
        h = _halves(g, 0)
        if h is None:
            return None
        q = _halves(h[i], 1)
        return None if q is None else q[j]
    return fn


# -- periodic patterns ---------------------------------------------------------------

def _shift_ok(g, known, d, axis) -> bool:
    """Known cells ``d`` apart along ``axis`` all agree."""
    if d >= g.shape[axis]:
        return True
    a, b = (g[:-d], g[d:]) if axis == 0 else (g[:, :-d], g[:, d:])
    ka, kb = (known[:-d], known[d:]) if axis == 0 else (known[:, :-d], known[:, d:])
    both = ka & kb
    return bool((a[both] == b[both]).all())


def _period_complete(g: np.ndarray, unknown: np.ndarray) -> np.ndarray | None:
    """Fill ``unknown`` cells from the smallest rectangular period of the known ones."""
    if not unknown.any() or unknown.all():
        return None
    H, W = g.shape
    known = ~unknown
    pys = [d for d in range(1, H + 1) if _shift_ok(g, known, d, 0)]
    pxs = [d for d in range(1, W + 1) if _shift_ok(g, known, d, 1)]
    ii, jj = np.indices((H, W))
    vals = g[known].astype(np.int64)
    for _, py, px in sorted((py * px, py, px) for py in pys for px in pxs):
        if py == H and px == W:
            break
        cls = (ii % py) * px + jj % px
        lo = np.full(py * px, 1 << 20, dtype=np.int64)
        hi = np.full(py * px, -1, dtype=np.int64)
        np.minimum.at(lo, cls[known], vals)
        np.maximum.at(hi, cls[known], vals)
        seen = hi >= 0
        if (lo[seen] != hi[seen]).any():
            continue
        need = cls[unknown]
        if not seen[need].all():
            continue
        out = g.copy()
        out[unknown] = lo[need]
        return out
    return None


def _period_fill(c, patch):
    return _fill_unknown(_period_complete, c, patch)


def _periodic(ctx: _Context) -> list[Primitive]:
    fam = "symmetry completion"
    out = []
    for c in ctx.colours:
        out.append(Primitive(f"period_fill_{c}", 2, _period_fill(c, False), fam, first_only=True))
        out.append(Primitive(f"period_patch_{c}", 2, _period_fill(c, True), fam,
                             first_only=True, shape="le"))
    return out


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
        bg = _bg(g)
        out = g.copy()
        for k in dirs:  # quarter turns of "down"
            r = np.rot90(g, k)
            painted = np.rot90(_ffill_down(r, bg), -k)
            out = np.where(out == bg, painted, out)
        return None if (out == g).all() else out
    return fn


def _frame(g):
    out = g.astype(np.int16).copy()
    out[0, :], out[-1, :], out[:, 0], out[:, -1] = MARK, MARK, MARK, MARK
    return out


def _lines(ctx: _Context) -> list[Primitive]:
    fam = "outlines and fills"
    dirs = {"down": (0,), "right": (1,), "up": (2,), "left": (3,), "v": (0, 2), "h": (1, 3),
            "hv": (0, 1, 2, 3)}
    out = [Primitive(f"ray_{name}", 1, _rays(d), fam) for name, d in dirs.items()]
    out.append(Primitive("frame", 1, _frame, fam))
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
        bg = _bg(g)
        key = g.astype(np.int64)
        if kind in ("nbr4", "nbr8"):
            for n in _neighbours(g, _STEPS4 if kind == "nbr4" else _STEPS8, 10):
                key = key * 11 + n
        elif kind in ("fg4", "fg8"):
            for n in _neighbours(g, _STEPS4 if kind == "fg4" else _STEPS8, bg):
                key = key * 2 + (n != bg)
        else:  # count8
            key = key * 9 + sum((n != bg).astype(np.int64) for n in _neighbours(g, _STEPS8, bg))
        return key + MARK
    return fn


def _local_rules(ctx: _Context) -> list[Primitive]:
    fam = "local rules"
    return [Primitive(f"rule_{k}", 2 if k in ("fg4", "count8") else 3, _local_rule(k), fam,
                      final_only=True) for k in ("fg4", "count8", "fg8", "nbr4", "nbr8")]


_FAMILY_BUILDERS = (_geometry, _cropping, _splitting, _parts, _colour_filters, _symmetry,
                    _periodic, _tiling, _summaries, _gravities, _fills, _lines, _object_edits,
                    _local_rules)
#: The program families, as named in :attr:`Primitive.family`.
FAMILIES = ("whole-grid transforms", "cropping", "cells and halves", "colour maps and filters",
            "symmetry completion", "tiling and mirroring", "scaling", "gravity",
            "outlines and fills", "largest or smallest object", "local rules")


def primitives(task: Task) -> list[Primitive]:
    """The task's primitive set, in search order (cost, then name)."""
    ctx = _context(task)
    prims = [p for build in _FAMILY_BUILDERS for p in build(ctx)]
    return sorted(prims, key=lambda p: (p.cost, p.name))



def clear_object_cache() -> None:
    """Forget the connected components found so far (the search starts each task with
    an empty cache, so one task's grids do not decide another's memory)."""
    _OBJ_CACHE.clear()
