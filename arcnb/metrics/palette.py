"""Palette family: :func:`palette_metrics`, whether a prediction uses the right colours.

A grid's *palette* is the set of colours 0-9 on its valid cells (cells whose target
is not padding). A model can draw the right shapes in the wrong colours, or the right
colours in the wrong places; the palette metrics separate the first kind of error
from the second. Its counts are grids, grids with the target's palette, and the sum
of per-grid Jaccard indices; :class:`arcnb.metrics.streaming.PaletteMetrics` keeps
them as states.
"""
from __future__ import annotations

import math

from ..errors import TensorError
from ..grids import check_pad_token
from ._tensors import _constant, _fits, _float_dtype, _out, _pred_target, _ratio, _torch

#: Names :func:`palette_metrics` returns.
PALETTE_METRIC_NAMES = ("palette_accuracy", "palette_jaccard", "n_grids")


def palette_prepare(pred, target, pad_token):
    """``(pred, target, pad_token)`` checked, as tensors on one device."""
    pad_token = check_pad_token(pad_token)
    pred, target = _pred_target(pred, target)
    return pred, target, pad_token


# A cell's codes: the target's value clamped to [-2, 11] (padding: its own code, -1 or
# 10, or 12 for another pad token; -2 and 11 stand for every value beyond, never
# padding), the prediction's clamped to [-1, 10]; 0-9 are the colours. Shifted (by two
# and by one) they index the bins of a grid: 12 x 15 (prediction, target).
_T_CODES = 15
_P_CODES = 12
_BINS = _T_CODES * _P_CODES
_COLOURS = slice(2, 12)  # the target bins of the colours 0-9
_P_COLOURS = slice(1, 11)  # the prediction bins of the colours 0-9


def _pad_bin(pad_token, dtype):
    """The target bin of padding (None: no cell is padding)."""
    if pad_token is None or not _fits(pad_token, dtype):
        return None
    return {-1: 1, 10: 12}.get(pad_token, 14)


def _clamped(x, low, high):
    return x.clamp(low, high) if x.dtype.is_signed else x.clamp(max=high)


def _bins(pred, target, pad_bin, pad_token):
    """``[B, 12, 15]`` counts of each grid's (prediction code, target code) pairs: one
    key per cell (``grid * 180 + 15 * (pred + 1) + target + 2``) counted at once, in
    the inputs' own dtypes (int32 keys unless an input or the bins need int64)."""
    torch = _torch()
    B = target.shape[0]
    n = B * _BINS
    tc = _clamped(target, -2, 11)
    if pad_bin == 14:  # a pad token the clamp does not keep apart
        tc = torch.where(target == pad_token, _constant(12, tc.dtype, tc.device, ("pal-pad",)),
                         tc)
    if tc.dtype == torch.int8:  # 15 * 10 + 12 does not fit
        tc = tc.to(torch.int16)
    pc = _clamped(pred, -1, 10)
    if tc.dtype == pc.dtype or (tc.dtype.is_signed and tc.dtype.itemsize > pc.dtype.itemsize):
        s = tc.add_(pc, alpha=_T_CODES)  # tc is a fresh tensor of ours
    else:
        s = torch.add(tc, pc, alpha=_T_CODES)
    eager_cpu = s.device.type == "cpu" and not torch.compiler.is_compiling()
    # int32 keys where bincount takes them (scatter_add_ wants int64 indices)
    wide = s.dtype == torch.int64 or not eager_cpu or not _fits(n + _BINS, torch.int32)
    kdt = torch.int64 if wide else torch.int32
    offs = torch.arange(_T_CODES + 2, n + _T_CODES + 2, _BINS, device=s.device,
                        dtype=kdt).view((B,) + (1,) * (s.dim() - 1))
    # (a cast then an add in place: faster than one add that promotes)
    key = (s if s.dtype == kdt else s.to(kdt)).add_(offs).reshape(-1)
    if eager_cpu:
        counts = torch.bincount(key, minlength=n)
    else:  # bincount would wait for the device (it reads the largest key); atomics instead
        one = _constant(1, torch.int64, key.device, ("pal-one",))
        counts = torch.zeros(n, dtype=torch.int64, device=key.device).scatter_add_(
            0, key, one.expand(key.shape))
    return counts.view(B, _P_CODES, _T_CODES)


