"""Token family: :func:`token_accuracy` with an explicit ignore index.

Its counts are valid / correct tokens and sequences;
:class:`arcnb.metrics.streaming.TokenAccuracy` keeps them as states.
"""
from __future__ import annotations

import numpy as np

from ._tensors import _as_tensor, _first_device, _out, _ratio, _torch
from ..errors import TensorError

#: The default of ``ignore_index``: it has none, it must be given (None included).
REQUIRED_ARGUMENT = object()


def token_prepare(logits_or_pred, target, ignore_index):
    """``(pred, target)`` checked, as integer tensors on one device (logits reduced to
    their argmax)."""
    torch = _torch()
    if ignore_index is not None and (isinstance(ignore_index, bool)
                                     or not isinstance(ignore_index, (int, np.integer))):
        raise TensorError(f"ignore_index must be an int or None, got {ignore_index!r}")
    device = _first_device(logits_or_pred, target)
    target = _as_tensor(target, "target", device)
    x = _as_tensor(logits_or_pred, "logits_or_pred", device, integer=False)
    if x.dim() == target.dim() + 1 and tuple(x.shape[:-1]) == tuple(target.shape):
        if not x.is_floating_point():
            raise TensorError("logits_or_pred has one more dimension than target but is not "
                              "floating point; expected logits [..., V]")
        pred = x.argmax(-1)
    elif tuple(x.shape) == tuple(target.shape):
        if x.is_floating_point() or x.dtype == torch.bool or x.is_complex():
            raise TensorError(
                "logits_or_pred has the shape of target but is not integer: pass "
                "predictions as integers, or logits with a last class dimension"
            )
        pred = x
    else:
        raise TensorError(
            f"logits_or_pred has shape {tuple(x.shape)}; expected {tuple(target.shape)} "
            f"(predictions) or {tuple(target.shape)} + (V,) (logits)"
        )
    return pred, target


def token_update(pred, target, *, ignore_index) -> dict:
    """Counts for :func:`token_accuracy`: valid tokens, correct valid tokens, and
    sequences (first dimension) with a valid token / with all valid tokens correct."""
    torch = _torch()
    eq = pred == target
    v = torch.ones_like(eq) if ignore_index is None else target != ignore_index
    out = {"n_tokens": v.sum(), "n_correct": (eq & v).sum()}
    if target.dim() >= 2 and target.shape[0] > 0:
        B = target.shape[0]
        s_valid = v.reshape(B, -1).sum(-1)
        s_wrong = (v > eq).reshape(B, -1).sum(-1)
        out["n_sequences"] = (s_valid > 0).sum()
        out["n_sequences_correct"] = ((s_valid > 0) & (s_wrong == 0)).sum()
    else:
        z = torch.zeros((), dtype=torch.int64, device=target.device)
        out["n_sequences"] = z
        out["n_sequences_correct"] = z.clone()
    return out


def token_compute(counts) -> dict:
    """The accuracies of :func:`token_accuracy` from the counts of :func:`token_update`."""
    out = {
        "token_accuracy": _ratio(counts["n_correct"], counts["n_tokens"]),
        "sequence_accuracy": _ratio(counts["n_sequences_correct"], counts["n_sequences"]),
        "n_tokens": counts["n_tokens"],
    }
    return {k: _out(v) for k, v in out.items()}


def token_accuracy(logits_or_pred, target, *, ignore_index=REQUIRED_ARGUMENT) -> dict:
    """Token accuracy with an explicit ignore index.

    ``ignore_index`` is required (pass ``None`` to count every position); it is never
    guessed from the data: a rule such as "targets <= 10 mean 0 is padding" drops
    every real 0 (black in ARC). ``logits_or_pred`` is either logits with a last class
    dimension (``target.shape + (V,)``, floating point; argmax over the last
    dimension) or integer predictions of the target's shape.

    * ``token_accuracy`` = ``|pred == target & target != ignore_index|`` /
      ``|target != ignore_index|`` (NaN when nothing is valid, never 0);
    * ``sequence_accuracy`` = sequences (first dimension) whose valid tokens are all
      correct / sequences with a valid token (NaN for a 1-D target);
    * ``n_tokens``: valid tokens.

    >>> import torch
    >>> float(token_accuracy(torch.tensor([[0, 3, 0]]), torch.tensor([[0, 3, -100]]),
    ...                      ignore_index=-100)["token_accuracy"])
    1.0
    """
    if ignore_index is REQUIRED_ARGUMENT:
        raise TypeError("token_accuracy() needs ignore_index= (an int, or None for no "
                        "ignored positions); it is never guessed from the data")
    pred, target = token_prepare(logits_or_pred, target, ignore_index)
    return token_compute(token_update(pred, target, ignore_index=ignore_index))
