"""Benchmark: one step of ``arcnb.explore`` (go to the next output and redraw) on 30x30
tasks with 5 demonstration pairs, against drawing the same view with one matplotlib
Axes per grid, in the same run.

The tasks are made of real ARC-AGI-1 evaluation grids: every demonstration or test
pair whose input and output are both 30x30 (48 such pairs), taken six at a time (5
demonstrations and a test pair per task). Predictions (seed 0): attempt 1 is the truth
with about 5% of its cells changed, attempt 2 the test input; the compared run
(``--compare``) holds the truth and the input, in that order.

A step is what the browser does on "next": :meth:`Explorer.next` with the widget
built (outside a kernel, so the comm is a no-op): pick the attempt, compose one RGB
image with numpy from ``arcnb.plot.grid_image`` tiles, write the titles with PIL,
encode the PNG, build the numbers' HTML and set the ``ipywidgets.Image`` value. The
baseline draws the same 14 panels (16 with a compared run) with ``arcnb.plot.grid``
on one Axes each (imshow, cell lines, title) plus the difference panel, and saves the
figure as PNG. The script prints ms per step (median, 90th percentile, worst) and the
ratio of the medians.

    .venv/bin/python benchmarks/bench_explore.py [--steps 60] [--baseline 8]
"""
from __future__ import annotations

import argparse
import io
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import arcnb  # noqa: E402
from arcnb import plot as P  # noqa: E402
from arcnb.data import Dataset, Task, load_dataset  # noqa: E402
from arcnb.scoring import score  # noqa: E402


def big_tasks() -> Dataset:
    """Tasks of five 30x30 demonstration pairs and one 30x30 test pair, real grids."""
    src = load_dataset("arc-agi-1:evaluation")
    pool = [p for t in src for p in list(t.train) + list(t.test)
            if p.input.shape == (30, 30) and p.output is not None and p.output.shape == (30, 30)]
    tasks = {}
    for n in range(len(pool) // 6):
        chunk = pool[6 * n: 6 * n + 6]
        tid = f"big30x30-{n:02d}"
        tasks[tid] = Task(tid, tuple(chunk[:5]), (chunk[5],))
    return Dataset("arc-agi-1:evaluation 30x30 pairs", src.version, tasks)


def predictions(ds: Dataset, kind: str) -> dict:
    rng = np.random.default_rng(0)
    out = {}
    for t in ds:
        p = t.test[0]
        if kind == "near":
            near = p.output.copy()
            flip = rng.random(near.shape) < 0.05
            near[flip] = (near[flip] + 1 + rng.integers(0, 9, flip.sum())) % 10
            out[t.id] = [{"attempt_1": near.tolist(), "attempt_2": p.input.tolist()}]
        else:
            out[t.id] = [{"attempt_1": p.output.tolist(), "attempt_2": p.input.tolist()}]
    return out


def explorer_steps(ex, steps: int) -> dict:
    """ms per ``next()`` with the widget attached, and the parts of one step."""
    ex.widget  # noqa: B018  (build the widget: every step then updates it)
    ex.next()  # warm: fonts, caches
    total, compose, png, info = [], [], [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        ex.next()
        total.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        ex.render()
        compose.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        ex.png()
        png.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        ex.info_html()
        info.append(1000 * (time.perf_counter() - t0))
    return {"step": total, "compose": compose, "compose+png": png, "numbers": info,
            "image": ex.render().shape}


def one_axes_per_grid(ex) -> bytes:
    """The same view, one matplotlib Axes per grid (grid() each: imshow, lines, title)."""
    tid, ti = ex.current
    task = ex.dataset[tid]
    truth = task.test[ti].output
    attempts = [r.results.attempts(tid, ti)[0] for r in ex.runs]
    ncols = max(len(task.train), 2 + len(attempts))
    fig, axes = plt.subplots(4, ncols, figsize=(1.9 * ncols, 8.4), squeeze=False)
    for ax in axes.ravel():
        ax.set_axis_off()
    for n, p in enumerate(task.train):
        P.grid(p.input, ax=axes[0, n], title=f"demo {n + 1} input")
        P.grid(p.output, ax=axes[1, n], title=f"demo {n + 1} output")
    P.grid(task.test[ti].input, ax=axes[2, 0], title="test input")
    P.grid(truth, ax=axes[3, 0], title="truth")
    for j, a in enumerate(attempts):
        P.grid(a, ax=axes[2, 1 + j], title=f"{ex.runs[j].label} attempt 1")
        diff = np.where((a != truth)[..., None], (214, 39, 40), (235, 235, 235)).astype(np.uint8)
        axes[3, 1 + j].imshow(diff, interpolation="nearest")
        axes[3, 1 + j].set_title(f"difference: {int((a != truth).sum())} wrong")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def baseline_steps(ex, n: int) -> list[float]:
    one_axes_per_grid(ex)  # warm
    times = []
    for _ in range(n):
        ex.next()
        t0 = time.perf_counter()
        one_axes_per_grid(ex)
        times.append(1000 * (time.perf_counter() - t0))
    return times


def stats(ms: list[float]) -> str:
    q = sorted(ms)
    p90 = q[min(len(q) - 1, int(round(0.9 * (len(q) - 1))))]
    return f"median {statistics.median(q):7.1f}  p90 {p90:7.1f}  worst {q[-1]:7.1f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60, help="explorer steps per case")
    ap.add_argument("--baseline", type=int, default=8, help="one-Axes-per-grid views per case")
    args = ap.parse_args(argv)
    ds = big_tasks()
    res = score(ds, predictions(ds, "near"), n_boot=10)
    other = score(ds, predictions(ds, "truth"), n_boot=10)
    print(f"{len(ds)} tasks, each 5 demonstration pairs + 1 test pair, every grid 30x30")
    cases = [("one run", dict(compare=None, values=False)),
             ("one run, values shown", dict(compare=None, values=True)),
             ("two runs compared", dict(compare=other, values=False))]
    for name, kw in cases:
        ex = arcnb.explore(res, labels=["near"] + (["truth"] if kw["compare"] else []),
                           taxonomy=False, **kw)
        r = explorer_steps(ex, args.steps)
        print(f"\n{name}: image {r['image'][1]}x{r['image'][0]} px")
        for part in ("step", "compose", "compose+png", "numbers"):
            print(f"  explore {part:<12} ms: {stats(r[part])}")
        if kw["values"]:
            continue
        base = baseline_steps(ex, args.baseline)
        print(f"  one Axes per grid    ms: {stats(base)}")
        print(f"  ratio of medians (one Axes per grid / explore step): "
              f"{statistics.median(base) / statistics.median(r['step']):.1f}x")


if __name__ == "__main__":
    main()
