"""Models: the crop rule, the baseline's demonstration features against a naive count,
checkpoint formats, and safe loading (unsafe pickles refused, nothing executed)."""
from __future__ import annotations

import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from arcnb.errors import ArcnbError
from arcnb.grids import crop_padding
from arcnb.models import (BUNDLED_CHECKPOINT, ModelAdapter, UnsafeCheckpointError, decode_logits,
                          detect_format, file_sha256, load_model, pad_batch, pad_demonstrations,
                          save_checkpoint)
from arcnb.models.baseline import CopyInput, DemoConvNet, demo_features

from _cli import cli, one_line_refusal, run_arcnb

ROOT = Path(__file__).resolve().parents[1]


def one_hot_logits(pred):
    return torch.nn.functional.one_hot(torch.as_tensor(pred).long(), 11).permute(0, 3, 1, 2).float()


def test_decode_logits_equals_the_per_grid_crop_and_check():
    # the batch decides validity on its device and makes one transfer: each grid is what
    # crop_padding of its argmax gives, when is_valid_prediction accepts it (pad inside
    # the crop, all padding, NaN or -inf logits, crops larger than 30x30 are refused)
    from arcnb.models.interface import is_valid_prediction

    g = torch.Generator().manual_seed(0)
    for trial in range(120):
        B, H, W = (int(torch.randint(lo, hi, (1,), generator=g)) for lo, hi in
                   ((0, 7), (1, 34), (1, 34)))
        logits = torch.randn(B, 11, H, W, generator=g)
        for b in range(B):
            h, w = (int(torch.randint(1, n + 1, (1,), generator=g)) for n in (H, W))
            logits[b, 10, h:, :] += 50
            logits[b, 10, :, w:] += 50
            kind = (trial + b) % 5
            if kind == 1:
                logits[b, 10, 0, 0] += 100
            elif kind == 2:
                logits[b, 3, 0, 0] = float("nan")
            elif kind == 3:
                logits[b, 10] += 100
            elif kind == 4:
                logits[b, :, 0, 0] = float("-inf")
        grids, conf = decode_logits(logits)
        assert len(grids) == B and conf.shape == (B,) and conf.dtype == np.float64
        argmax = logits.argmax(1).to(torch.int8).numpy()
        finite = ~torch.isnan(torch.softmax(logits, 1)).flatten(1).any(1).numpy()
        for b in range(B):
            want = crop_padding(argmax[b]) if finite[b] else None
            want = want if is_valid_prediction(want) else None
            if want is None:
                assert grids[b] is None, (trial, b)
            else:
                assert grids[b].dtype == np.int8 and np.array_equal(grids[b], want), (trial, b)


def test_decode_logits_crop_rule_and_confidence():
    pred = torch.full((3, 5, 5), 10)
    pred[0, :2, :3] = torch.tensor([[1, 2, 3], [0, 0, 4]])
    pred[1, :3, :3] = 7
    pred[1, 1, 1] = 10  # a hole inside the crop: invalid, never repaired
    logits = one_hot_logits(pred) * 3.0  # softmax max = e^3 / (e^3 + 10)
    grids, conf = decode_logits(logits)
    assert grids[0].tolist() == [[1, 2, 3], [0, 0, 4]]
    assert np.array_equal(grids[0], crop_padding(pred[0].numpy()))
    assert grids[1] is None  # crop_padding keeps the hole: invalid
    assert crop_padding(pred[1].numpy())[1, 1] == 10
    assert grids[2] is None  # all padding
    p = np.exp(3) / (np.exp(3) + 10)
    assert conf[0] == pytest.approx(p) and conf[1] == pytest.approx(p)
    assert np.isnan(conf[2])
    with pytest.raises(ArcnbError, match="logits of shape"):
        decode_logits(torch.zeros(1, 10, 3, 3))


