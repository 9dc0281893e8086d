"""Gallery tiles: (truth, prediction) pairs rendered into square slots of *tokens*
(indices into one colour look-up table), batched in numpy.

Tokens 0-9 are the ARC colours; 10-18 are padding, background, the difference
panel's right / wrong / mismatch cells, cell lines and hatches. :func:`_render_tiles`
fills ``[N, 3, slot, slot]`` tokens; the gallery turns the whole figure's tokens into
RGBA with one look-up in ``_LUT4``.
"""
from __future__ import annotations

import numpy as np

from .palette import (_BACKGROUND, _MISMATCH_COLOR, _MISMATCH_HATCH, DIFF_OK_COLOR,
                      DIFF_WRONG_COLOR, LINE_COLOR, PAD_COLOR, PAD_HATCH_COLOR, PALETTE, _rgb)

# token layout of the gallery's look-up table (values 0-9 are the ARC colours)
(_T_PAD, _T_BG, _T_OK, _T_WRONG, _T_MISMATCH, _T_LINE, _T_DIFF_LINE, _T_PAD_HATCH,
 _T_MISMATCH_HATCH) = range(10, 19)
_LUT = np.array([_rgb(c) for c in PALETTE]
                + [_rgb(c) for c in (PAD_COLOR, _BACKGROUND, DIFF_OK_COLOR, DIFF_WRONG_COLOR,
                                     _MISMATCH_COLOR, LINE_COLOR, "#C8C8C8", PAD_HATCH_COLOR,
                                     _MISMATCH_HATCH)], dtype=np.uint8)
_LUT4 = np.ascontiguousarray(np.concatenate([_LUT, np.full((len(_LUT), 1), 255, np.uint8)], axis=1))


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
