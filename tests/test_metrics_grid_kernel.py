"""The grid family's two kernels (arcnb.metrics.grid_numpy, arcnb.metrics.grid_torch)
give identical counts on the same inputs, and the counts of the contract
(arcnb.metrics.grid_kernel) on a hand-computed batch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import arcnb.metrics.grid_kernel as K
from arcnb.metrics.grid_numpy import count_numpy
from arcnb.metrics.grid_torch import count_torch

from naive_metrics import random_batch

TOLS = (0.9, 0.95, 0.99, 0.5)


def _plain(counts: dict) -> dict:
    """Kernel counts as Python ints / int lists / int64 arrays, to compare."""
    out = {}
    for k, v in counts.items():
        if k == "n_tol":
            out[k] = [int(x) for x in v]
        elif k == "ref_per_grid":
            out[k] = np.asarray(v).astype(np.int64)
        else:
            assert not isinstance(v, torch.Tensor) or v.dim() == 0, k
            out[k] = int(v)
    return out


def _both(p, t, s=None, *, pad_token=10, columns=True, reference=False, threads=2):
    """Both kernels on the same [B, R, W] inputs, as comparable dicts."""
    P, T = torch.as_tensor(p), torch.as_tensor(t)
    S = None if s is None else torch.as_tensor(s)
    opts = dict(pad_token=pad_token, tols=TOLS, columns=columns, reference=reference)
    a = count_numpy(P.numpy(), T.numpy(), None if S is None else S.numpy(),
                    threads=threads, **opts)
    b = count_torch(P, T, S, **opts)
    return _plain(a), _plain(b)


def assert_same(a: dict, b: dict, label=""):
    assert set(a) == set(b), (label, set(a) ^ set(b))
    for k in a:
        if k == "ref_per_grid":
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{label} {k}")
        else:
            assert a[k] == b[k], (label, k, a[k], b[k])


def _cases(rng):
    """(label, pred, target, source, pad_token, columns) of one random draw."""
    B = int(rng.integers(1, 25))
    h, w = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    p, t, s = random_batch(rng, B=B, size=(h, w))
    yield "random", p, t, s, 10, True
    # all-padding rows, columns and whole grids
    t2, p2 = t.copy(), p.copy()
    t2[:, 0, :] = 10
    t2[:, :, -1] = 10
    t2[0] = 10
    p2[-1] = 10
    yield "padding rows", p2, t2, s, 10, True
    # no padding: every cell is valid (pad values are ordinary values then)
    yield "pad None", p, t, s, None, True
    # sequences [B, 1, L]: no rows or columns counted
    yield "sequences", p.reshape(B, 1, -1), t.reshape(B, 1, -1), s.reshape(B, 1, -1), 10, False
    # a pad token int8 cannot hold: it matches no cell
    yield "pad outside dtype", p.astype(np.int8), t.astype(np.int8), s.astype(np.int8), 1000, True
    # many wrong changed cells: the numpy kernel leaves its sparse gather
    yield "dense wrong", rng.integers(0, 10, t.shape), t, s, 10, True


@pytest.mark.parametrize("with_source, reference", [(False, False), (True, False), (True, True)])
def test_kernels_agree_on_random_and_edge_batches(monkeypatch, with_source, reference):
    # small chunks: many chunks, shared by two numpy threads
    monkeypatch.setattr(K, "_CHUNK_CELLS_CPU", 40)
    n_checked = 0
    for seed in range(40):
        rng = np.random.default_rng(7000 + seed)
        for label, p, t, s, pad, columns in _cases(rng):
            src = s if with_source else None
            a, b = _both(p, t, src, pad_token=pad, columns=columns, reference=reference)
            assert_same(a, b, f"{label} seed {seed}")
            n_checked += 1
    assert n_checked == 240


def test_small_chunk_setting_reaches_both_kernels(monkeypatch):
    # the test above relies on it: 40 cells per chunk means one 6x6 grid per chunk
    monkeypatch.setattr(K, "_CHUNK_CELLS_CPU", 40)
    assert list(K.chunks(3, 36, "cpu")) == [(0, 1), (1, 2), (2, 3)]


@pytest.mark.parametrize("size", [(2, 40), (40, 3), (33, 33)])
def test_kernels_agree_on_unpacked_lines(size):
    # rows or columns of 32 cells or more take the unpacked path in both kernels
    for seed in range(4):
        rng = np.random.default_rng(8000 + seed)
        p, t, s = random_batch(rng, B=5, size=size)
        for reference in (False, True):
            a, b = _both(p, t, s, reference=reference)
            assert_same(a, b, f"{size} seed {seed}")
        assert_same(*_both(p, t, None, pad_token=None))


def test_kernels_agree_past_int16_cells():
    # more than 32767 cells per grid: per-grid counts in wider integers
    rng = np.random.default_rng(9)
    t = rng.integers(0, 10, (2, 1, 33000))
    t[1, 0, 30000:] = 10
    p = t.copy()
    p[0, 0, :5] = (p[0, 0, :5] + 1) % 10
    s = np.where(rng.random(t.shape) < 0.3, rng.integers(0, 10, t.shape), t)
    a, b = _both(p, t, s, columns=False, reference=True)
    assert_same(a, b)
    assert a["n_valid"] == 63000 and a["n_wrong"] == 5


def test_kernels_non_contiguous_inputs():
    # transposed views: the numpy kernel cannot gather by flat index there
    rng = np.random.default_rng(3)
    p, t, s = random_batch(rng, B=9, size=(5, 7))
    pt, tt, st_ = (np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)
                   for x in (p, t, s))
    assert not pt.flags.c_contiguous
    a, b = _both(pt, tt, st_)
    assert_same(a, b)
    assert_same(a, _both(p, t, s)[0])


def test_kernels_hand_computed_counts():
    P = 10
    target = np.array([[[1, 2], [3, P]], [[P, P], [P, P]], [[5, 5], [5, 5]]])
    pred = np.array([[[1, 2], [4, P]], [[P, P], [P, P]], [[5, 5], [5, 5]]])
    source = np.array([[[1, 0], [3, P]], [[P, P], [P, P]], [[5, 5], [5, 5]]])
    # grid 0: 3 valid cells, one wrong (3 -> 4), one target change (0 -> 2) that
    # pred makes; grid 1 is all padding (not a grid); grid 2 is exact
    want = {"n_grids": 2, "n_correct": 1, "n_exact": 1, "n_valid": 7, "n_wrong": 1,
            "n_rows": 4, "n_rows_correct": 3, "n_cols": 4, "n_cols_correct": 3,
            "n_tol": [1, 1, 1, 2],  # grid 0 scores 2/3: only the 0.5 tolerance
            "n_tgt_change": 1, "n_both_change": 1, "n_change_correct": 1}
    a, b = _both(pred, target, source, reference=True)
    # per grid over every cell: tgt != src, pred != src (also the wrong cell), both
    np.testing.assert_array_equal(a.pop("ref_per_grid"), [[1, 0, 0], [2, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(b.pop("ref_per_grid"), [[1, 0, 0], [2, 0, 0], [1, 0, 0]])
    assert a == want
    assert b == want


# --------------------------------------------------------------------------- #
# the torch kernel: its chunks, its number of operations, torch.compile
# --------------------------------------------------------------------------- #
def test_torch_kernel_chunks_add_up_to_one_pass(monkeypatch):
    # a batch larger than the torch kernel's work buffers is counted in chunks whose
    # count vectors are added: the same counts as one pass and as the numpy kernel
    for seed in range(6):
        rng = np.random.default_rng(9100 + seed)
        p, t, s = random_batch(rng, B=int(rng.integers(2, 30)), size=(5, 6))
        for reference in (False, True):
            one = _both(p, t, s, reference=reference)
            monkeypatch.setattr(K, "TORCH_CHUNK_CELLS", 70)  # two grids a chunk
            chunked = _both(p, t, s, reference=reference)
            monkeypatch.undo()
            assert_same(*one)
            assert_same(one[1], chunked[1], f"seed {seed}")


class _CountOps:
    """Counts the aten operations dispatched inside its ``with`` block (views and
    copies included: on a GPU each non-view operation is a kernel launch)."""

    def __init__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        counter = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                counter.ops.append(str(func))
                return func(*args, **(kwargs or {}))

        self.ops: list = []
        self.mode = Mode()

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self.mode.__exit__(*exc)


#: The most aten operations one grid_metrics call may dispatch (the arcnb convention).
MAX_OPS = 30


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_one_grid_metrics_call_dispatches_at_most_30_operations(monkeypatch, backend):
    import functools

    import arcnb.metrics.grid as G
    from arcnb.metrics import grid_metrics

    monkeypatch.setattr(G, "count_vector", functools.partial(G.count_vector, _backend=backend))
    rng = np.random.default_rng(12)
    p, t, s = (torch.from_numpy(x) for x in random_batch(rng, B=256, size=(30, 30)))
    B = p.shape[0]
    seq = [x.reshape(B, -1) for x in (p, t, s)]
    u8 = [x.to(torch.uint8) for x in (p, t, s)]
    calls = {"source": lambda: grid_metrics(p, t, source=s),
             "no source": lambda: grid_metrics(p, t),
             "uint8": lambda: grid_metrics(*u8[:2], source=u8[2]),
             "sequences": lambda: grid_metrics(*seq[:2], source=seq[2]),
             "no padding": lambda: grid_metrics(p, t, source=s, pad_token=None),
             "two tolerances": lambda: grid_metrics(p, t, source=s, tolerances=(0.5, 0.8))}
    for label, call in calls.items():
        call()  # the first call of a shape makes its small constants, once
        with _CountOps() as c:
            call()
        assert len(c.ops) <= MAX_OPS, (label, len(c.ops), c.ops)
    if backend == "torch":
        # one pass whatever the batch: 4 grids or 1,024 grids, the same operations
        big = [x.repeat(4, 1, 1) for x in (p, t, s)]
        small = [x[:4].clone() for x in (p, t, s)]
        counts = []
        for q in (big, small):
            grid_metrics(*q[:2], source=q[2])
            with _CountOps() as c:
                grid_metrics(*q[:2], source=q[2])
            counts.append(c.ops)
        assert counts[0] == counts[1]


def _compile_cases():
    """(label, pred, target, source) batches of several batch and grid sizes (what a
    compiled metric sees over a training run), then other dtypes."""
    rng = np.random.default_rng(21)
    for size, dtype in (((6, 7), torch.int64), ((9, 5), torch.int64), ((30, 30), torch.int64),
                        ((3, 3), torch.int64), ((8, 8), torch.uint8), ((5, 9), torch.int32)):
        p, t, s = (torch.from_numpy(x).to(dtype)
                   for x in random_batch(rng, B=int(rng.integers(2, 20)), size=size))
        yield f"{size} {dtype}", p, t, s


@pytest.mark.slow  # Inductor compiles: about a minute in all on a 2-core machine
def test_compiled_grid_metrics_equal_eager_on_fixed_and_mixed_grid_sizes():
    from arcnb.metrics import compiled, grid_metrics

    from naive_metrics import close

    torch._dynamo.reset()
    metrics = compiled()
    for i, (label, p, t, s) in enumerate(_compile_cases()):
        # after two sizes torch.compile makes the sizes dynamic: no compilation per size
        for kwargs in ({"source": s}, {}) if i in (0, 1, 4) else ({"source": s},):
            got, want = metrics(p, t, **kwargs), grid_metrics(p, t, **kwargs)
            assert set(got) == set(want)
            for k in want:
                assert got[k].dtype == torch.float32 and got[k].dim() == 0, k
                assert close(got[k], want[k], 1e-7), (label, k, float(got[k]), float(want[k]))


@pytest.mark.slow  # dynamo traces each case: tens of seconds
def test_grid_metrics_traces_as_one_graph_without_breaks():
    # what torch.compile captures (the eager backend: no Inductor compile here)
    from arcnb.metrics import grid_metrics

    torch._dynamo.reset()
    for label, p, t, s in list(_compile_cases())[:2]:
        for kwargs in ({"source": s}, {"source": s, "convention": "reference"}, {}):
            ex = torch._dynamo.explain(grid_metrics)(p, t, **kwargs)
            assert ex.graph_break_count == 0, (label, ex.break_reasons)
            assert ex.graph_count == 1, label
