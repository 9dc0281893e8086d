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
hyper-parameters); ``arcnb sweep`` evaluates all the checkpoints of a run.

Grids in the logger: with ``images_every=N`` the callback also logs, every N validation
epochs, the first ``n_images`` validation outputs (a fixed sample when the validation
loader does not shuffle) as one truth | prediction | difference image (the fast gallery,
:func:`arcnb.plot.pairs_image`) under the tag ``f"{prefix}outputs"``: to TensorBoard
with ``add_image``, to Weights & Biases with ``log_image``; a logger that takes no
images is skipped with one info line. Only the first process logs images.

The image never ends a training run: a logger that fails (its ``log_image`` or
``add_image`` raises, or its ``experiment`` cannot be reached) is skipped with one
warning, and so is an image that cannot be drawn. Target cells outside 0-9 (such as
cross-entropy's ``ignore_index`` -100) are padding; predicted tokens outside 0-9 (a
larger vocabulary, a negative value) are drawn as the hatched padding colour, never
looked up in the palette.
"""
from __future__ import annotations

import logging
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

import numpy as np

from .errors import ParameterError, one_line
from .grids import N_COLORS, PAD_TOKEN, crop_padding
from .metrics.streaming import ArcMetricCollection
from .plot.galleries import pairs_image

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

    ``images_every`` (default 0: never): every that many validation epochs (the 1st,
    the N+1th, ...; sanity checks not counted), log the first ``n_images`` outputs of
    the validation set as a truth | prediction | difference image (``image_slot``
    pixels per panel) under ``f"{prefix}outputs"`` at the trainer's global step. The
    last image (``H x W x 3`` uint8) is kept in :attr:`last_image`.
    """

    def __init__(self, *, prefix: str = "val_", log_kwargs: dict | None = None,
                 images_every: int = 0, n_images: int = 8, image_slot: int = 64,
                 **metric_kwargs):
        super().__init__()
        self.prefix = prefix
        self.metrics = ArcMetricCollection(prefix=prefix, **metric_kwargs)
        self.log_kwargs = dict(log_kwargs or {})
        #: The last computed values (name -> float).
        self.last: dict[str, float] = {}
        for name, value in (("images_every", images_every), ("n_images", n_images)):
            if isinstance(value, bool) or int(value) < 0:
                raise ParameterError(f"ArcMetricsCallback: {name} must be >= 0, got {value!r}")
        self.images_every = int(images_every)
        self.n_images = int(n_images)
        self.image_slot = int(image_slot)
        self.image_tag = f"{prefix}outputs"
        self.pad_token = int(metric_kwargs.get("pad_token", PAD_TOKEN))
        #: The last logged image (``H x W x 3`` uint8), or None.
        self.last_image = None
        self._val_epochs = 0
        self._grab = False
        self._samples: list = []
        self._told: set[str] = set()

    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        self.metrics = self.metrics.to(pl_module.device)
        self.metrics.reset()
        self._samples = []
        self._grab = (self.images_every > 0 and self.n_images > 0
                      and not getattr(trainer, "sanity_checking", False)
                      and self._val_epochs % self.images_every == 0
                      and getattr(trainer, "is_global_zero", True))

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                                dataloader_idx: int = 0) -> None:
        pred, target, source = batch_to_metric_inputs(outputs)
        need = self.n_images - len(self._samples)
        if self._grab and need > 0 and dataloader_idx == 0:
            try:  # the picture never stops training
                # only the few grids drawn leave the device
                for p, t in zip(pred[:need].cpu().numpy(), target[:need].cpu().numpy()):
                    self._samples.append(self._drawable(t, p))
            except Exception as exc:  # noqa: BLE001 - a picture is not worth a run
                self._warn_once("draw", f"could not take the validation grids for the image "
                                        f"({type(exc).__name__}: {one_line(exc, 120)}); "
                                        "no image this epoch, training goes on")
                self._grab, self._samples = False, []
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
        if getattr(trainer, "sanity_checking", False):
            return
        self._val_epochs += 1
        if self._grab and self._samples:
            self._log_image(trainer)
        self._samples = []

    def _drawable(self, target, pred) -> tuple:
        """One (truth, prediction) pair as the image draws it: target cells outside 0-9
        are padding (cross-entropy's ignore_index -100 among them); predicted tokens
        outside 0-9 become the padding token, drawn hatched (never a palette lookup)."""
        t = np.asarray(target).astype(np.int64)
        t = crop_padding(np.where((t >= 0) & (t < N_COLORS), t, PAD_TOKEN), pad_token=PAD_TOKEN)
        p = crop_padding(np.asarray(pred).astype(np.int64), pad_token=self.pad_token)
        if p is not None:
            p = np.where((p >= 0) & (p < N_COLORS), p, PAD_TOKEN)
        return t, p

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._told:
            self._told.add(key)
            logging.getLogger("arcnb").warning("ArcMetricsCallback: %s", message)

    def _log_image(self, trainer) -> None:
        pairs = [(t, p) for t, p in self._samples if t is not None]
        labels = [f"val {j}" for j, (t, _) in enumerate(self._samples) if t is not None]
        try:
            image = pairs_image(pairs, labels, slot=self.image_slot,
                                title=f"step {trainer.global_step}")
        except Exception as exc:  # noqa: BLE001 - a picture is not worth a run
            self._warn_once("draw", f"could not draw the validation grids "
                                    f"({type(exc).__name__}: {one_line(exc, 120)}); no image, "
                                    "training goes on")
            return
        self.last_image = image
        step = int(trainer.global_step)
        for logger in getattr(trainer, "loggers", None) or []:
            name = type(logger).__name__
            try:
                self._send(logger, image, step)
            except Exception as exc:  # noqa: BLE001 - the logger's failure ends no run
                self._warn_once(f"logger:{name}", f"{name} failed to take the validation "
                                f"grids ({type(exc).__name__}: {one_line(exc, 120)}); they "
                                "are not logged to it, training goes on")

    def _send(self, logger, image, step: int) -> None:
        if hasattr(logger, "log_image"):  # Weights & Biases (and loggers like it)
            logger.log_image(key=self.image_tag, images=[image], step=step)
        else:
            experiment = getattr(logger, "experiment", None)
            if callable(getattr(experiment, "add_image", None)):  # TensorBoard
                experiment.add_image(self.image_tag, image, global_step=step,
                                     dataformats="HWC")
            else:
                name = type(logger).__name__
                if name not in self._told:
                    self._told.add(name)
                    logging.getLogger("arcnb").info(
                        "ArcMetricsCallback: %s takes no images; the validation grids are "
                        "not logged to it", name)
