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
  (class 10), ``H, W >= 1`` (usually 30x30).

The predicted grid is ``crop_padding(argmax(logits, dim=1))``
(:func:`arcnb.grids.crop_padding`): the top-left rectangle up to the last row and
column holding a non-padding cell. A padding cell left *inside* that rectangle makes
the prediction invalid (it is written as ``null`` and scored wrong): the crop never
repairs a shape. An all-padding prediction is invalid too, and so is a crop larger
than 30x30 (no ARC grid is), and the whole prediction when its logits hold a NaN or
``+inf``, or a cell whose 11 logits are all ``-inf`` (``-inf`` alone, to mask a
class, is fine): such logits have no meaningful argmax.

A model that fails (its ``forward`` raises, or returns something other than a
tensor of logits) stops the run with one :class:`~arcnb.errors.ArcnbError` line.
A ``torch.export`` program exported with a fixed batch size is called with batches
of exactly that size (a smaller batch is padded by repeating its last input and the
padded rows are dropped; a larger one is split); one exported with a fixed number of
demonstration pairs gets filler pairs up to that number, and a task with more pairs
is an error naming the fix (export with a dynamic dimension, ``torch.export.Dim``).

**The task-id hook** (for models that learn one embedding per task, and for the
``task-id`` probes of :mod:`arcnb.probes`): a model whose ``reads_task_ids`` attribute
is True is called with one more keyword argument, ``task_ids`` (a list of ``B``
strings: the id of the task each input of the batch is asked about), as
``model(inputs, ..., task_ids=task_ids)``. A model with ``solve(task, attempts)``
reads it as ``task.id``. The ``task-id-blank`` probe hands the empty string, the
``task-id-random`` probe another task's id.

Under test-time augmentation the whole task (demonstrations and test input) is
transformed before it reaches the model; see :mod:`arcnb.augment`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import ArcnbError
from ..grids import MAX_SIZE, PAD_TOKEN, grid_problem, pad_grids

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
    """True for a cropped prediction of 1x1 to 30x30 cells, every cell a colour 0-9
    (:func:`arcnb.grids.grid_problem` finds nothing)."""
    return grid is not None and grid_problem(grid) is None


def decode_logits(logits) -> tuple[list[np.ndarray | None], np.ndarray]:
    """Turn logits ``[B, 11, H, W]`` into cropped grids and mean confidences.

    Returns ``(grids, confidence)``: ``grids[b]`` is the cropped ``int8`` grid, or
    None when it is invalid (padding inside the crop, all padding, larger than
    30x30, or non-finite logits: see the module docstring); ``confidence[b]`` is the
    mean over the crop rectangle of the winning class's softmax probability (NaN for
    an all-padding prediction or non-finite logits). The argmax, softmax and
    rectangle means, each grid's crop and whether it is valid are computed on the
    logits' device for the whole batch; one transfer a batch brings the argmax (int8),
    the crop sizes and the confidences to the CPU, where each grid is cut out.
    """
    import torch

    if logits.ndim != 4 or logits.shape[1] != N_CLASSES or min(logits.shape[2:]) < 1:
        raise ArcnbError(f"the model returned logits of shape {tuple(logits.shape)}; "
                         f"expected [B, {N_CLASSES}, H, W] (colours 0-9 plus padding, "
                         "H and W at least 1)")
    logits = logits.float()
    prob_max, pred = torch.softmax(logits, dim=1).max(dim=1)  # [B, H, W]
    # a cell's softmax is NaN exactly when its logits hold a NaN or +inf or are all
    # -inf, and max propagates NaN: such a prediction has no meaningful argmax
    finite = ~torch.isnan(prob_max).flatten(1).any(dim=1)  # [B]
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
    conf = torch.where((n > 0) & finite, (prob_max * rect).sum(dim=(1, 2)) / n.clamp(min=1),
                       torch.full_like(n, float("nan"), dtype=prob_max.dtype))
    # a valid prediction (is_valid_prediction of the crop): finite, not all padding, no
    # padding inside the crop (the argmax is 0-10), at most 30x30; decided here for the
    # whole batch, so the host only cuts each grid out (no per-grid check)
    ok = finite & (n > 0) & ~(rect & ~valid).flatten(1).any(dim=1) & (last_r < MAX_SIZE) \
        & (last_c < MAX_SIZE)
    sizes = torch.stack([torch.where(ok, last_r + 1, 0), last_c + 1]).to(torch.int32)
    # one transfer a batch: the argmax, the sizes and the confidences as one byte buffer
    packed = torch.cat([pred.to(torch.int8).flatten(), sizes.flatten().view(torch.int8),
                        conf.double().view(torch.int8)]).cpu().numpy()
    pred_np = packed[:B * H * W].reshape(B, H, W)
    hs, ws = packed[B * H * W:B * (H * W + 8)].view(np.int32).reshape(2, B)
    conf_np = packed[B * (H * W + 8):].view(np.float64).copy()  # aligned
    grids = [pred_np[b, :h, :w].copy() if h else None
             for b, (h, w) in enumerate(zip(hs.tolist(), ws.tolist()))]
    return grids, conf_np


