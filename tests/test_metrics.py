"""Tensor metrics (arcnb.metrics) against a naive per-grid reference and hand values."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import arcnb.metrics.grid as G
import arcnb.metrics.grid_kernel as K
from arcnb.grids import pad_grids
from arcnb.metrics import (color_confusion, grid_metrics, latent_diagnostics,
                           reconstruction_metrics, token_accuracy)

from naive_metrics import (close, naive_color_confusion, naive_grid_metrics, naive_latent,
                           naive_reconstruction_metrics, naive_token_accuracy, random_batch)

HSET = settings(max_examples=50, deadline=None)




def assert_matches(got, want, keys=None):
    for k in keys or want:
        w = want[k]
        g = got[k]
        if isinstance(w, (list, tuple, np.ndarray)):
            g = g.tolist()
            assert len(g) == len(w), k
            for gi, wi in zip(g, w):
                assert close(gi, wi), (k, g, w)
        else:
            assert close(g, w), (k, float(g), w)


# --------------------------------------------------------------------------- #
# grid metrics against the naive reference
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("convention", ["arcnb", "reference"])
@pytest.mark.parametrize("with_source", [True, False])
def test_grid_metrics_match_naive_on_random_batches(convention, with_source):
    for seed in range(60):
        rng = np.random.default_rng(seed)
        p, t, s = random_batch(rng)
        src = s if with_source else None
        got = grid_metrics(torch.from_numpy(p), torch.from_numpy(t), source=src,
                           convention=convention)
        want = naive_grid_metrics(p, t, src, convention=convention)
        assert set(got) == set(want)
        assert_matches(got, want)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_both_backends_and_small_chunks_match_naive(monkeypatch, backend):
    # the CPU (numpy) and accelerator (torch) chunk code, with many chunks
    monkeypatch.setattr(K, "_CHUNK_CELLS_CPU", 40)
    for seed in range(30):
        rng = np.random.default_rng(1000 + seed)
        p, t, s = random_batch(rng, B=int(rng.integers(1, 30)))
        P, T, S = map(torch.from_numpy, (p, t, s))
        for conv in ("arcnb", "reference"):
            want = naive_grid_metrics(p, t, s, convention=conv)
            for pad_dtype in (torch.int64, torch.int8):
                counts = G.grid_update(P, T.to(pad_dtype), S, pad_token=10,
                                       reference=conv == "reference", _backend=backend)
                assert_matches(G.grid_compute(counts, convention=conv), want)
            counts = G.grid_update(P[:, :, :3].reshape(P.shape[0], -1),
                                   T[:, :, :3].reshape(P.shape[0], -1), None,
                                   reference=conv == "reference", _backend=backend)
            want2 = naive_grid_metrics(p[:, :, :3].reshape(p.shape[0], -1),
                                       t[:, :, :3].reshape(p.shape[0], -1), convention=conv)
            assert_matches(G.grid_compute(counts, convention=conv), want2)


@pytest.mark.parametrize("pad", [10, 11, 255, -1, -100, 1000])
def test_grid_metrics_other_pad_tokens(pad):
    for seed in range(15):
        rng = np.random.default_rng(2000 + seed)
        p, t, s = random_batch(rng, pad=pad)
        for conv in ("arcnb", "reference"):
            got = grid_metrics(p, t, pad_token=pad, source=s, convention=conv)
            assert_matches(got, naive_grid_metrics(p, t, s, pad_token=pad, convention=conv))


def test_grid_metrics_values_outside_int8_are_exact():
    # a prediction of 266 must not alias colour 10 (= pad) or 2**32 + 3 alias 3
    rng = np.random.default_rng(7)
    for big in (266, 256 + 3, 2 ** 32 + 3, -(2 ** 40) + 5, 2 ** 62):
        p, t, s = random_batch(rng, B=6, size=(5, 5))
        p = p.copy()
        p[0, 0, 0] = big
        p[1, :, :] = big
        s = s.copy()
        s[2, 1, 1] = big
        for conv in ("arcnb", "reference"):
            got = grid_metrics(torch.from_numpy(p), torch.from_numpy(t), source=s,
                               convention=conv)
            assert_matches(got, naive_grid_metrics(p, t, s, convention=conv))


def test_grid_metrics_pad_none_and_sequences():
    for seed in range(20):
        rng = np.random.default_rng(3000 + seed)
        p, t, s = random_batch(rng)
        got = grid_metrics(p, t, pad_token=None, source=s)
        assert_matches(got, naive_grid_metrics(p, t, s, pad_token=None))
        # [B, L] sequences: no rows or columns
        B = p.shape[0]
        p2, t2, s2 = p.reshape(B, -1), t.reshape(B, -1), s.reshape(B, -1)
        for conv in ("arcnb", "reference"):
            got = grid_metrics(p2, t2, source=s2, convention=conv)
            want = naive_grid_metrics(p2, t2, s2, convention=conv)
            assert_matches(got, want)
            assert math.isnan(float(got["row_all_correct_rate"]))


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8])
def test_grid_metrics_any_integer_dtype_and_input_type(dtype):
    rng = np.random.default_rng(11)
    p, t, s = random_batch(rng, B=9, size=(6, 4))
    want = naive_grid_metrics(p, t, s)
    got = grid_metrics(torch.from_numpy(p).to(dtype), torch.from_numpy(t).to(dtype),
                       source=torch.from_numpy(s).to(dtype))
    assert_matches(got, want)
    assert_matches(grid_metrics(p.tolist(), t.tolist(), source=s.tolist()), want)
    assert_matches(grid_metrics(p.astype(np.int32), t, source=s), want)
    # non-contiguous tensor
    P = torch.from_numpy(np.ascontiguousarray(p.transpose(0, 2, 1))).transpose(1, 2)
    assert not P.is_contiguous()
    assert_matches(grid_metrics(P, t, source=s), want)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("convention", ["arcnb", "reference"])
def test_every_metric_on_every_integer_dtype_equals_int64_and_naive(backend, convention):
    # uint8 / int16 / int32 inputs are read as they are (no upcast copy): each gives
    # the int64 result and the naive per-grid reference, with and without source,
    # on grids, on sequences and without padding
    for seed in range(6):
        rng = np.random.default_rng(4100 + seed)
        p, t, s = random_batch(rng, B=int(rng.integers(1, 40)))
        B = p.shape[0]
        cases = [(p, t, s, 10), (p, t, None, 10), (p, t, s, None),
                 (p.reshape(B, -1), t.reshape(B, -1), s.reshape(B, -1), 10)]
        for pp, tt, ss, pad in cases:
            want = naive_grid_metrics(pp, tt, ss, pad_token=pad, convention=convention)
            results = {}
            for dtype in (torch.uint8, torch.int16, torch.int32, torch.int64):
                P, T = (torch.from_numpy(x).to(dtype) for x in (pp, tt))
                S = None if ss is None else torch.from_numpy(ss).to(dtype)
                vec, lay = G.count_vector(P, T, S, pad_token=pad,
                                          reference=convention == "reference",
                                          _backend=backend)
                got = G._ratios(vec, lay, G.DEFAULT_TOLERANCES, G.DEFAULT_WEIGHTS,
                                convention)
                assert set(got) == set(want)
                assert_matches(got, want)
                results[dtype] = got
            for dtype, got in results.items():
                for k, v in got.items():
                    assert torch.equal(v, results[torch.int64][k]) or (
                        v.isnan() and results[torch.int64][k].isnan()), (dtype, k)


def test_compute_takes_any_of_the_counted_tolerances_by_name():
    # counts of the default tolerances, ratios of a subset in another order: each
    # tolerance is found by its name, not by its place
    rng = np.random.default_rng(4200)
    p, t, s = (torch.from_numpy(x) for x in random_batch(rng, B=30))
    for backend in ("numpy", "torch"):
        counts = G.grid_update(p, t, s, tolerances=(0.9, 0.95, 0.99), _backend=backend)
        got = G.grid_compute(counts, tolerances=(0.99, 0.9))
        want = naive_grid_metrics(p.numpy(), t.numpy(), s.numpy(), tolerances=(0.99, 0.9))
        assert_matches(got, want)
        with pytest.raises(ValueError, match="0p5"):
            G.grid_compute(counts, tolerances=(0.5,))


def test_grid_metrics_built_with_pad_grids_on_real_shapes():
    truth = [np.array([[0, 1], [2, 3]]), np.array([[5]]), np.zeros((3, 4), dtype=np.int64)]
    preds = [np.array([[0, 1], [2, 3]]), np.array([[5, 5]]), np.zeros((3, 4), dtype=np.int64)]
    pt = pad_grids(truth, size=(4, 4))
    pp = pad_grids(preds, size=(4, 4))
    m = grid_metrics(pp, pt)
    # grid 1 predicted a 1x2 grid for a 1x1 target: valid cells right, shape wrong
    assert float(m["grid_accuracy"]) == 1.0
    assert float(m["exact_match"]) == pytest.approx(2 / 3)
    assert float(m["cell_accuracy"]) == 1.0
    assert float(m["n_grids"]) == 3


# --------------------------------------------------------------------------- #
# seeds' worked examples and hand-computed values
# --------------------------------------------------------------------------- #
def test_seed000_worked_example_one_wrong_cell_of_four():
    pred = torch.tensor([[[1, 2], [3, 4]]])
    tgt = torch.tensor([[[1, 2], [3, 5]]])
    m = grid_metrics(pred, tgt, pad_token=10)
    assert float(m["grid_accuracy"]) == 0.0
    assert float(m["cell_accuracy"]) == 0.75
    assert float(m["exact_match"]) == 0.0
    assert float(m["grid_tol_0p90"]) == 0.0
    perfect = grid_metrics(tgt, tgt, pad_token=10)
    assert float(perfect["grid_accuracy"]) == 1.0
    # a 2-D input is a batch of sequences [B, L]: two rows are two "grids"
    m2 = grid_metrics(pred[0], tgt[0], pad_token=10)
    assert float(m2["grid_accuracy"]) == 0.5
    assert float(m2["n_grids"]) == 2


def test_hand_computed_change_metrics_and_conventions():
    # grid 0: 2x2, source changes two cells, prediction gets one of them right
    # grid 1: all padding (not a grid in the arcnb convention)
    P = 10
    tgt = torch.tensor([[[1, 2], [3, 4]], [[P, P], [P, P]]])
    src = torch.tensor([[[1, 2], [0, 0]], [[P, P], [P, P]]])
    pred = torch.tensor([[[1, 2], [3, 7]], [[P, P], [P, P]]])
    m = grid_metrics(pred, tgt, source=src)
    # target changes: (1,0),(1,1); pred changes: (1,0),(1,1) -> recall 1, precision 1
    assert float(m["change_recall"]) == 1.0
    assert float(m["change_precision"]) == 1.0
    assert float(m["transformation_f1"]) == 1.0
    assert float(m["copy_rate"]) == 0.5
    assert float(m["change_accuracy"]) == 0.5
    assert float(m["grid_accuracy"]) == 0.0
    assert float(m["cell_accuracy"]) == 0.75
    assert float(m["n_grids"]) == 1
    assert float(m["row_all_correct_rate"]) == 0.5
    assert float(m["col_all_correct_rate"]) == 0.5
    assert float(m["dense_grid_objective"]) == 0.0
    r = grid_metrics(pred, tgt, source=src, convention="reference")
    assert float(r["n_grids"]) == 2
    # reference: per grid over every cell; the all-padding grid has no changes
    # (recall 1, precision 1) and copies every cell
    assert float(r["copy_rate"]) == pytest.approx((0.5 + 1.0) / 2)
    assert float(r["change_recall"]) == 1.0
    assert float(r["transformation_f1"]) == pytest.approx(2 / (2 + 1e-8))
    # the all-padding grid counts as wrong in the reference convention
    perfect = grid_metrics(tgt, tgt, convention="reference")
    assert float(perfect["grid_accuracy"]) == 0.5
    assert float(grid_metrics(tgt, tgt)["grid_accuracy"]) == 1.0


def test_tolerance_boundary_and_custom_tolerances():
    # 19 of 20 correct = 0.95 exactly: counts at 0.95, not at 0.99
    t = torch.arange(20).remainder(10).view(1, 4, 5)
    p = t.clone()
    p[0, 0, 0] = 9
    m = grid_metrics(p, t, tolerances=(0.95, 0.99, 0.5, 0.999))
    assert float(m["grid_tol_0p95"]) == 1.0
    assert float(m["grid_tol_0p99"]) == 0.0
    assert float(m["grid_tol_0p50"]) == 1.0
    assert float(m["grid_tol_0p999"]) == 0.0
    assert float(m["dense_grid_objective"]) == pytest.approx(0.8)
    m = grid_metrics(p, t, tolerances=(0.5,), weights=(1.0, 0.0, 0.0))
    assert "grid_tol_0p95" not in m
    assert float(m["dense_grid_objective"]) == pytest.approx(0.95)


def test_empty_denominators_are_nan_never_zero_or_one():
    P = 10
    all_pad = torch.full((3, 2, 2), P)
    pred = torch.zeros((3, 2, 2), dtype=torch.long)
    m = grid_metrics(pred, all_pad, source=all_pad)
    for k in ("grid_accuracy", "exact_match", "cell_accuracy", "grid_tol_0p95",
              "row_all_correct_rate", "col_all_correct_rate", "dense_grid_objective",
              "change_recall", "change_precision", "transformation_f1", "copy_rate",
              "change_accuracy"):
        assert math.isnan(float(m[k])), k
    assert float(m["n_grids"]) == 0
    empty = grid_metrics(torch.zeros((0, 3, 3), dtype=torch.long),
                         torch.zeros((0, 3, 3), dtype=torch.long))
    assert math.isnan(float(empty["grid_accuracy"]))
    # no target changes: recall NaN (arcnb), precision defined
    t = torch.tensor([[[1, 2]]])
    m = grid_metrics(torch.tensor([[[1, 3]]]), t, source=t)
    assert math.isnan(float(m["change_recall"]))
    assert float(m["change_precision"]) == 0.0
    assert math.isnan(float(m["transformation_f1"]))
    # recall and precision both 0: f1 is 0
    m = grid_metrics(torch.tensor([[[5, 2]]]), torch.tensor([[[1, 3]]]),
                     source=torch.tensor([[[1, 2]]]))
    assert float(m["change_recall"]) == 0.0 and float(m["change_precision"]) == 0.0
    assert float(m["transformation_f1"]) == 0.0
    assert math.isnan(float(token_accuracy(torch.tensor([[1]]), torch.tensor([[-100]]),
                                           ignore_index=-100)["token_accuracy"]))


# --------------------------------------------------------------------------- #
# colour 0 is never padding
# --------------------------------------------------------------------------- #
def test_colour_zero_is_never_padding_in_any_function():
    tgt = torch.tensor([[[0, 0], [0, 1]]])
    pred = torch.tensor([[[1, 1], [1, 1]]])  # every black cell wrong
    m = grid_metrics(pred, tgt)
    assert float(m["cell_accuracy"]) == 0.25
    assert float(m["grid_accuracy"]) == 0.0
    m = grid_metrics(pred, tgt, pad_token=None)
    assert float(m["cell_accuracy"]) == 0.25
    src = torch.tensor([[[1, 1], [1, 1]]])
    m = grid_metrics(pred, tgt, source=src)
    assert float(m["change_recall"]) == 0.0  # the three black cells are changes
    r = reconstruction_metrics(pred, tgt)
    assert float(r["pixel_accuracy"]) == 0.25
    assert float(r["per_color_accuracy"][0]) == 0.0
    r = reconstruction_metrics(pred, tgt, pad_token=10)
    assert float(r["pixel_accuracy"]) == 0.25
    c = color_confusion(pred, tgt)
    assert int(c[0, 1]) == 3 and int(c.sum()) == 4
    c = color_confusion(pred, tgt, pad_token=10)
    assert int(c[0, 1]) == 3 and c.shape == (10, 11)
    a = token_accuracy(pred.view(1, -1), tgt.view(1, -1), ignore_index=-100)
    assert float(a["token_accuracy"]) == 0.25
    # seed 004's rule would drop the zeros; arcnb refuses pad 0 everywhere
    for f in (lambda: grid_metrics(pred, tgt, pad_token=0),
              lambda: reconstruction_metrics(pred, tgt, pad_token=0),
              lambda: color_confusion(pred, tgt, pad_token=0)):
        with pytest.raises(ValueError, match="colour"):
            f()
    for pad in range(10):
        with pytest.raises(ValueError):
            grid_metrics(pred, tgt, pad_token=pad)
    # ignore_index=0 only when the caller says so: then only the colour-1 cell counts
    a = token_accuracy(pred.view(1, -1), tgt.view(1, -1), ignore_index=0)
    assert float(a["token_accuracy"]) == 1.0 and float(a["n_tokens"]) == 1


# --------------------------------------------------------------------------- #
# errors
# --------------------------------------------------------------------------- #
def test_bad_inputs_raise_clear_errors():
    t = torch.zeros((2, 3, 3), dtype=torch.long)
    with pytest.raises(ValueError, match="shape"):
        grid_metrics(torch.zeros((2, 3, 4), dtype=torch.long), t)
    with pytest.raises(ValueError, match="shape"):
        grid_metrics(t, t, source=torch.zeros((2, 3, 4), dtype=torch.long))
    with pytest.raises(ValueError, match="argmax"):
        grid_metrics(t.float(), t)
    with pytest.raises(ValueError, match="batch"):
        grid_metrics(torch.zeros(3, dtype=torch.long), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="convention"):
        grid_metrics(t, t, convention="paper")
    with pytest.raises(ValueError, match="tolerance"):
        grid_metrics(t, t, tolerances=(1.5,))
    with pytest.raises(ValueError, match="rectangular"):
        grid_metrics([[[1, 2], [3]]], [[[1, 2], [3]]])
    with pytest.raises(TypeError, match="ignore_index"):
        token_accuracy(t, t)
    with pytest.raises(ValueError, match="shape"):
        token_accuracy(torch.zeros((2, 4)), torch.zeros((2, 3), dtype=torch.long), ignore_index=-100)
    with pytest.raises(ValueError, match="colour 0-9"):
        reconstruction_metrics(t, torch.full((2, 3, 3), 12))
    with pytest.raises(ValueError, match="neither a colour"):
        color_confusion(torch.full((2, 3, 3), 10), t)
    with pytest.raises(ValueError, match="background"):
        reconstruction_metrics(t, t, background=10)


# --------------------------------------------------------------------------- #
# reconstruction, confusion, tokens, latent
# --------------------------------------------------------------------------- #
def test_reconstruction_and_confusion_match_naive():
    for seed in range(40):
        rng = np.random.default_rng(4000 + seed)
        p, t, _ = random_batch(rng)
        for pad in (None, 10):
            pp = p if pad is not None else np.where(p == 10, 3, p)
            tt = t if pad is not None else np.where(t == 10, 0, t)
            for bg in (0, 4, None):
                got = reconstruction_metrics(torch.from_numpy(pp), tt, background=bg, pad_token=pad)
                want = naive_reconstruction_metrics(pp, tt, background=bg, pad_token=pad)
                assert_matches(got, want)
            c = color_confusion(torch.from_numpy(pp), torch.from_numpy(tt), pad_token=pad)
            assert c.dtype == torch.int64
            np.testing.assert_array_equal(c.numpy(), naive_color_confusion(pp, tt, pad))


def test_reconstruction_seed002_example_and_wrong_values():
    # seed 002: 245 of 256 pixels -> 0.957
    t = torch.zeros((1, 16, 16), dtype=torch.long)
    p = t.clone()
    p.view(-1)[:11] = 3
    m = reconstruction_metrics(p, t)
    assert float(m["pixel_accuracy"]) == pytest.approx(245 / 256)
    assert float(m["perfect_recon_rate"]) == 0.0
    assert math.isnan(float(m["object_accuracy"]))  # no object cells
    assert math.isnan(float(m["per_color_accuracy"][3]))
    # predictions that are no colour (e.g. 42) are simply wrong
    m = reconstruction_metrics(torch.full((1, 2, 2), 42), torch.ones((1, 2, 2), dtype=torch.long))
    assert float(m["pixel_accuracy"]) == 0.0


def test_token_accuracy_matches_naive_with_logits_and_predictions():
    g = torch.Generator().manual_seed(0)
    for seed in range(20):
        B, L, V = 1 + seed % 4, 1 + seed % 7, 11
        logits = torch.randn(B, L, V, generator=g)
        target = torch.randint(0, V, (B, L), generator=g)
        target[torch.rand(B, L, generator=g) < 0.3] = -100
        want = naive_token_accuracy(logits.argmax(-1).numpy(), target.numpy(), -100)
        assert_matches(token_accuracy(logits, target, ignore_index=-100), want)
        assert_matches(token_accuracy(logits.argmax(-1), target, ignore_index=-100), want)
        want = naive_token_accuracy(logits.argmax(-1).numpy(), target.numpy(), None)
        assert_matches(token_accuracy(logits, target, ignore_index=None), want)


def test_seed004_delayed_copy_zeros_are_counted():
    # seed 004: targets <= 10 made the old code treat every 0 as padding
    target = torch.tensor([[0, 0, 0, 0, 0, 0, 1, 2, 3, 0]])
    pred = torch.tensor([[1, 1, 1, 1, 1, 1, 1, 2, 3, 1]])
    a = token_accuracy(pred, target, ignore_index=-100)
    assert float(a["token_accuracy"]) == pytest.approx(0.3)


def test_latent_diagnostics_match_naive():
    g = torch.Generator().manual_seed(1)
    mu = torch.randn(50, 6, generator=g) * torch.tensor([1.0, 0.5, 0.05, 0.0, 2.0, 0.2])
    logvar = torch.randn(50, 6, generator=g) * 0.3
    got = latent_diagnostics(mu, logvar)
    want = naive_latent(mu.numpy(), logvar.numpy())
    assert_matches(got, want)
    assert float(got["n_active_dims"]) == 4.0  # the 0.05 and 0.0 dims are inactive
    z = latent_diagnostics(torch.zeros(0, 3), torch.zeros(0, 3))
    assert math.isnan(float(z["mean_kl_per_dim"])) and math.isnan(float(z["n_active_dims"]))


# --------------------------------------------------------------------------- #
# hypothesis properties
# --------------------------------------------------------------------------- #
batches = st.integers(0, 2 ** 32 - 1).map(lambda s: random_batch(np.random.default_rng(s)))
conventions = st.sampled_from(["arcnb", "reference"])


@HSET
@given(batches, conventions)
def test_perfect_prediction_scores_one_wherever_defined(batch, convention):
    _, t, s = batch
    m = grid_metrics(t, t, source=s, convention=convention)
    keys = ["cell_accuracy", "row_all_correct_rate", "col_all_correct_rate",
            "change_recall", "change_precision", "change_accuracy"]
    if convention == "arcnb":
        keys += ["grid_accuracy", "exact_match", "grid_tol_0p90", "grid_tol_0p95",
                 "grid_tol_0p99", "dense_grid_objective"]
    for k in keys:
        v = float(m[k])
        assert math.isnan(v) or v == pytest.approx(1.0), k
    if not math.isnan(float(m["transformation_f1"])):
        assert float(m["transformation_f1"]) == pytest.approx(1.0, abs=1e-7)
    r = reconstruction_metrics(t, t, pad_token=10)
    for k in ("pixel_accuracy", "perfect_recon_rate", "balanced_accuracy", "object_accuracy"):
        v = float(r[k])
        assert math.isnan(v) or v == 1.0, k
    a = token_accuracy(t, t, ignore_index=10)
    assert math.isnan(float(a["token_accuracy"])) or float(a["token_accuracy"]) == 1.0


@HSET
@given(batches, conventions, st.integers(0, 2 ** 32 - 1))
def test_grid_order_does_not_matter(batch, convention, seed):
    p, t, s = batch
    perm = np.random.default_rng(seed).permutation(p.shape[0])
    a = grid_metrics(p, t, source=s, convention=convention)
    b = grid_metrics(p[perm], t[perm], source=s[perm], convention=convention)
    for k in a:
        assert close(a[k], b[k], 1e-6), k


@HSET
@given(batches, conventions)
def test_grid_accuracy_chain(batch, convention):
    p, t, _ = batch
    m = {k: float(v) for k, v in grid_metrics(p, t, convention=convention).items()}
    if math.isnan(m["grid_accuracy"]):
        return
    assert (m["exact_match"] <= m["grid_accuracy"] <= m["grid_tol_0p99"]
            <= m["grid_tol_0p95"] <= m["grid_tol_0p90"])
    for k in ("grid_accuracy", "exact_match", "cell_accuracy", "grid_tol_0p90"):
        assert math.isnan(m[k]) or 0.0 <= m[k] <= 1.0


@HSET
@given(batches, st.integers(0, 2 ** 32 - 1), conventions)
def test_counts_add_up_over_any_split(batch, seed, convention):
    # the count core: update(A) + update(B) computes the same as update(A + B)
    p, t, s = (torch.from_numpy(x) for x in batch)
    cut = int(np.random.default_rng(seed).integers(0, p.shape[0] + 1))
    ref = convention == "reference"
    c1 = G.grid_update(p[:cut], t[:cut], s[:cut], reference=ref)
    c2 = G.grid_update(p[cut:], t[cut:], s[cut:], reference=ref)
    summed = {k: c1[k] + c2[k] for k in c1}
    a = G.grid_compute(summed, convention=convention)
    b = grid_metrics(p, t, source=s, convention=convention)
    for k in a:
        assert close(a[k], b[k], 1e-9), k


# --------------------------------------------------------------------------- #
# device: results stay on the input's device, nothing goes through the CPU
# --------------------------------------------------------------------------- #
@pytest.fixture
def no_host_transfer(monkeypatch):
    """Make every way of moving a tensor to the host raise for the test's duration."""
    def boom(*a, **k):
        raise AssertionError("tensor moved to the host")

    real_to = torch.Tensor.to

    def guarded_to(self, *args, **kwargs):
        dev = kwargs.get("device")
        for a in args:
            if isinstance(a, (str, torch.device)):
                dev = a
        if dev is not None and torch.device(dev).type == "cpu":
            raise AssertionError("tensor moved to the CPU with .to()")
        return real_to(self, *args, **kwargs)

    # the accelerator code path (torch ops only); on the CPU arcnb otherwise runs
    # the chunk passes as numpy ufuncs on zero-copy views
    import functools
    monkeypatch.setattr(G, "count_vector", functools.partial(G.count_vector, _backend="torch"))
    monkeypatch.setattr(torch.Tensor, "cpu", boom)
    monkeypatch.setattr(torch.Tensor, "numpy", boom)
    monkeypatch.setattr(torch.Tensor, "tolist", boom)
    monkeypatch.setattr(torch.Tensor, "to", guarded_to)
    yield


