"""Metric functions.

``partial_credit`` scores one predicted grid against its truth. The tensor
metrics for training loops live here too:

* :func:`grid_metrics`: grid accuracy, exact match, cell accuracy, tolerance
  accuracies, row / column rates, the dense grid objective and, given the source
  grids, the change (transformation) metrics;
* :func:`reconstruction_metrics`, :func:`color_confusion`, :func:`latent_diagnostics`
  (reconstruction and latent-space diagnostics);
* :func:`token_accuracy` (the ignore index is required, never guessed);
* :func:`palette_metrics` (whether each predicted grid uses the target's colours);
* :func:`compiled`: ``torch.compile`` of :func:`grid_metrics` (one graph) for a
  training loop that logs it every step.

Conventions. Batches are ``[B, H, W]`` grids (or ``[B, L]`` sequences) padded with
``pad_token`` (default 10; a value in 0-9 raises ValueError because colour 0 is black,
never padding; ``pad_token=None`` means no padding). *Valid* cells are those whose
target is not padding. Inputs may be torch tensors on any device with any integer
dtype, numpy arrays or nested lists; results are dicts of 0-dim float32 tensors on
the input's device (nothing is moved to the CPU). A ratio whose denominator is empty
is NaN, never 0 or 1.

Structure (the torchmetrics model). Every metric family has a count-based core:
``_<family>_update(...)`` turns one batch into a dict of counts (sums), and
``_<family>_compute(counts, ...)`` turns counts into ratios. The functions below are
``compute(update(batch))``; the streaming classes in :mod:`arcnb.metrics.streaming`
(also importable from :mod:`arcnb.modules`) keep the same counts as states, add them
over batches (and processes, ``dist_reduce_fx="sum"``) and call the same
``compute``. So streaming over any split of the batches equals the one-shot result
over their concatenation.

Layout of the package (one module per family; importing it does not import torch,
only calling a tensor metric does):

* :mod:`~arcnb.metrics.credit`: :func:`partial_credit` (numpy);
* :mod:`~arcnb.metrics.grid`: the grid family's API, options, counts and ratios;
* :mod:`~arcnb.metrics.grid_kernel`: the contract of the grid family's two kernels,
  :mod:`~arcnb.metrics.grid_numpy` (CPU) and :mod:`~arcnb.metrics.grid_torch`
  (any device);
* :mod:`~arcnb.metrics.reconstruction`, :mod:`~arcnb.metrics.latent`,
  :mod:`~arcnb.metrics.token`, :mod:`~arcnb.metrics.palette`: the other families;
* :mod:`~arcnb.metrics.streaming`: the torchmetrics classes (imports torch and
  torchmetrics; not imported here);
* :mod:`~arcnb.metrics._tensors`: input conversion and checks shared by the families.
"""
from __future__ import annotations

from .credit import partial_credit
from .grid import (CHANGE_METRIC_NAMES, CONVENTIONS, GRID_METRIC_NAMES, compiled,
                   grid_metrics, tolerance_name)
from .grid import DEFAULT_TOLERANCES, DEFAULT_WEIGHTS  # noqa: F401 (importable, not in __all__)
from .latent import ACTIVE_DIM_THRESHOLD, latent_diagnostics
from .palette import PALETTE_METRIC_NAMES, palette_metrics
from .reconstruction import color_confusion, reconstruction_metrics
from .token import token_accuracy

__all__ = [
    "partial_credit",
    "grid_metrics",
    "compiled",
    "reconstruction_metrics",
    "color_confusion",
    "latent_diagnostics",
    "token_accuracy",
    "palette_metrics",
    "tolerance_name",
    "GRID_METRIC_NAMES",
    "CHANGE_METRIC_NAMES",
    "PALETTE_METRIC_NAMES",
    "CONVENTIONS",
    "ACTIVE_DIM_THRESHOLD",
]
