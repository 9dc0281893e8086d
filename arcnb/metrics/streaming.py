"""Streaming versions of :mod:`arcnb.metrics` as ``torchmetrics.Metric`` classes.

Also importable from :mod:`arcnb.modules` (the documented path). This module imports
torch and torchmetrics; ``import arcnb.metrics`` does not import it.

Every state is a count (a sum) produced by the same ``_<family>_update`` function
the functional metric uses, reduced across processes with ``dist_reduce_fx="sum"``;
``compute`` calls the same ``_<family>_compute``. So the result over many batches
equals the one-shot result over their concatenation, whatever the batch sizes and
however the batches are spread over processes.

Use in a LightningModule::

    from arcnb.modules import ArcMetricCollection

    class Model(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.val_metrics = ArcMetricCollection(prefix="val_", pad_token=10)

        def validation_step(self, batch, batch_idx):
            src, tgt = batch
            pred = self(src).argmax(-1)
            self.val_metrics.update(pred, tgt, source=src)

        def on_validation_epoch_end(self):
            self.log_dict(self.val_metrics.compute())  # val_grid_accuracy, ...
            self.val_metrics.reset()
"""
from __future__ import annotations

from typing import Any, Sequence

import torch
from torchmetrics import Metric, MetricCollection

from ..errors import ParameterError, TensorError
from ..grids import check_pad_token
from ._tensors import _as_tensor, _check_same_shape, _first_device, _pred_target
from .grid import (DEFAULT_TOLERANCES, DEFAULT_WEIGHTS, check_convention, check_tolerances,
                   check_weights, grid_compute, grid_count_names, grid_update,
                   prepare_grid_inputs, tolerances_for_update)
from .latent import ACTIVE_DIM_THRESHOLD, latent_compute, latent_update
from .palette import palette_compute, palette_prepare, palette_update
from .reconstruction import (N_COLORS, PREDICTED_CODES, check_background, reconstruction_compute,
                             reconstruction_update)
from .token import REQUIRED_ARGUMENT, token_compute, token_prepare, token_update

__all__ = [
    "GridMetrics",
    "ReconstructionMetrics",
    "TokenAccuracy",
    "LatentDiagnostics",
    "PaletteMetrics",
    "ArcMetricCollection",
]


def _add(metric: Metric, name: str, value: torch.Tensor) -> None:
    state = getattr(metric, name)
    setattr(metric, name, state + value.to(device=state.device, dtype=state.dtype))


