"""Lightning integration: a tiny model trained on real ARC pairs logs val_* metrics equal
to a naive recount, ModelCheckpoint(monitor="val_grid_accuracy", mode="max") keeps the
best epoch, and the Lightning .ckpt it writes evaluates with arcnb."""
from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F

L = pytest.importorskip("lightning", reason="Lightning is not installed (optional extra)")
from lightning.pytorch.callbacks import Callback, ModelCheckpoint  # noqa: E402

from arcnb.data import load_dataset  # noqa: E402
from arcnb.lightning import ArcMetricsCallback  # noqa: E402
from arcnb.models import pad_batch  # noqa: E402

TASKS = ["0d3d703e", "25ff71a9", "3618c87e", "a85d4709", "b1948b0a", "c8f0f002", "d511f180",
         "f76d97a5"]


class TinyLit(L.LightningModule):
    """Per-cell colour map: a 1x1 convolution over the one-hot input."""

    reads_demonstrations = False

    def __init__(self, lr: float = 0.2):
        super().__init__()
        self.save_hyperparameters()
        self.conv = nn.Conv2d(11, 11, 1)

    def forward(self, inputs):
        return self.conv(F.one_hot(inputs.long(), 11).permute(0, 3, 1, 2).float())

    def training_step(self, batch, batch_idx):
        src, tgt = batch
        return F.cross_entropy(self(src), tgt)

    def validation_step(self, batch, batch_idx):
        src, tgt = batch
        logits = self(src)
        self.log("val_loss", F.cross_entropy(logits, tgt))
        return {"logits": logits, "target": tgt, "source": src}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


class Recorder(Callback):
    def __init__(self):
        self.history = []

    def on_validation_end(self, trainer, pl_module):
        self.history.append({k: float(v) for k, v in trainer.callback_metrics.items()})


def naive(pred, tgt, src):
    """Grid accuracy, cell accuracy, change recall by explicit loops over grids."""
    n_grid = ok = cells = right = changed = caught = 0
    for p, t, s in zip(pred.tolist(), tgt.tolist(), src.tolist()):
        cells_g = [(pv, tv, sv) for pr, tr, sr in zip(p, t, s) for pv, tv, sv in zip(pr, tr, sr)
                   if tv != 10]
        n_grid += 1
        ok += all(pv == tv for pv, tv, _ in cells_g)
        cells += len(cells_g)
        right += sum(pv == tv for pv, tv, _ in cells_g)
        changed += sum(tv != sv for _, tv, sv in cells_g)
        caught += sum(tv != sv and pv != sv for pv, tv, sv in cells_g)
    return ok / n_grid, right / cells, caught / changed


GPU = pytest.param("gpu", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                  reason="no CUDA device"))


@pytest.mark.parametrize("accelerator", ["cpu", GPU])
def test_callback_logs_metrics_and_checkpoint_monitors_grid_accuracy(tmp_path, accelerator,
                                                                     monkeypatch):
    if accelerator == "gpu":  # full float32 products: the recount below sees the same logits
        monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    ds = load_dataset("arc-agi-1:training", tasks=TASKS)
    pairs = [p for t in ds for p in t.train + t.test if p.input.shape == p.output.shape]
    src = pad_batch([p.input for p in pairs])
    tgt = pad_batch([p.output for p in pairs])
    data = torch.utils.data.TensorDataset(src, tgt)
    train = torch.utils.data.DataLoader(data, batch_size=8, shuffle=False)
    val = torch.utils.data.DataLoader(data, batch_size=5, shuffle=False)  # uneven batches
    torch.manual_seed(0)
    model = TinyLit()
    arc_cb, rec = ArcMetricsCallback(prefix="val_"), Recorder()
    ckpt_cb = ModelCheckpoint(dirpath=tmp_path / "ckpt", monitor="val_grid_accuracy",
                              mode="max", save_top_k=1)
    trainer = L.Trainer(max_epochs=25, accelerator=accelerator, devices=1, logger=False,
                        enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0, default_root_dir=tmp_path,
                        callbacks=[arc_cb, rec, ckpt_cb])
    trainer.fit(model, train, val)
    # the last epoch's logged values equal a naive recount over the whole validation set
    model.eval()
    device = torch.device("cuda" if accelerator == "gpu" else "cpu")
    with torch.no_grad():
        pred = model.to(device)(src.to(device)).argmax(1).cpu()
    g, c, r = naive(pred, tgt, src)
    last = rec.history[-1]
    for name in ("val_grid_accuracy", "val_cell_accuracy", "val_change_recall",
                 "val_dense_grid_objective", "val_transformation_f1"):
        assert name in last
    assert last["val_grid_accuracy"] == pytest.approx(g, abs=1e-6)
    assert last["val_cell_accuracy"] == pytest.approx(c, abs=1e-6)
    assert last["val_change_recall"] == pytest.approx(r, abs=1e-6)
    assert arc_cb.last["val_grid_accuracy"] == pytest.approx(g, abs=1e-6)
    # ModelCheckpoint kept the epoch with the highest val_grid_accuracy
    best = max(h["val_grid_accuracy"] for h in rec.history)
    assert float(ckpt_cb.best_model_score) == pytest.approx(best)
    assert len(rec.history) == 25
    assert last["val_cell_accuracy"] > 0.4 and best > 0.1  # it learned: not a test of zeros
    # that Lightning .ckpt loads safely and evaluates with arcnb
    from arcnb.evaluate import evaluate
    from arcnb.models import load_model

    m = load_model(ckpt_cb.best_model_path, arch=TinyLit)
    assert m.source["format"] == "lightning"
    res = evaluate(ckpt_cb.best_model_path, ds, tmp_path / "run", arch=TinyLit, progress=False)
    assert res.summary["n_tasks"] == len(TASKS)
    assert res.summary["pass@2"] >= 0.0


