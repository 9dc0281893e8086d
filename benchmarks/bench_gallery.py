"""Benchmark: a PNG gallery of 400 truth / prediction / difference triples from real
ARC-AGI-1 evaluation grids, drawn by :func:`arcnb.plot.gallery` (all grids tiled into
one image, one image artist) against the common approach of one matplotlib Axes per
grid (1,200 Axes, one ``imshow`` and title each). Both are drawn and saved as PNG in
the same run; the script prints both times and their ratio.

Predictions (deterministic, seed 0): attempt 1 is the test input (the copy-the-input
baseline, so many shapes are wrong), attempt 2 is the truth with about 5% of its cells
changed (near misses). Both methods draw the same 400 triples.

    .venv/bin/python benchmarks/bench_gallery.py [--n 400] [--repeat 3] [--out DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from arcnb import plot as P  # noqa: E402
from arcnb.data import load_dataset  # noqa: E402
from arcnb.plot.galleries import _best_attempt  # noqa: E402
from arcnb.scoring import score  # noqa: E402


def make_results(n: int):
    ds = load_dataset("arc-agi-1:evaluation")
    rng = np.random.default_rng(0)
    preds = {}
    for t in ds:
        entries = []
        for p in t.test:
            near = p.output.copy()
            flip = rng.random(near.shape) < 0.05
            near[flip] = (near[flip] + 1 + rng.integers(0, 9, flip.sum())) % 10
            entries.append({"attempt_1": p.input.tolist(), "attempt_2": near.tolist()})
        preds[t.id] = entries
    res = score(ds, preds, n_boot=10)
    if len(res.outputs) < n:
        sys.exit(f"only {len(res.outputs)} outputs available, asked for {n}")
    return res


def one_axes_per_grid(results, items, path: Path, ncols: int = 5) -> None:
    """The baseline: a subplot per grid (truth, prediction, difference), each an imshow."""
    n = len(items)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, 3 * ncols, figsize=(3 * ncols * 0.75, nrows * 0.95),
                             squeeze=False)
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.005, top=0.995, wspace=0.1, hspace=0.45)
    for ax in axes.ravel():
        ax.set_axis_off()
    for q, (tid, i) in enumerate(zip(items["task_id"], items["test_index"])):
        truth = results.truth(tid, int(i))
        j, pred = _best_attempt(truth, results.attempts(tid, int(i)), max(results.ks))
        r, c = divmod(q, ncols)
        a0, a1, a2 = axes[r, 3 * c], axes[r, 3 * c + 1], axes[r, 3 * c + 2]
        a0.imshow(P.PALETTE_RGB[truth], interpolation="nearest")
        same = pred is not None and pred.shape == truth.shape
        acc = f"{np.mean(pred == truth):.3f}" if same else "n/a"
        a0.set_title(f"{tid} test {int(i)}  cell acc {acc}", fontsize=5, loc="left")
        if pred is not None:
            a1.imshow(P.PALETTE_RGB[pred], interpolation="nearest")
        if same:
            a2.imshow(np.where((pred != truth)[..., None], (214, 39, 40), (235, 235, 235))
                      .astype(np.uint8), interpolation="nearest")
        else:
            a2.text(0.5, 0.5, "shape mismatch", ha="center", va="center", fontsize=5)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400, help="number of triples (default 400)")
    ap.add_argument("--repeat", type=int, default=3, help="gallery repetitions (best is kept)")
    ap.add_argument("--out", help="folder for the PNGs (default: a temporary folder)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    res = make_results(args.n)
    print(f"scored arc-agi-1:evaluation ({len(res.outputs)} outputs) in "
          f"{time.perf_counter() - t0:.2f} s")
    items = P.gallery_items(res, "all", max_items=args.n)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="arcnb-bench-"))
    out.mkdir(parents=True, exist_ok=True)

    # warm-up (imports, font cache), not timed
    P.save(P.gallery(res, "all", max_items=5), out / "warmup.png", overwrite=True)
    plt.close("all")

    times = []
    for r in range(args.repeat):
        t0 = time.perf_counter()
        fig = P.gallery(res, "all", max_items=args.n)
        t1 = time.perf_counter()
        path = P.save(fig, out / "gallery.png", overwrite=True)
        t2 = time.perf_counter()
        times.append((t2 - t0, t1 - t0, t2 - t1))
        h, w = fig.arcnb_image.shape[:2]
        plt.close(fig)
    total, draw, save = min(times)
    print(f"arcnb.plot.gallery: {args.n} triples, one {w}x{h} image: draw {draw:.2f} s + "
          f"save {save:.2f} s = {total:.2f} s (best of {args.repeat}; "
          f"{path.stat().st_size / 1e6:.2f} MB)")

    t0 = time.perf_counter()
    one_axes_per_grid(res, items, out / "axes_per_grid.png")
    base = time.perf_counter() - t0
    print(f"one Axes per grid:  {3 * args.n} Axes: draw + save {base:.2f} s "
          f"({(out / 'axes_per_grid.png').stat().st_size / 1e6:.2f} MB)")
    print(f"speed-up: {base / total:.1f}x   (target: gallery < 2 s and >= 10x)")
    print(f"PNGs in {out}  (cpus: {os.cpu_count()}, load average: "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
