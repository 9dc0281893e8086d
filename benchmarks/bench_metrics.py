"""Benchmark: arcnb.metrics.grid_metrics with source, and palette_metrics, on padded 30x30 grids.

Reports, in one run and on the same tensors, for every integer dtype (int64, int32,
int16, uint8):

* two floors: reading the three inputs once (a sum of each input's bytes as int64
  words: the memory-bound minimum of any metric of the three) and one
  ``pred == target`` pass (the floor of earlier versions of this script);
* ``grid_metrics(pred, target, source=source)`` (arcnb convention), as a ratio to
  both floors;
* one training-loop batch (``--batch``, 256 grids): what a metric call costs per
  step, its fixed costs included, against the same batch's floor;
* with ``--compiled``, the same through :func:`arcnb.metrics.compiled`
  (``torch.compile``; compiled once per dtype and shape before the timing);
* ``palette_metrics(pred, target)`` against its own floor (reading its two inputs
  once), on the whole batch and on the training-loop batch (and compiled with
  ``--compiled``);
* for int64, two per-grid loops on a subset, scaled to the full batch: the tests'
  naive reference (Python loops over numpy, tests/naive_metrics.py) and a per-grid
  loop of torch calls.

The floors and ``grid_metrics`` are timed alternately, ``--repeats`` times each, and
the best of each is kept (on a shared machine all get the quiet moments); the loops
are the best of ``--naive-repeats`` runs. The load average is printed with the
figures. With ``--device cuda`` the tensors live on the GPU and every timing waits for
the device to finish (``torch.cuda.synchronize``); the naive loop stays numpy on the
CPU (that is what it is). To compare two versions of arcnb, run this script with
each on ``PYTHONPATH``, alternately. Usage::

    .venv/bin/python benchmarks/bench_metrics.py            # 100,000 grids
    .venv/bin/python benchmarks/bench_metrics.py --n 20000 --threads 1
    python benchmarks/bench_metrics.py --device cuda --compiled
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import arcnb.metrics as M  # noqa: E402
from naive_metrics import naive_grid_metrics  # noqa: E402

PAD = 10
DTYPES = (torch.int64, torch.int32, torch.int16, torch.uint8)


def make_batch(n: int, seed: int = 0, size: int = 30):
    """Padded int64 batches [n, 30, 30]: random grid sizes, 5% wrong predictions,
    sources differing from the target in 30% of cells."""
    g = torch.Generator().manual_seed(seed)
    hs = torch.randint(1, size + 1, (n,), generator=g)
    ws = torch.randint(1, size + 1, (n,), generator=g)
    ar = torch.arange(size)
    inside = (ar[None, :, None] < hs[:, None, None]) & (ar[None, None, :] < ws[:, None, None])
    target = torch.randint(0, 10, (n, size, size), generator=g)
    target.masked_fill_(~inside, PAD)
    noise = torch.randint(0, 10, (n, size, size), generator=g)
    source = torch.where(torch.rand(n, size, size, generator=g) < 0.3, noise, target)
    source.masked_fill_(~inside, PAD)
    del noise
    pred = torch.where(torch.rand(n, size, size, generator=g) < 0.05,
                       torch.randint(0, 11, (n, size, size), generator=g), target)
    return pred, target, source


def _sync() -> None:
    """Wait for queued GPU work (a no-op on the CPU), so a timing covers the work."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        _sync()
        t0 = time.perf_counter()
        fn()
        _sync()
        best = min(best, time.perf_counter() - t0)
    return best


def alternate(fns: dict, repeats: int) -> dict:
    """The best time of each function, the functions timed in turn ``repeats`` times."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            best[name] = min(best[name], best_of(fn, 1))
    return best


def _words(x):
    """``x``'s bytes as int64 words where they divide evenly (a sum of those reads the
    memory at the same speed whatever the dtype: torch sums uint8 / int16 / int32 far
    slower, widening each value), else ``x`` itself."""
    flat = x.reshape(-1)
    return flat.view(torch.int64) if (flat.numel() * flat.element_size()) % 8 == 0 else flat


def read_three(p, t, s):
    """The floor: each input read once (three reductions, nothing written back)."""
    return _words(p).sum(), _words(t).sum(), _words(s).sum()


def torch_loop(pred, target, source):
    """The grid-metric formulas, one grid at a time (what a per-grid loop looks like)."""
    out = []
    for i in range(pred.shape[0]):
        p, t, s = pred[i], target[i], source[i]
        valid = t != PAD
        correct = (p == t) & valid
        nv = valid.sum()
        tc = (t != s) & valid
        pc = (p != s) & valid
        out.append((
            (correct | ~valid).all(), correct.sum(), nv, (correct.sum() / nv) >= 0.95,
            (pc & tc).sum(), tc.sum(), pc.sum(), ((p == s) & valid).sum(),
            ((correct | ~valid).all(1) | ~valid.any(1)).sum(),
            ((correct | ~valid).all(0) | ~valid.any(0)).sum(),
        ))
    return out


def read_two(p, t):
    """The palette's floor: its two inputs read once."""
    return _words(p).sum(), _words(t).sum()


