"""Completion families: cells of a masking colour (or missing background) filled from
the grid's own mirror symmetries or from its smallest repeating period."""
from __future__ import annotations

import numpy as np

from .core import MARK, Context, Primitive, background_guess

__all__ = ["symmetry", "fill_unknown", "periodic"]

# -- symmetry ------------------------------------------------------------------------

def _mirror_and(flip):
    """Foreground cells whose mirror image is foreground too become the marker."""
    def fn(g):
        bg = background_guess(g)
        fg = g != bg
        both = fg & flip(fg)
        if not both.any():
            return None
        return np.where(both, MARK, g).astype(np.int16)
    return fn


def _mirror_or(kind):
    def fn(g):
        bg = background_guess(g)
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


def fill_unknown(complete, c, patch):
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
    return fill_unknown(_complete, c, patch)


def symmetry(ctx: Context) -> list[Primitive]:
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
    return fill_unknown(_period_complete, c, patch)


def periodic(ctx: Context) -> list[Primitive]:
    fam = "symmetry completion"
    out = []
    for c in ctx.colours:
        out.append(Primitive(f"period_fill_{c}", 2, _period_fill(c, False), fam, first_only=True))
        out.append(Primitive(f"period_patch_{c}", 2, _period_fill(c, True), fam,
                             first_only=True, shape="le"))
    return out
