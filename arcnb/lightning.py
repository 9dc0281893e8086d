"""PyTorch Lightning integration (optional extra: ``pip install "arcnb[lightning]"``).

:class:`ArcMetricsCallback` feeds the streaming metric collection
(:class:`arcnb.modules.ArcMetricCollection`) from what ``validation_step`` returns and
logs it at the end of every validation epoch as ``val_grid_accuracy``,
``val_cell_accuracy``, ``val_change_recall``, ``val_dense_grid_objective``, ... (the
names of :func:`arcnb.metrics.grid_metrics`). The counts are summed across processes by torchmetrics, so the logged
values are over the whole validation set, not a mean of per-batch ratios.

``validation_step`` returns a dict with ``"target"`` (``[B, H, W]`` padded with 10),
either ``"pred"`` (``[B, H, W]``) or ``"logits"`` (``[B, 11, H, W]``, argmax over
dim 1), and optionally ``"source"`` (the input grids, for the change metrics)::

    import lightning as L
    from lightning.pytorch.callbacks import ModelCheckpoint
    from arcnb.lightning import ArcMetricsCallback

    class Model(L.LightningModule):
        def validation_step(self, batch, batch_idx):
            src, tgt = batch
            logits = self(src)                       # [B, 11, H, W]
            self.log("val_loss", F.cross_entropy(logits, tgt))
            return {"logits": logits, "target": tgt, "source": src}

    trainer = L.Trainer(callbacks=[
        ArcMetricsCallback(prefix="val_"),
        ModelCheckpoint(monitor="val_grid_accuracy", mode="max"),   # not val_loss
    ])

The checkpoint that callback keeps loads in ``arcnb evaluate --checkpoint
best.ckpt --arch your_module:YourModel`` (the builder is called with the saved
hyper-parameters).
"""
from __future__ import annotations

from typing import Any

import torch

try:  # lightning 2.x, then the older package name
    from lightning.pytorch.callbacks import Callback
except ImportError:  # pragma: no cover
    try:
        from pytorch_lightning.callbacks import Callback
    except ImportError as exc:
        raise ImportError("arcnb.lightning needs Lightning: pip install 'arcnb[lightning]' "
                          "(or pip install lightning)") from exc

from .errors import ParameterError
from .metrics.streaming import ArcMetricCollection

__all__ = ["ArcMetricsCallback", "batch_to_metric_inputs"]


def batch_to_metric_inputs(outputs: Any):
    """``(pred, target, source)`` from a ``validation_step`` output dict.

    ``pred`` is ``outputs["pred"]`` or ``argmax(outputs["logits"], dim=1)``.
    """
    if not isinstance(outputs, dict) or "target" not in outputs:
        raise ParameterError("ArcMetricsCallback: validation_step must return a dict with "
                             "'target' and 'pred' or 'logits' (and optionally 'source')")
    if "pred" in outputs:
        pred = outputs["pred"]
    elif "logits" in outputs:
        pred = outputs["logits"].argmax(dim=1)
    else:
        raise ParameterError("ArcMetricsCallback: validation_step returned neither 'pred' nor "
                             "'logits'")
    return pred.detach(), outputs["target"].detach(), (
        None if outputs.get("source") is None else outputs["source"].detach())


class ArcMetricsCallback(Callback):
    """Log arcnb's grid / cell / change metrics for every validation epoch.

    ``prefix`` (default ``"val_"``) starts every logged name; other keyword arguments
    (``pad_token``, ``tolerances``, ``weights``, ``convention``) go to
    :class:`~arcnb.modules.ArcMetricCollection`. ``log_kwargs`` are passed to
    ``LightningModule.log_dict`` (e.g. ``prog_bar=True``). The last computed values
    are kept in :attr:`last`.
    """

    def __init__(self, *, prefix: str = "val_", log_kwargs: dict | None = None,
                 **metric_kwargs):
        super().__init__()
        self.prefix = prefix
        self.metrics = ArcMetricCollection(prefix=prefix, **metric_kwargs)
        self.log_kwargs = dict(log_kwargs or {})
        #: The last computed values (name -> float).
        self.last: dict[str, float] = {}

    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        self.metrics = self.metrics.to(pl_module.device)
        self.metrics.reset()

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                                dataloader_idx: int = 0) -> None:
        pred, target, source = batch_to_metric_inputs(outputs)
        if source is None:
            self.metrics.update(pred, target)
        else:
            self.metrics.update(pred, target, source=source)

    def on_validation_epoch_end(self, trainer, pl_module) -> None:
        values = self.metrics.compute()
        scalars = {k: v.float() for k, v in values.items()
                   if isinstance(v, torch.Tensor) and v.numel() == 1}
        # already reduced over processes by torchmetrics: no sync_dist
        pl_module.log_dict(scalars, **self.log_kwargs)
        self.last = {k: float(v) for k, v in scalars.items()}
        self.metrics.reset()
