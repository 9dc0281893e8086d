"""Reconstruction family: :func:`reconstruction_metrics` and :func:`color_confusion`.

Both are built on one count, the ``[10, 12]`` confusion of (target colour, predicted
code) over valid cells; :class:`arcnb.metrics.streaming.ReconstructionMetrics` keeps
the same counts as states.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..errors import TensorError
from ..grids import check_pad_token
from ._tensors import (_as_tensor, _check_same_shape, _first_device, _out, _pred_target,
                       _ratio, _torch)

#: The ARC colours 0-9: the confusion's rows (target colours).
N_COLORS = 10
#: The confusion's columns: predicted 0-9, 10 = padding, 11 = any other value.
PREDICTED_CODES = 12


def _confusion_counts(pred, target, pad_token):
    """``[10, 12]`` counts of (target colour, predicted code) over valid cells.

    Predicted code: the colour 0-9, 10 for ``pad_token``, 11 for any other value.
    Raises ValueError if a valid target cell is not a colour 0-9 (one scalar sync).
    """
    torch = _torch()
    device = target.device
    v = None if pad_token is None else target != pad_token
    t_colour = (target >= 0) & (target <= 9)
    bad_t = (v & ~t_colour) if v is not None else ~t_colour
    if bool(bad_t.any()):
        raise TensorError("target holds a value that is neither a colour 0-9 nor pad_token")
    p_colour = (pred >= 0) & (pred <= 9)
    code = torch.where(p_colour, pred.long(), torch.full((), 11, device=device, dtype=torch.long))
    if pad_token is not None:
        code = torch.where(pred == pad_token, torch.full((), 10, device=device, dtype=torch.long), code)
    idx = target.long().clamp(0, 9) * PREDICTED_CODES + code
    dump = N_COLORS * PREDICTED_CODES
    if v is not None:
        idx = torch.where(v, idx, torch.full((), dump, device=device, dtype=torch.long))
    counts = torch.bincount(idx.reshape(-1), minlength=dump + 1)[:dump]
    return counts.reshape(N_COLORS, PREDICTED_CODES)


def reconstruction_update(pred, target, *, pad_token=None) -> dict:
    """Counts for :func:`reconstruction_metrics`: the ``[10, 12]`` confusion counts,
    ``n_grids`` (grids with a valid cell) and ``n_perfect`` (those whose valid cells
    are all correct)."""
    torch = _torch()
    conf = _confusion_counts(pred, target, pad_token)
    B = target.shape[0]
    if B == 0:
        z = torch.zeros((), dtype=torch.int64, device=target.device)
        return {"confusion": conf, "n_grids": z, "n_perfect": z.clone()}
    eq = pred == target
    if pad_token is None:
        v = torch.ones_like(eq)
    else:
        v = target != pad_token
    g_valid = v.reshape(B, -1).sum(-1)
    g_wrong = (v > eq).reshape(B, -1).sum(-1)
    nonempty = g_valid > 0
    return {"confusion": conf, "n_grids": nonempty.sum(),
            "n_perfect": (nonempty & (g_wrong == 0)).sum()}


def reconstruction_compute(counts: Mapping[str, Any], *, background: int | None = 0) -> dict:
    """The metrics of :func:`reconstruction_metrics` from the counts of
    :func:`reconstruction_update`."""
    torch = _torch()
    conf = counts["confusion"]
    diag = torch.diagonal(conf[:, :N_COLORS])
    per_colour_total = conf.sum(-1)
    per_colour = _ratio(diag, per_colour_total)
    present = per_colour_total > 0
    n_present = present.sum()
    balanced = _ratio(torch.where(present, per_colour, torch.zeros_like(per_colour)).sum(), n_present)
    obj_mask = torch.ones(N_COLORS, dtype=torch.bool, device=conf.device)
    if background is not None:
        obj_mask[background] = False
    out = {
        "pixel_accuracy": _ratio(diag.sum(), per_colour_total.sum()),
        "perfect_recon_rate": _ratio(counts["n_perfect"], counts["n_grids"]),
        "per_color_accuracy": per_colour,
        "balanced_accuracy": balanced,
        "object_accuracy": _ratio(diag[obj_mask].sum(), per_colour_total[obj_mask].sum()),
        "n_grids": counts["n_grids"],
    }
    return {k: _out(v) for k, v in out.items()}


def check_background(background):
    """``background`` as an int colour 0-9, or None."""
    if background is None:
        return None
    if isinstance(background, bool) or not isinstance(background, (int, np.integer)) \
            or not 0 <= int(background) <= 9:
        raise TensorError(f"background must be a colour 0-9 or None, got {background!r}")
    return int(background)


def reconstruction_metrics(pred, target, *, background: int | None = 0,
                           pad_token: int | None = None) -> dict:
    """Reconstruction metrics of a batch of grids.

    Over valid cells (all cells when ``pad_token=None``), summed over the batch:

    * ``pixel_accuracy`` = correct cells / cells;
    * ``perfect_recon_rate`` = grids whose valid cells are all correct / grids with a
      valid cell;
    * ``per_color_accuracy``: tensor of 10; for colour c, cells with target c
      predicted c / cells with target c (NaN for a colour absent from the target);
    * ``balanced_accuracy`` = mean of ``per_color_accuracy`` over present colours;
    * ``object_accuracy`` = correct cells / cells, over cells whose target is not
      ``background`` (None: every colour counts as object);
    * ``n_grids``: grids with a valid cell.

    A predicted value that is neither a colour nor padding is simply wrong. A valid
    target cell outside 0-9 raises ValueError.

    >>> import torch
    >>> m = reconstruction_metrics(torch.tensor([[[0, 1], [1, 1]]]), torch.tensor([[[0, 1], [2, 1]]]))
    >>> float(m["pixel_accuracy"]), float(m["balanced_accuracy"])
    (0.75, 0.6666666865348816)
    """
    background = check_background(background)
    pad_token = check_pad_token(pad_token)
    pred, target = _pred_target(pred, target)
    counts = reconstruction_update(pred, target, pad_token=pad_token)
    return reconstruction_compute(counts, background=background)


def color_confusion(pred, target, *, pad_token: int | None = None):
    """Confusion counts of colours over valid cells: rows = true colour 0-9,
    columns = predicted colour 0-9, plus an 11th column (index 10) counting cells
    predicted as padding when ``pad_token`` is given. Returns an int64 tensor
    ``[10, 10]`` (``pad_token=None``) or ``[10, 11]`` on the input's device.

    Accepts a single grid ``[H, W]`` or a batch of any shape. Raises ValueError for a
    valid target cell outside 0-9 or a prediction that is neither a colour nor the
    pad token.

    >>> import torch
    >>> color_confusion(torch.tensor([[0, 1]]), torch.tensor([[0, 2]]))[2, 1].item()
    1
    """
    pad_token = check_pad_token(pad_token)
    device = _first_device(pred, target)
    pred = _as_tensor(pred, "pred", device)
    target = _as_tensor(target, "target", device)
    _check_same_shape(pred, target, "pred", "target")
    conf = _confusion_counts(pred, target, pad_token)
    if bool(conf[:, 11].sum() > 0):
        raise TensorError(
            "pred holds a value that is neither a colour 0-9 nor pad_token "
            f"(pad_token={pad_token}); pass the pad token your model predicts"
        )
    if pad_token is None:
        return conf[:, :N_COLORS].contiguous()
    return conf[:, :N_COLORS + 1].contiguous()