def _weights(pad_bin, device, which: int):
    """``[15]`` int64 weights on the target bins: the valid non-colours (errors,
    ``which`` 0), the valid cells (``which`` 1)."""
    torch = _torch()
    valid = tuple(0 if i == pad_bin else 1 for i in range(_T_CODES))
    bad = tuple(v if not 2 <= i <= 11 else 0 for i, v in enumerate(valid))
    return _constant((bad, valid)[which], torch.int64, device, ("pal-w", pad_bin, which))


def palette_update(pred, target, *, pad_token=10) -> dict:
    """Counts for :func:`palette_metrics`: ``n_grids`` (grids with a valid cell),
    ``n_palette_exact`` (those whose predicted palette is the target's) and
    ``sum_jaccard`` (the sum of their per-grid Jaccard indices).

    One pass over the two batches, in their own integer dtypes: each cell's pair of
    codes counted in one ``bincount`` (``scatter_add_`` off the CPU and under
    ``torch.compile``: no wait for the device), then the palettes, their
    intersections and unions from those ``[B, 12, 15]`` counts. A valid target cell
    that is not a colour raises :class:`~arcnb.errors.TensorError` on the CPU;
    elsewhere (where raising means waiting for the device) it makes ``sum_jaccard``
    NaN instead."""
    torch = _torch()
    pad_bin = _pad_bin(pad_token, target.dtype)
    c = _bins(pred, target, pad_bin, pad_token)
    w_bad, w_valid = (_weights(pad_bin, target.device, i) for i in (0, 1))
    tm = c.sum(1)                                         # [B, 15] target codes
    bad = (tm * w_bad).sum()                              # valid target cells, no colour
    eager_cpu = target.device.type == "cpu" and not torch.compiler.is_compiling()
    if eager_cpu and bool(bad):
        raise TensorError("target holds a value that is neither a colour 0-9 nor pad_token")
    tp = tm[:, _COLOURS] > 0                              # [B, 10] target palette
    pp = (c[:, _P_COLOURS] * w_valid).sum(-1) > 0         # [B, 10] on the valid cells
    inter = (tp & pp).sum(-1)
    union = (tp | pp).sum(-1)                             # 0: no valid cell
    has_cell = union > 0
    dt = _float_dtype(target.device)
    jaccard = torch.div(inter, union.to(dt)).nansum()     # 0 / 0 for a grid without cells
    if not eager_cpu:
        jaccard = torch.where(bad > 0, _constant(math.nan, dt, target.device, ("palette-bad-target",)),
                              jaccard)
    return {"n_grids": has_cell.sum(), "n_palette_exact": (has_cell & (inter == union)).sum(),
            "sum_jaccard": jaccard}


def palette_compute(counts) -> dict:
    """The metrics of :func:`palette_metrics` from the counts of :func:`palette_update`."""
    torch = _torch()
    # one vector (float: the sum of Jaccard indices is one), one ratio, one cast
    v = torch.stack([counts["n_palette_exact"], counts["sum_jaccard"], counts["n_grids"]])
    out = _out(torch.cat([_ratio(v[:2], v[2]), v[2:]])).unbind()
    return dict(zip(PALETTE_METRIC_NAMES, out))


def palette_metrics(pred, target, *, pad_token: int | None = 10) -> dict:
    """Whether each predicted grid uses the target's colours, over a padded batch.

    ``pred`` and ``target`` are ``[B, H, W]`` (or ``[B, L]``) integer batches padded
    with ``pad_token`` (``None``: no padding). A grid's palette is the set of colours
    0-9 on its valid cells (``target != pad_token``); a predicted value that is not a
    colour (padding predicted inside the grid, or any other number) adds nothing to
    the predicted palette. Grids whose target is all padding are left out.

    * ``palette_accuracy`` = #grids whose predicted palette equals the target's /
      #grids;
    * ``palette_jaccard`` = mean over grids of the Jaccard index of the two palettes
      (the number of colours in both / the number of colours in either);
    * ``n_grids``: the grid denominator (NaN ratios when it is 0).

    >>> r = palette_metrics([[[1, 2], [2, 0]], [[3, 3], [3, 3]]],
    ...                     [[[1, 2], [0, 0]], [[3, 4], [10, 10]]])
    >>> float(r["palette_accuracy"]), float(r["palette_jaccard"]), float(r["n_grids"])
    (0.5, 0.75, 2.0)
    """
    pred, target, pad_token = palette_prepare(pred, target, pad_token)
    return palette_compute(palette_update(pred, target, pad_token=pad_token))