def test_copy_input_returns_inputs():
    xs = [np.array([[1, 0], [3, 4]], np.int8), np.array([[5]], np.int8)]
    grids, _ = decode_logits(CopyInput()(pad_batch(xs)))
    assert [g.tolist() for g in grids] == [x.tolist() for x in xs]


def test_demo_features_colour_map_matches_naive_count():
    from arcnb.data import load_dataset

    ds = load_dataset("arc-agi-1:training", tasks=["0d3d703e", "007bbfb7", "3aa6fb7a"])
    tasks = list(ds)
    x = pad_batch([t.test[0].input for t in tasks])
    demos = pad_demonstrations([[(p.input, p.output) for p in t.train] for t in tasks])
    f = demo_features(x, *demos)
    assert f.shape == (3, 32, 30, 30)
    for b, t in enumerate(tasks):
        counts = np.zeros((10, 10))
        n_same = 0
        for p in t.train:
            if p.input.shape == p.output.shape:
                n_same += 1
                for i, o in zip(p.input.ravel(), p.output.ravel()):
                    counts[i, o] += 1
        rows = counts.sum(1, keepdims=True)
        cmap = np.divide(counts, rows, out=np.zeros_like(counts), where=rows > 0)
        inp = t.test[0].input
        for (r, c), col in np.ndenumerate(inp):
            np.testing.assert_allclose(f[b, 11:21, r, c].numpy(), cmap[col], atol=1e-6)
        np.testing.assert_allclose(f[b, 31, 0, 0].item(), n_same / len(t.train), atol=1e-6)
        assert f[b, 10, 29, 29] == 1  # the pad channel of the one-hot input
    # 007bbfb7's outputs are 9x9 from 3x3 inputs: no same-shape demos, empty colour map
    b = [t.id for t in tasks].index("007bbfb7")
    assert f[b, 11:21].abs().sum() == 0 and f[b, 31].abs().sum() == 0


def _write_pickle_that_writes(path: Path, marker: Path):
    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    with open(path, "wb") as fh:
        pickle.dump({"state_dict": {}, "payload": Evil()}, fh)


def test_unsafe_checkpoint_refused_api(tmp_path):
    ckpt, marker = tmp_path / "evil.ckpt", tmp_path / "pwned"
    _write_pickle_that_writes(ckpt, marker)
    with pytest.raises(UnsafeCheckpointError, match="--trust-checkpoint"):
        load_model(ckpt)
    assert not marker.exists()
    # the same file made with torch.save is refused too
    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    ckpt2 = tmp_path / "evil2.pt"
    torch.save({"arch": "copy-input", "config": {}, "state_dict": {}, "x": Evil()}, ckpt2)
    with pytest.raises(UnsafeCheckpointError, match="os.system|posix.system"):
        load_model(ckpt2)
    assert not marker.exists()


def test_unsafe_checkpoint_refused_cli(tmp_path):
    ckpt, marker = tmp_path / "evil.ckpt", tmp_path / "pwned"
    _write_pickle_that_writes(ckpt, marker)
    out = tmp_path / "run"
    r = cli("evaluate", "--checkpoint", ckpt, "--dataset", "arc-agi-1:evaluation", "--out", out,
            "--no-progress")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert "--trust-checkpoint" in lines[0] and "arbitrary" in lines[0]
    assert not marker.exists()
    assert not (out / "metrics.json").exists()


def test_trusted_pickle_loads(tmp_path):
    ckpt = tmp_path / "module.pt"
    torch.save(CopyInput(), ckpt)  # a whole pickled module: needs trust
    with pytest.raises(UnsafeCheckpointError):
        load_model(ckpt)
    m = load_model(ckpt, trust_checkpoint=True)
    assert isinstance(m.model, CopyInput) and not m.reads_demonstrations


