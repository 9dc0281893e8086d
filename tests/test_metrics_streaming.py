"""Streaming metric modules (arcnb.metrics.streaming, imported from their documented path
arcnb.modules): streaming == one-shot, names, states, and two processes
(torch.distributed) reducing to the one-process result."""
from __future__ import annotations

import json
import math
import os
import socket
import tempfile
import time
from datetime import timedelta

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from hypothesis import given, settings, strategies as st

from arcnb.metrics import (grid_metrics, latent_diagnostics, reconstruction_metrics,
                           token_accuracy)
from arcnb.modules import (ArcMetricCollection, GridMetrics, LatentDiagnostics,
                           ReconstructionMetrics, TokenAccuracy)

from naive_metrics import close, naive_grid_metrics, random_batch

HSET = settings(max_examples=40, deadline=None)




def splits(rng, n):
    """Random cut points of range(n) into consecutive batches (some may be empty)."""
    k = int(rng.integers(1, 5))
    cuts = sorted(rng.integers(0, n + 1, size=k - 1).tolist())
    bounds = [0] + cuts + [n]
    return list(zip(bounds[:-1], bounds[1:]))


@HSET
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["arcnb", "reference"]), st.booleans())
def test_grid_streaming_equals_one_shot_for_random_splits(seed, convention, with_source):
    rng = np.random.default_rng(seed)
    p, t, s = random_batch(rng, B=int(rng.integers(1, 25)), size=(5, 6))
    m = GridMetrics(convention=convention)
    for a, b in splits(rng, p.shape[0]):
        if with_source:
            m.update(torch.from_numpy(p[a:b]), torch.from_numpy(t[a:b]),
                     source=torch.from_numpy(s[a:b]))
        else:
            m.update(torch.from_numpy(p[a:b]), torch.from_numpy(t[a:b]))
    got = m.compute()
    src = s if with_source else None
    one = grid_metrics(p, t, source=src, convention=convention)
    naive = naive_grid_metrics(p, t, src, convention=convention)
    assert set(got) == set(one)
    for k in one:
        assert close(got[k], one[k], 1e-6), k
        assert close(got[k], naive[k], 1e-6), k


def test_streaming_with_different_grid_sizes_per_batch():
    # batches padded to different sizes still add up (counts do not depend on padding)
    rng = np.random.default_rng(5)
    m = GridMetrics()
    ps, ts, ss = [], [], []
    for size in [(3, 3), (7, 2), (30, 30), (1, 1)]:
        p, t, s = random_batch(rng, B=6, size=size)
        m.update(p, t, source=s)
        ps.append(p), ts.append(t), ss.append(s)
    H = max(x.shape[1] for x in ts)
    W = max(x.shape[2] for x in ts)

    def pad(xs):
        return np.concatenate([np.pad(x, ((0, 0), (0, H - x.shape[1]), (0, W - x.shape[2])),
                                      constant_values=10) for x in xs])

    one = grid_metrics(pad(ps), pad(ts), source=pad(ss))
    got = m.compute()
    for k in one:
        assert close(got[k], one[k]), k


def test_collection_names_like_seed000_and_log_dict_ready():
    c = ArcMetricCollection(prefix="val_")
    rng = np.random.default_rng(0)
    p, t, s = random_batch(rng, B=10, size=(4, 4))
    c.update(torch.from_numpy(p), torch.from_numpy(t), source=torch.from_numpy(s))
    r = c.compute()
    for name in ("val_grid_accuracy", "val_cell_accuracy", "val_change_recall",
                 "val_dense_grid_objective", "val_exact_match", "val_grid_tol_0p95",
                 "val_change_precision", "val_transformation_f1", "val_copy_rate",
                 "val_change_accuracy", "val_row_all_correct_rate", "val_n_grids"):
        assert name in r, name
    for v in r.values():
        assert isinstance(v, torch.Tensor) and v.dim() == 0
    one = grid_metrics(p, t, source=s)
    for k, v in one.items():
        assert close(r["val_" + k], v), k
    c.reset()
    c.update(torch.from_numpy(t), torch.from_numpy(t))
    r = c.compute()
    assert "val_change_recall" not in r
    assert float(r["val_grid_accuracy"]) == 1.0
    other = ArcMetricCollection(prefix="test_", convention="reference")
    other.update(torch.from_numpy(p), torch.from_numpy(t))
    assert "test_grid_accuracy" in other.compute()


