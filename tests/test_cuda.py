"""arcnb on a CUDA device: the tensor metrics against the naive per-grid reference,
results left on the device, the streaming class, the colour breakdown and an
evaluation (CPU and CUDA pick the same attempts).

Skipped where CUDA is absent (CI and the development machine have no GPU); run on a
machine with one as ``pytest tests/test_cuda.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from arcnb.metrics import (color_confusion, grid_metrics, latent_diagnostics, palette_metrics,
                           reconstruction_metrics, token_accuracy)

from naive_metrics import (close, naive_color_confusion, naive_grid_metrics, naive_latent,
                           naive_reconstruction_metrics, naive_token_accuracy, random_batch)
from test_metrics_palette import naive_palette

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

CUDA = torch.device("cuda")


def _on_cuda(x):
    return torch.from_numpy(np.ascontiguousarray(x)).to(CUDA)


def _assert_matches(got: dict, want: dict):
    for k, w in want.items():
        g = got[k]
        assert isinstance(g, torch.Tensor) and g.device.type == "cuda", (k, g)
        if isinstance(w, (list, tuple, np.ndarray)):
            g = g.cpu().tolist()
            assert len(g) == len(w) and all(close(a, b) for a, b in zip(g, w)), (k, g, w)
        else:
            assert close(g.item(), w), (k, g.item(), w)


@pytest.mark.parametrize("convention", ["arcnb", "reference"])
def test_grid_metrics_on_cuda_match_the_naive_loop(convention):
    for seed in range(40):
        p, t, s = random_batch(np.random.default_rng(seed))
        for src in (s, None):
            got = grid_metrics(_on_cuda(p), _on_cuda(t),
                               source=None if src is None else _on_cuda(src),
                               convention=convention)
            _assert_matches(got, naive_grid_metrics(p, t, src, convention=convention))


def test_grid_metrics_on_cuda_on_full_size_grids_one_pass_and_chunks(monkeypatch):
    """30x30 grids of every integer dtype in one pass, and in several chunks."""
    import arcnb.metrics.grid_kernel as K

    rng = np.random.default_rng(7)
    p, t, s = random_batch(rng, B=10_000, size=(30, 30))
    want = naive_grid_metrics(p, t, s)
    for dtype in (torch.uint8, torch.int16, torch.int32, torch.int64):
        x = [_on_cuda(a).to(dtype) for a in (p, t, s)]
        _assert_matches(grid_metrics(x[0], x[1], source=x[2]), want)
    monkeypatch.setattr(K, "TORCH_CHUNK_CELLS", 3_000_000)  # four chunks
    _assert_matches(grid_metrics(_on_cuda(p), _on_cuda(t), source=_on_cuda(s)), want)


def test_grid_metrics_on_cuda_dispatch_at_most_30_operations():
    from test_metrics_grid_kernel import MAX_OPS, _CountOps

    p, t, s = (_on_cuda(x) for x in random_batch(np.random.default_rng(8), B=256,
                                                  size=(30, 30)))
    for kwargs in ({"source": s}, {}):
        grid_metrics(p, t, **kwargs)
        with _CountOps() as c:
            grid_metrics(p, t, **kwargs)
        assert len(c.ops) <= MAX_OPS, c.ops


def test_compiled_grid_metrics_on_cuda_equal_eager_and_the_naive_loop():
    from arcnb.metrics import compiled

    metrics = compiled()
    rng = np.random.default_rng(9)
    for size, dtype in (((30, 30), torch.int64), ((30, 30), torch.uint8), ((7, 5), torch.int64)):
        p, t, s = random_batch(rng, B=300, size=size)
        x = [_on_cuda(a).to(dtype) for a in (p, t, s)]
        for src in (x[2], None):
            got = metrics(x[0], x[1], source=src)
            _assert_matches(got, naive_grid_metrics(p, t, None if src is None else s))
            eager = grid_metrics(x[0], x[1], source=src)
            for k in eager:
                assert close(got[k].item(), eager[k].item(), 1e-7), k


def test_the_other_metric_families_on_cuda_match_the_naive_loops():
    for seed in range(20):
        p, t, _ = random_batch(np.random.default_rng(100 + seed))
        _assert_matches(reconstruction_metrics(_on_cuda(p), _on_cuda(t), pad_token=10),
                        naive_reconstruction_metrics(p, t, pad_token=10))
        c = color_confusion(_on_cuda(p), _on_cuda(t), pad_token=10)
        assert c.device.type == "cuda"
        np.testing.assert_array_equal(c.cpu().numpy(), naive_color_confusion(p, t, 10))
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 50, 11, generator=g)
    target = torch.randint(0, 11, (4, 50), generator=g)
    target[torch.rand(4, 50, generator=g) < 0.3] = -100
    _assert_matches(token_accuracy(logits.to(CUDA), target.to(CUDA), ignore_index=-100),
                    naive_token_accuracy(logits.argmax(-1).numpy(), target.numpy(), -100))
    mu, logvar = torch.randn(64, 8, generator=g), 0.3 * torch.randn(64, 8, generator=g)
    _assert_matches(latent_diagnostics(mu.to(CUDA), logvar.to(CUDA)),
                    naive_latent(mu.numpy(), logvar.numpy()))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32, torch.int64])
def test_palette_metrics_on_cuda_match_the_naive_loop_in_every_dtype(dtype):
    from arcnb.metrics import compiled
    from arcnb.metrics.streaming import PaletteMetrics

    metrics = compiled(palette_metrics)
    for seed in range(10):
        p, t, _ = random_batch(np.random.default_rng(300 + seed), size=(30, 30))
        want = naive_palette(p, t)
        pc, tc = (_on_cuda(x).to(dtype) for x in (p, t))
        _assert_matches(palette_metrics(pc, tc), want)
        _assert_matches(metrics(pc, tc), want)
        m = PaletteMetrics().to(CUDA)
        m.update(pc, tc)
        _assert_matches(m.compute(), want)
    # a target value that is no colour: NaN (raising would wait for the GPU)
    t[0, 0, 0] = 11
    r = palette_metrics(_on_cuda(p).to(dtype), _on_cuda(t).to(dtype))
    assert np.isnan(r["palette_jaccard"].item())


def test_streaming_grid_metrics_on_cuda_over_batches_equal_the_naive_loop_on_all():
    from arcnb.metrics.streaming import GridMetrics

    m = GridMetrics().to(CUDA)
    ps, ts, ss = [], [], []
    for seed in range(5):
        p, t, s = random_batch(np.random.default_rng(200 + seed), size=(9, 9))
        m.update(_on_cuda(p), _on_cuda(t), _on_cuda(s))
        ps.append(p), ts.append(t), ss.append(s)
    got = m.compute()
    _assert_matches(got, naive_grid_metrics(np.concatenate(ps), np.concatenate(ts),
                                            np.concatenate(ss)))


def test_a_training_step_of_metrics_never_waits_for_the_gpu():
    """grid_metrics, GridMetrics.update (the training-loop metrics), token accuracy and
    the latent diagnostics queue their work and return: no ``.item()``, ``bool()`` of a
    tensor or other wait for the GPU, which would stall a training loop until the GPU
    caught up. CUDA's sync debug mode turns such a wait into an error; torch says it
    does not detect every one (a small copy of numbers from host memory went unnoticed
    on torch 2.11), so the metrics also make no such copy."""
    from arcnb.metrics.streaming import GridMetrics, PaletteMetrics

    p, t, s = (_on_cuda(x) for x in random_batch(np.random.default_rng(5), B=64,
                                                  size=(30, 30)))
    m = GridMetrics().to(CUDA)
    mp = PaletteMetrics().to(CUDA)
    logits = torch.randn(4, 50, 11, device=CUDA)
    tokens = torch.randint(0, 11, (4, 50), device=CUDA)
    mu, logvar = torch.randn(64, 8, device=CUDA), torch.randn(64, 8, device=CUDA)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for convention in ("arcnb", "reference"):
            grid_metrics(p, t, source=s, convention=convention)
        grid_metrics(p, t)
        m.update(p, t, s)
        m.update(p, t, s)
        palette_metrics(p, t)
        palette_metrics(p.to(torch.uint8), t.to(torch.uint8))
        mp.update(p, t)
        token_accuracy(logits, tokens, ignore_index=-100)
        latent_diagnostics(mu, logvar)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    # and the numbers are the ones the naive loop gives
    want = naive_grid_metrics(*(x.cpu().numpy() for x in (p, t, s)))
    _assert_matches(grid_metrics(p, t, source=s), want)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The bundled baseline on 40 ARC-AGI-1 evaluation tasks, on the CPU and on CUDA."""
    from arcnb.data import load_dataset
    from arcnb.evaluate import evaluate

    ds = load_dataset("arc-agi-1:evaluation")
    ds = ds.select(ds.task_ids[:40])
    out = tmp_path_factory.mktemp("cuda")
    runs = {d: evaluate("baseline", ds, out / d, device=d, augment="dihedral", progress=False,
                        n_boot=50) for d in ("cpu", "cuda")}
    return ds, runs


