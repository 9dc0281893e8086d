"""The palette family (arcnb.metrics.palette, arcnb.modules.PaletteMetrics) against a
naive per-grid set computation, hand values, and its invariances."""
from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import arcnb.metrics.palette as P
import arcnb.metrics.streaming as S
from arcnb.errors import ArcnbError
from arcnb.metrics import PALETTE_METRIC_NAMES, palette_metrics
from arcnb.modules import PaletteMetrics

from naive_metrics import close, random_batch

HSET = settings(max_examples=40, deadline=None)


def naive_palette(pred, target, pad_token=10):
    """Python sets, one grid at a time."""
    n = exact = 0
    jac = 0.0
    for p, t in zip(np.asarray(pred), np.asarray(target)):
        valid = np.ones(t.shape, bool) if pad_token is None else t != pad_token
        if not valid.any():
            continue
        tp = {int(v) for v in t[valid]}
        pp = {int(v) for v in p[valid] if 0 <= v <= 9}
        n += 1
        exact += tp == pp
        jac += len(tp & pp) / len(tp | pp)
    nan = float("nan")
    return {"palette_accuracy": exact / n if n else nan,
            "palette_jaccard": jac / n if n else nan, "n_grids": float(n)}


def assert_matches(got, want):
    assert set(got) == set(PALETTE_METRIC_NAMES)
    for k in want:
        assert close(got[k], want[k], 1e-6), (k, float(got[k]), want[k])


def test_hand_computed_values():
    # grid 1: target colours {0, 1, 2} (colour 0 is black, a colour like any other),
    #         prediction {0, 1, 2} on the valid cells -> exact, Jaccard 1
    # grid 2: target {3, 4} on its one valid row, prediction {3} -> Jaccard 1/2
    # grid 3: all padding -> not a grid
    # grid 4: target {5}, prediction {5, 6, 7} plus padding predicted inside -> 1/3
    pred = [[[1, 2], [2, 0]], [[3, 3], [9, 9]], [[1, 1], [1, 1]], [[5, 6], [7, 10]]]
    tgt = [[[1, 2], [0, 0]], [[3, 4], [10, 10]], [[10, 10], [10, 10]], [[5, 5], [5, 5]]]
    r = palette_metrics(pred, tgt)
    assert float(r["n_grids"]) == 3
    assert float(r["palette_accuracy"]) == pytest.approx(1 / 3)
    assert float(r["palette_jaccard"]) == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    # cells outside the target's shape do not count: 9, 9 in grid 2 changed nothing
    assert all(v.dtype == torch.float32 and v.dim() == 0 for v in r.values())


def test_colour_zero_is_a_colour_not_padding():
    # an all-black target: black is its palette; a prediction of padding misses it
    t = torch.zeros((1, 3, 3), dtype=torch.long)
    assert float(palette_metrics(t, t)["palette_accuracy"]) == 1.0
    r = palette_metrics(torch.full((1, 3, 3), 10), t)
    assert float(r["palette_accuracy"]) == 0.0 and float(r["palette_jaccard"]) == 0.0
    # with pad_token=None every cell is valid, padding or not
    r = palette_metrics(torch.tensor([[1, 2, 3]]), torch.tensor([[1, 2, 0]]), pad_token=None)
    assert float(r["palette_jaccard"]) == pytest.approx(2 / 4)


def test_empty_denominator_is_nan():
    r = palette_metrics(torch.zeros((2, 2, 2), dtype=torch.long),
                        torch.full((2, 2, 2), 10))
    assert math.isnan(float(r["palette_accuracy"])) and math.isnan(float(r["palette_jaccard"]))
    assert float(r["n_grids"]) == 0
    r = palette_metrics(torch.zeros((0, 3, 3), dtype=torch.long),
                        torch.zeros((0, 3, 3), dtype=torch.long))
    assert math.isnan(float(r["palette_accuracy"])) and float(r["n_grids"]) == 0


@pytest.mark.parametrize("seed", range(30))
def test_matches_naive_on_random_batches(seed):
    rng = np.random.default_rng(seed)
    p, t, _ = random_batch(rng)
    assert_matches(palette_metrics(p, t), naive_palette(p, t))
    assert_matches(palette_metrics(torch.from_numpy(p).to(torch.int8), t),
                   naive_palette(p, t))
    # other pad tokens, and none
    p2, t2 = np.where(p == 10, -1, p), np.where(t == 10, -1, t)
    assert_matches(palette_metrics(p2, t2, pad_token=-1), naive_palette(p2, t2, -1))
    full = np.where(t == 10, 0, t)
    assert_matches(palette_metrics(p, full, pad_token=None), naive_palette(p, full, None))


def test_bad_input_raises_family_errors():
    with pytest.raises(ArcnbError, match="neither a colour"):
        palette_metrics(torch.tensor([[1]]), torch.tensor([[11]]))
    with pytest.raises(ArcnbError, match="shape"):
        palette_metrics(torch.zeros((1, 2, 2), dtype=torch.long),
                        torch.zeros((1, 2, 3), dtype=torch.long))
    with pytest.raises(ArcnbError, match="integer"):
        palette_metrics(torch.zeros((1, 2)), torch.zeros((1, 2), dtype=torch.long))
    with pytest.raises(ArcnbError, match="batch"):
        palette_metrics(torch.tensor([1]), torch.tensor([1]))
    with pytest.raises(ArcnbError):
        palette_metrics(torch.tensor([[1]]), torch.tensor([[1]]), pad_token=0)


