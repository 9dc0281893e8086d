"""Palette family: :func:`palette_metrics`, whether a prediction uses the right colours.

A grid's *palette* is the set of colours 0-9 on its valid cells (cells whose target
is not padding). A model can draw the right shapes in the wrong colours, or the right
colours in the wrong places; the palette metrics separate the first kind of error
from the second. Its counts are grids, grids with the target's palette, and the sum
of per-grid Jaccard indices; :class:`arcnb.metrics.streaming.PaletteMetrics` keeps
them as states.
"""
from __future__ import annotations

from ..errors import TensorError
from ..grids import check_pad_token
from ._tensors import _float_dtype, _out, _pred_target, _ratio, _torch

#: Names :func:`palette_metrics` returns.
PALETTE_METRIC_NAMES = ("palette_accuracy", "palette_jaccard", "n_grids")

_N_COLORS = 10
_CODES = _N_COLORS + 1  # 0-9 a colour, 10 = not a colour (or not a valid cell)


def palette_prepare(pred, target, pad_token):
    """``(pred, target, pad_token)`` checked, as tensors on one device."""
    pad_token = check_pad_token(pad_token)
    pred, target = _pred_target(pred, target)
    return pred, target, pad_token


def _presence(x, valid, B):
    """``[B, 10]`` booleans: colour ``c`` appears on a valid cell of grid ``b``."""
    torch = _torch()
    colour = (x >= 0) & (x <= 9)
    if valid is not None:
        colour = colour & valid
    code = torch.where(colour, x.long(), torch.full((), _N_COLORS, device=x.device,
                                                    dtype=torch.long))
    offset = torch.arange(B, device=x.device, dtype=torch.long).reshape(
        (B,) + (1,) * (x.dim() - 1)) * _CODES
    counts = torch.bincount((code + offset).reshape(-1), minlength=B * _CODES)
    return counts.reshape(B, _CODES)[:, :_N_COLORS] > 0


def palette_update(pred, target, *, pad_token=10) -> dict:
    """Counts for :func:`palette_metrics`: ``n_grids`` (grids with a valid cell),
    ``n_palette_exact`` (those whose predicted palette is the target's) and
    ``sum_jaccard`` (the sum of their per-grid Jaccard indices)."""
    torch = _torch()
    B = target.shape[0]
    valid = None if pad_token is None else target != pad_token
    t_colour = (target >= 0) & (target <= 9)
    bad = ~t_colour if valid is None else valid & ~t_colour
    if bool(bad.any()):
        raise TensorError("target holds a value that is neither a colour 0-9 nor pad_token")
    if B == 0:
        z = torch.zeros((), dtype=torch.int64, device=target.device)
        return {"n_grids": z, "n_palette_exact": z.clone(),
                "sum_jaccard": torch.zeros((), dtype=_float_dtype(target.device),
                                           device=target.device)}
    tp = _presence(target, valid, B)
    pp = _presence(pred, valid, B)
    has_cell = tp.any(-1)  # a valid target cell is always a colour
    inter = (tp & pp).sum(-1)
    union = (tp | pp).sum(-1)
    dt = _float_dtype(target.device)
    jaccard = inter.to(dt) / union.clamp_min(1).to(dt)
    exact = (tp == pp).all(-1) & has_cell
    return {"n_grids": has_cell.sum(), "n_palette_exact": exact.sum(),
            "sum_jaccard": torch.where(has_cell, jaccard, torch.zeros_like(jaccard)).sum()}


def palette_compute(counts) -> dict:
    """The metrics of :func:`palette_metrics` from the counts of :func:`palette_update`."""
    out = {
        "palette_accuracy": _ratio(counts["n_palette_exact"], counts["n_grids"]),
        "palette_jaccard": _ratio(counts["sum_jaccard"], counts["n_grids"]),
        "n_grids": counts["n_grids"],
    }
    return {k: _out(v) for k, v in out.items()}


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