def time_dtype(x, b: int, args, compiled, palette_compiled) -> dict:
    """Timings (seconds) of one dtype: floors, grid_metrics and palette_metrics on the
    whole batch and on its first ``b`` grids."""
    p, t, s = x
    pb, tb, sb = (y[:b].clone() for y in x)
    fns = {"read": lambda: read_three(p, t, s),
           "eq": lambda: p == t,
           "ours": lambda: M.grid_metrics(p, t, source=s),
           "read_b": lambda: read_three(pb, tb, sb),
           "ours_b": lambda: M.grid_metrics(pb, tb, source=sb),
           "read2": lambda: read_two(p, t),
           "pal": lambda: M.palette_metrics(p, t),
           "read2_b": lambda: read_two(pb, tb),
           "pal_b": lambda: M.palette_metrics(pb, tb)}
    if compiled is not None:
        compiled(p, t, source=s), compiled(pb, tb, source=sb)  # compile both shapes
        fns["comp"] = lambda: compiled(p, t, source=s)
        fns["comp_b"] = lambda: compiled(pb, tb, source=sb)
        palette_compiled(p, t), palette_compiled(pb, tb)
        fns["pcomp"] = lambda: palette_compiled(p, t)
        fns["pcomp_b"] = lambda: palette_compiled(pb, tb)
    for fn in fns.values():  # warm: first calls make small cached constants
        fn()
    return alternate(fns, args.repeats)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="grids in the batch")
    ap.add_argument("--naive-n", type=int, default=1000, help="grids timed for the loops")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--naive-repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    ap.add_argument("--device", default="cpu", help="where the tensors live (cpu, cuda, cuda:N)")
    ap.add_argument("--batch", type=int, default=256,
                    help="grids in one training-loop batch (the small-batch line)")
    ap.add_argument("--dtypes", default="int64,int32,int16,uint8",
                    help="comma-separated integer dtypes to time")
    ap.add_argument("--compiled", action="store_true",
                    help="also time arcnb.metrics.compiled() (torch.compile)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]

    base = make_batch(args.n)
    where = (torch.cuda.get_device_name(device) if device.type == "cuda"
             else f"{torch.get_num_threads()} threads, "
                  f"{platform.processor() or platform.machine()}")
    print(f"arcnb grid_metrics benchmark: {args.n:,} grids 30x30 (arcnb from "
          f"{Path(M.__file__).parents[1]}), torch {torch.__version__}, {device.type}: "
          f"{where}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    compiled = M.compiled() if args.compiled and hasattr(M, "compiled") else None
    palette_compiled = M.compiled(M.palette_metrics) if compiled is not None else None
    b = min(args.batch, args.n)
    print(f"  {'dtype':6} {'read 3 inputs':>13} {'pred==target':>12} {'grid_metrics':>12} "
          f"{'/read':>6} {'/eq':>6}   batch of {b}: {'read':>8} {'metrics':>8} {'/read':>6}")
    for dtype in dtypes:
        x = tuple(y.to(device=device, dtype=dtype) for y in base)
        r = time_dtype(x, b, args, compiled, palette_compiled)
        ms = {k: v * 1e3 for k, v in r.items()}
        print(f"  {str(dtype).split('.')[1]:6} {ms['read']:10.2f} ms {ms['eq']:9.2f} ms "
              f"{ms['ours']:9.2f} ms {r['ours'] / r['read']:5.2f}x {r['ours'] / r['eq']:5.2f}x"
              f"   {'':13}{ms['read_b']:8.3f} {ms['ours_b']:8.3f} "
              f"{r['ours_b'] / r['read_b']:5.1f}x")
        if compiled is not None:
            print(f"  {'':6} {'compiled:':>26} {ms['comp']:9.2f} ms "
                  f"{r['comp'] / r['read']:5.2f}x {r['comp'] / r['eq']:5.2f}x   {'':13}"
                  f"{'':8} {ms['comp_b']:8.3f} {r['comp_b'] / r['read_b']:5.1f}x")
        rows = [("palette:", "pal")] + ([("compiled:", "pcomp")] if compiled is not None else [])
        for label, key in rows:
            print(f"  {'':6} {label + ' read 2 inputs':>26} {ms['read2']:6.2f} ms "
                  f"{ms[key]:9.2f} ms {r[key] / r['read2']:5.2f}x {'':6}   {'':13}"
                  f"{ms['read2_b']:8.3f} {ms[key + '_b']:8.3f} "
                  f"{r[key + '_b'] / r['read2_b']:5.1f}x")
        del x

    pred, target, source = (y.to(device) for y in base)
    ours = best_of(lambda: M.grid_metrics(pred, target, source=source), args.repeats)
    k = min(args.naive_n, args.n)
    p_np, t_np, s_np = (y[:k].cpu().numpy() for y in (pred, target, source))
    naive = best_of(lambda: naive_grid_metrics(p_np, t_np, s_np), args.naive_repeats) * args.n / k
    tloop = best_of(lambda: torch_loop(pred[:k], target[:k], source[:k]),
                    args.naive_repeats) * args.n / k
    # same numbers (sanity): the fast path against the naive reference on the subset
    fast = M.grid_metrics(pred[:k], target[:k], source=source[:k])
    ref = naive_grid_metrics(p_np, t_np, s_np)
    worst = max(abs(float(fast[key]) - ref[key]) for key in ref)
    print(f"  int64: naive reference loop (scaled) {naive * 1e3:9.1f} ms   "
          f"{naive / ours:7.0f}x slower than grid_metrics")
    print(f"  int64: per-grid torch loop (scaled)  {tloop * 1e3:9.1f} ms   "
          f"{tloop / ours:7.0f}x slower than grid_metrics")
    print(f"  max |fast - naive| on the subset     {worst:.1e}")
    print(f"  load average at the end              {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