def test_forward_returns_batch_value_and_accumulates():
    rng = np.random.default_rng(1)
    p1, t1, _ = random_batch(rng, B=5, size=(4, 4))
    p2, t2, _ = random_batch(rng, B=7, size=(4, 4))
    m = GridMetrics()
    b1 = m(torch.from_numpy(p1), torch.from_numpy(t1))
    m(torch.from_numpy(p2), torch.from_numpy(t2))
    for k, v in grid_metrics(p1, t1).items():
        assert close(b1[k], v), k
    allm = grid_metrics(np.concatenate([p1, p2]), np.concatenate([t1, t2]))
    got = m.compute()
    for k, v in allm.items():
        assert close(got[k], v), k


def test_mixing_source_and_no_source_raises_and_reset_clears():
    m = GridMetrics()
    t = torch.tensor([[[1, 2]]])
    m.update(t, t, source=t)
    m.update(t, t)
    with pytest.raises(ValueError, match="source"):
        m.compute()
    m.reset()
    m.update(t, t)
    assert float(m.compute()["n_grids"]) == 1


def test_empty_metric_gives_nan():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torchmetrics warns about compute before update
        r = GridMetrics().compute()
    assert math.isnan(float(r["grid_accuracy"])) and float(r["n_grids"]) == 0


def test_bad_pad_token_and_missing_ignore_index():
    with pytest.raises(ValueError):
        GridMetrics(pad_token=0)
    with pytest.raises(ValueError):
        ReconstructionMetrics(pad_token=5)
    with pytest.raises(TypeError, match="ignore_index"):
        TokenAccuracy()


@HSET
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([None, 10]))
def test_reconstruction_streaming_equals_one_shot(seed, pad):
    rng = np.random.default_rng(seed)
    p, t, _ = random_batch(rng, B=int(rng.integers(1, 15)), size=(4, 5))
    if pad is None:
        p, t = np.where(p == 10, 2, p), np.where(t == 10, 0, t)
    m = ReconstructionMetrics(pad_token=pad, background=0)
    for a, b in splits(rng, p.shape[0]):
        m.update(torch.from_numpy(p[a:b]), torch.from_numpy(t[a:b]))
    got = m.compute()
    one = reconstruction_metrics(p, t, pad_token=pad)
    for k, v in one.items():
        if v.dim() == 0:
            assert close(got[k], v), k
        else:
            assert all(close(x, y) for x, y in zip(got[k].tolist(), v.tolist())), k
    from arcnb.metrics import color_confusion
    assert torch.equal(got["color_confusion"], color_confusion(p, t, pad_token=pad))


@HSET
@given(st.integers(0, 2 ** 32 - 1))
def test_token_streaming_equals_one_shot(seed):
    g = torch.Generator().manual_seed(seed)
    B, L = 9, 6
    logits = torch.randn(B, L, 11, generator=g)
    target = torch.randint(0, 11, (B, L), generator=g)
    target[torch.rand(B, L, generator=g) < 0.4] = -100
    m = TokenAccuracy(ignore_index=-100)
    rng = np.random.default_rng(seed)
    for a, b in splits(rng, B):
        m.update(logits[a:b], target[a:b])
    got = m.compute()
    for k, v in token_accuracy(logits, target, ignore_index=-100).items():
        assert close(got[k], v), k


def test_latent_streaming_equals_one_shot():
    g = torch.Generator().manual_seed(3)
    mu = torch.randn(40, 5, generator=g)
    lv = torch.randn(40, 5, generator=g) * 0.2
    m = LatentDiagnostics(5)
    m.update(mu[:13], lv[:13])
    m.update(mu[13:], lv[13:])
    got = m.compute()
    for k, v in latent_diagnostics(mu, lv).items():
        if v.dim() == 0:
            assert close(got[k], v, 1e-5), k
        else:
            assert torch.allclose(got[k], v, atol=1e-5), k