def test_arcnb_checkpoint_roundtrip(tmp_path):
    torch.manual_seed(1)
    net = DemoConvNet(hidden=8, blocks=1)
    path = save_checkpoint(tmp_path / "m.pt", net, arch="demo-conv", config={"hidden": 8, "blocks": 1})
    assert detect_format(path) == "pickle"
    m = load_model(path)
    assert m.reads_demonstrations and m.source["format"] == "arcnb"
    x = pad_batch([np.array([[1, 2], [3, 0]], np.int8)])
    d = pad_demonstrations([[(np.array([[1]], np.int8), np.array([[2]], np.int8))]])
    torch.testing.assert_close(m.logits(x, d), net.eval()(x, *d), rtol=0, atol=0)
    with pytest.raises(ArcnbError):
        save_checkpoint(path, net, arch="demo-conv")  # no silent overwrite


def test_module_path_inside_checkpoint_needs_trust(tmp_path):
    path = save_checkpoint(tmp_path / "m.pt", CopyInput(), arch="arcnb.models.baseline:CopyInput")
    with pytest.raises(UnsafeCheckpointError, match="importing"):
        load_model(path)
    assert isinstance(load_model(path, arch="arcnb.models.baseline:CopyInput").model, CopyInput)
    assert isinstance(load_model(path, trust_checkpoint=True).model, CopyInput)


def test_lightning_style_checkpoint_with_named_builder(tmp_path):
    torch.manual_seed(2)
    net = DemoConvNet(hidden=8, blocks=2)
    ckpt = {"epoch": 3, "global_step": 10, "pytorch-lightning_version": "2.5.0",
            "state_dict": {f"model.{k}": v for k, v in net.state_dict().items()},
            "hyper_parameters": {"hidden": 8, "blocks": 2, "lr": 1e-3},
            "callbacks": {"ModelCheckpoint": {"best_model_score": torch.tensor(0.5)}}}
    path = tmp_path / "epoch=3.ckpt"
    torch.save(ckpt, path)
    with pytest.raises(ArcnbError, match="--arch"):
        load_model(path)
    m = load_model(path, arch="demo-conv")
    assert m.source["format"] == "lightning"
    for k, v in net.state_dict().items():
        assert torch.equal(m.model.state_dict()[k], v)
    with pytest.raises(ArcnbError, match="does not fit"):
        load_model(path, arch="demo-conv", config={"hidden": 4})


def test_bare_state_dict_needs_arch(tmp_path):
    path = tmp_path / "sd.pt"
    torch.save(DemoConvNet(hidden=4, blocks=1).state_dict(), path)
    with pytest.raises(ArcnbError, match="--arch"):
        load_model(path)
    assert load_model(path, arch="demo-conv", config={"hidden": 4, "blocks": 1}).reads_demonstrations


def test_torchscript_and_export_archives(tmp_path):
    net = DemoConvNet(hidden=4, blocks=1).eval()
    x = pad_batch([np.array([[1, 2], [3, 0]], np.int8)] * 2)
    d = pad_demonstrations([[(np.array([[1]], np.int8), np.array([[2]], np.int8))]] * 2)
    ts = tmp_path / "m.ts"
    torch.jit.save(torch.jit.trace(net, (x, *d)), ts)
    assert detect_format(ts) == "torchscript"
    m = load_model(ts)
    assert m.reads_demonstrations
    torch.testing.assert_close(m.logits(x, d), net(x, *d))
    ep_path = tmp_path / "copy.pt2"
    torch.export.save(torch.export.export(CopyInput(), (x,)), ep_path)
    assert detect_format(ep_path) == "export"
    m = load_model(ep_path)
    assert not m.reads_demonstrations
    grids, _ = decode_logits(m.logits(x))
    assert grids[0].tolist() == [[1, 2], [3, 0]]


def test_unknown_checkpoint_and_names():
    with pytest.raises(ArcnbError, match="not found"):
        load_model("/nonexistent/model.pt")
    assert isinstance(load_model("copy-input").model, CopyInput)
    assert isinstance(load_model(CopyInput()), ModelAdapter)