def test_tensor_inputs_are_never_moved_to_the_host(no_host_transfer):
    g = torch.Generator().manual_seed(0)
    t = torch.randint(0, 11, (5, 6, 6), generator=g)
    p = torch.randint(0, 11, (5, 6, 6), generator=g)
    s = torch.randint(0, 11, (5, 6, 6), generator=g)
    results = [
        grid_metrics(p, t, source=s),
        grid_metrics(p, t, source=s, convention="reference"),
        grid_metrics(p.to(torch.int32) + 1000, t, source=s),
        reconstruction_metrics(p, t, pad_token=10),
        token_accuracy(torch.randn(5, 6, 11, generator=g), t.view(5, -1)[:, :6],
                       ignore_index=10),
        latent_diagnostics(torch.randn(4, 3, generator=g), torch.zeros(4, 3)),
    ]
    for res in results:
        for k, v in res.items():
            assert isinstance(v, torch.Tensor) and v.device == t.device, k
            assert v.dtype == torch.float32, k
    c = color_confusion(p, t, pad_token=10)
    assert c.device == t.device
    for k, v in results[0].items():
        assert v.dim() == 0, k


@pytest.mark.parametrize("size", [(2, 40), (40, 3), (33, 33)])
def test_grids_wider_than_packing_limit(size):
    # rows / columns of 32 cells or more take the unpacked path
    for seed in range(5):
        rng = np.random.default_rng(5000 + seed)
        p, t, s = random_batch(rng, B=4, size=size)
        for conv in ("arcnb", "reference"):
            got = grid_metrics(p, t, source=s, convention=conv)
            assert_matches(got, naive_grid_metrics(p, t, s, convention=conv))


def test_long_sequences_count_past_int16():
    rng = np.random.default_rng(9)
    t = rng.integers(0, 10, (2, 33000))
    t[1, 30000:] = 10
    p = t.copy()
    p[0, :5] = (p[0, :5] + 1) % 10
    got = grid_metrics(p, t)
    assert_matches(got, naive_grid_metrics(p, t))
    a = token_accuracy(p, t, ignore_index=10)
    assert float(a["token_accuracy"]) == pytest.approx(1 - 5 / 63000)


def test_flipped_and_rotated_numpy_views_are_accepted():
    # np.flip / np.rot90 return views with negative strides, which torch cannot wrap
    rng = np.random.default_rng(11)
    p, t, s = random_batch(rng, B=6, size=(4, 5))
    want = naive_grid_metrics(p[:, ::-1].copy(), t[:, ::-1].copy(), s[:, ::-1].copy())
    assert_matches(grid_metrics(p[:, ::-1], t[:, ::-1], source=s[:, ::-1]), want)
    r = np.rot90(t, 1, (1, 2))
    assert_matches(reconstruction_metrics(r, r, pad_token=10),
                   naive_reconstruction_metrics(r.copy(), r.copy(), background=0,
                                                pad_token=10))