# ------------------------------------------------------------------ never stops training
class _Odd(L.LightningModule):
    """Targets padded with -100 (cross-entropy's ignore_index) and predictions from a
    larger vocabulary (tokens 19 and 25) and negative ones."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def training_step(self, batch, batch_idx):
        return (self.w ** 2).sum() + 0 * batch[0].float().sum()

    def validation_step(self, batch, batch_idx):
        src, tgt = batch
        tgt = tgt.clone()
        tgt[tgt == 10] = -100
        pred = src.clone()
        pred[:, 0, 0] = 25
        pred[:, 0, 1:2] = 19
        pred[:, 1:2, 0] = -3
        return {"pred": pred, "target": tgt}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class _Logger(L.pytorch.loggers.Logger):
    def __init__(self, fail: str):
        super().__init__()
        self.fail = fail
        self.armed = False  # Lightning itself reaches .experiment while setting up

    @property
    def name(self):
        return f"fail-{self.fail}"

    @property
    def version(self):
        return 0

    def log_metrics(self, metrics, step=None):
        pass

    def log_hyperparams(self, params, *args, **kwargs):
        pass

    @property
    def experiment(self):
        if self.fail == "experiment" and self.armed:
            raise RuntimeError("the service is down")
        return self

    def add_image(self, *args, **kwargs):
        if self.fail == "add_image":
            raise RuntimeError("disk quota exceeded")


class _Arm(Callback):
    def on_validation_epoch_start(self, trainer, pl_module):
        for logger in trainer.loggers:
            logger.armed = True


class _ImageLogger(_Logger):
    def log_image(self, key, images, step=None):
        raise RuntimeError("upload refused")


def _loaders():
    ds = load_dataset("arc-agi-1:training", tasks=TASKS)
    pairs = [p for t in ds for p in t.train if p.input.shape == p.output.shape][:8]
    data = torch.utils.data.TensorDataset(pad_batch([p.input for p in pairs]),
                                          pad_batch([p.output for p in pairs]))
    return (torch.utils.data.DataLoader(data, batch_size=4),
            torch.utils.data.DataLoader(data, batch_size=4))


def test_the_callback_never_stops_training(tmp_path, caplog):
    """A logger whose log_image / add_image raises or whose .experiment raises aborted
    Trainer.fit at epoch 0; targets padded with -100 or tokens >= 19 or < 0 indexed the
    palette out of range. Each is skipped with one warning, and training goes on."""
    import logging

    import numpy as np

    cb = ArcMetricsCallback(images_every=1, n_images=4)

    class _Broken(_Logger):  # TensorBoard-like: experiment.add_image raises
        pass

    loggers = [_ImageLogger("log_image"), _Logger("experiment"), _Broken("add_image")]
    trainer = L.Trainer(max_epochs=2, accelerator="cpu", devices=1, logger=loggers,
                        enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0, default_root_dir=tmp_path,
                        callbacks=[_Arm(), cb], enable_checkpointing=False,
                        log_every_n_steps=1)
    with caplog.at_level(logging.WARNING, logger="arcnb"):
        trainer.fit(_Odd(), *_loaders())
    assert trainer.current_epoch == 2 and not trainer.interrupted
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3, warnings  # one per failing logger, not one per epoch
    assert any("_ImageLogger failed" in w and "upload refused" in w for w in warnings)
    assert any("_Logger failed" in w and "the service is down" in w for w in warnings)
    assert any("_Broken failed" in w and "disk quota exceeded" in w for w in warnings)
    # the out-of-palette tokens were drawn (hatched padding colour), not looked up
    assert cb.last_image is not None and cb.last_image.dtype == np.uint8
    t, p = cb._drawable(np.array([[1, -100], [-100, -100]]), np.array([[25, 19], [-3, 4]]))
    assert t.tolist() == [[1]] and p.tolist() == [[10, 10], [10, 4]]


def test_an_image_that_cannot_be_drawn_is_one_warning(tmp_path, caplog, monkeypatch):
    import logging

    import arcnb.lightning as mod

    monkeypatch.setattr(mod, "pairs_image", lambda *a, **k: 1 / 0)
    cb = ArcMetricsCallback(images_every=1, n_images=2)
    trainer = L.Trainer(max_epochs=2, accelerator="cpu", devices=1, logger=False,
                        enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0, default_root_dir=tmp_path,
                        callbacks=[cb], enable_checkpointing=False)
    with caplog.at_level(logging.WARNING, logger="arcnb"):
        trainer.fit(_Odd(), *_loaders())
    assert trainer.current_epoch == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "could not draw the validation grids" in warnings[0]