def test_bundled_baseline_loads_safely_and_matches_card():
    if not BUNDLED_CHECKPOINT.exists():
        pytest.skip("bundled baseline checkpoint not present")
    assert BUNDLED_CHECKPOINT.stat().st_size < 5 * 1024 * 1024
    obj = torch.load(BUNDLED_CHECKPOINT, weights_only=True)  # plain data only
    assert obj["arch"] == "demo-conv"
    m = load_model("baseline")
    assert isinstance(m.model, DemoConvNet) and m.reads_demonstrations
    card = (BUNDLED_CHECKPOINT.parent / "README.md").read_text()
    assert file_sha256(BUNDLED_CHECKPOINT) in card


def test_unreadable_checkpoints_are_not_called_unsafe(tmp_path):
    text = tmp_path / "notes.pt"
    text.write_text("hello world\n")
    rand = tmp_path / "random.pt"
    rand.write_bytes(bytes(range(7, 107)))
    for f in (text, rand):
        with pytest.raises(ArcnbError, match="not a PyTorch checkpoint") as ei:
            load_model(f)
        assert not isinstance(ei.value, UnsafeCheckpointError)


# ------------------------------------------------------------------ bad models: one line
def _cli(args):
    return cli(*args)


def _process(args, env):
    """A fresh process: a builder module on its PYTHONPATH is imported anew."""
    return run_arcnb(*args, env=env)


def _assert_one_line(r, out: Path | None = None, *words):
    one_line_refusal(r.returncode, r.stderr, *words)
    if out is not None:
        assert not (out / "metrics.json").exists() and not (out / "predictions.json").exists()


class _Raises(torch.nn.Module):
    def forward(self, x):
        if bool(x.sum() > -1):
            raise RuntimeError("the model broke")
        return x.float()


class _Conv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(11, 11, 1)

    def forward(self, x):
        return self.conv(torch.nn.functional.one_hot(x.clamp(0, 10), 11).permute(0, 3, 1, 2).float())


class _Empty(torch.nn.Module):
    def forward(self, x):
        return torch.zeros(x.shape[0], 11, 0, 0)