def test_states_are_sums_reduced_by_sum():
    for m in (GridMetrics(), GridMetrics(convention="reference"), ReconstructionMetrics(),
              TokenAccuracy(ignore_index=-100), LatentDiagnostics(3)):
        assert m._reductions, type(m).__name__
        for name, fx in m._reductions.items():
            assert fx is not None and getattr(fx, "__name__", "") in ("dim_zero_sum", "sum"), \
                (type(m).__name__, name, fx)


def test_works_under_inference_mode_like_lightning_validation():
    rng = np.random.default_rng(8)
    p, t, s = random_batch(rng, B=12, size=(6, 6))
    want = grid_metrics(p, t, source=s)
    c = ArcMetricCollection(prefix="val_")
    with torch.inference_mode():
        P, T, S = (torch.from_numpy(x).clone() for x in (p, t, s))
        c.update(P, T, source=S)
        got = c.compute()
        direct = grid_metrics(P, T, source=S)
    for k, v in want.items():
        assert close(got["val_" + k], v), k
        assert close(direct[k], v), k


# ------------------------------------------------------------------------ two processes
# Two processes (torch.distributed, gloo, CPU) each update half of the batches; the
# reduced result equals one process over all batches.

WORLD = 2
N_BATCHES = 7  # uneven: rank 0 gets 4 batches, rank 1 gets 3


def _batches():
    rng = np.random.default_rng(123)
    out = []
    for i in range(N_BATCHES):
        p, t, s = random_batch(rng, B=3 + i, size=(6, 5))
        out.append((p, t, s))
    return out


def _results(metrics):
    out = {}
    for name, m in metrics.items():
        for k, v in m.compute().items():
            out[f"{name}/{k}"] = v.double().flatten().tolist()
    return out


def _make_metrics():
    return {"arcnb": GridMetrics(), "reference": GridMetrics(convention="reference"),
            "recon": ReconstructionMetrics(pad_token=10),
            "token": TokenAccuracy(ignore_index=10)}


def _update(metrics, batch):
    p, t, s = (torch.from_numpy(x) for x in batch)
    metrics["arcnb"].update(p, t, source=s)
    metrics["reference"].update(p, t, source=s)
    metrics["recon"].update(p, t)
    metrics["token"].update(p.flatten(1), t.flatten(1))


def _worker(rank, port, out_path):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=timedelta(seconds=60))
    try:
        metrics = _make_metrics()
        for i, batch in enumerate(_batches()):
            if i % WORLD == rank:
                _update(metrics, batch)
        res = _results(metrics)  # compute() syncs the sum states across processes
        if rank == 0:
            with open(out_path + ".tmp", "w") as f:
                json.dump(res, f)
            os.replace(out_path + ".tmp", out_path)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _same(a, b):
    if math.isnan(b):
        return math.isnan(a)
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


@pytest.mark.slow  # starts worker processes
def test_two_gloo_processes_reduce_to_the_single_process_result():
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "rank0.json")
        ctx = mp.start_processes(_worker, args=(_free_port(), out_path), nprocs=WORLD,
                                 join=False, start_method="spawn")
        deadline = time.monotonic() + 180
        try:
            while not ctx.join(timeout=1):
                if time.monotonic() > deadline:
                    pytest.fail("distributed workers did not finish within 180 s")
        finally:
            for p in ctx.processes:
                if p.is_alive():
                    p.terminate()
        with open(out_path) as f:
            got = json.load(f)

    single = _make_metrics()
    for batch in _batches():
        _update(single, batch)
    want = _results(single)
    assert set(got) == set(want)
    for k in want:
        assert len(got[k]) == len(want[k]), k
        for a, b in zip(got[k], want[k]):
            assert _same(a, b), (k, a, b)
    # and the one-process result is the naive reference over all batches
    p = np.concatenate([b[0] for b in _batches()])
    t = np.concatenate([b[1] for b in _batches()])
    s = np.concatenate([b[2] for b in _batches()])
    naive = naive_grid_metrics(p, t, s)
    for k, v in naive.items():
        assert _same(got[f"arcnb/{k}"][0], v), k
