"""Input conversion, checks and ratio helpers shared by every metric family.

torch is imported lazily (inside the functions), so ``import arcnb.metrics`` stays
free of torch until a tensor metric is called.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import TensorError


def _torch():
    import torch

    return torch


def _first_device(*xs):
    torch = _torch()
    devices = {x.device for x in xs if isinstance(x, torch.Tensor)}
    if len(devices) > 1:
        raise TensorError(f"inputs are on different devices: {sorted(map(str, devices))}")
    return devices.pop() if devices else torch.device("cpu")


def _as_tensor(x: Any, name: str, device, *, integer: bool = True):
    """``x`` as a torch tensor on ``device`` (tensors already there stay untouched)."""
    torch = _torch()
    if isinstance(x, torch.Tensor):
        # an integer tensor never requires grad: used as it is (a detach is an operation)
        t = x.detach() if x.requires_grad else x
    else:
        if x is None:
            raise TensorError(f"{name} is None")
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as exc:  # ragged nested lists
            raise TensorError(f"{name} is not a rectangular array: {exc}") from None
        if arr.dtype == object:
            raise TensorError(f"{name} is not a rectangular array of numbers")
        if arr.dtype.kind == "u" and arr.dtype.itemsize > 1:
            arr = arr.astype(np.int64)  # torch lacks some unsigned dtypes
        if any(st < 0 for st in arr.strides):
            arr = arr.copy()  # a flipped or rotated view (np.flip, np.rot90); torch refuses those
        t = torch.as_tensor(arr, device=device)
    if integer and (t.is_floating_point() or t.is_complex() or t.dtype == torch.bool):
        raise TensorError(
            f"{name} has dtype {t.dtype}; expected integer class indices "
            "(take the argmax of logits first)"
        )
    return t


def _check_same_shape(a, b, na: str, nb: str) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise TensorError(f"{na} has shape {tuple(a.shape)} but {nb} has shape {tuple(b.shape)}")


def _check_batch(t, name: str) -> None:
    if t.dim() < 2:
        raise TensorError(
            f"{name} has shape {tuple(t.shape)}; expected a batch [B, H, W] or [B, L] "
            "(wrap a single grid as grid[None])"
        )


def _pred_target(pred, target):
    """``pred`` and ``target`` as integer tensors on one device (the first tensor's),
    ``target`` a batch and ``pred`` of its shape."""
    device = _first_device(pred, target)
    pred = _as_tensor(pred, "pred", device)
    target = _as_tensor(target, "target", device)
    _check_batch(target, "target")
    _check_same_shape(pred, target, "pred", "target")
    return pred, target


def _float_dtype(device):
    torch = _torch()
    return torch.float32 if device.type == "mps" else torch.float64


def _ratio(num, den):
    """``num / den`` as float, NaN where ``den == 0`` (works elementwise)."""
    torch = _torch()
    dt = _float_dtype(num.device)
    num = num.to(dt)
    den = den.to(dt)
    return torch.where(den > 0, num / den.clamp_min(1e-300 if dt == torch.float64 else 1e-30),
                       torch.full_like(num, math.nan))


def _out(x):
    """Final form of a metric: float32 on the same device."""
    torch = _torch()
    return x.to(torch.float32)


_CONSTANTS: dict = {}


def _constant(data, dtype, device, key):
    """A small constant tensor (``data``: nested tuples of numbers) on ``device``,
    made once per ``(key, dtype, device)`` and kept.

    Made without waiting for the device: on CUDA the numbers go through pinned
    memory with a non-blocking copy (a plain copy from host memory waits for the
    GPU). Under ``torch.compile`` the tensor is made in the graph instead (a
    constant of the compiled code)."""
    torch = _torch()
    if torch.compiler.is_compiling():
        return torch.tensor(data, dtype=dtype, device=device)
    full = (key, dtype, str(device))
    t = _CONSTANTS.get(full)
    if t is None:
        t = torch.tensor(data, dtype=dtype)
        if device.type == "cuda":
            t = t.pin_memory().to(device, non_blocking=True)
        elif device.type != "cpu":
            t = t.to(device)
        _CONSTANTS[full] = t
    return t


def _fits(value: int, dtype) -> bool:
    """Whether ``value`` is representable in the integer ``dtype`` (torch or numpy)."""
    info = np.iinfo(dtype) if isinstance(dtype, np.dtype) else _torch().iinfo(dtype)
    return int(info.min) <= value <= int(info.max)