def _bad_files(tmp: Path) -> dict:
    """name -> (checkpoint, extra CLI args, words the one line must hold)."""
    files = {}
    fake = tmp / "fake.pt"  # has TorchScript's member names, holds nothing of it
    with zipfile.ZipFile(fake, "w") as z:
        for name in ("fake/code/__torch__.py", "fake/constants.pkl", "fake/data.pkl"):
            z.writestr(name, b"not what it says (((")
    files["fake_torchscript"] = (fake, [], ["TorchScript"])
    good = tmp / "good.pt"
    torch.jit.save(torch.jit.trace(CopyInput(), (torch.full((1, 30, 30), 10),)), good)
    corrupt = tmp / "corrupt.pt"
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(corrupt, "w") as zout:
        for n in zin.namelist():
            data = zin.read(n)
            zout.writestr(n, data[: len(data) // 2] if n.endswith("data.pkl") else data)
    files["corrupt_torchscript"] = (corrupt, [], ["TorchScript"])
    ep = tmp / "conv.pt2"
    torch.export.save(torch.export.export(_Conv(), (torch.full((2, 30, 30), 10),)), ep)
    for name, keep in (("pt2_bad_json", lambda n, d: b"{not json" if n.endswith("model.json")
                        else d),
                       ("pt2_no_version", lambda n, d: None if n.endswith("archive_version")
                        else d),
                       ("pt2_no_weight", lambda n, d: None if n.endswith("weight_0") else d)):
        bad = tmp / f"{name}.pt2"
        with zipfile.ZipFile(ep) as zin, zipfile.ZipFile(bad, "w") as zout:
            for n in zin.namelist():
                data = keep(n, zin.read(n))
                if data is not None:
                    zout.writestr(n, data)
        files[name] = (bad, [], ["torch.export"])
    raises = tmp / "raises.pt"
    torch.jit.save(torch.jit.script(_Raises()), raises)
    files["forward_raises"] = (raises, [], ["the model failed", "the model broke"])
    empty = tmp / "empty.pt"
    torch.jit.save(torch.jit.script(_Empty()), empty)
    files["empty_logits"] = (empty, [], ["(1, 11, 0, 0)"])
    files["device_tpu"] = ("copy-input", ["--device", "tpu:7"], ["tpu:7"])
    return files


@pytest.mark.parametrize("case", ["fake_torchscript", "corrupt_torchscript", "pt2_bad_json",
                                  "pt2_no_version", "pt2_no_weight", "forward_raises",
                                  "empty_logits", "device_tpu"])
def test_bad_models_are_one_line(tmp_path, case):
    ckpt, extra, words = _bad_files(tmp_path)[case]
    ids = tmp_path / "ids.txt"
    ids.write_text("00576224\n")
    out = tmp_path / "run"
    r = _cli(["evaluate", "--checkpoint", ckpt, "--dataset", "arc-agi-1:evaluation", "--tasks",
              ids, "--out", out, "--no-progress", "--batch-size", "1", *extra])
    _assert_one_line(r, out, *words)


# ------------------------------------------------------------------ non-finite and oversize
def test_nonfinite_logits_are_invalid():
    good = one_hot_logits(torch.full((1, 4, 4), 3)) * 5.0
    cases = {name: good.clone() for name in ("all_nan", "one_nan", "pos_inf", "neg_inf_cell")}
    cases["all_nan"][:] = float("nan")  # before: a 30x30-style grid of colour 0, "valid"
    cases["one_nan"][0, 2, 3, 3] = float("nan")
    cases["pos_inf"][0, 1, 0, 0] = float("inf")
    cases["neg_inf_cell"][0, :, 0, 0] = float("-inf")  # no class left for this cell
    for name, logits in cases.items():
        grids, conf = decode_logits(logits)
        assert grids[0] is None, name
        assert np.isnan(conf[0]), name
    # -inf on some classes (masking) is fine: the argmax is still defined
    masked = good.clone()
    masked[:, 10] = float("-inf")
    grids, conf = decode_logits(masked)
    assert grids[0].tolist() == [[3] * 4] * 4
    assert conf[0] == pytest.approx(np.exp(5) / (np.exp(5) + 9))  # 9 classes left at 0


def test_oversize_prediction_is_invalid():
    big = one_hot_logits(torch.full((1, 100, 100), 1))
    assert decode_logits(big)[0][0] is None
    edge = torch.full((2, 40, 40), 10)
    edge[0, :30, :30] = 2  # 30x30 inside a 40x40 output: a valid grid
    edge[1, :31, :5] = 2   # 31 rows: no ARC grid is that tall
    grids, _ = decode_logits(one_hot_logits(edge))
    assert grids[0].shape == (30, 30) and grids[1] is None


class _Constant(torch.nn.Module):
    """Logits of a fixed kind whatever the input: NaN, or a 100x100 grid of colour 1."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        if self.kind == "nan":
            return torch.full((x.shape[0], 11, 30, 30), float("nan"))
        return one_hot_logits(torch.ones(x.shape[0], 100, 100, dtype=torch.long))


@pytest.mark.parametrize("kind", ["nan", "oversize"])
def test_nonfinite_and_oversize_are_null_in_runs(tmp_path, kind):
    from arcnb.data import load_dataset
    from arcnb.evaluate import evaluate

    ds = load_dataset("arc-agi-1:evaluation", tasks=["00576224", "009d5c81", "00dbd492"])
    res = evaluate(_Constant(kind), ds, tmp_path / "run", progress=False, attempts=2)
    preds = json.loads((tmp_path / "run" / "predictions.json").read_text())
    n_outputs = sum(len(t.test) for t in ds)
    assert sum(len(v) for v in preds.values()) == n_outputs
    assert all(a[k] is None for v in preds.values() for a in v for k in a)
    assert res.summary["n_invalid_attempts"] == 2 * n_outputs
    assert res.summary["pass@2"] == 0.0


# ------------------------------------------------------------------ configs
def test_builder_config_bounds_checked_before_building(tmp_path):
    net = DemoConvNet(hidden=8, blocks=1)
    for cfg, word in (({"hidden": 30000, "blocks": 1}, "hidden=30000"),
                      ({"hidden": 8, "blocks": 10 ** 7}, "blocks=10000000"),
                      ({"hidden": 1024, "blocks": 64}, "parameters"),
                      ({"hidden": "8", "blocks": 1}, "not an integer")):
        path = save_checkpoint(tmp_path / f"m{len(list(tmp_path.iterdir()))}.pt", net,
                               arch="demo-conv", config=cfg)
        with pytest.raises(ArcnbError, match=word):
            load_model(path)
    # the CLI: one line, and quickly (before, blocks=10**7 built ten million blocks)
    path = save_checkpoint(tmp_path / "huge.pt", net, arch="demo-conv",
                           config={"hidden": 8, "blocks": 10 ** 7})
    r = _cli(["evaluate", "--checkpoint", path, "--dataset", "arc-agi-1:evaluation",
              "--out", tmp_path / "run", "--no-progress"])
    _assert_one_line(r, tmp_path / "run", "blocks=10000000", "0..64")


@pytest.mark.slow  # runs the arcnb command in another process
def test_builder_exception_is_one_line(tmp_path):
    (tmp_path / "mybuilders.py").write_text(
        "def broken(**config):\n    raise RuntimeError('cannot build this')\n")
    path = tmp_path / "sd.pt"
    torch.save(DemoConvNet(hidden=4, blocks=1).state_dict(), path)
    r = _process(["evaluate", "--checkpoint", path, "--arch", "mybuilders:broken", "--dataset",
                  "arc-agi-1:evaluation", "--out", tmp_path / "run", "--no-progress"],
                 env={"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"})
    _assert_one_line(r, tmp_path / "run", "cannot build this", "mybuilders:broken")


class InnerNet(torch.nn.Module):
    """An inner network whose constructor names its arguments (no **kwargs)."""

    def __init__(self, hidden: int = 4, *, blocks: int = 1):
        super().__init__()
        self.net = DemoConvNet(hidden=hidden, blocks=blocks)
        self.reads_demonstrations = True

    def forward(self, *a):
        return self.net(*a)


def test_lightning_hparams_filtered_to_the_builders_signature(tmp_path):
    torch.manual_seed(3)
    inner = InnerNet(hidden=6, blocks=2)
    ckpt = {"epoch": 1, "pytorch-lightning_version": "2.5.0",
            "state_dict": {f"model.{k}": v for k, v in inner.state_dict().items()},
            "hyper_parameters": {"hidden": 6, "blocks": 2, "lr": 1e-3, "weight_decay": 0.1}}
    path = tmp_path / "lit.ckpt"
    torch.save(ckpt, path)
    m = load_model(path, arch=InnerNet)  # before: unexpected keyword argument 'lr'
    assert m.source["ignored_config"] == ["lr", "weight_decay"]
    for k, v in inner.state_dict().items():
        assert torch.equal(m.model.state_dict()[k], v)
    seen = {}

    def takes_all(**config):  # a builder with **kwargs is given everything
        seen.update(config)
        return InnerNet(hidden=config["hidden"], blocks=config["blocks"])

    load_model(path, arch=takes_all)
    assert seen == ckpt["hyper_parameters"]
    # the caller's config is not filtered: a misspelt key is an error
    with pytest.raises(ArcnbError, match="hiden"):
        load_model(path, arch=InnerNet, config={"hiden": 6})


def test_replace_config_instead_of_merging(tmp_path):
    torch.manual_seed(4)
    net = DemoConvNet(hidden=8, blocks=2)  # prior=False: no prior_weight
    ckpt = {"epoch": 1, "state_dict": {f"model.{k}": v for k, v in net.state_dict().items()},
            "hyper_parameters": {"hidden": 8, "blocks": 2, "prior": True}}  # wrong prior
    path = tmp_path / "lit.ckpt"
    torch.save(ckpt, path)
    with pytest.raises(ArcnbError, match="does not fit"):  # merged: prior=True stays
        load_model(path, arch="demo-conv", config={"hidden": 8})
    m = load_model(path, arch="demo-conv", config={"hidden": 8, "blocks": 2},
                   replace_config=True)
    assert m.source["config_mode"] == "replace" and not m.model.prior
    ids = tmp_path / "ids.txt"
    ids.write_text("00576224\n")
    common = ["evaluate", "--checkpoint", path, "--arch", "demo-conv", "--dataset",
              "arc-agi-1:evaluation", "--tasks", ids, "--no-progress",
              "--config", '{"hidden": 8, "blocks": 2}']
    _assert_one_line(_cli([*common, "--out", tmp_path / "merged"]), None, "does not fit")
    r = _cli([*common, "--out", tmp_path / "replaced", "--replace-config"])
    assert r.returncode == 0, r.stderr
    prov = json.loads((tmp_path / "replaced" / "metrics.json").read_text())["provenance"]
    assert prov["parameters"]["checkpoint_format"]["config_mode"] == "replace"


# ------------------------------------------------------------------ fixed-shape exports
def test_export_with_fixed_batch_is_padded(tmp_path):
    from arcnb.data import load_dataset
    from arcnb.evaluate import evaluate

    path = tmp_path / "copy4.pt2"
    torch.export.save(torch.export.export(CopyInput(), (torch.full((4, 30, 30), 10),)), path)
    m = load_model(path)
    assert m.fixed_batch == 4
    ds = load_dataset("arc-agi-1:evaluation", tasks=["00576224", "009d5c81", "00dbd492",
                                                     "03560426", "05a7bcf2"])
    n = sum(len(t.test) for t in ds)
    assert n % 4 != 0  # the last batch is smaller than 4
    for bs in (3, 4, 7):
        evaluate(str(path), ds, tmp_path / f"run{bs}", batch_size=bs, progress=False)
        preds = json.loads((tmp_path / f"run{bs}" / "predictions.json").read_text())
        for t in ds:  # copy-input: attempt_1 is the test input itself
            assert [p["attempt_1"] for p in preds[t.id]] == [x.input.tolist() for x in t.test]


def test_export_with_fixed_demonstration_count(tmp_path):
    net = DemoConvNet(hidden=4, blocks=1).eval()
    one = np.array([[1, 2]], np.int8)
    x = pad_batch([one, one])
    d3 = pad_demonstrations([[(one, one)] * 3, [(one, one)] * 3])
    path = tmp_path / "demo.pt2"
    torch.export.save(torch.export.export(net, (x, *d3)), path)
    m = load_model(path)
    assert (m.fixed_batch, m.fixed_demos) == (2, 3)
    d2 = pad_demonstrations([[(one, one)] * 2, [(one, one)]])  # fewer pairs: filler added
    torch.testing.assert_close(m.logits(x[:1], tuple(t[:1] for t in d2)),
                               net(x[:1], *(t[:1] for t in d2)))
    d5 = pad_demonstrations([[(one, one)] * 5, [(one, one)]])
    with pytest.raises(ArcnbError, match="dynamic demonstration dimension"):
        m.logits(x, d5)


# ------------------------------------------------------------------ safetensors
def _bundled_weights():
    saved = torch.load(BUNDLED_CHECKPOINT, map_location="cpu", weights_only=True)
    return saved["state_dict"], saved["config"]


def test_safetensors_state_dict_with_arch_and_metadata_config(tmp_path):
    """The bundled checkpoint's weights saved the way a user does
    (safetensors.torch.save_file) load into the demo network, the metadata's config
    filtered to the builder's arguments as a Lightning checkpoint's is."""
    from safetensors.torch import save_file

    if not BUNDLED_CHECKPOINT.exists():
        pytest.skip("bundled checkpoint not present")
    sd, config = _bundled_weights()
    assert config == {"hidden": 32, "blocks": 3, "prior": True}
    path = tmp_path / "m.safetensors"
    save_file(sd, path, metadata={"config": json.dumps({**config, "lr": 0.002}),
                                  "step": "1500"})
    assert detect_format(path) == "safetensors"
    with pytest.raises(ArcnbError, match="safetensors state dict: name the model builder "
                                         "with --arch"):
        load_model(path)
    m = load_model(path, arch="demo-conv")
    assert m.source == {"format": "safetensors", "arch": "demo-conv", "ignored_config": ["lr"]}
    assert isinstance(m.model, DemoConvNet) and m.reads_demonstrations
    got = m.model.state_dict()
    assert set(got) == set(sd) and all(torch.equal(got[k], sd[k]) for k in sd)
    # the same weights give the same logits as the bundled checkpoint itself
    x = pad_batch([np.array([[1, 2], [3, 0]], np.int8)])
    d = pad_demonstrations([[(np.array([[1, 1]], np.int8), np.array([[2, 2]], np.int8))]])
    torch.testing.assert_close(m.logits(x, d), load_model("baseline").logits(x, d),
                               rtol=0, atol=0)
    # without the metadata's config the builder's defaults (prior=False) do not fit
    plain = tmp_path / "plain.safetensors"
    save_file(sd, plain)
    with pytest.raises(ArcnbError, match="does not fit"):
        load_model(plain, arch="demo-conv")
    assert load_model(plain, arch="demo-conv", config={"prior": True}).source["format"] == \
        "safetensors"
    # a config that is not JSON is one line
    bad = tmp_path / "bad.safetensors"
    save_file(sd, bad, metadata={"config": "{hidden: 32"})
    with pytest.raises(ArcnbError, match="metadata's config is not JSON"):
        load_model(bad, arch="demo-conv")


def test_safetensors_found_from_its_bytes_under_another_name(tmp_path):
    from safetensors.torch import save_file

    path = tmp_path / "pytorch_model.bin"
    net = DemoConvNet(hidden=4, blocks=1)
    save_file(net.state_dict(), path)
    assert detect_format(path) == "safetensors"
    m = load_model(path, arch="demo-conv", config={"hidden": 4, "blocks": 1})
    assert m.source["format"] == "safetensors"
    # a torch.save file under the safetensors suffix is refused as a damaged one
    fake = tmp_path / "fake.safetensors"
    torch.save(net.state_dict(), fake)
    with pytest.raises(ArcnbError, match="cannot read safetensors file"):
        load_model(fake, arch="demo-conv")


def test_every_checkpoint_suffix_is_a_checkpoint_to_open_and_to_sweep(tmp_path):
    """One list: arcnb.open takes every checkpoint suffix for a checkpoint, and a
    sweep of a folder picks up a file of each (and nothing else)."""
    from arcnb.front import CheckpointSource, parse_source
    from arcnb.models import CHECKPOINT_FORMATS, CHECKPOINT_SUFFIXES
    from arcnb.sweep import expand_checkpoints

    assert set(CHECKPOINT_SUFFIXES) == {".pt", ".pth", ".ckpt", ".bin", ".ts", ".pt2",
                                        ".safetensors"}
    assert set(CHECKPOINT_FORMATS) == {"pickle", "torchscript", "export", "safetensors"}
    assert CHECKPOINT_FORMATS["safetensors"].suffixes == (".safetensors",)
    files = []
    for suffix in CHECKPOINT_SUFFIXES + (".PT",):
        f = tmp_path / f"model{suffix}"
        f.write_bytes(b"x")
        files.append(str(f))
        assert isinstance(parse_source(str(f)), CheckpointSource), suffix
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    (tmp_path / "model.onnx").write_bytes(b"x")
    assert sorted(expand_checkpoints([tmp_path])) == sorted(files)