class GridMetrics(Metric):
    """Streaming :func:`arcnb.metrics.grid_metrics` (grid, cell, row / column,
    tolerance, dense objective and, when ``source`` is passed, change metrics).

    ``update(pred, target, source=None)`` takes one padded batch ``[B, H, W]`` (or
    ``[B, L]``); ``compute()`` returns the dict of 0-dim tensors that
    ``grid_metrics`` returns over all batches seen (and all processes). Pass
    ``source`` for every batch or for none (mixing raises ValueError).

    >>> m = GridMetrics()
    >>> m.update(torch.tensor([[[1, 2], [3, 4]]]), torch.tensor([[[1, 2], [3, 5]]]))
    >>> m.update(torch.tensor([[[7]]]), torch.tensor([[[7]]]))
    >>> r = m.compute()
    >>> round(float(r["grid_accuracy"]), 4), round(float(r["cell_accuracy"]), 4)
    (0.5, 0.8)
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(self, *, pad_token: int | None = 10,
                 tolerances: Sequence[float] = DEFAULT_TOLERANCES,
                 weights: Sequence[float] = DEFAULT_WEIGHTS,
                 convention: str = "arcnb", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pad_token = check_pad_token(pad_token)
        self.tolerances = check_tolerances(tolerances)
        self.weights = check_weights(weights)
        self.convention = check_convention(convention)
        self._reference = convention == "reference"
        tols = tolerances_for_update(self.tolerances)
        self._count_names = grid_count_names(tols, True, self._reference)
        for name in self._count_names:
            if name.startswith("sum_"):
                default = torch.tensor(0.0, dtype=torch.float64)
            else:
                default = torch.tensor(0, dtype=torch.int64)
            self.add_state(name, default=default, dist_reduce_fx="sum")
        self.add_state("n_batches_with_source", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("n_batches_without_source", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, pred, target, source=None) -> None:  # type: ignore[override]
        pred, target, source, _ = prepare_grid_inputs(pred, target, source, self.pad_token)
        counts = grid_update(pred, target, source, pad_token=self.pad_token,
                             tolerances=self.tolerances, reference=self._reference)
        for name, value in counts.items():
            _add(self, name, value)
        flag = "n_batches_with_source" if source is not None else "n_batches_without_source"
        setattr(self, flag, getattr(self, flag) + 1)

    def compute(self) -> dict:  # type: ignore[override]
        with_src = int(self.n_batches_with_source) > 0
        if with_src and int(self.n_batches_without_source) > 0:
            raise ParameterError("GridMetrics got batches with and without source; pass "
                                 "source for every batch or for none")
        names = grid_count_names(tolerances_for_update(self.tolerances), with_src,
                                 self._reference)
        counts = {n: getattr(self, n) for n in names}
        return grid_compute(counts, tolerances=self.tolerances, weights=self.weights,
                            convention=self.convention)


class ReconstructionMetrics(Metric):
    """Streaming :func:`arcnb.metrics.reconstruction_metrics`; states are the
    ``[10, 12]`` colour confusion counts, the number of grids and of perfect grids.

    ``compute()`` also returns ``"color_confusion"`` (``[10, 10]``, or ``[10, 11]``
    with padding predicted in column 10) for the cells seen so far.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(self, *, background: int | None = 0, pad_token: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.background = check_background(background)
        self.pad_token = check_pad_token(pad_token)
        self.add_state("confusion",
                       default=torch.zeros(N_COLORS, PREDICTED_CODES, dtype=torch.int64),
                       dist_reduce_fx="sum")
        self.add_state("n_grids", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("n_perfect", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, pred, target) -> None:  # type: ignore[override]
        pred, target = _pred_target(pred, target)
        counts = reconstruction_update(pred, target, pad_token=self.pad_token)
        for name, value in counts.items():
            _add(self, name, value)

    def compute(self) -> dict:  # type: ignore[override]
        out = reconstruction_compute({"confusion": self.confusion, "n_grids": self.n_grids,
                                      "n_perfect": self.n_perfect},
                                      background=self.background)
        ncol = N_COLORS if self.pad_token is None else N_COLORS + 1
        out["color_confusion"] = self.confusion[:, :ncol].clone()
        return out


class TokenAccuracy(Metric):
    """Streaming :func:`arcnb.metrics.token_accuracy`; ``ignore_index`` is required
    (``None`` counts every position)."""

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(self, *, ignore_index=REQUIRED_ARGUMENT, **kwargs: Any) -> None:
        if ignore_index is REQUIRED_ARGUMENT:
            raise TypeError("TokenAccuracy() needs ignore_index= (an int, or None); it is "
                            "never guessed from the data")
        super().__init__(**kwargs)
        self.ignore_index = ignore_index
        for name in ("n_tokens", "n_correct", "n_sequences", "n_sequences_correct"):
            self.add_state(name, default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, logits_or_pred, target) -> None:  # type: ignore[override]
        pred, target = token_prepare(logits_or_pred, target, self.ignore_index)
        for name, value in token_update(pred, target, ignore_index=self.ignore_index).items():
            _add(self, name, value)

    def compute(self) -> dict:  # type: ignore[override]
        return token_compute({n: getattr(self, n) for n in
                              ("n_tokens", "n_correct", "n_sequences",
                               "n_sequences_correct")})


class LatentDiagnostics(Metric):
    """Streaming :func:`arcnb.metrics.latent_diagnostics` over ``[N, n_dims]`` batches
    of posterior means and log-variances (states: per-dimension sums)."""

    is_differentiable = False
    higher_is_better = None
    full_state_update = False

    def __init__(self, n_dims: int, *, active_threshold: float = ACTIVE_DIM_THRESHOLD,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.n_dims = int(n_dims)
        self.active_threshold = float(active_threshold)
        self.add_state("n", default=torch.tensor(0), dist_reduce_fx="sum")
        for name in ("sum_kl", "sum_mu", "sum_mu2", "sum_var"):
            self.add_state(name, default=torch.zeros(self.n_dims, dtype=torch.float64),
                           dist_reduce_fx="sum")

    def update(self, mu, logvar) -> None:  # type: ignore[override]
        device = _first_device(mu, logvar)
        mu = _as_tensor(mu, "mu", device, integer=False)
        logvar = _as_tensor(logvar, "logvar", device, integer=False)
        if mu.dim() != 2 or mu.shape[1] != self.n_dims:
            raise TensorError(f"mu has shape {tuple(mu.shape)}; expected [N, {self.n_dims}]")
        _check_same_shape(mu, logvar, "mu", "logvar")
        for name, value in latent_update(mu, logvar).items():
            _add(self, name, value)

    def compute(self) -> dict:  # type: ignore[override]
        return latent_compute({n: getattr(self, n) for n in
                               ("n", "sum_kl", "sum_mu", "sum_mu2", "sum_var")},
                               active_threshold=self.active_threshold)


class PaletteMetrics(Metric):
    """Streaming :func:`arcnb.metrics.palette_metrics`; states are the number of
    grids, of grids with the target's palette and the sum of per-grid Jaccard indices.

    >>> m = PaletteMetrics()
    >>> m.update(torch.tensor([[[1, 2], [2, 0]]]), torch.tensor([[[1, 2], [0, 0]]]))
    >>> m.update(torch.tensor([[[3, 3]]]), torch.tensor([[[3, 4]]]))
    >>> r = m.compute()
    >>> float(r["palette_accuracy"]), float(r["palette_jaccard"])
    (0.5, 0.75)
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(self, *, pad_token: int | None = 10, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pad_token = check_pad_token(pad_token)
        self.add_state("n_grids", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("n_palette_exact", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("sum_jaccard", default=torch.tensor(0.0, dtype=torch.float64),
                       dist_reduce_fx="sum")

    def update(self, pred, target) -> None:  # type: ignore[override]
        pred, target, _ = palette_prepare(pred, target, self.pad_token)
        for name, value in palette_update(pred, target, pad_token=self.pad_token).items():
            _add(self, name, value)

    def compute(self) -> dict:  # type: ignore[override]
        return palette_compute({n: getattr(self, n) for n in
                                ("n_grids", "n_palette_exact", "sum_jaccard")})


class ArcMetricCollection(MetricCollection):
    """Every grid and change metric at once, under the names of
    :func:`~arcnb.metrics.grid_metrics`.

    ``ArcMetricCollection(prefix="val_")`` computes ``val_grid_accuracy``,
    ``val_exact_match``, ``val_cell_accuracy``, ``val_grid_tol_0p90`` /
    ``0p95`` / ``0p99``, ``val_row_all_correct_rate``, ``val_col_all_correct_rate``,
    ``val_dense_grid_objective``, ``val_n_grids`` and, when ``source`` is passed to
    ``update``, ``val_change_recall``, ``val_change_precision``,
    ``val_transformation_f1``, ``val_copy_rate``, ``val_change_accuracy``. Every value
    is a 0-dim tensor, ready for ``self.log_dict(collection.compute())``.

    Keyword arguments other than ``prefix`` / ``postfix`` go to :class:`GridMetrics`.

    >>> c = ArcMetricCollection(prefix="val_")
    >>> c.update(torch.tensor([[[1, 2], [3, 4]]]), torch.tensor([[[1, 2], [3, 5]]]),
    ...          source=torch.tensor([[[1, 2], [3, 3]]]))
    >>> r = c.compute()
    >>> float(r["val_cell_accuracy"]), float(r["val_change_recall"])
    (0.75, 1.0)
    """

    def __init__(self, *, prefix: str | None = "val_", postfix: str | None = None,
                 **grid_kwargs: Any) -> None:
        super().__init__({"grid": GridMetrics(**grid_kwargs)}, prefix=prefix, postfix=postfix,
                         compute_groups=False)
