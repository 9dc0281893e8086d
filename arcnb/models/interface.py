"""The model interface arcnb evaluates.

A model is any ``torch.nn.Module`` (or TorchScript / ``torch.export`` program) that
maps padded test inputs to per-cell logits:

* **input** ``inputs``: ``int64 [B, 30, 30]``, the test input grids (colours 0-9)
  top-left aligned on a 30x30 canvas filled with the pad token 10;
* **optional demonstrations** (models whose ``reads_demonstrations`` attribute is
  True, or TorchScript / exported programs taking four inputs):
  ``demo_inputs`` and ``demo_outputs`` ``int64 [B, N, 30, 30]`` (the task's
  demonstration pairs, padded the same way; ``N`` is the largest number of pairs in
  the batch) and ``demo_mask`` ``bool [B, N]`` (False for the filler pairs of tasks
  with fewer than ``N`` pairs, whose grids are all padding). Call:
  ``model(inputs, demo_inputs, demo_outputs, demo_mask)``;
* **output**: logits ``float [B, 11, H, W]`` over the 10 colours and padding
  (class 10), any ``H, W`` in 1-30 (usually 30x30).

The predicted grid is ``crop_padding(argmax(logits, dim=1))``
(:func:`arcnb.grids.crop_padding`): the top-left rectangle up to the last row and
column holding a non-padding cell. A padding cell left *inside* that rectangle makes
the prediction invalid (it is written as ``null`` and scored wrong): the crop never
repairs a shape. An all-padding prediction is invalid too.

Under test-time augmentation the whole task (demonstrations and test input) is
transformed before it reaches the model; see :mod:`arcnb.augment`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import ArcnbError
from ..grids import MAX_SIZE, PAD_TOKEN, crop_padding, pad_grids

__all__ = ["N_CLASSES", "CANVAS", "ModelAdapter", "pad_batch", "pad_demonstrations",
           "decode_logits", "is_valid_prediction"]

#: Output classes: colours 0-9 plus the pad class 10.
N_CLASSES = 11
#: Side of the padded canvas every input is placed on.
CANVAS = MAX_SIZE


def pad_batch(grids: Sequence[np.ndarray], *, device=None):
    """Stack grids on the 30x30 canvas: ``int64 [B, 30, 30]`` with pad 10."""
    return pad_grids(grids, pad_token=PAD_TOKEN, size=(CANVAS, CANVAS), device=device)


def pad_demonstrations(demos: Sequence[Sequence[tuple[np.ndarray, np.ndarray]]], *, device=None):
    """Pad each item's demonstration pairs: ``(demo_inputs, demo_outputs, demo_mask)``.

    ``demos[b]`` lists item ``b``'s (input, output) pairs. Shapes
    ``[B, N, 30, 30]``, ``[B, N, 30, 30]``, ``[B, N]`` with ``N = max(len(demos[b]), 1)``.
    """
    import torch

    n = max([len(d) for d in demos] + [1])
    di = np.full((len(demos), n, CANVAS, CANVAS), PAD_TOKEN, dtype=np.int64)
    do = np.full_like(di, PAD_TOKEN)
    mask = np.zeros((len(demos), n), dtype=bool)
    for b, pairs in enumerate(demos):
        for j, (x, y) in enumerate(pairs):
            di[b, j, : x.shape[0], : x.shape[1]] = x
            do[b, j, : y.shape[0], : y.shape[1]] = y
            mask[b, j] = True
    t = [torch.from_numpy(a) for a in (di, do, mask)]
    if device is not None:
        t = [a.to(device) for a in t]
    return tuple(t)


def is_valid_prediction(grid: np.ndarray | None) -> bool:
    """True for a cropped prediction with every cell a colour 0-9."""
    return grid is not None and grid.size > 0 and int(grid.max()) <= 9 and int(grid.min()) >= 0


def decode_logits(logits) -> tuple[list[np.ndarray | None], np.ndarray]:
    """Turn logits ``[B, 11, H, W]`` into cropped grids and mean confidences.

    Returns ``(grids, confidence)``: ``grids[b]`` is the cropped ``int8`` grid, or
    None when it is invalid (padding inside the crop, or all padding);
    ``confidence[b]`` is the mean over the crop rectangle of the winning class's
    softmax probability (NaN for an all-padding prediction). The argmax, softmax
    and rectangle means are computed on the logits' device for the whole batch;
    only the ``[B, H, W]`` argmax moves to the CPU for the crop.
    """
    import torch

    if logits.ndim != 4 or logits.shape[1] != N_CLASSES:
        raise ArcnbError(f"the model returned logits of shape {tuple(logits.shape)}; "
                         f"expected [B, {N_CLASSES}, H, W] (colours 0-9 plus padding)")
    logits = logits.float()
    prob_max, pred = torch.softmax(logits, dim=1).max(dim=1)  # [B, H, W]
    valid = pred != PAD_TOKEN
    B, H, W = pred.shape
    rows = valid.any(dim=2)  # [B, H]
    cols = valid.any(dim=1)  # [B, W]
    ar_h = torch.arange(H, device=pred.device)
    ar_w = torch.arange(W, device=pred.device)
    last_r = torch.where(rows, ar_h, -1).max(dim=1).values  # [B]
    last_c = torch.where(cols, ar_w, -1).max(dim=1).values
    rect = (ar_h[None, :, None] <= last_r[:, None, None]) & (ar_w[None, None, :] <= last_c[:, None, None])
    n = rect.sum(dim=(1, 2))
    conf = torch.where(n > 0, (prob_max * rect).sum(dim=(1, 2)) / n.clamp(min=1),
                       torch.full_like(n, float("nan"), dtype=prob_max.dtype))
    pred_np = pred.to(torch.int8).cpu().numpy()
    grids = []
    for b in range(B):
        g = crop_padding(pred_np[b], pad_token=PAD_TOKEN)
        grids.append(g if is_valid_prediction(g) else None)
    return grids, conf.double().cpu().numpy()


class ModelAdapter:
    """A loaded model plus how to call it.

    ``reads_demonstrations``: pass the demonstration tensors. ``source`` describes
    where it came from (checkpoint format, builder). Call :meth:`logits`.
    """

    def __init__(self, model: Any, *, reads_demonstrations: bool = False, source: dict | None = None):
        self.model = model
        self.reads_demonstrations = bool(reads_demonstrations)
        self.source = dict(source or {})

    def to(self, device):
        if hasattr(self.model, "to"):
            try:
                self.model = self.model.to(device)
            except (RuntimeError, NotImplementedError, AttributeError):  # exported programs
                pass
        return self

    def eval(self):
        if hasattr(self.model, "eval"):
            try:
                self.model.eval()
            except (RuntimeError, NotImplementedError):
                pass
        return self

    def logits(self, inputs, demos=None):
        """Run the model; ``demos`` is the tuple from :func:`pad_demonstrations`."""
        if self.reads_demonstrations:
            if demos is None:
                raise ArcnbError("this model reads demonstrations but none were given")
            out = self.model(inputs, *demos)
        else:
            out = self.model(inputs)
        if isinstance(out, (tuple, list)):
            out = out[0]
        if isinstance(out, dict):
            out = out.get("logits", next(iter(out.values())))
        return out

    def __repr__(self) -> str:
        return (f"ModelAdapter({type(self.model).__name__}, "
                f"reads_demonstrations={self.reads_demonstrations}, source={self.source})")
