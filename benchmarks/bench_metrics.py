"""Benchmark: arcnb.metrics.grid_metrics with source on padded 30x30 int64 grids.

Reports, in one run and on the same tensors:

* the floor: one ``pred == target`` pass (the memory-bound minimum any metric needs);
* ``grid_metrics(pred, target, source=source)`` (arcnb convention);
* two per-grid loops on a subset, scaled to the full batch: the tests' naive
  reference (Python loops over numpy, tests/naive_metrics.py) and a per-grid loop
  of torch calls (the same formulas applied grid by grid).

Ratios are against the floor and against the loops. The floor and
``grid_metrics`` are timed alternately, ``--repeats`` times each, and the best of
each is kept (on a shared machine both get the quiet moments); the loops are the
best of ``--naive-repeats`` runs. The load average is printed with the figures.
With ``--device cuda`` the tensors live on the GPU and every timing waits for the
device to finish (``torch.cuda.synchronize``); the naive loop stays numpy on the CPU
(that is what it is) and the per-grid torch loop runs on the GPU. Usage::

    .venv/bin/python benchmarks/bench_metrics.py            # 100,000 grids
    .venv/bin/python benchmarks/bench_metrics.py --n 20000 --threads 1
    python benchmarks/bench_metrics.py --device cuda
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

from arcnb.metrics import grid_metrics  # noqa: E402
from naive_metrics import naive_grid_metrics  # noqa: E402

PAD = 10


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
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    pred, target, source = (x.to(device) for x in make_batch(args.n))
    where = (torch.cuda.get_device_name(device) if device.type == "cuda"
             else f"{torch.get_num_threads()} threads, "
                  f"{platform.processor() or platform.machine()}")
    print(f"arcnb grid_metrics benchmark: {args.n:,} grids 30x30 int64 "
          f"({pred.numel() * 8 / 1e6:.0f} MB per tensor), torch {torch.__version__}, "
          f"{device.type}: {where}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    if device.type == "cuda":  # the first calls pay for CUDA's own start-up
        grid_metrics(pred[:64], target[:64], source=source[:64])
        _sync()

    # interleaved, best of each: on a shared machine both get the quiet moments
    floor = ours = float("inf")
    for _ in range(args.repeats):
        floor = min(floor, best_of(lambda: pred == target, 1))
        ours = min(ours, best_of(lambda: grid_metrics(pred, target, source=source), 1))

    k = min(args.naive_n, args.n)
    p_np, t_np, s_np = (x[:k].cpu().numpy() for x in (pred, target, source))
    naive = best_of(lambda: naive_grid_metrics(p_np, t_np, s_np), args.naive_repeats) * args.n / k
    tloop = best_of(lambda: torch_loop(pred[:k], target[:k], source[:k]),
                    args.naive_repeats) * args.n / k

    # one training-loop batch: what a metric costs per step, per-call overhead included
    b = min(args.batch, args.n)
    step = best_of(lambda: grid_metrics(pred[:b], target[:b], source=source[:b]), args.repeats)
    step_loop = best_of(lambda: torch_loop(pred[:b], target[:b], source[:b]), args.naive_repeats)

    # same numbers (sanity): the fast path against the naive reference on the subset
    fast = grid_metrics(pred[:k], target[:k], source=source[:k])
    ref = naive_grid_metrics(p_np, t_np, s_np)
    worst = max(abs(float(fast[key]) - ref[key]) for key in ref)

    print(f"  floor  (pred == target)            {floor * 1e3:9.1f} ms")
    print(f"  grid_metrics(..., source=...)      {ours * 1e3:9.1f} ms   "
          f"{ours / floor:5.2f}x the floor")
    print(f"  naive reference loop (scaled)      {naive * 1e3:9.1f} ms   "
          f"{naive / ours:7.0f}x slower than grid_metrics")
    print(f"  per-grid torch loop (scaled)       {tloop * 1e3:9.1f} ms   "
          f"{tloop / ours:7.0f}x slower than grid_metrics")
    print(f"  one batch of {b:<5} grid_metrics       {step * 1e3:9.2f} ms   "
          f"per-grid torch loop {step_loop * 1e3:.1f} ms ({step_loop / step:.0f}x slower)")
    print(f"  max |fast - naive| on the subset   {worst:.1e}")
    print(f"  load average at the end            {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
