"""Models: the crop rule, the baseline's demonstration features against a naive count,
checkpoint formats, and safe loading (unsafe pickles refused, nothing executed)."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from arcnb.errors import ArcnbError
from arcnb.grids import crop_padding
from arcnb.models import (BUNDLED_BASELINE, ModelAdapter, UnsafeCheckpointError, decode_logits,
                          detect_format, file_sha256, load_model, pad_batch, pad_demonstrations,
                          save_checkpoint)
from arcnb.models.baseline import CopyInput, DemoConvNet, demo_features

ROOT = Path(__file__).resolve().parents[1]


def one_hot_logits(pred):
    return torch.nn.functional.one_hot(torch.as_tensor(pred).long(), 11).permute(0, 3, 1, 2).float()


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
    r = subprocess.run([sys.executable, "-m", "arcnb", "evaluate", "--checkpoint", str(ckpt),
                        "--dataset", "arc-agi-1:evaluation", "--out", str(out), "--no-progress"],
                       capture_output=True, text=True, cwd=ROOT)
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
    if not BUNDLED_BASELINE.exists():
        pytest.skip("bundled baseline checkpoint not present")
    assert BUNDLED_BASELINE.stat().st_size < 5 * 1024 * 1024
    obj = torch.load(BUNDLED_BASELINE, weights_only=True)  # plain data only
    assert obj["arch"] == "demo-conv"
    m = load_model("baseline")
    assert isinstance(m.model, DemoConvNet) and m.reads_demonstrations
    card = (BUNDLED_BASELINE.parent / "README.md").read_text()
    assert file_sha256(BUNDLED_BASELINE) in card


def test_unreadable_checkpoints_are_not_called_unsafe(tmp_path):
    text = tmp_path / "notes.pt"
    text.write_text("hello world\n")
    rand = tmp_path / "random.pt"
    rand.write_bytes(bytes(range(7, 107)))
    for f in (text, rand):
        with pytest.raises(ArcnbError, match="not a PyTorch checkpoint") as ei:
            load_model(f)
        assert not isinstance(ei.value, UnsafeCheckpointError)