class ModelAdapter:
    """A loaded model plus how to call it.

    ``reads_demonstrations``: pass the demonstration tensors. ``source`` describes
    where it came from (checkpoint format, builder). ``fixed_batch`` /
    ``fixed_demos``: the batch size / number of demonstration pairs the model only
    accepts (exported programs with static shapes); batches are padded or split to
    fit (see the module docstring). Call :meth:`logits`.
    """

    def __init__(self, model: Any, *, reads_demonstrations: bool = False, source: dict | None = None,
                 fixed_batch: int | None = None, fixed_demos: int | None = None):
        self.model = model
        self.reads_demonstrations = bool(reads_demonstrations)
        self.source = dict(source or {})
        self.fixed_batch = None if fixed_batch is None else int(fixed_batch)
        self.fixed_demos = None if fixed_demos is None else int(fixed_demos)
        if self.fixed_batch is not None:
            self.source["fixed_batch"] = self.fixed_batch
        if self.fixed_demos is not None:
            self.source["fixed_demonstrations"] = self.fixed_demos

    def to(self, device):
        """Move the model to ``device`` (an exported program stays where it is)."""
        if hasattr(self.model, "to"):
            try:
                self.model = self.model.to(device)
            except (RuntimeError, NotImplementedError, AttributeError):  # exported programs
                pass
        return self

    def eval(self):
        """Put the model in evaluation mode; returns the adapter."""
        if hasattr(self.model, "eval"):
            try:
                self.model.eval()
            except (RuntimeError, NotImplementedError):
                pass
        return self

    @property
    def reads_task_ids(self) -> bool:
        """Whether the model takes the task ids (its ``reads_task_ids`` attribute; see the
        module docstring)."""
        return bool(getattr(self.model, "reads_task_ids", False))

    def logits(self, inputs, demos=None, task_ids=None):
        """Run the model; ``demos`` is the tuple from :func:`pad_demonstrations`;
        ``task_ids`` (one string per input) reach a model that reads them."""
        import torch

        if self.reads_demonstrations and demos is None:
            raise ArcnbError("this model reads demonstrations but none were given")
        if not self.reads_demonstrations:
            demos = None
        if demos is not None and self.fixed_demos is not None:
            demos = _fit_demonstrations(demos, self.fixed_demos)
        ids = list(task_ids) if task_ids is not None and self.reads_task_ids else None
        n = self.fixed_batch
        if n is None or inputs.shape[0] == n:
            return self._call(inputs, demos, ids)
        outs = []
        for start in range(0, inputs.shape[0], n):
            x = inputs[start:start + n]
            d = None if demos is None else tuple(t[start:start + n] for t in demos)
            k = x.shape[0]
            part = None if ids is None else ids[start:start + n]
            if part is not None and k < n:
                part = part + [part[-1]] * (n - k)
            if k < n:  # repeat the last input: the model only takes batches of n
                x = torch.cat([x, x[-1:].expand(n - k, *x.shape[1:])])
                d = None if d is None else tuple(torch.cat([t, t[-1:].expand(n - k, *t.shape[1:])])
                                                  for t in d)
            outs.append(self._call(x, d, part)[:k])
        return torch.cat(outs)

    def _call(self, inputs, demos, task_ids=None):
        import torch

        try:
            kw = {} if task_ids is None else {"task_ids": task_ids}
            out = self.model(inputs, **kw) if demos is None else self.model(inputs, *demos, **kw)
        except Exception as exc:  # noqa: BLE001 - the model's failure: one line, not a traceback
            lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()] or [""]
            # TorchScript puts its own frame first and the model's error last
            line = lines[-1] if "TorchScript interpreter" in lines[0] else lines[0]
            raise ArcnbError(f"the model failed on a batch of {inputs.shape[0]} inputs: "
                             f"{type(exc).__name__}: {line[:300]}") from None
        if isinstance(out, (tuple, list)) and out:
            out = out[0]
        if isinstance(out, dict) and out:
            out = out.get("logits", next(iter(out.values())))
        if not isinstance(out, torch.Tensor):
            raise ArcnbError(f"the model returned a {type(out).__name__}, not a tensor of "
                             f"logits [B, {N_CLASSES}, H, W]")
        return out

    def __repr__(self) -> str:
        return (f"ModelAdapter({type(self.model).__name__}, "
                f"reads_demonstrations={self.reads_demonstrations}, source={self.source})")


def _fit_demonstrations(demos, n: int):
    """Pad ``(demo_inputs, demo_outputs, demo_mask)`` with filler pairs to exactly
    ``n`` pairs; more than ``n`` real pairs is an error."""
    import torch

    di, do, mask = demos
    have = di.shape[1]
    if have == n:
        return demos
    if have > n and bool(mask[:, n:].any()):
        raise ArcnbError(f"the model was exported for exactly {n} demonstration pairs per task, "
                         f"but a task here has {int(mask.sum(dim=1).max())}; export it with a "
                         "dynamic demonstration dimension (torch.export.Dim)")
    if have > n:
        return di[:, :n], do[:, :n], mask[:, :n]
    fill = torch.full((di.shape[0], n - have, *di.shape[2:]), PAD_TOKEN, dtype=di.dtype,
                      device=di.device)
    return (torch.cat([di, fill], dim=1), torch.cat([do, fill.to(do.dtype)], dim=1),
            torch.cat([mask, torch.zeros(mask.shape[0], n - have, dtype=mask.dtype,
                                         device=mask.device)], dim=1))