# ------------------------------------------------------------ invariances
batches = st.integers(0, 2 ** 32 - 1).map(lambda s: random_batch(np.random.default_rng(s)))


@HSET
@given(batches, st.integers(0, 2 ** 32 - 1))
def test_invariances(batch, seed):
    p, t, _ = batch
    rng = np.random.default_rng(seed)
    base = palette_metrics(p, t)
    # the truth scores 1 wherever a grid exists
    perfect = palette_metrics(t, t)
    for k in ("palette_accuracy", "palette_jaccard"):
        assert math.isnan(float(perfect[k])) or float(perfect[k]) == 1.0
        assert math.isnan(float(base[k])) or 0.0 <= float(base[k]) <= 1.0
    # grid order does not matter
    perm = rng.permutation(p.shape[0])
    for k, v in palette_metrics(p[perm], t[perm]).items():
        assert close(v, base[k], 1e-6), k
    # renaming the colours the same way in both grids changes nothing
    lut = np.concatenate([rng.permutation(10), np.arange(10, 11)])
    for k, v in palette_metrics(lut[p], lut[t]).items():
        assert close(v, base[k], 1e-6), k
    # a dihedral transform of every grid changes nothing (sets of colours)
    for k, v in palette_metrics(np.ascontiguousarray(np.rot90(p, 1, (1, 2))),
                                np.ascontiguousarray(np.rot90(t, 1, (1, 2)))).items():
        assert close(v, base[k], 1e-6), k
    # exact palette implies Jaccard 1: accuracy <= Jaccard
    if not math.isnan(float(base["palette_accuracy"])):
        assert float(base["palette_accuracy"]) <= float(base["palette_jaccard"]) + 1e-9


@HSET
@given(batches, st.integers(0, 2 ** 32 - 1))
def test_counts_add_up_over_any_split_and_streaming_equals_one_shot(batch, seed):
    p, t, _ = (torch.from_numpy(x) for x in batch)
    cut = int(np.random.default_rng(seed).integers(0, p.shape[0] + 1))
    c1 = P.palette_update(p[:cut], t[:cut])
    c2 = P.palette_update(p[cut:], t[cut:])
    summed = P.palette_compute({k: c1[k] + c2[k] for k in c1})
    one = palette_metrics(p, t)
    m = PaletteMetrics()
    m.update(p[:cut], t[:cut])
    m.update(p[cut:], t[cut:])
    streamed = m.compute()
    for k in one:
        assert close(summed[k], one[k], 1e-9), k
        assert close(streamed[k], one[k], 1e-6), k
    m.reset()
    assert int(m.n_grids) == 0 and int(m.n_palette_exact) == 0 and float(m.sum_jaccard) == 0