def test_an_evaluation_on_cuda_picks_the_attempts_the_cpu_picks(two_runs):
    ds, runs = two_runs
    assert runs["cuda"].provenance["device"] == "cuda"
    keys = list(runs["cpu"].outputs[["task_id", "test_index"]].itertuples(index=False))
    assert len(keys) == ds.n_outputs
    differ = sum(any(not np.array_equal(a, b) for a, b in
                     zip(runs["cpu"].attempts(t, i), runs["cuda"].attempts(t, i)))
                 for t, i in keys)
    # float sums in another order may flip a near tie; more than one in 40 is a bug
    assert differ <= 1, f"{differ} of {len(keys)} outputs got other attempts on CUDA"
    for k in ("pass@2", "cell_accuracy_right_shape", "partial_credit"):
        assert abs(runs["cpu"].summary[k] - runs["cuda"].summary[k]) <= 1 / len(keys), k


def test_the_colour_breakdown_on_cuda_equals_the_cpu_count(two_runs):
    from arcnb.breakdown import color_accuracy, color_confusion as run_confusion

    run = two_runs[1]["cuda"].results
    np.testing.assert_array_equal(np.asarray(run_confusion(run, device="cuda")),
                                  np.asarray(run_confusion(run)))
    a, b = color_accuracy(run, n_boot=50, device="cuda"), color_accuracy(run, n_boot=50)
    for col in ("n_cells", "accuracy", "ci_low", "ci_high"):
        np.testing.assert_allclose(a[col].to_numpy(float), b[col].to_numpy(float), err_msg=col)
