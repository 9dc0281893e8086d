"""Objects: the connected components of a grid (cached per grid), the ways one is
selected, and the family that keeps, drops or recolours objects."""
from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from .core import MARK, Context, Primitive, background_guess

__all__ = ["Obj", "STEPS4", "STEPS8", "find_objects", "unique_best", "odd_one", "SELECT",
           "KINDS", "object_edits", "clear_object_cache"]


class Obj:
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


STEPS4 = ((-1, 0), (1, 0), (0, -1), (0, 1))
STEPS8 = STEPS4 + ((-1, -1), (-1, 1), (1, -1), (1, 1))
_OBJ_CACHE: dict = {}


def find_objects(g: np.ndarray, kind: str) -> tuple[Obj, ...]:
    """Connected components of the non-background cells, in reading order of their
    first cell. ``kind``: ``m4`` / ``m8`` one colour, 4- or 8-connected; ``x8`` any
    colours, 8-connected."""
    key = (kind, g.shape, g.tobytes())
    hit = _OBJ_CACHE.get(key)
    if hit is not None:
        return hit
    if len(_OBJ_CACHE) > 4096:
        _OBJ_CACHE.clear()
    bg = background_guess(g)
    H, W = g.shape
    flat = g.ravel().tolist()
    seen = [False] * (H * W)
    steps = STEPS4 if kind[1] == "4" else STEPS8
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
        objs.append(Obj(cells, W, (col,) if not multi else
                         tuple(sorted({flat[p] for p in cells}))))
    out = tuple(objs)
    _OBJ_CACHE[key] = out
    return out


def unique_best(objs: Sequence, key) -> object | None:
    """The one item with the largest ``key`` (None when tied or empty)."""
    if not objs:
        return None
    vals = [key(o) for o in objs]
    best = max(vals)
    return objs[vals.index(best)] if vals.count(best) == 1 else None


def odd_one(items: Sequence, sig) -> object | None:
    """The one item whose signature no other item shares (None unless exactly one)."""
    if len(items) < 3:
        return None
    sigs = [sig(o) for o in items]
    counts = Counter(sigs)
    lone = [o for o, s in zip(items, sigs) if counts[s] == 1]
    return lone[0] if len(lone) == 1 else None


def _shape_sig(o: Obj):
    return o.shape_sig


SELECT = {
    "largest": lambda objs: unique_best(objs, lambda o: o.size),
    "smallest": lambda objs: unique_best(objs, lambda o: -o.size),
    "most_colours": lambda objs: unique_best(objs, lambda o: len(o.colours)),
    "odd_colour": lambda objs: odd_one(objs, lambda o: o.colours),
    "odd_shape": lambda objs: odd_one(objs, _shape_sig),
    "symmetric": lambda objs: _only(objs, lambda o: o.size > 1 and
                                    bool((o.mask == o.mask[:, ::-1]).all())),
}


def _only(objs: Sequence, test) -> object | None:
    """The one item passing ``test`` (None unless exactly one does)."""
    hits = [o for o in objs if test(o)]
    return hits[0] if len(hits) == 1 else None


KINDS = ("m4", "m8", "x8")


# -- objects: keep, drop, recolour ---------------------------------------------------

def _keep_object(kind, how):
    select = SELECT[how]

    def fn(g):
        objs = find_objects(g, kind)
        o = select(objs) if len(objs) >= 2 else None
        if o is None:
            return None
        out = np.full_like(g, background_guess(g))
        box = out[o.r0:o.r1, o.c0:o.c1]
        box[o.mask] = o.box(g)[o.mask]
        return out
    return fn


def _drop_small(kind, size):
    def fn(g):
        out, bg = g.copy(), background_guess(g)
        hit = False
        for o in find_objects(g, kind):
            if o.size <= size:
                out[o.r0:o.r1, o.c0:o.c1][o.mask] = bg
                hit = True
        return out if hit else None
    return fn


def _recolour(kind, by):
    def fn(g):
        objs = find_objects(g, kind)
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


def object_edits(ctx: Context) -> list[Primitive]:
    fam = "largest or smallest object"
    out = []
    for kind in KINDS:
        for how in ("largest", "smallest"):
            out.append(Primitive(f"keep_{how}_{kind}", 1, _keep_object(kind, how), fam))
    out += [Primitive("drop_size1_m8", 1, _drop_small("m8", 1), fam),
            Primitive("drop_size2_m8", 1, _drop_small("m8", 2), fam)]
    for kind in ("m4", "m8"):
        for by in ("size", "rank", "border"):
            out.append(Primitive(f"recolour_{by}_{kind}", 2 if by == "size" else 1,
                                 _recolour(kind, by), "colour maps and filters"))
    return out


def clear_object_cache() -> None:
    """Forget the connected components found so far (the search starts each task with
    an empty cache, so one task's grids do not decide another's memory)."""
    _OBJ_CACHE.clear()