def test_tensors_are_never_moved_to_the_host(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("tensor moved to the host")

    rng = np.random.default_rng(3)
    p, t, _ = (torch.from_numpy(x) for x in random_batch(rng, B=8))
    want = naive_palette(p.numpy(), t.numpy())
    for name in ("cpu", "numpy", "tolist"):
        monkeypatch.setattr(torch.Tensor, name, boom)
    got = palette_metrics(p, t)
    m = PaletteMetrics()
    m.update(p, t)
    streamed = m.compute()
    monkeypatch.undo()
    assert_matches(got, want)
    assert_matches(streamed, want)


def test_docstring_examples_run():
    for mod in (P, S):
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert res.failed == 0 and res.attempted > 0, mod.__name__


# ------------------------------------------------------------ one pass, any dtype
DTYPES = (torch.uint8, torch.int16, torch.int32, torch.int64)


@pytest.mark.parametrize("seed", range(8))
def test_every_integer_dtype_gives_the_int64_numbers(seed):
    # each dtype read as it is: the same numbers as int64 and as the naive loop, for
    # the default pad token, -1, a pad token the clamp would merge (255), and none
    rng = np.random.default_rng(400 + seed)
    p, t, _ = random_batch(rng, B=int(rng.integers(1, 40)), size=(7, 9))
    cases = [(p, t, 10), (np.where(p == 10, 255, p), np.where(t == 10, 255, t), 255),
             (p, np.where(t == 10, 0, t), None)]
    for pp, tt, pad in cases:
        want = naive_palette(pp, tt, pad)
        base = palette_metrics(torch.from_numpy(pp), torch.from_numpy(tt), pad_token=pad)
        assert_matches(base, want)
        for dtype in DTYPES:
            got = palette_metrics(torch.from_numpy(pp).to(dtype), torch.from_numpy(tt).to(dtype),
                                  pad_token=pad)
            for k in base:
                assert float(got[k]) == float(base[k]) or (
                    math.isnan(float(got[k])) and math.isnan(float(base[k]))), (dtype, pad, k)
    # -1 as padding (signed dtypes), and mixed dtypes of pred and target
    p2, t2 = np.where(p == 10, -1, p), np.where(t == 10, -1, t)
    want = naive_palette(p2, t2, -1)
    for dp, dt in ((torch.int16, torch.int64), (torch.int64, torch.int8), (torch.int8, torch.int8),
                   (torch.int32, torch.int16)):
        assert_matches(palette_metrics(torch.from_numpy(p2).to(dp), torch.from_numpy(t2).to(dt),
                                       pad_token=-1), want)
    assert_matches(palette_metrics(torch.from_numpy(p).to(torch.uint8), torch.from_numpy(t),
                                   pad_token=10), naive_palette(p, t))


@pytest.mark.parametrize("pad, bad", [(10, 11), (10, -5), (10, 300), (-1, 10), (-1, 11),
                                      (-1, -2), (-1, -300), (None, 10), (None, -1), (None, -2),
                                      (255, 10), (255, 12), (255, -1), (255, -3), (-100, -1)])
def test_every_non_colour_target_value_is_refused_whatever_the_pad_token(pad, bad):
    t = torch.zeros((2, 2, 2), dtype=torch.int64)
    t[1, 1, 0] = bad
    with pytest.raises(ArcnbError, match="neither a colour"):
        palette_metrics(torch.zeros_like(t), t, pad_token=pad)


def test_the_device_path_equals_the_cpu_path_and_marks_a_bad_target(monkeypatch):
    # off the CPU (and compiled) the keys are counted by scatter_add_ and a bad target
    # makes the Jaccard sum NaN (raising would wait for the device): that path, on the CPU
    rng = np.random.default_rng(77)
    p, t, _ = (torch.from_numpy(x) for x in random_batch(rng, B=30, size=(6, 6)))
    want = palette_metrics(p, t)
    bad = t.clone()
    bad[0, 0, 0] = 11
    monkeypatch.setattr(torch.compiler, "is_compiling", lambda: True)
    got = palette_metrics(p, t)
    marked = P.palette_update(p, bad)
    monkeypatch.undo()
    for k in want:
        assert float(got[k]) == float(want[k]), k
    assert math.isnan(float(marked["sum_jaccard"]))


#: The most aten operations one palette_metrics call may dispatch (views included).
MAX_PALETTE_OPS = 45


def test_one_palette_call_dispatches_at_most_45_operations_whatever_the_batch():
    from test_metrics_grid_kernel import _CountOps

    rng = np.random.default_rng(12)
    p, t, _ = (torch.from_numpy(x) for x in random_batch(rng, B=256, size=(30, 30)))
    u8 = [x.to(torch.uint8) for x in (p, t)]
    seq = [x.reshape(x.shape[0], -1) for x in (p, t)]
    full = torch.where(t == 10, 0, t)
    big, small = [x.repeat(4, 1, 1) for x in (p, t)], [x[:4].clone() for x in (p, t)]
    calls = {"int64": lambda: palette_metrics(p, t), "uint8": lambda: palette_metrics(*u8),
             "sequences": lambda: palette_metrics(*seq),
             "no padding": lambda: palette_metrics(p, full, pad_token=None),
             "1,024 grids": lambda: palette_metrics(*big), "4 grids": lambda: palette_metrics(*small)}
    seen = {}
    for label, call in calls.items():
        call()  # the first call makes the small constants, once
        with _CountOps() as c:
            call()
        assert len(c.ops) <= MAX_PALETTE_OPS, (label, len(c.ops), c.ops)
        seen[label] = c.ops
    assert seen["1,024 grids"] == seen["4 grids"] == seen["int64"]  # no loop over the batch


@pytest.mark.slow  # Inductor compiles: about a minute on a 2-core machine
def test_compiled_palette_metrics_equal_eager_on_fixed_and_mixed_grid_sizes():
    from arcnb.metrics import compiled

    torch._dynamo.reset()
    metrics = compiled(palette_metrics)
    rng = np.random.default_rng(21)
    for size, dtype in (((6, 7), torch.int64), ((9, 5), torch.int64), ((30, 30), torch.int64),
                        ((3, 3), torch.int64), ((8, 8), torch.uint8), ((5, 9), torch.int32)):
        p, t, _ = (torch.from_numpy(x).to(dtype)
                   for x in random_batch(rng, B=int(rng.integers(2, 20)), size=size))
        got, want = metrics(p, t), palette_metrics(p, t)
        for k in want:
            assert got[k].dtype == torch.float32 and got[k].dim() == 0, k
            assert close(got[k], want[k], 1e-7), (size, dtype, k)


@pytest.mark.slow  # dynamo traces: seconds
def test_palette_metrics_traces_as_one_graph_without_breaks():
    torch._dynamo.reset()
    p, t, _ = (torch.from_numpy(x) for x in random_batch(np.random.default_rng(1), B=5))
    ex = torch._dynamo.explain(palette_metrics)(p, t)
    assert ex.graph_break_count == 0 and ex.graph_count == 1, ex.break_reasons
